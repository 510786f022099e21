"""Compiled CPU kernel of the point gradient on uniform and rectilinear grids.

One parallel loop over the grid's x-rows (Numba ``prange``): each point's
three derivatives are central differences inside and one-sided ones at the
border, each a difference in the field's dtype times the inverse of its
stencil's length, which is the NumPy implementation's arithmetic in its
order, so the results are its bits. The rare slab with a non-finite result
goes to the NumPy implementation, which redoes such values as VTK computes
them (see :func:`daxpy.worklets._structured_gradient._redo_nonfinite`).

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
from ._numba import columns, kernel


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
    >>> ours[:, 0].round(4).tolist(), np.array_equal(ours, reference.axis_aligned_point_gradient(g, f))
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
