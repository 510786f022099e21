"""Compiled CPU kernels of the two averages on uniform, rectilinear and curvilinear
grids (only the index structure matters).

One parallel loop (Numba ``prange``), component by component, in float64,
with the NumPy implementations' arithmetic in their order, so the results are
their bits:

- point to cell, over the output's x-rows, without temporaries: a cell's
  corners summed in pairs along x, the pairs along y, then along z, times
  ``0.5 ** axes``;
- cell to point, over runs of point planes: a point's cells (one or two per
  axis) spread along x (their mean, or the one cell at a border), those along
  y, then along z. Each step is a pass over a whole plane held in per-task
  buffers (3 planes of float64), so every cell's spread along x and every
  plane's along y is computed once, not once per point that uses it, and the
  loops run without branches, in SIMD lanes. Point by point, the kernel was
  slower than the NumPy passes on 2 cores (70 against 47 ms at 216^3).

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


@kernel()
def _spread_plane(values, q, plane, nx, ny, cx, cy, xrows, spread):
    """Into ``spread`` ``(ny, nx)``, each point of a point plane the mean of the
    cells beside it in cell plane ``plane``: the cells' spreads along x (their
    mean, or the one cell at a border) into ``xrows`` ``(cy, nx)``, then those
    along y. The borders apart, every loop runs without branches, in SIMD lanes."""
    for j in range(cy):
        row = plane + j * cx
        xrows[j, 0] = values[row, q]
        for i in range(1, nx - 1):
            xrows[j, i] = (np.float64(values[row + i - 1, q])
                           + np.float64(values[row + i, q])) * 0.5
        if nx > 1:
            xrows[j, nx - 1] = values[row + cx - 1, q]
    for j in range(ny):
        lo, hi = (j - 1 if j > 0 else 0), (j if j < cy else cy - 1)
        if lo == hi:
            # A loop, not a slice copy: Numba compiles a slice copy with its
            # broadcast error's string formatting (about 2 s, cold).
            for i in range(nx):
                spread[j, i] = xrows[lo, i]
            continue
        for i in range(nx):
            spread[j, i] = (xrows[lo, i] + xrows[hi, i]) * 0.5


@kernel()
def _points_task(values, nx, ny, nz, b, planes, out):
    """Point planes ``b * planes`` to ``(b + 1) * planes`` of cell-to-point."""
    cx, cy, cz = max(nx - 1, 1), max(ny - 1, 1), max(nz - 1, 1)
    xrows = np.empty((cy, nx))
    # The spreads of the two cell planes beside a point plane; a task's next
    # point plane reuses the upper one as its lower.
    below, above = np.empty((ny, nx)), np.empty((ny, nx))
    for q in range(values.shape[1]):
        has_below = has_above = -1
        for k in range(b * planes, min(nz, (b + 1) * planes)):
            lo, hi = (k - 1 if k > 0 else 0), (k if k < cz else cz - 1)
            if has_above == lo:
                below, above, has_below, has_above = above, below, has_above, has_below
            if has_below != lo:
                _spread_plane(values, q, lo * cx * cy, nx, ny, cx, cy, xrows, below)
                has_below = lo
            if lo != hi and has_above != hi:
                _spread_plane(values, q, hi * cx * cy, nx, ny, cx, cy, xrows, above)
                has_above = hi
            base = k * ny * nx
            for j in range(ny):
                for i in range(nx):
                    out[base + j * nx + i, q] = ((below[j, i] + above[j, i]) * 0.5
                                                 if lo != hi else below[j, i])


@kernel(parallel=True)
def _points_from_cells(values, nx, ny, nz, planes, out):
    # The loop's body is a call: Numba's parallel lowering then compiles a
    # small loop, not the body's arrays and branches (seconds, cold). The index
    # is passed as int64: the parallel loop's own is unsigned, and a second
    # argument type would compile the body twice.
    for b in prange((nz + planes - 1) // planes):
        _points_task(values, nx, ny, nz, np.int64(b), planes, out)


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
    # One run of point planes per thread: prange hands each thread an equal share
    # of the tasks, so as many tasks as threads balance the work, and a task
    # spreads one cell plane more than it has point planes (4 planes a task at
    # 215^3 and 16 threads: 54 tasks, 3 or 4 a thread, 25% extra spreads). The
    # count is read here: read in the kernel, it would keep Numba from caching it.
    nz, threads = grid.dims[2], get_num_threads()
    planes = (nz + threads - 1) // threads
    return _average(grid, values, out, "cell",
                    lambda table, nx, ny, nz, points: _points_from_cells(table, nx, ny, nz,
                                                                         planes, points))
