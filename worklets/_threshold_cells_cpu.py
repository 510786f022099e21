"""The compiled CPU threshold's per-cell tests and its unstructured grids: the cells
read from the grid's own arrays (connectivity, offsets, types), which list each
cell's corners in the order of its shape's block
(:meth:`daxpy.UnstructuredGrid.cell_blocks`).

Three parallel passes over blocks of cells, each block handled by one thread:

1. *classify and count*: each cell's verdict (a byte), and per block the kept
   cells and their corners; a kept cell marks the points it uses while its ids
   are in cache; cells whose offsets or point ids are out of range are counted
   (the grid was written into since it was checked) and refused. Point tests
   read a byte a point (in range or not) made first: a fourth of a float32
   field's bytes, each point compared once rather than once per cell using it;
   a block of cells of one size one after the other (offsets a step apart) is
   read without its offsets, in loops the compiler vectorizes;
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
from ._scan_cpu import exclusive
from ._used_points_cpu import number_points

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
def _in_table(inside, ids, at, width, every):
    """Whether all (``every``) or any of the points ``ids[at:at + width]`` are in
    range (``inside``: a byte a point and a last one for ids out of range), and
    how many of those ids are out of range."""
    last, cell = np.uint64(inside.shape[0] - 1), ids[at:at + width]
    wrong, verdict = 0, np.uint8(every)
    for m in range(width):
        # Negative ids wrap to large ones: one comparison checks both ends, and the
        # byte read is in bounds either way.
        p = np.uint64(cell[m])
        wrong += p >= last
        # The least or greatest byte (not a sum, which a wide cell would overflow,
        # nor & or |, which ran 10% slower on 1 thread).
        byte = inside[min(p, last)]
        verdict = min(verdict, byte) if every else max(verdict, byte)
    return verdict != 0, wrong


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
    # Slices, indexed from 0: loops the compiler vectorizes (indices it cannot
    # prove positive are checked for wrapping, which it does not; 5 times slower).
    c0 = block * _BLOCK
    verdicts = keep[c0:min(offs.shape[0] - 1, c0 + _BLOCK)]
    ends = offs[c0:c0 + verdicts.shape[0] + 1]
    kept, corners = 0, 0
    for c in range(verdicts.shape[0]):
        kept += verdicts[c]
        corners += verdicts[c] * (ends[c + 1] - ends[c])
    counts[block], sizes[block] = kept, corners


@kernel(inline="always")
def _mark(used, conn, start, end):
    # Threads may mark one point together: each stores the same byte, so the mask
    # does not depend on their order. (Stored only while unmarked, to spare other
    # cores' lines, the 10M hexahedra's classify was no faster on 16 cores:
    # results/cpu-hex-threshold-marks-ab-16core-h200host.log.)
    # Unsigned: ids of kept cells are in range, and need no check for wrapping.
    ids = conn[start:end]
    for m in range(ids.shape[0]):
        used[np.uint64(ids[m])] = 1


@kernel(inline="always")
def _width(offs, c0, c1, n_ids):
    """The corners of each of cells ``c0`` to ``c1`` where they all have as many and
    their ids lie one after the other in the connectivity (``n_ids`` long); else 0."""
    ends = offs[c0:c1 + 1]
    start, width = ends[0], ends[1] - ends[0]
    # Both ends first: with a first step at most n_ids, the steps below cannot overflow.
    if start < 0 or width <= 0 or ends[1] > n_ids or ends[-1] > n_ids:
        return 0
    steps = 0
    for c in range(ends.shape[0]):
        # Without a branch: a loop the compiler vectorizes.
        steps |= ends[c] ^ (start + c * width)
    return width if steps == 0 else 0


@kernel(inline="always")
def _points_of_width(inside, every, invert, ids, width, verdicts, used):
    """The verdicts of cells of ``width`` corners each, ``ids`` theirs one after
    the other, and the marks of the kept cells' points; how many cells name a
    point out of range."""
    wrong = 0
    for c in range(verdicts.shape[0]):
        test, out = _in_table(inside, ids, c * width, width, every)
        wrong += out != 0
        verdicts[c] = (test != invert) & (out == 0)
    # Marked after the verdicts (their loop stores nothing else), from the block's
    # ids: through the offsets, twice as long on 1 thread.
    for c in range(verdicts.shape[0]):
        if verdicts[c]:
            _mark(used, ids, c * width, (c + 1) * width)
    return wrong


# One classify kernel per test: a first use compiles only the test it makes.

@block_kernel()
def _inside(s, low, high, inside, used, first, last):
    """Chunks ``first`` to ``last`` of the byte a point (and one more) that point
    tests read: whether the point's value is in range; and of the points' used
    marks, zeroed."""
    n = s.shape[0]
    for chunk in range(first, last):
        values = s[chunk * _BLOCK:min(n, (chunk + 1) * _BLOCK)]
        out = inside[chunk * _BLOCK:chunk * _BLOCK + values.shape[0]]
        marks = used[chunk * _BLOCK:chunk * _BLOCK + values.shape[0]]
        for p in range(values.shape[0]):
            out[p] = in_range(values[p], low, high)
            marks[p] = 0


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
def _classify_points(inside, every, invert, conn, offs, keep, counts, sizes, bad, used,
                     first, last):
    """Blocks ``first`` to ``last``: each cell's verdict from all (``every``) or any of
    its corners' bytes in ``inside``."""
    for block in range(first, last):
        c0, c1 = block * _BLOCK, min(offs.shape[0] - 1, (block + 1) * _BLOCK)
        width, verdicts = _width(offs, c0, c1, conn.shape[0]), keep[c0:c1]
        ids = conn[offs[c0]:offs[c1]] if width else conn  # the block's, where it reads them
        # Hexahedra's width a constant: loops the compiler unrolls and vectorizes.
        if width == 8:
            bad[block] = _points_of_width(inside, every, invert, ids, 8, verdicts, used)
        elif width:
            bad[block] = _points_of_width(inside, every, invert, ids, width, verdicts, used)
        else:
            wrong = 0
            for c in range(c0, c1):
                start, end = offs[c], offs[c + 1]
                if start < 0 or end < start or end > conn.shape[0]:
                    test, out = False, 1
                else:
                    test, out = _in_table(inside, conn, start, end - start, every)
                wrong += out != 0
                keep[c] = (test != invert) & (out == 0)
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
            kept[count] = x
            count += verdicts[x]
        # Slices of the block's cells and outputs, indexed from 0, and point ids read
        # unsigned (they are in range): no checks for wrapping (20% faster on 1 thread).
        ids, kinds, ends = cell_ids[q:q + count], types[q:q + count], offsets[q + 1:]
        its_kinds, starts = cell_types[at:], offs[at:]
        out, e = connectivity[w:corner_start[block + 1]], 0
        for x in range(count):
            c = kept[x]
            ids[x], kinds[x] = at + c, its_kinds[c]
            corners = conn[starts[c]:starts[c + 1]]
            for m in range(corners.shape[0]):
                out[e + m] = renumber[np.uint64(corners[m])]
            e += corners.shape[0]
            ends[x] = w + e


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
    # The point tests zero the used marks in their pass over the points, on every
    # core: NumPy's zeros took 0.8 ms a 10M-hexahedra threshold on the GPU machine's
    # host (cProfile, all its zeros; these 10 MB the largest), on one thread.
    point_tests = mode not in (CELLS, CONTINUOUS)
    used = host_empty(n_points, np.uint8) if point_tests else np.zeros(n_points, np.uint8)
    invert, grid_arrays = bool(invert), (conn, offs, n_points, keep, counts, sizes, bad, used)
    if mode == CELLS:
        over_blocks(_classify_cells, n_blocks, s, invert, low, high, *grid_arrays)
    elif mode == CONTINUOUS:
        over_blocks(_classify_range, n_blocks, s, invert, float(lower), float(upper),
                    *grid_arrays)
    else:
        inside = host_empty(n_points + 1, np.uint8)
        over_blocks(_inside, (n_points + _BLOCK - 1) // _BLOCK, s, low, high, inside, used)
        # Read for ids out of range, whose cells are refused: any byte would do.
        inside[n_points] = 0
        over_blocks(_classify_points, n_blocks, inside, mode == ALL, invert, conn, offs,
                    keep, counts, sizes, bad, used)
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
