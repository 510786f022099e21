"""Compiled CPU kernels of the two averages on uniform, rectilinear and curvilinear
grids (only the index structure matters).

Component by component, in float64, with the NumPy implementations'
arithmetic in their order, so the results are their bits:

- point to cell, one parallel loop (Numba ``prange``) over the output's
  x-rows, without temporaries: a cell's corners summed in pairs along x, the
  pairs along y, then along z, times ``0.5 ** axes``;
- cell to point, a serial kernel over a run of point planes on each of the
  Python threads of :mod:`daxpy.worklets._blocks_cpu` (as a parallel loop its
  first call cost 1.8-2.0 s on 2 cores; so, 0.65-0.77 s): a point's cells (one
  or two per axis) spread along x (their mean, or the one cell at a border),
  those along y, then along z. Each step is a pass over a tile of
  :data:`TILE_ROWS` rows held in the task's buffers (float64, made by the
  caller), through all the task's planes, so every cell's spread along x and
  every plane's along y is computed once (a tile's edge row twice), not once
  per point that uses it, and the loops run without branches, in SIMD lanes.
  With whole planes in the buffers, the tasks contended for the shared cache
  (2 threads on this 2-core machine ran no faster than one: 25 ms at 216^3;
  in tiles, 27 and 14 ms).
  Point by point, the kernel was slower than the NumPy passes on 2 cores (70
  against 47 ms at 216^3).

An axis of one point has one plane of cells and adds no step.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(2, 2, 2))
>>> point_to_cell_structured(g, np.arange(8.0) ** 2).tolist()
[17.5]
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, prange

from ._averaging import average_output
from ._blocks_cpu import block_kernel, inner_kernel, on_threads
from ._numba import cell_steps, columns, kernel, row_corner

_cell_steps, _row_corner = kernel()(cell_steps), kernel()(row_corner)


@kernel()
def _corner_sum_x(values, q, p, sx):
    return np.float64(values[p, q]) + np.float64(values[p + sx, q]) if sx \
        else np.float64(values[p, q])


@kernel()
def _corner_sum_xy(values, q, p, sx, sy):
    low = _corner_sum_x(values, q, p, sx)
    return low + _corner_sum_x(values, q, p + sy, sx) if sy else low


@kernel(parallel=True)
def _cells_from_points(values, nx, ny, nz, scale, out):
    cx, cy, cz, sx, sy, sz = _cell_steps(nx, ny, nz)
    for row in prange(cy * cz):
        k, j, p0 = _row_corner(row, cy, nx, ny)
        for q in range(values.shape[1]):
            for i in range(cx):
                p = p0 + i
                total = _corner_sum_xy(values, q, p, sx, sy)
                if sz:
                    total = total + _corner_sum_xy(values, q, p + sz, sx, sy)
                out[row * cx + i, q] = total * scale


TILE_ROWS = 16
"""Point rows a task averages at a time, through all its planes: its buffers (two
spreads of this many rows and the x spreads of one more, in float64) stay in the
core's own cache. Whole planes in them (1.1 MB at 215^2) contended for the shared
cache: on 16 cores each task ran 1.65x slower than alone."""


@inner_kernel()
def _spread_rows(values, q, plane, nx, cy, cx, j0, j1, xrows, spread):
    """Into ``spread`` rows ``0 .. j1 - j0``, each point of point rows ``j0 .. j1`` of
    a point plane the mean of the cells beside it in cell plane ``plane``: the
    spreads along x of the cell rows they use (their mean, or the one cell at a
    border) into ``xrows``, then those along y. The borders apart, every loop runs
    without branches, in SIMD lanes."""
    c0, c1 = (j0 - 1 if j0 > 0 else 0), (j1 - 1 if j1 - 1 < cy else cy - 1)
    for r in range(c0, c1 + 1):
        row = plane + r * cx
        xrows[r - c0, 0] = values[row, q]
        for i in range(1, nx - 1):
            xrows[r - c0, i] = (np.float64(values[row + i - 1, q])
                                + np.float64(values[row + i, q])) * 0.5
        if nx > 1:
            xrows[r - c0, nx - 1] = values[row + cx - 1, q]
    for j in range(j0, j1):
        lo, hi = (j - 1 if j > 0 else 0) - c0, (j if j < cy else cy - 1) - c0
        if lo == hi:
            # A loop, not a slice copy: Numba compiles a slice copy with its
            # broadcast error's string formatting (about 2 s, cold).
            for i in range(nx):
                spread[j - j0, i] = xrows[lo, i]
            continue
        for i in range(nx):
            spread[j - j0, i] = (xrows[lo, i] + xrows[hi, i]) * 0.5


@block_kernel()
def _points_task(values, nx, ny, nz, planes, xrows, spreads, out, task, n_tasks):
    """Point planes ``task * planes`` to ``(task + 1) * planes`` of cell-to-point,
    :data:`TILE_ROWS` rows at a time, with the task's own buffers ``xrows[task]``
    and ``spreads[task]`` (made by the caller: an array made here would cost its
    first call 0.1-0.2 s). Conditional expressions, not ``min``/``max``: each
    builtin overload compiles too."""
    cx, cy, cz = (nx - 1 if nx > 1 else 1), (ny - 1 if ny > 1 else 1), (nz - 1 if nz > 1 else 1)
    rows = xrows[task]
    tile = spreads.shape[2]
    last = (task + 1) * planes
    if last > nz:
        last = nz
    for q in range(values.shape[1]):
        for j0 in range(0, ny, tile):
            j1 = j0 + tile if j0 + tile < ny else ny
            # The spreads of the two cell planes beside a point plane; the next
            # point plane reuses the upper one as its lower.
            below, above = spreads[task, 0], spreads[task, 1]
            has_below = has_above = -1
            for k in range(task * planes, last):
                lo, hi = (k - 1 if k > 0 else 0), (k if k < cz else cz - 1)
                if has_above == lo:
                    below, above, has_below, has_above = above, below, has_above, has_below
                if has_below != lo:
                    _spread_rows(values, q, lo * cx * cy, nx, cy, cx, j0, j1, rows, below)
                    has_below = lo
                if lo != hi and has_above != hi:
                    _spread_rows(values, q, hi * cx * cy, nx, cy, cx, j0, j1, rows, above)
                    has_above = hi
                base = k * ny * nx
                for j in range(j0, j1):
                    for i in range(nx):
                        out[base + j * nx + i, q] = ((below[j - j0, i] + above[j - j0, i]) * 0.5
                                                     if lo != hi else below[j - j0, i])


def _points_from_cells(values, nx, ny, nz, planes, out):
    """Cell-to-point of the table ``values`` into ``out``, one task of ``planes``
    point planes a thread, each with its own buffers. A serial kernel on Python
    threads, not a Numba parallel loop: the loop alone cost its first call about
    0.5 s more (:mod:`daxpy.worklets._blocks_cpu`)."""
    n_tasks = (nz + planes - 1) // planes
    tile = TILE_ROWS if TILE_ROWS < ny else ny
    xrows, spreads = np.empty((n_tasks, tile + 1, nx)), np.empty((n_tasks, 2, tile, nx))
    on_threads(_points_task, n_tasks, values, nx, ny, nz, planes, xrows, spreads, out)


def _average(grid, values: np.ndarray, out: np.ndarray | None, source: str, rows) -> np.ndarray:
    """Average ``values`` (over the ``source`` association) with the row kernel
    ``rows(table, nx, ny, nz, ..., out_table)``; a grid of one point is one vertex
    cell, whose value is the point's."""
    out = average_output(grid, values, source, out)
    table = columns(values)
    n_out = grid.n_cells if source == "point" else grid.n_points
    if not grid.cell_axes:
        np.copyto(out, values)
    else:
        rows(table, *grid.dims, out.reshape(n_out, table.shape[1]))
    return out


def point_to_cell_structured(grid, values: np.ndarray, out: np.ndarray | None = None):
    """The compiled form of :func:`daxpy.worklets.point_to_cell.point_to_cell_structured`
    (float fields).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> point_to_cell_structured(daxpy.UniformGrid(dims=(3, 2)), np.arange(6.0)).tolist()
    [2.0, 3.0]
    """
    scale = 0.5 ** len(grid.cell_axes)
    return _average(grid, values, out, "point",
                    lambda table, nx, ny, nz, cells: _cells_from_points(table, nx, ny, nz,
                                                                        scale, cells))


def cell_to_point_structured(grid, values: np.ndarray, out: np.ndarray | None = None):
    """The compiled form of :func:`daxpy.worklets.cell_to_point.cell_to_point_structured`
    (float fields).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 1, 3))
    >>> cell_to_point_structured(g, np.array([1.0, 3.0], np.float32)).tolist()
    [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    """
    # One run of point planes per thread, the runs as even as the planes allow: a
    # task spreads one cell plane more than it has point planes, so more, smaller
    # tasks would spread more. The count is read here: read in the kernel, it
    # would keep Numba from caching it.
    nz, threads = grid.dims[2], get_num_threads()
    planes = (nz + threads - 1) // threads
    return _average(grid, values, out, "cell",
                    lambda table, nx, ny, nz, points: _points_from_cells(table, nx, ny, nz,
                                                                         planes, points))
