"""Compiled CPU kernels of the two averages on uniform, rectilinear and curvilinear
grids (only the index structure matters).

One parallel loop over the output's x-rows (Numba ``prange``), component by
component, in float64, with the NumPy implementations' arithmetic in their
order, so the results are their bits, and no temporaries (the NumPy passes
hold slab buffers per thread):

- point to cell: a cell's corners summed in pairs along x, the pairs along y,
  then along z, times ``0.5 ** axes``;
- cell to point: a point's cells (one or two per axis) spread along x (their
  mean, or the one cell at a border), those along y, then along z.

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
from numba import prange

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
def _spread_x(values, q, row, i, cx):
    """The mean of the cells beside point ``i`` of the cell row starting at ``row``."""
    lo, hi = (i - 1 if i > 0 else 0), (i if i < cx else cx - 1)
    a = np.float64(values[row + lo, q])
    return a if lo == hi else (a + np.float64(values[row + hi, q])) * 0.5


@kernel()
def _spread_xy(values, q, plane, i, j, cx, cy):
    lo, hi = (j - 1 if j > 0 else 0), (j if j < cy else cy - 1)
    a = _spread_x(values, q, plane + lo * cx, i, cx)
    return a if lo == hi else (a + _spread_x(values, q, plane + hi * cx, i, cx)) * 0.5


@kernel(parallel=True)
def _points_from_cells(values, nx, ny, nz, out):
    cx, cy, cz = max(nx - 1, 1), max(ny - 1, 1), max(nz - 1, 1)
    for row in prange(ny * nz):
        k = row // ny
        j = row - k * ny
        lo, hi = (k - 1 if k > 0 else 0), (k if k < cz else cz - 1)
        for q in range(values.shape[1]):
            for i in range(nx):
                a = _spread_xy(values, q, lo * cx * cy, i, j, cx, cy)
                if lo != hi:
                    a = (a + _spread_xy(values, q, hi * cx * cy, i, j, cx, cy)) * 0.5
                out[row * nx + i, q] = a


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
    return _average(grid, values, out, "cell", _points_from_cells)
