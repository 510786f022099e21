"""Independent whole-array references (NumPy or CuPy) for checking kernels.

Written with slicing only, in float64, and sharing no code with daxpy or the
reference kernels, so that agreement means something. Each works on NumPy and
on CuPy arrays alike (the module of the input is used).

Examples
--------
>>> import numpy as np
>>> f = np.arange(24, dtype=np.float32)          # f = x + 4y + 12z on a 4x3x2 grid
>>> g = gradient_structured(f, (4, 3, 2), [np.arange(4), np.arange(3), np.arange(2)])
>>> g[5].tolist()
[1.0, 4.0, 12.0]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def xp_of(array: Any):
    """``numpy`` or ``cupy``, whichever owns ``array``.

    Examples
    --------
    >>> xp_of(np.zeros(1)).__name__
    'numpy'
    """
    if isinstance(array, np.ndarray):
        return np
    import cupy

    return cupy.get_array_module(array)


def _index_diff(a, axis: int, coords=None):
    """VTK's structured stencil along ``axis``: central inside, one-sided at ends.

    With ``coords`` (1-D, the axis's coordinates) it is the derivative in
    space; without, the difference in index space (half the central span).
    """
    xp = xp_of(a)
    a = xp.moveaxis(a, axis, 0)
    n = a.shape[0]
    out = xp.zeros(a.shape, dtype=xp.float64)
    if n == 1:
        return xp.moveaxis(out, 0, axis)
    x = (xp.arange(n, dtype=xp.float64) if coords is None
         else xp.asarray(coords, dtype=xp.float64))
    shape = (n,) + (1,) * (a.ndim - 1)
    x = x.reshape(shape)
    out[1:-1] = (a[2:] - a[:-2]) / (x[2:] - x[:-2])
    out[:1] = (a[1:2] - a[:1]) / (x[1:2] - x[:1])
    out[-1:] = (a[-1:] - a[-2:-1]) / (x[-1:] - x[-2:-1])
    return xp.moveaxis(out, 0, axis)


def gradient_structured(f, dims: Sequence[int], axes: Sequence[Any]):
    """Point gradient ``(n, 3)`` of a scalar field on a uniform or rectilinear grid.

    ``axes`` holds the three coordinate arrays (x, y, z).
    """
    xp = xp_of(f)
    nx, ny, nz = dims
    f3 = xp.asarray(f, dtype=xp.float64).reshape(nz, ny, nx)
    parts = [_index_diff(f3, 2 - a, axes[a]).ravel() for a in range(3)]
    return xp.stack(parts, axis=1)


def gradient_curvilinear(f, points, dims: Sequence[int]):
    """Point gradient ``(n, 3)`` on a 3-D curvilinear grid: solve ``J^T g = df/dxi``."""
    xp = xp_of(f)
    nx, ny, nz = dims
    f3 = xp.asarray(f, dtype=xp.float64).reshape(nz, ny, nx)
    p3 = xp.asarray(points, dtype=xp.float64).reshape(nz, ny, nx, 3)
    rows = []
    for axis in (2, 1, 0):                       # xi, eta, zeta
        dp = _index_diff(p3, axis).reshape(-1, 3)
        df = _index_diff(f3, axis).reshape(-1, 1)
        rows.append(xp.concatenate([dp, df], axis=1))
    m = xp.stack(rows, axis=1)                   # (n, 3 xi-rows, [dx dy dz df])
    return xp.linalg.solve(m[:, :, :3], m[:, :, 3:])[:, :, 0]


def point_to_cell_structured(f, dims: Sequence[int]):
    """Average of the eight corners of every cell of a 3-D structured grid."""
    xp = xp_of(f)
    nx, ny, nz = dims
    f3 = xp.asarray(f, dtype=xp.float64).reshape(nz, ny, nx)
    s = f3[:-1] + f3[1:]
    s = s[:, :-1] + s[:, 1:]
    s = s[:, :, :-1] + s[:, :, 1:]
    return (s / 8.0).ravel()


def cell_to_point_structured(c, dims: Sequence[int]):
    """Average of the cells around every point of a 3-D structured grid.

    VTK's average over the cells that exist is separable: per axis, the mean of
    the one or two cells beside the point.
    """
    xp = xp_of(c)
    nx, ny, nz = dims
    a = xp.asarray(c, dtype=xp.float64).reshape(nz - 1, ny - 1, nx - 1)
    for axis in range(3):
        a = xp.moveaxis(a, axis, 0)
        out = xp.empty((a.shape[0] + 1,) + a.shape[1:], dtype=xp.float64)
        out[0], out[-1] = a[0], a[-1]
        out[1:-1] = 0.5 * (a[:-1] + a[1:])
        a = xp.moveaxis(out, 0, axis)
    return a.ravel()


def point_to_cell_corners(f, corners):
    """Average over explicit cells of one shape; ``corners`` is ``(n_cells, k)``."""
    xp = xp_of(f)
    return xp.asarray(f, dtype=xp.float64)[corners].mean(axis=1)


def cell_to_point_corners(c, corners, n_points: int):
    """Average of the cells that use each point, for explicit cells of one shape."""
    xp = xp_of(c)
    ids = corners.ravel()
    values = xp.repeat(xp.asarray(c, dtype=xp.float64), corners.shape[1])
    total = xp.bincount(ids, weights=values, minlength=n_points)
    count = xp.bincount(ids, minlength=n_points)
    return total / xp.maximum(count, 1)


def magnitude(v):
    """Euclidean length of each tuple of an ``(n, k)`` field."""
    xp = xp_of(v)
    v = xp.asarray(v, dtype=xp.float64)
    return xp.sqrt((v * v).sum(axis=1))


def bias_add(x, bias):
    """``x + bias`` repeated every ``len(bias)`` elements along the flat array."""
    xp = xp_of(x)
    flat = xp.asarray(x, dtype=xp.float64).ravel()
    index = xp.arange(flat.size) % bias.size
    return (flat + xp.asarray(bias, dtype=xp.float64)[index]).reshape(x.shape)
