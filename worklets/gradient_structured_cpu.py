"""Compiled CPU kernels of the point and cell gradients on uniform and
rectilinear grids.

One parallel loop over the grid's x-rows (Numba ``prange``), component by
component, with the NumPy implementations' arithmetic in their order, so the
results are their bits:

- point gradient: central differences inside and one-sided ones at the
  border, each a difference in the field's dtype times the inverse of its
  stencil's length. The rare row with a non-finite result hands the call to
  the NumPy implementation, which redoes such values as VTK computes them
  (see :func:`daxpy.worklets._structured_gradient._redo_nonfinite`);
- cell gradient: along each axis the mean of the cell's edge differences
  (pairwise, the other axes in ascending order), in float64, over the edge's
  length, as vtkVoxel and vtkPixel; no temporaries of the grid's size.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(2, 2), spacing=(0.5, 2.0))
>>> axis_aligned_point_gradient(g, np.array([0.0, 1.0, 4.0, 5.0]))[0].tolist()
[2.0, 2.0, 0.0]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from . import _structured_gradient as reference
from ._jacobian import gradient_output, prepare_field
from ._numba import cell_steps, columns, kernel, row_corner

_cell_steps, _row_corner = kernel()(cell_steps), kernel()(row_corner)


@kernel()
def _point(field, q, out, p, left, right, front, back, below, above, sx, sy, sz, axes):
    """Component q's three derivatives at point p (zero along a single-point
    axis); returns 0 if they are finite, else NaN: ``x - x`` needs no branch."""
    zero = field.dtype.type(0)
    dx = (field[right, q] - field[left, q]) * sx if axes[0] else zero
    dy = (field[back, q] - field[front, q]) * sy if axes[1] else zero
    dz = (field[above, q] - field[below, q]) * sz if axes[2] else zero
    out[p, 3 * q], out[p, 3 * q + 1], out[p, 3 * q + 2] = dx, dy, dz
    return (dx - dx) + (dy - dy) + (dz - dz)


@kernel(parallel=True)
def _point_gradient_rows(field, nx, ny, nz, inverse_x, inverse_y, inverse_z, out):
    plane = nx * ny
    axes = (nx > 1, ny > 1, nz > 1)
    bad = 0
    for row in prange(ny * nz):
        k = row // ny
        j = row - k * ny
        p0 = row * nx
        front = p0 - (nx if j > 0 else 0)
        back = p0 + (nx if j < ny - 1 else 0)
        below = p0 - (plane if k > 0 else 0)
        above = p0 + (plane if k < nz - 1 else 0)
        sy, sz = inverse_y[j], inverse_z[k]
        nonfinite = field.dtype.type(0)
        # Component-major: the inner loop over a row's interior has no other loop.
        for q in range(field.shape[1]):
            nonfinite += _point(field, q, out, p0, p0, p0 + min(1, nx - 1), front, back, below,
                                above, inverse_x[0], sy, sz, axes)
            for i in range(1, nx - 1):
                nonfinite += _point(field, q, out, p0 + i, p0 + i - 1, p0 + i + 1, front + i,
                                    back + i, below + i, above + i, inverse_x[i], sy, sz, axes)
            if nx > 1:
                i = nx - 1
                nonfinite += _point(field, q, out, p0 + i, p0 + i - 1, p0 + i, front + i,
                                    back + i, below + i, above + i, inverse_x[i], sy, sz, axes)
        if nonfinite != 0:
            bad += 1
    return bad


def stencil_inverses(x: np.ndarray, dtype) -> np.ndarray:
    """``1 / (x[hi] - x[lo])`` of each index's stencil along an axis (central
    inside, one-sided at the ends) in ``dtype``: the NumPy implementation's scales.

    Examples
    --------
    >>> stencil_inverses(np.array([0.0, 1.0, 3.0]), np.float32).tolist()
    [1.0, 0.3333333432674408, 0.5]
    """
    n = len(x)
    if n == 1:
        return np.zeros(1, dtype)
    i = np.arange(n)
    return (1.0 / (x[np.minimum(i + 1, n - 1)] - x[np.maximum(i - 1, 0)])).astype(dtype)


def axis_aligned_point_gradient(grid, values: np.ndarray, out: np.ndarray | None = None
                                ) -> np.ndarray:
    """The compiled form of
    :func:`daxpy.worklets._structured_gradient.axis_aligned_point_gradient` (float fields).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.RectilinearGrid([0.0, 1.0, 3.0])
    >>> f = np.array([0.0, 1.0, 5.0])
    >>> ours = axis_aligned_point_gradient(g, f)
    >>> theirs = reference.axis_aligned_point_gradient(g, f)
    >>> ours[:, 0].round(4).tolist(), np.array_equal(ours, theirs)
    ([1.0, 1.6667, 2.0], True)
    """
    table, dtype = prepare_field(values, grid.n_points)
    table = columns(table)
    out = gradient_output(out, grid.n_points, table.shape[1], dtype)
    inverses = [stencil_inverses(grid.axis_coordinates(a), table.dtype) for a in range(3)]
    if _point_gradient_rows(table, *grid.dims, *inverses, out):
        # A non-finite value: the NumPy implementation redoes it as VTK does.
        return reference.axis_aligned_point_gradient(grid, values, out=out)
    return out


@kernel()
def _edge_mean(field, q, p, step, first, second):
    """Mean difference along ``step`` over a cell's edges from corner ``p``: the
    edges across ``first`` averaged pairwise, then across ``second`` (0: none)."""
    d00 = np.float64(field[p + step, q]) - np.float64(field[p, q])
    if first == 0:
        return d00
    d10 = np.float64(field[p + first + step, q]) - np.float64(field[p + first, q])
    low = 0.5 * (d10 + d00)
    if second == 0:
        return low
    d01 = np.float64(field[p + second + step, q]) - np.float64(field[p + second, q])
    d11 = (np.float64(field[p + first + second + step, q])
           - np.float64(field[p + first + second, q]))
    return 0.5 * (0.5 * (d11 + d01) + low)


@kernel(parallel=True)
def _cell_gradient_rows(field, nx, ny, nz, width_x, width_y, width_z, out):
    cx, cy, cz, sx, sy, sz = _cell_steps(nx, ny, nz)
    for row in prange(cy * cz):
        k, j, p0 = _row_corner(row, cy, nx, ny)
        for q in range(field.shape[1]):
            o = 3 * q
            for i in range(cx):
                p, cell = p0 + i, row * cx + i
                # Each axis's edges are averaged over the other active axes in ascending order.
                gx = _edge_mean(field, q, p, sx, sy if sy else sz, sz if sy else 0) / width_x[i] \
                    if sx else 0.0
                gy = _edge_mean(field, q, p, sy, sx if sx else sz, sz if sx else 0) / width_y[j] \
                    if sy else 0.0
                gz = _edge_mean(field, q, p, sz, sx if sx else sy, sy if sx else 0) / width_z[k] \
                    if sz else 0.0
                out[cell, o], out[cell, o + 1], out[cell, o + 2] = gx, gy, gz


@kernel(parallel=True)
def _voxel_gradient_rows(field, nx, ny, nz, width_x, width_y, width_z, out):
    """_cell_gradient_rows where every axis has cells (voxels): the same sums, with
    the eight corners read once and no branch in the loop."""
    cy, sy, sz = ny - 1, nx, nx * ny
    for row in prange(cy * (nz - 1)):
        k, j, p0 = _row_corner(row, cy, nx, ny)
        for q in range(field.shape[1]):
            o = 3 * q
            for i in range(nx - 1):
                p, cell = p0 + i, row * (nx - 1) + i
                f000, f100 = np.float64(field[p, q]), np.float64(field[p + 1, q])
                f010, f110 = np.float64(field[p + sy, q]), np.float64(field[p + sy + 1, q])
                f001, f101 = np.float64(field[p + sz, q]), np.float64(field[p + sz + 1, q])
                f011 = np.float64(field[p + sz + sy, q])
                f111 = np.float64(field[p + sz + sy + 1, q])
                out[cell, o] = 0.5 * (0.5 * ((f111 - f011) + (f101 - f001))
                                      + 0.5 * ((f110 - f010) + (f100 - f000))) / width_x[i]
                out[cell, o + 1] = 0.5 * (0.5 * ((f111 - f101) + (f011 - f001))
                                          + 0.5 * ((f110 - f100) + (f010 - f000))) / width_y[j]
                out[cell, o + 2] = 0.5 * (0.5 * ((f111 - f110) + (f011 - f010))
                                          + 0.5 * ((f101 - f100) + (f001 - f000))) / width_z[k]


def cell_widths(x: np.ndarray) -> np.ndarray:
    """The widths of an axis's cells as the NumPy implementation divides by them:
    differences in the axis's dtype, then float64 (one point: one width of 1).

    Examples
    --------
    >>> cell_widths(np.array([0.0, 0.5, 2.0])).tolist()
    [0.5, 1.5]
    """
    return np.diff(x).astype(np.float64) if len(x) > 1 else np.ones(1)


def axis_aligned_cell_gradient(grid, values: np.ndarray, out: np.ndarray | None = None
                               ) -> np.ndarray:
    """The compiled form of
    :func:`daxpy.worklets._structured_gradient.axis_aligned_cell_gradient` (float fields).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2, 2), spacing=(1.0, 2.0, 4.0))
    >>> f = np.arange(8.0)
    >>> ours = axis_aligned_cell_gradient(g, f)
    >>> ours.tolist(), np.array_equal(ours, reference.axis_aligned_cell_gradient(g, f))
    ([[1.0, 1.0, 1.0]], True)
    """
    table, dtype = prepare_field(values, grid.n_points)
    table = columns(table)
    out = gradient_output(out, grid.n_cells, table.shape[1], dtype)
    widths = [cell_widths(grid.axis_coordinates(a)) for a in range(3)]
    rows = _voxel_gradient_rows if min(grid.dims) > 1 else _cell_gradient_rows
    rows(table, *grid.dims, *widths, out)
    return out

