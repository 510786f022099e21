"""Compiled CPU threshold (Numba) of every grid family, giving the array program's
:class:`~daxpy.worklets.threshold.Kept` bit for bit: the same cells, points and
corners, in the same order and dtypes.

Structured grids (uniform, rectilinear, curvilinear: only the index structure
matters) run parallel passes over the grid's x-rows, ranges of rows dealt to the
threads (:mod:`._blocks_cpu`), each row handled by one thread, so the output does
not depend on the thread count:

1. *classify and count*: each cell's verdict (a byte) and each cell row's kept
   cells. Point tests read each point row once per cell row: a byte per x says
   which of the cell row's two or four point rows are in range there;
2. *mark and count*: a point is used where a cell beside it is kept (a stencil
   over the verdicts, no scatter), and each point row's used points are counted;
   they are numbered from a scan of the counts (:mod:`._used_points_cpu`);
3. *scan* (NumPy, over rows): where each cell row's kept cells go;
4. *emit*: the kept cells' ids, offsets, types and renumbered corners, each
   row's kept cells gathered first, without a branch.

The inner loops walk row slices with byte arithmetic, which the compiler
vectorizes.

Unstructured grids run :mod:`._threshold_cells_cpu`. Comparisons are the array
program's: in the field's dtype, against bounds rounded inwards to it, which is
comparing in float64 (:func:`~daxpy.worklets._marching.at_least`); the continuous
range is taken in float64.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(4,), point_data={"t": np.array([0.0, 1, 2, 3])})
>>> kept = threshold_cells(g, g.point_data["t"], at="points", lower=0.5, upper=2.5)
>>> kept.cell_ids.tolist(), kept.point_ids.tolist(), kept.connectivity.tolist()
([1], [1, 2], [0, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, over_blocks
from ._marching import range_bounds
from ._numba import CompiledUnavailable, kernel, kernel_dtype
from ._threshold_cells_cpu import (ALL, CELLS, CONTINUOUS, in_range, mode_of, range_meets,
                                   threshold_unstructured)
from ._scan_cpu import exclusive
from ._used_points_cpu import number_points
from .threshold import Kept, cell_corners

_BITS = np.array([1, 2, 4, 8], np.uint8)
_FULL = np.array([0, 1, 3, 0, 15], np.uint8)
_NONE = np.uint8(0)
"""A point row's bit in a column byte, the byte of a column all in range (by the
number of point rows) and no bit, as bytes: byte arithmetic vectorizes."""


# Serial kernels over ranges of rows, which _blocks_cpu.over_blocks deals to the
# threads (a parallel loop costs several times more to compile), and one classify
# kernel per test: a first use compiles only the test it makes. The loops walk
# row slices, and select rather than shift by a variable: loops the
# compiler vectorizes (ten times faster than indexing the whole arrays).

@kernel(inline="always")
def _count(verdicts):
    kept = 0
    for i in range(verdicts.shape[0]):
        kept += verdicts[i]
    return kept


@block_kernel()
def _classify_cells(s, invert, low, high, nx, keep, counts, first, last):
    """Cell rows ``first`` to ``last``: each cell's verdict from its own value, and
    each row's kept cells."""
    cx = nx - 1
    for row in range(first, last):
        verdicts, values = keep[row * cx:(row + 1) * cx], s[row * cx:(row + 1) * cx]
        for i in range(cx):
            verdicts[i] = in_range(values[i], low, high) != invert
        counts[row] = _count(verdicts)


@block_kernel()
def _classify_range(s, invert, lower, upper, nx, ny, corners, keep, counts, first, last):
    """Cell rows ``first`` to ``last``: each cell's verdict from its corners' range."""
    cx, cy = nx - 1, max(ny - 1, 1)
    for row in range(first, last):
        k = row // cy
        p0, verdicts = (k * ny + row - k * cy) * nx, keep[row * cx:(row + 1) * cx]
        for i in range(cx):
            verdicts[i] = range_meets(s, corners, p0 + i, lower, upper) != invert
        counts[row] = _count(verdicts)


@block_kernel()
def _classify_points(s, every, invert, low, high, nx, ny, rows, keep, counts, scratch, first,
                     last):
    """Cell rows ``first`` to ``last``: each cell's verdict from all (``every``) or any
    of its corners' values. ``scratch`` holds a byte per point (the used points'
    marks, which the mark pass writes later): a cell row's column bytes go in
    its first point row's, which no other cell row's use."""
    cx, cy = nx - 1, max(ny - 1, 1)
    full = _FULL[rows.shape[0]]
    for row in range(first, last):
        k = row // cy
        p0, verdicts = (k * ny + row - k * cy) * nx, keep[row * cx:(row + 1) * cx]
        columns = scratch[p0:p0 + nx]
        # One byte per x: bit t set where point row t of the cell row is in range.
        for i in range(nx):
            columns[i] = _NONE
        for t in range(rows.shape[0]):
            values = s[p0 + rows[t]:p0 + rows[t] + nx]
            bit = _BITS[t]
            for i in range(nx):
                columns[i] |= bit if in_range(values[i], low, high) else _NONE
        if every:
            for i in range(cx):
                verdicts[i] = ((columns[i] & columns[i + 1]) == full) != invert
        else:
            for i in range(cx):
                verdicts[i] = ((columns[i] | columns[i + 1]) != _NONE) != invert
        counts[row] = _count(verdicts)


@block_kernel()
def _mark(keep, nx, ny, nz, used, row_used, first, last):
    """Point rows ``first`` to ``last``: a point is used where a cell beside it is kept;
    how many each row uses."""
    cx, cy, cz = nx - 1, max(ny - 1, 1), max(nz - 1, 1)
    for row in range(first, last):
        k = row // ny
        j = row - k * ny
        # The kept cells of the one to four cell rows beside this point row, in the
        # row's marks (slices: loops the compiler vectorizes; no buffer: each kind of
        # array a kernel allocates costs its first use a compile) ...
        marks = used[row * nx:(row + 1) * nx]
        for i in range(cx):
            marks[i] = 0
        for kk in range(max(k - 1, 0), min(k, cz - 1) + 1):
            for jj in range(max(j - 1, 0), min(j, cy - 1) + 1):
                c0 = (kk * cy + jj) * cx
                verdicts = keep[c0:c0 + cx]
                for i in range(cx):
                    marks[i] |= verdicts[i]
        # ... then a point is used where the cell before or after it is kept:
        # downwards, so that each mark reads its cells before they are replaced.
        marks[cx] = marks[cx - 1]
        for i in range(cx - 1, 0, -1):
            marks[i] = marks[i - 1] | marks[i]
        row_used[row] = _count(marks)


@block_kernel()
def _emit(keep, nx, ny, corners, kind, starts, renumber, cell_ids, connectivity, offsets,
          types, first, last):
    """Cell rows ``first`` to ``last``'s kept cells, from their rows' starts."""
    cx, cy = nx - 1, max(ny - 1, 1)
    width = corners.shape[0]
    kept = np.empty(cx, np.int64)
    for row in range(first, last):
        q0, q1 = starts[row], starts[row + 1]
        if q0 == q1:
            continue
        k = row // cy
        p0, c0 = (k * ny + row - k * cy) * nx, row * cx
        # The row's kept cells gathered first, without a branch; then each
        # output array is written in one loop of its own.
        verdicts, count = keep[c0:c0 + cx], 0
        for i in range(cx):
            kept[count] = i
            count += verdicts[i]
        ids, out = cell_ids[q0:q1], connectivity[q0 * width:q1 * width]
        for x in range(q1 - q0):
            ids[x] = c0 + kept[x]
            types[q0 + x] = kind
            offsets[q0 + x + 1] = (q0 + x + 1) * width
            first_corner = p0 + kept[x]
            for m in range(width):
                out[x * width + m] = renumber[first_corner + corners[m]]


def _structured(grid, s: np.ndarray, mode: int, invert: bool, low, high, lower: float,
                upper: float) -> Kept:
    """The compiled threshold of a structured grid of more than one point."""
    sizes = [int(d) for d in grid.dims if int(d) > 1]
    # The axes of one point dropped: the point and cell ids stay the same.
    nx, ny, nz = (sizes + [1, 1])[:3]
    n_cells = int(np.prod([n - 1 for n in sizes]))
    if s.shape[0] != (n_cells if mode == CELLS else nx * ny * nz):
        raise CompiledUnavailable("the array program serves fields of another length")
    # Cell 0's corners are the corner offsets of every cell.
    table, kind = cell_corners(grid, np, np.zeros(1, np.int64))
    corners = np.ascontiguousarray(table[0])
    # The point rows of a cell row: along y then z from its first corner.
    rows = np.array([0, nx, nx * ny, nx + nx * ny][:1 << (len(sizes) - 1)], np.int64)
    keep, used = host_empty(n_cells, np.uint8), host_empty(nx * ny * nz, np.uint8)
    counts = host_empty(n_cells // (nx - 1), np.int64)
    invert = bool(invert)
    if mode == CELLS:
        over_blocks(_classify_cells, counts.shape[0], s, invert, low, high, nx, keep, counts)
    elif mode == CONTINUOUS:
        over_blocks(_classify_range, counts.shape[0], s, invert, float(lower), float(upper),
                    nx, ny, corners, keep, counts)
    else:
        over_blocks(_classify_points, counts.shape[0], s, mode == ALL, invert, low, high, nx,
                    ny, rows, keep, counts, used)
    row_used = host_empty(ny * nz, np.int64)
    over_blocks(_mark, ny * nz, keep, nx, ny, nz, used, row_used)
    point_ids, renumber = number_points(used, row_used, nx)
    starts = exclusive(counts)
    n_kept, width = int(starts[-1]), corners.shape[0]
    cell_ids, types = host_empty(n_kept, np.int64), host_empty(n_kept, np.uint8)
    offsets = host_empty(n_kept + 1, np.int64)
    offsets[0] = 0
    connectivity = host_empty(n_kept * width, np.int64)
    over_blocks(_emit, counts.shape[0], keep, nx, ny, corners, np.uint8(kind), starts,
                renumber, cell_ids, connectivity, offsets, types)
    return Kept(cell_ids, point_ids, connectivity, offsets, types)


def threshold_cells(grid: Any, values: Any, *, at: str, lower: float, upper: float,
                    all_points: bool = True, continuous: bool = False, invert: bool = False,
                    ids: bool = True, place=None) -> Kept:
    """The compiled form of :func:`daxpy.worklets.threshold.threshold_cells`, on
    float32 and float64 scalars of every grid family (which always makes the ids:
    ``ids`` is the GPU's choice).

    Raises
    ------
    CompiledUnavailable
        On grids of one point or without cells, scalars of other dtypes or shapes:
        the array program serves them.
    IndexError
        If an unstructured grid's cells name points out of range.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.worklets.threshold import threshold_cells as reference
    >>> g, t = daxpy.UniformGrid(dims=(4, 3, 2)), np.arange(24.0)
    >>> ours = threshold_cells(g, t, at="points", lower=7, upper=30)
    >>> ours.connectivity.tolist() == reference(g, t, at="points", lower=7,
    ...                                         upper=30).connectivity.tolist()
    True
    """
    s = np.ascontiguousarray(kernel_dtype(values)[0])
    if s.ndim != 1:
        raise CompiledUnavailable("the compiled threshold takes one scalar per element")
    mode = mode_of(at, all_points, continuous)
    low, high = range_bounds(s.dtype, float(lower), float(upper))
    if grid.family == "unstructured":
        return threshold_unstructured(grid, s, mode, invert, low, high, lower, upper)
    if all(int(d) == 1 for d in grid.dims):
        raise CompiledUnavailable("a grid of one point has one vertex cell: the array program")
    return _structured(grid, s, mode, invert, low, high, lower, upper)
