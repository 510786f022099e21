"""Gradients on structured grids, by finite differences in index space.

vtkGradientFilter differentiates point data on image, rectilinear and
structured grids the same way: along each index axis a central difference
inside, a one-sided one at the border, of both the field and the point
coordinates; then the 3x3 index-to-space Jacobian turns those into spatial
derivatives. An axis with a single point contributes the unit vector of its
own coordinate axis and no change. On axis-aligned grids the Jacobian is
diagonal, so each derivative is one difference divided by one spacing,
written straight into the output in VTK's layout.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(3,), spacing=(0.5,))
>>> axis_aligned_point_gradient(g, np.array([0.0, 1.0, 4.0])).tolist()
[[2.0, 0.0, 0.0], [4.0, 0.0, 0.0], [6.0, 0.0, 0.0]]
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ._cell_gradients import CHUNK_CELLS, CellChunk
from ._jacobian import compute_dtype, gradient_output, prepare_field, solve_rows

CHUNK_POINTS = 1 << 16
"""Points per chunk of the curvilinear gradient (its temporaries are ~30 floats a point)."""

SLAB_BYTES = 1 << 21
"""Output bytes per slab of the axis-aligned point gradient (fits the L2/L3 cache)."""

_SHAPE_BY_DIMENSION = {0: "vertex", 1: "line", 2: "quad", 3: "hex"}


def _along(axis: int, index) -> tuple:
    """Index tuple selecting ``index`` along C-order ``axis`` of a (nz, ny, nx, ...) view."""
    return (slice(None),) * axis + (index,)


def _scale_along(scale: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    return scale.reshape((-1,) + (1,) * (ndim - axis - 1))


def _differences(field, target, axis: int, x: np.ndarray, lo: int, hi: int) -> None:
    """Write d(field)/dx along C-order ``axis`` for indices ``[lo, hi)`` into ``target``.

    ``field`` spans the whole axis, ``target`` only ``[lo, hi)``; central
    differences inside, one-sided ones at the two ends, zero on a single point.
    """
    n = len(x)
    if n == 1:
        target[...] = 0
        return
    inner_lo, inner_hi = max(lo, 1), min(hi, n - 1)
    pieces = []
    if lo == 0:
        pieces.append((0, 1, 1, 0))
    if inner_hi > inner_lo:
        pieces.append((inner_lo, inner_hi, inner_lo + 1, inner_lo - 1))
    if hi == n:
        pieces.append((n - 1, n, n - 1, n - 2))
    for start, stop, plus, minus in pieces:
        count = stop - start
        view = target[_along(axis, slice(start - lo, stop - lo))]
        np.subtract(field[_along(axis, slice(plus, plus + count))],
                    field[_along(axis, slice(minus, minus + count))], out=view,
                    dtype=view.dtype)
        scale = (1.0 / (x[plus:plus + count] - x[minus:minus + count])).astype(view.dtype)
        # Equal spacings (uniform grids) scale by one number: a cheaper pass.
        view *= scale[0] if np.all(scale == scale[0]) else _scale_along(scale, axis, view.ndim)


def axis_aligned_point_gradient(grid, values: np.ndarray, out: np.ndarray | None = None
                                ) -> np.ndarray:
    """Point gradient on a uniform or rectilinear grid (vtkGradientFilter's);
    parameters and result as :func:`daxpy.worklets.gradient.point_gradient`'s.

    The grid is walked in slabs of z-planes small enough that each slab of the
    output stays in cache while its three derivatives are written, so the
    output travels to memory once.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.RectilinearGrid([0.0, 1.0, 3.0])
    >>> axis_aligned_point_gradient(g, np.array([0.0, 1.0, 5.0]))[:, 0].round(4).tolist()
    [1.0, 1.6667, 2.0]
    """
    table, dtype = prepare_field(values, grid.n_points)
    c = table.shape[1]
    out = gradient_output(out, grid.n_points, c, dtype)
    field = table.reshape(grid.point_shape() + (c,))
    gradient = out.reshape(grid.point_shape() + (c, 3))
    coordinates = [grid.axis_coordinates(a) for a in range(3)]
    nz = grid.dims[2]
    plane_bytes = gradient[0].nbytes
    planes = max(1, SLAB_BYTES // max(plane_bytes, 1))
    for k0 in range(0, nz, planes):
        k1 = min(k0 + planes, nz)
        target = gradient[k0:k1]
        _slab_differences(field, target, coordinates, k0, k1)
        # One pass over a slab still in cache: the rare non-finite one is redone.
        if not np.isfinite(target).all():
            _redo_nonfinite(field, target, coordinates, k0, k1)
    return out


def _slab_differences(field, target, coordinates, k0: int, k1: int) -> None:
    """The three index-space derivatives of planes ``[k0, k1)`` into ``target``."""
    slab = field[k0:k1]
    _differences(slab, target[..., 0], 2, coordinates[0], 0, len(coordinates[0]))
    _differences(slab, target[..., 1], 1, coordinates[1], 0, len(coordinates[1]))
    _differences(field, target[..., 2], 0, coordinates[2], k0, k1)


def _redo_nonfinite(field, target, coordinates, k0: int, k1: int) -> None:
    """Redo the non-finite derivatives of a slab as VTK computes them.

    VTK differences in double: a difference of two float32 values near
    float32's maximum (or one over a spacing whose inverse float32 cannot
    hold) overflows in float32 only. And VTK multiplies the index-space
    derivatives by the whole inverse Jacobian, zeros included: a NaN or an
    infinite difference along one axis makes the other two derivatives of
    that point NaN (``0 * inf``). Finite results are left as they are, so
    every value depends on its own stencil only (chunked runs stay bitwise).
    """
    exact = np.empty(target.shape, dtype=compute_dtype(target.dtype))
    _slab_differences(field, exact, coordinates, k0, k1)
    np.copyto(target, exact, where=~np.isfinite(target), casting="unsafe")
    # Unit index spacings: the bare differences, non-finite only where an input is.
    _slab_differences(field, exact, [np.arange(len(x), dtype=exact.dtype) for x in coordinates],
                      k0, k1)
    bad = ~np.isfinite(exact)
    others_bad = bad.sum(axis=-1, keepdims=True) - bad > 0
    target[others_bad] = np.nan


def curvilinear_point_gradient(grid, values: np.ndarray, out: np.ndarray | None = None
                               ) -> np.ndarray:
    """Point gradient on a curvilinear grid, through the index-space Jacobian;
    parameters and result as :func:`daxpy.worklets.gradient.point_gradient`'s,
    zero where the Jacobian is singular, as in VTK.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> pts = np.array([[0, 0, 0], [2, 0, 0], [0, 1, 0], [2, 1, 0]], float)
    >>> g = daxpy.CurvilinearGrid((2, 2), pts)
    >>> (curvilinear_point_gradient(g, pts[:, 0] + 3 * pts[:, 1])[0] + 0.0).tolist()
    [1.0, 3.0, 0.0]
    """
    table, dtype = prepare_field(values, grid.n_points)
    c = table.shape[1]
    out = gradient_output(out, grid.n_points, c, dtype)
    if not grid.cell_axes:
        out[...] = 0
        return out
    compute = compute_dtype(dtype, np.asarray(grid.points()).dtype)
    xyz = np.asarray(grid.points()).astype(compute, copy=False)
    field = table.astype(compute, copy=False)
    strides = (1, grid.dims[0], grid.dims[0] * grid.dims[1])
    by_point = out.reshape(grid.n_points, c, 3)
    for start in range(0, grid.n_points, CHUNK_POINTS):
        ids = np.arange(start, min(start + CHUNK_POINTS, grid.n_points))
        rows, rhs = [], []
        for a in range(3):
            if grid.dims[a] == 1:
                unit = np.zeros((3, len(ids)), dtype=compute)
                unit[a] = 1
                rows.append(unit)
                rhs.append(None)
                continue
            index = (ids // strides[a]) % grid.dims[a]
            plus = ids + (np.minimum(index + 1, grid.dims[a] - 1) - index) * strides[a]
            minus = ids - (index - np.maximum(index - 1, 0)) * strides[a]
            # One-sided differences span one step, central ones two.
            factor = (1.0 / ((plus - minus) // strides[a])).astype(compute)
            rows.append(((xyz[plus] - xyz[minus]) * factor[:, None]).T)
            rhs.append(((field[plus] - field[minus]) * factor[:, None]).T)
        by_point[ids] = solve_rows(rows, rhs).transpose(2, 0, 1)
    return out


def axis_aligned_cell_gradient(grid, values: np.ndarray, out: np.ndarray | None = None
                               ) -> np.ndarray:
    """Cell gradient on a uniform or rectilinear grid: derivatives at cell centres;
    parameters and result as :func:`daxpy.worklets.gradient.cell_gradient`'s.

    A pixel's or voxel's derivative along an axis is the mean of the
    differences over its edges along that axis, divided by the edge length
    (VTK's vtkVoxel, vtkPixel and vtkLine give the same).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2), spacing=(2, 1))
    >>> axis_aligned_cell_gradient(g, np.array([0.0, 2.0, 1.0, 3.0])).tolist()
    [[1.0, 1.0, 0.0]]
    """
    table, dtype = prepare_field(values, grid.n_points)
    c = table.shape[1]
    out = gradient_output(out, grid.n_cells, c, dtype)
    # In double as vtkVoxel: differences and edge means of float32 values overflow.
    field = table.astype(compute_dtype(dtype), copy=False).reshape(grid.point_shape() + (c,))
    gradient = out.reshape(grid.cell_shape() + (c, 3))
    for a in range(3):
        axis = 2 - a
        if grid.dims[a] == 1:
            gradient[..., a] = 0
            continue
        delta = np.diff(field, axis=axis)
        for other in grid.cell_axes:
            if other != a:
                other_axis = 2 - other
                delta = 0.5 * (delta[_along(other_axis, slice(1, None))]
                               + delta[_along(other_axis, slice(None, -1))])
        width = np.diff(grid.axis_coordinates(a))
        gradient[..., a] = delta / _scale_along(width, axis, field.ndim)
    return out


def structured_cell_chunks(grid, size: int = CHUNK_CELLS) -> Iterator[CellChunk]:
    """The cells of a structured grid as VTK numbers them, in chunks of corner ids.

    A 3-D grid has hexahedra, a 2-D one quads in its two index axes, a 1-D
    one lines and a single point one vertex, with VTK's corner order.

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 1, 2))
    >>> next(structured_cell_chunks(g)).corners.tolist()
    [[0, 1, 4, 3], [1, 2, 5, 4]]
    """
    strides = np.array([1, grid.dims[0], grid.dims[0] * grid.dims[1]])
    axes = grid.cell_axes
    offsets = [0]
    for n, a in enumerate(axes):
        # VTK's order: the second axis walks back along the first (a quad goes
        # around), the third repeats the bottom face on top.
        previous = offsets[::-1] if n == 1 else offsets
        offsets = offsets + [o + int(strides[a]) for o in previous]
    offsets = np.array(offsets, dtype=np.int64)
    shape = _SHAPE_BY_DIMENSION[len(axes)]
    cell_dims = np.array(grid.cell_dims)
    for start in range(0, grid.n_cells, size):
        cells = np.arange(start, min(start + size, grid.n_cells))
        i = cells % cell_dims[0]
        j = (cells // cell_dims[0]) % cell_dims[1]
        k = cells // (cell_dims[0] * cell_dims[1])
        base = i * strides[0] + j * strides[1] + k * strides[2]
        yield CellChunk(shape, slice(start, start + len(cells)), base[:, None] + offsets)
