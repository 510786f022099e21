"""Compiled, threaded host assembly of a surface's points: each cut edge's point
and the point fields interpolated onto it, from an
:class:`~daxpy.worklets._edge_cut.EdgeCut` on the host.

The array programs (:func:`daxpy.worklets._edge_cut.interpolate` and the
surface's ``coordinates``) run on one thread, with a temporary per step; on
16 cores they took most of a 256³ contour's time on the CPU. These kernels do
their arithmetic in their order and types, so the results are their bits:

- coordinates: ``low + t (high - low)`` in float64, the difference taken in the
  coordinates' own dtype (the axes' common dtype on uniform and rectilinear
  grids, float64 from a grid's points), rounded once to the output dtype;
- a float field: ``t`` rounded to the field's dtype, then
  ``low + t (high - low)`` in that dtype.

Each output row is written by one thread, so the thread count does not matter.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.worklets._edge_cut import EdgeCut
>>> n = MIN_POINTS
>>> cut = EdgeCut(np.zeros(n, int), np.ones(n, int), np.full(n, 0.25), {}, {})
>>> edge_coordinates(daxpy.UniformGrid(dims=(2,)), cut)[0].tolist()
[0.25, 0.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from ._blocks_cpu import block_kernel, over_blocks
from ._numba import CompiledUnavailable, KERNEL_DTYPES

MIN_POINTS = 1 << 14
"""Fewer output points than this are left to NumPy: threads would not pay off."""

_BLOCK = 1 << 13
"""Output points per block dealt to a thread."""


# Serial kernels over blocks of output points, on the thread pool
# (:func:`~daxpy.worklets._blocks_cpu.over_blocks`): Numba's parallel loops leave
# their threads spinning after each loop, and on 2 busy cores those spinning
# threads held up the thread pool's kernels that follow (a 1M-hexahedra slice:
# 18 -> 44 ms).

@block_kernel()
def _axis_edges(x, y, z, nx, ny, lo, hi, t, out, first, last):
    nxy = nx * ny
    for p in range(first * _BLOCK, min(lo.shape[0], last * _BLOCK)):
        a, b, w = lo[p], hi[p], t[p]
        ak, bk = a // nxy, b // nxy
        aj, bj = (a - ak * nxy) // nx, (b - bk * nxy) // nx
        ai, bi = a - ak * nxy - aj * nx, b - bk * nxy - bj * nx
        out[p, 0] = np.float64(x[ai]) + w * np.float64(x[bi] - x[ai])
        out[p, 1] = np.float64(y[aj]) + w * np.float64(y[bj] - y[aj])
        out[p, 2] = np.float64(z[ak]) + w * np.float64(z[bk] - z[ak])


@block_kernel()
def _point_edges(points, lo, hi, t, out, first, last):
    for p in range(first * _BLOCK, min(lo.shape[0], last * _BLOCK)):
        a, b, w = lo[p], hi[p], t[p]
        for c in range(3):
            low = np.float64(points[a, c])
            out[p, c] = low + w * (np.float64(points[b, c]) - low)


@block_kernel()
def _scalar_edges(values, lo, hi, t, out, first, last):
    for p in range(first * _BLOCK, min(lo.shape[0], last * _BLOCK)):
        low = values[lo[p]]
        out[p] = low + t[p] * (values[hi[p]] - low)


@block_kernel()
def _field_edges(values, lo, hi, t, out, first, last):
    for p in range(first * _BLOCK, min(lo.shape[0], last * _BLOCK)):
        a, b, w = lo[p], hi[p], t[p]
        for c in range(values.shape[1]):
            low = values[a, c]
            out[p, c] = low + w * (values[b, c] - low)


def _blocks(cut) -> int:
    return -(-cut.lo.shape[0] // _BLOCK)


def _check(cut) -> None:
    if cut.lo.shape[0] < MIN_POINTS:
        raise CompiledUnavailable("few points: NumPy is as fast")


def edge_coordinates(grid, cut) -> np.ndarray:
    """The compiled form of :func:`daxpy.filters._surface.coordinates` for a cut on
    the host: float32 points on uniform and rectilinear grids (as VTK's), the
    points' dtype on the others.

    Raises
    ------
    CompiledUnavailable
        For fewer than :data:`MIN_POINTS` points, or points of another dtype.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.worklets._edge_cut import EdgeCut
    >>> g = daxpy.RectilinearGrid([0.0, 2.0, 3.0])
    >>> cut = EdgeCut(np.array([1] * MIN_POINTS), np.array([2] * MIN_POINTS),
    ...               np.full(MIN_POINTS, 0.5), {}, {})
    >>> edge_coordinates(g, cut)[0].tolist()
    [2.5, 0.0, 0.0]
    """
    _check(cut)
    n = cut.lo.shape[0]
    if grid.family in ("uniform", "rectilinear"):
        axes = [grid.axis_coordinates(a) for a in range(3)]
        # The array program stacks the axes' values: their common dtype.
        common = np.result_type(*axes)
        if common not in KERNEL_DTYPES:
            raise CompiledUnavailable(f"no kernel for {common} axes")
        x, y, z = (np.ascontiguousarray(a, dtype=common) for a in axes)
        out = np.empty((n, 3), np.float32)
        over_blocks(_axis_edges, _blocks(cut), x, y, z, x.shape[0], y.shape[0], cut.lo, cut.hi,
                    cut.t, out)
        return out
    points = np.ascontiguousarray(grid.points())
    if points.dtype not in KERNEL_DTYPES:
        raise CompiledUnavailable(f"no kernel for {points.dtype} points")
    out = np.empty((n, 3), points.dtype)
    over_blocks(_point_edges, _blocks(cut), points, cut.lo, cut.hi, cut.t, out)
    return out


def edge_values(values: np.ndarray, cut) -> np.ndarray:
    """The compiled form of :func:`daxpy.worklets._edge_cut.interpolate` for a float
    point field and a cut on the host.

    Raises
    ------
    CompiledUnavailable
        For fewer than :data:`MIN_POINTS` points, or a field of another dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from daxpy.worklets._edge_cut import EdgeCut
    >>> cut = EdgeCut(np.zeros(MIN_POINTS, int), np.ones(MIN_POINTS, int),
    ...               np.full(MIN_POINTS, 0.25), {}, {})
    >>> edge_values(np.array([0.0, 8.0], np.float32), cut)[:2].tolist()
    [2.0, 2.0]
    """
    _check(cut)
    if values.dtype not in KERNEL_DTYPES:
        raise CompiledUnavailable(f"no kernel for {values.dtype}")
    # t in the field's dtype first, so float32 fields are computed in float32.
    t = cut.t.astype(values.dtype, copy=False)
    values = np.ascontiguousarray(values)
    if values.ndim == 1:
        # Its own kernel: a loop over one component kept the gathers from pipelining.
        out = np.empty(cut.lo.shape[0], values.dtype)
        over_blocks(_scalar_edges, _blocks(cut), values, cut.lo, cut.hi, t, out)
        return out
    table = values.reshape(values.shape[0], -1)
    out = np.empty((cut.lo.shape[0], table.shape[1]), values.dtype)
    over_blocks(_field_edges, _blocks(cut), table, cut.lo, cut.hi, t, out)
    return out.reshape((cut.lo.shape[0],) + values.shape[1:])
