"""The compiled CPU threshold's per-cell tests and its unstructured grids: the cells
read from the grid's own arrays (connectivity, offsets, types), which list each
cell's corners in the order of its shape's block
(:meth:`daxpy.UnstructuredGrid.cell_blocks`).

Three parallel passes over blocks of cells, each block handled by one thread:

1. *classify and count*: each cell's verdict (a byte), and per block the kept
   cells and their corners; a kept cell marks the points it uses while its ids
   are in cache; cells whose offsets or point ids are out of range are counted
   (the grid was written into since it was checked) and refused;
2. *scan* (NumPy, over blocks): where each block's cells and corners go; the used
   points numbered (:mod:`._used_points_cpu`);
3. *emit*: the kept cells' ids, types, offsets and corners, each corner written as
   its point's number (no pass over the output's corners after it).

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import LINE
>>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[0, 1], [1, 2]]})
>>> kept = threshold_unstructured(g, np.array([0.0, 1, 2]), ANY, False,
...                               *np.array([1.5, 3.0]), 1.5, 3.0)
>>> kept.cell_ids.tolist(), kept.point_ids.tolist(), kept.connectivity.tolist()
([1], [1, 2], [0, 1])
"""

from __future__ import annotations

import numpy as np

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, over_blocks
from ._numba import CompiledUnavailable, kernel, refuse_bad_ids
from .threshold import Kept
from ._used_points_cpu import exclusive, number_points

CELLS, ALL, ANY, CONTINUOUS = 0, 1, 2, 3
"""How a cell is tested: its own value, all or any of its corners' values in
range, or the range of its corners' values meeting the threshold's."""

_BLOCK = 4096
"""Cells per block dealt to a thread."""


def mode_of(at: str, all_points: bool, continuous: bool) -> int:
    """The test the threshold's parameters ask for (one of the module's modes).

    Examples
    --------
    >>> mode_of("points", False, True) == CONTINUOUS
    True
    """
    if at == "cells":
        return CELLS
    if continuous and not all_points:
        # As vtkThreshold: AllScalars wins over the continuous range.
        return CONTINUOUS
    return ALL if all_points else ANY


@kernel(inline="always")
def in_range(x, low, high):
    # In the field's dtype, against bounds rounded inwards: the float64 comparison.
    # NaN is in no range. Both sides evaluated (&, not and): a loop without a
    # branch, which the compiler vectorizes.
    return (x >= low) & (x <= high)


@kernel(inline="always")
def corners_inside(s, ids, base, low, high, every):
    """Whether all (``every``) or any of the points ``base + ids`` are in range."""
    # Counted without a branch: cells at the range's edge defeat branch prediction.
    inside = 0
    for m in range(ids.shape[0]):
        inside += in_range(s[base + ids[m]], low, high)
    return inside == ids.shape[0] if every else inside > 0


@kernel(inline="always")
def range_meets(s, ids, base, lower, upper):
    """Whether the range of the values at ``base + ids`` (float64; none where one
    is NaN) meets ``[lower, upper]``."""
    high, low = -np.inf, np.inf
    for m in range(ids.shape[0]):
        v = np.float64(s[base + ids[m]])
        if v != v:
            return False
        high, low = max(high, v), min(low, v)
    return high >= lower and low <= upper


@kernel(inline="always")
def _valid(conn, start, end, n_points):
    if start < 0 or end < start or end > conn.shape[0]:
        return False
    ids, wrong = conn[start:end], 0
    for m in range(ids.shape[0]):
        wrong += (ids[m] < 0) | (ids[m] >= n_points)
    return wrong == 0


# Serial kernels over ranges of blocks, which _blocks_cpu.over_blocks deals to the
# threads (a parallel loop costs several times more to compile).

@kernel(inline="always")
def _tally(keep, offs, block, counts, sizes):
    """Block ``block``'s kept cells and their corners."""
    kept, corners = 0, 0
    for c in range(block * _BLOCK, min(offs.shape[0] - 1, (block + 1) * _BLOCK)):
        kept += keep[c]
        corners += keep[c] * (offs[c + 1] - offs[c])
    counts[block], sizes[block] = kept, corners


@kernel(inline="always")
def _mark(used, conn, start, end):
    # Threads may mark one point together: each stores the same byte, so the mask
    # does not depend on their order.
    for m in range(start, end):
        used[conn[m]] = 1


# One classify kernel per test: a first use compiles only the test it makes.

@block_kernel()
def _classify_cells(s, invert, low, high, conn, offs, n_points, keep, counts, sizes, bad,
                    used, first, last):
    """Blocks ``first`` to ``last``: each cell's verdict from its own value."""
    for block in range(first, last):
        wrong = 0
        for c in range(block * _BLOCK, min(offs.shape[0] - 1, (block + 1) * _BLOCK)):
            valid = _valid(conn, offs[c], offs[c + 1], n_points)
            wrong += not valid
            keep[c] = valid and in_range(s[c], low, high) != invert
            if keep[c]:
                _mark(used, conn, offs[c], offs[c + 1])
        bad[block] = wrong
        _tally(keep, offs, block, counts, sizes)


@block_kernel()
def _classify_points(s, every, invert, low, high, conn, offs, n_points, keep, counts, sizes,
                     bad, used, first, last):
    """Blocks ``first`` to ``last``: each cell's verdict from all (``every``) or any of
    its corners' values."""
    for block in range(first, last):
        wrong = 0
        for c in range(block * _BLOCK, min(offs.shape[0] - 1, (block + 1) * _BLOCK)):
            start, end = offs[c], offs[c + 1]
            valid = _valid(conn, start, end, n_points)
            wrong += not valid
            keep[c] = valid and corners_inside(s, conn[start:end], 0, low, high,
                                               every) != invert
            if keep[c]:
                _mark(used, conn, start, end)
        bad[block] = wrong
        _tally(keep, offs, block, counts, sizes)


@block_kernel()
def _classify_range(s, invert, lower, upper, conn, offs, n_points, keep, counts, sizes, bad,
                    used, first, last):
    """Blocks ``first`` to ``last``: each cell's verdict from its corners' range."""
    for block in range(first, last):
        wrong = 0
        for c in range(block * _BLOCK, min(offs.shape[0] - 1, (block + 1) * _BLOCK)):
            start, end = offs[c], offs[c + 1]
            valid = _valid(conn, start, end, n_points)
            wrong += not valid
            keep[c] = valid and range_meets(s, conn[start:end], 0, lower, upper) != invert
            if keep[c]:
                _mark(used, conn, start, end)
        bad[block] = wrong
        _tally(keep, offs, block, counts, sizes)


@block_kernel()
def _emit(keep, conn, offs, cell_types, cell_start, corner_start, cell_ids, types, offsets,
          connectivity, renumber, first, last):
    n = keep.shape[0]
    kept = np.empty(min(n, _BLOCK), np.int64)
    for block in range(first, last):
        at, q, w = block * _BLOCK, cell_start[block], corner_start[block]
        # The block's kept cells gathered first, without a branch.
        verdicts = keep[at:min(n, at + _BLOCK)]
        count = 0
        for x in range(verdicts.shape[0]):
            kept[count] = at + x
            count += verdicts[x]
        for x in range(count):
            c = kept[x]
            cell_ids[q + x], types[q + x] = c, cell_types[c]
            corners = conn[offs[c]:offs[c + 1]]
            for m in range(corners.shape[0]):
                connectivity[w + m] = renumber[corners[m]]
            w += corners.shape[0]
            offsets[q + x + 1] = w


def _int_array(array: np.ndarray, dtypes: tuple) -> np.ndarray:
    """``array`` contiguous, in one of ``dtypes`` (the first where it is in none):
    the integer types the kernels are compiled for."""
    array = np.ascontiguousarray(array)
    return array if array.dtype in dtypes else array.astype(dtypes[0])


def threshold_unstructured(grid, s: np.ndarray, mode: int, invert: bool, low, high,
                           lower: float, upper: float):
    """The compiled threshold of an unstructured grid: ``s`` the contiguous
    float32 or float64 scalars, ``low`` and ``high`` the bounds in their dtype
    (rounded inwards), ``lower`` and ``upper`` as given (the continuous test).

    Raises
    ------
    CompiledUnavailable
        On a grid without cells, or scalars of another length (the array program
        serves them).
    IndexError
        If a cell's offsets or point ids are out of range.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[0, 1], [1, 2]]})
    >>> low, high = np.array([-1.0, 0.5])
    >>> threshold_unstructured(g, np.array([0.0, 1.0]), CELLS, True, low, high,
    ...                        -1.0, 0.5).cell_ids.tolist()
    [1]
    """
    n_cells, n_points = int(grid.n_cells), int(grid.n_points)
    if n_cells == 0 or s.shape[0] != (n_cells if mode == CELLS else n_points):
        raise CompiledUnavailable("the array program serves empty grids and odd fields")
    conn = _int_array(grid.connectivity, (np.dtype(np.int64), np.dtype(np.int32)))
    offs = _int_array(grid.offsets, (np.dtype(np.int64),))
    cell_types = _int_array(grid.cell_types, (np.dtype(np.uint8),))
    n_blocks = (n_cells + _BLOCK - 1) // _BLOCK
    keep = host_empty(n_cells, np.uint8)
    counts, sizes, bad = (host_empty(n_blocks, np.int64) for _ in range(3))
    used = np.zeros(n_points, np.uint8)
    invert, grid_arrays = bool(invert), (conn, offs, n_points, keep, counts, sizes, bad, used)
    if mode == CELLS:
        over_blocks(_classify_cells, n_blocks, s, invert, low, high, *grid_arrays)
    elif mode == CONTINUOUS:
        over_blocks(_classify_range, n_blocks, s, invert, float(lower), float(upper),
                    *grid_arrays)
    else:
        over_blocks(_classify_points, n_blocks, s, mode == ALL, invert, low, high,
                    *grid_arrays)
    refuse_bad_ids(int(bad.sum()))
    point_ids, renumber = number_points(used)
    cell_start, corner_start = exclusive(counts), exclusive(sizes)
    cell_ids = host_empty(cell_start[-1], np.int64)
    types = host_empty(cell_ids.shape[0], np.uint8)
    offsets = host_empty(cell_ids.shape[0] + 1, np.int64)
    offsets[0] = 0
    connectivity = host_empty(corner_start[-1], np.int64)
    over_blocks(_emit, n_blocks, keep, conn, offs, cell_types, cell_start, corner_start,
                cell_ids, types, offsets, connectivity, renumber)
    return Kept(cell_ids, point_ids, connectivity, offsets, types)
