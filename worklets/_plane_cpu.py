"""Compiled, threaded signed distance of a grid's points to a plane, the field a
slice cuts at 0, in the array programs' arithmetic (:mod:`daxpy.filters.slice`),
so the results are their bits; they make temporaries of the grid's size on one
thread:

- from a grid's points: ``(x - o0) n0 + (y - o1) n1 + (z - o2) n2`` in float64,
  term by term as vtkPlane evaluates it;
- on uniform and rectilinear grids, from the axes' terms ``(a - o) n`` (three
  short arrays): ``(z term + y term) + x term`` at each point (the slice's order),
  or ``(x term + y term) + z term`` (the clip's implicit plane, vtkPlane's order);
- the slice's cut and the clip themselves from the axes' terms (:func:`plane_cut`,
  :func:`plane_clip`), the distance made where their rows read it, no field of the
  grid's size.

Serial kernels over blocks of points on the thread pool
(:func:`~daxpy.worklets._blocks_cpu.over_blocks`), as the slice's and the clip's
later passes run: Numba's parallel loops leave their threads spinning after
each loop, which held up the pool's kernels that follow on 2 busy cores.

Examples
--------
>>> import numpy as np
>>> points = np.tile([[1.0, 2.0, 3.0]], (MIN_POINTS, 1))
>>> plane_distance(points, (0.0, 0.0, 1.0), (0.0, 0.0, 1.0))[0].item()
2.0
"""

from __future__ import annotations

import numpy as np

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, over_blocks
from ._edge_cut import EdgeCut
from .clip import Clipped
from .clip_cpu import clip_structured
from .contour_cpu import contour_structured
from ._numba import CompiledUnavailable, KERNEL_DTYPES

MIN_POINTS = 1 << 14
"""Fewer points than this are left to NumPy: threads would not pay off."""

_BLOCK = 1 << 14
"""Points per block dealt to a thread."""


@block_kernel()
def _distance(points, o0, o1, o2, n0, n1, n2, out, first, last):
    """Blocks ``first`` to ``last`` of :data:`_BLOCK` points, through slices indexed
    from 0 (Numba checks indices it cannot prove non-negative for wrapping around)."""
    lo, hi = first * _BLOCK, min(points.shape[0], last * _BLOCK)
    rows, to = points[lo:hi], out[lo:hi]
    for p in range(hi - lo):
        to[p] = ((np.float64(rows[p, 0]) - o0) * n0 + (np.float64(rows[p, 1]) - o1) * n1
                 + (np.float64(rows[p, 2]) - o2) * n2)


@block_kernel()
def _axis_distance(tx, ty, tz, out, first, last):
    """Rows (x lines) ``first`` to ``last``."""
    nx, ny = tx.shape[0], ty.shape[0]
    for row in range(first, last):
        k = row // ny
        zy = tz[k] + ty[row - k * ny]
        line = out[row * nx:(row + 1) * nx]
        for i in range(nx):
            line[i] = zy + tx[i]


@block_kernel()
def _axis_distance_x_first(tx, ty, tz, out, first, last):
    """Rows (x lines) ``first`` to ``last``, the x term added first."""
    nx, ny = tx.shape[0], ty.shape[0]
    for row in range(first, last):
        k = row // ny
        y, z = ty[row - k * ny], tz[k]
        line = out[row * nx:(row + 1) * nx]
        for i in range(nx):
            line[i] = (tx[i] + y) + z


def axis_plane_distance(terms, n_points: int, x_first: bool = False) -> np.ndarray:
    """Signed distance (float64) of a uniform or rectilinear grid's points from the
    axes' terms ``terms`` (``(a - o) n`` along x, y and z, float64): ``(z term + y
    term) + x term``, or with ``x_first`` ``(x term + y term) + z term``.

    Raises
    ------
    CompiledUnavailable
        For device arrays, or fewer than :data:`MIN_POINTS` points.

    Examples
    --------
    >>> import numpy as np
    >>> terms = [np.arange(128.0), np.zeros(128), np.ones(2)]
    >>> axis_plane_distance(terms, 128 * 128 * 2)[:3].tolist()
    [1.0, 2.0, 3.0]
    >>> axis_plane_distance(terms, 128 * 128 * 2, x_first=True)[-1].item()
    128.0
    """
    if n_points < MIN_POINTS or not all(isinstance(t, np.ndarray) for t in terms):
        raise CompiledUnavailable("device arrays, or few points: the array program")
    out = host_empty(n_points, np.float64)
    tx, ty, tz = (np.ascontiguousarray(t, dtype=np.float64) for t in terms)
    over_blocks(_axis_distance_x_first if x_first else _axis_distance,
                ty.shape[0] * tz.shape[0], tx, ty, tz, out)
    return out


def plane_distance(points: np.ndarray, origin, normal) -> np.ndarray:
    """Signed distance (float64) of each of ``points`` ``(n, 3)`` to the plane
    through ``origin`` with ``normal``.

    Raises
    ------
    CompiledUnavailable
        For device arrays, fewer than :data:`MIN_POINTS` points, or points that are
        not float32 or float64.

    Examples
    --------
    >>> import numpy as np
    >>> points = np.zeros((MIN_POINTS, 3), np.float32)
    >>> plane_distance(points, (1.0, 0.0, 0.0), (1.0, 0.0, 0.0))[:2].tolist()
    [-1.0, -1.0]
    """
    if not isinstance(points, np.ndarray) or points.shape[0] < MIN_POINTS \
            or points.dtype not in KERNEL_DTYPES:
        raise CompiledUnavailable("device or few points, or no kernel for the dtype")
    out = host_empty(points.shape[0], np.float64)
    over_blocks(_distance, -(-points.shape[0] // _BLOCK), np.ascontiguousarray(points),
                *(float(o) for o in origin), *(float(n) for n in normal), out)
    return out


def plane_cut(grid, terms: tuple, edges: bool = True, sources: bool = True) -> EdgeCut:
    """The cut of a 3-D image or rectilinear grid by a plane, from the plane's axes'
    terms (``(axis - origin) normal``, float64, one per point of each axis): the
    bits of :func:`~daxpy.worklets.contour_cpu.contour_structured` of the distance
    field ``(z term + y term) + x term`` at 0, with no field of the grid's size;
    ``edges`` and ``sources`` as there (what the caller reads).

    Raises
    ------
    CompiledUnavailable
        For grids not 3-D: the field serves them.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3, 3))
    >>> terms = (np.arange(3.0) - 0.5, np.zeros(3), np.zeros(3))
    >>> field = ((terms[2][:, None, None] + terms[1][None, :, None])
    ...          + terms[0][None, None, :]).ravel()
    >>> plane_cut(g, terms).t.tolist() == contour_structured(g, field, 0.0).t.tolist()
    True
    """
    return contour_structured(grid, None, 0.0, terms=terms, edges=edges, sources=sources)


def plane_clip(grid, terms: tuple, value: float = 0.0, invert: bool = False) -> Clipped:
    """The clip of a 3-D image or rectilinear grid by a plane, from the plane's axes'
    terms (``(axis - origin) normal``, float64, one per point of each axis): the bits
    of :func:`~daxpy.worklets.clip_cpu.clip_structured` of the implicit plane's field
    ``(x term + y term) + z term`` at ``value``, with no field of the grid's size.

    Raises
    ------
    CompiledUnavailable
        On grids not 3-D, where the clip of the field serves.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> image = daxpy.UniformGrid(dims=(2, 2, 3))   # z = 0, 1, 2; the plane z = 1.5
    >>> made = plane_clip(image, (np.zeros(2), np.zeros(2), np.arange(3.0) - 1.5))
    >>> made.n_kept, made.weights.tolist()   # the 4 points at z = 2; 4 cut edges' weights
    (4, [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5]])
    """
    return clip_structured(grid, None, value, invert, terms=terms)
