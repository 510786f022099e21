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

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, on_claimed
from ._claim_cpu import claim
from ._numba import CompiledUnavailable, KERNEL_DTYPES

MIN_POINTS = 1 << 14
"""Fewer output points than this are left to NumPy: threads would not pay off."""

_BLOCK = 1 << 11
"""Output points per block a thread takes: small, as a block costs one atomic add."""


# Serial kernels called once per thread, each thread taking blocks of output
# points as it frees up (:func:`~daxpy.worklets._blocks_cpu.on_claimed`): dealt
# from Python, the 67 blocks of a 256³ contour's points cost more in calls under
# the GIL than their work on 16 cores. Not Numba's parallel loops: those leave
# their threads spinning after each loop, and on 2 busy cores those spinning
# threads held up the thread pool's kernels that follow (a 1M-hexahedra slice:
# 18 -> 44 ms).

@block_kernel()
def _axis_edges(x, y, z, nx, ny, lo, hi, t, out, taken, thread, n_threads):
    # Unsigned: divisions without floor division's sign fix-up, indices without
    # Numba's check for wrapping.
    one, unx, uny = np.uint64(1), np.uint64(nx), np.uint64(ny)
    nxy = unx * uny
    n = lo.shape[0]
    block = claim(taken)
    while block * _BLOCK < n:
        # Each block through slices indexed from 0.
        start, stop = block * _BLOCK, min(n, (block + 1) * _BLOCK)
        los, his, ws, rows = lo[start:stop], hi[start:stop], t[start:stop], out[start:stop]
        for p in range(los.shape[0]):
            a, b, w = np.uint64(los[p]), np.uint64(his[p]), ws[p]
            ak = a // nxy
            aj = (a - ak * nxy) // unx
            ai = a - ak * nxy - aj * unx
            # An edge's far end is one step along an axis from its near end (or is
            # it, where the value is at a point): no divisions for it.
            bi, bj, bk = ai, aj, ak
            if b == a + nxy:
                bk += one
            elif b == a + unx and aj + one < uny:
                bj += one
            elif b == a + one and ai + one < unx:
                bi += one
            elif b != a:
                bk = b // nxy
                bj = (b - bk * nxy) // unx
                bi = b - bk * nxy - bj * unx
            xa, ya, za = x[ai], y[aj], z[ak]
            rows[p, 0] = np.float64(xa) + w * np.float64(x[bi] - xa)
            rows[p, 1] = np.float64(ya) + w * np.float64(y[bj] - ya)
            rows[p, 2] = np.float64(za) + w * np.float64(z[bk] - za)
        block = claim(taken)


@block_kernel()
def _point_edges(points, lo, hi, t, out, taken, thread, n_threads):
    n = lo.shape[0]
    block = claim(taken)
    while block * _BLOCK < n:
        start, stop = block * _BLOCK, min(n, (block + 1) * _BLOCK)
        los, his, ws, rows = lo[start:stop], hi[start:stop], t[start:stop], out[start:stop]
        for p in range(los.shape[0]):
            a, b, w = np.uint64(los[p]), np.uint64(his[p]), ws[p]
            for c in range(3):
                low = np.float64(points[a, c])
                rows[p, c] = low + w * (np.float64(points[b, c]) - low)
        block = claim(taken)


@block_kernel()
def _scalar_edges(values, lo, hi, t, out, taken, thread, n_threads):
    n = lo.shape[0]
    block = claim(taken)
    while block * _BLOCK < n:
        start, stop = block * _BLOCK, min(n, (block + 1) * _BLOCK)
        los, his, ws, rows = lo[start:stop], hi[start:stop], t[start:stop], out[start:stop]
        for p in range(los.shape[0]):
            # t rounded to the field's dtype by storing it there, as NumPy's astype.
            rows[p] = ws[p]
            low = values[np.uint64(los[p])]
            rows[p] = low + rows[p] * (values[np.uint64(his[p])] - low)
        block = claim(taken)


@block_kernel()
def _field_edges(values, lo, hi, t, out, taken, thread, n_threads):
    n = lo.shape[0] if values.shape[1] > 0 else 0   # (t is stored in column 0)
    block = claim(taken)
    while block * _BLOCK < n:
        start, stop = block * _BLOCK, min(n, (block + 1) * _BLOCK)
        los, his, ws, rows = lo[start:stop], hi[start:stop], t[start:stop], out[start:stop]
        for p in range(los.shape[0]):
            a, b = np.uint64(los[p]), np.uint64(his[p])
            rows[p, 0] = ws[p]   # t in the field's dtype, as NumPy's astype
            w = rows[p, 0]
            for c in range(values.shape[1]):
                low = values[a, c]
                rows[p, c] = low + w * (values[b, c] - low)
        block = claim(taken)


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
        out = host_empty((n, 3), np.float32)
        _axis_points(_common_axes(grid), cut.lo, cut.hi, cut.t, out)
        return out
    points = np.ascontiguousarray(grid.points())
    if points.dtype not in KERNEL_DTYPES:
        raise CompiledUnavailable(f"no kernel for {points.dtype} points")
    out = host_empty((n, 3), points.dtype)
    on_claimed(_point_edges, _blocks(cut), points, cut.lo, cut.hi, cut.t, out)
    return out


def _common_axes(grid) -> tuple:
    """A uniform or rectilinear grid's axes in their common dtype, as the array
    program stacks them: :class:`CompiledUnavailable` for one with no kernel."""
    axes = [grid.axis_coordinates(a) for a in range(3)]
    common = np.result_type(*axes)
    if common not in KERNEL_DTYPES:
        raise CompiledUnavailable(f"no kernel for {common} axes")
    return tuple(np.ascontiguousarray(a, dtype=common) for a in axes)


def _axis_points(axes: tuple, lo, hi, t, out: np.ndarray) -> None:
    """The points of edges ``(lo, hi, t)`` of a grid of ``axes`` into ``out``."""
    x, y, z = axes
    on_claimed(_axis_edges, -(-lo.shape[0] // _BLOCK), x, y, z, x.shape[0], y.shape[0], lo,
               hi, t, out)


def axis_places(grid) -> np.ndarray:
    """What a row march needs to place its points on a uniform or rectilinear grid
    as :func:`edge_coordinates` would from its edges.

    ``places[m, i]`` holds, for the grid's axis ``m`` at index ``i``, the three
    float64 terms of a point's coordinate along it, each as
    :func:`edge_coordinates` takes it: the axis's value, its step to the next
    (taken in the axes' dtype) and its step to itself (zero, as that kernel
    computes it). An edge along axis ``m`` at ``i`` puts its point at
    ``places[m, i, 0] + t * places[m, i, 1]``, an edge along another axis at
    ``places[m, i, 0] + t * places[m, i, 2]``: the same operations on the same
    values, so the same bits.

    Raises
    ------
    CompiledUnavailable
        For axes of a dtype with no kernel.

    Examples
    --------
    >>> import daxpy
    >>> places = axis_places(daxpy.RectilinearGrid([0.0, 2.0, 3.0], [1.0, 4.0]))
    >>> places[0].tolist()
    [[0.0, 2.0, 0.0], [2.0, 1.0, 0.0], [3.0, 0.0, 0.0]]
    >>> places[1, :2].tolist(), places[2, :1].tolist()
    ([[1.0, 3.0, 0.0], [4.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]])
    """
    axes = _common_axes(grid)
    places = np.zeros((3, max(axis.shape[0] for axis in axes), 3), np.float64)
    for m, axis in enumerate(axes):
        places[m, :axis.shape[0], 0] = axis
        places[m, :axis.shape[0] - 1, 1] = axis[1:] - axis[:-1]
        places[m, :axis.shape[0], 2] = axis - axis
    return places


def place_rows(grid, lo, hi, t, ids: np.ndarray, out: np.ndarray) -> None:
    """:func:`edge_coordinates` of the edges ``ids`` of ``(lo, hi, t)``, into those
    rows of ``out``: the points a march did not place itself.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> out = np.zeros((2, 3), np.float32)
    >>> place_rows(daxpy.RectilinearGrid([0.0, 2.0, 3.0]), np.array([0, 1]), np.array([1, 2]),
    ...            np.array([0.5, 0.5]), np.array([1]), out)
    >>> out.tolist()
    [[0.0, 0.0, 0.0], [2.5, 0.0, 0.0]]
    """
    placed = np.empty((ids.shape[0], 3), np.float32)
    _axis_points(_common_axes(grid), lo[ids], hi[ids], t[ids], placed)
    out[ids] = placed


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
    # The kernels round t to the field's dtype, so float32 fields are computed in
    # float32 (the array program's t.astype).
    values = np.ascontiguousarray(values)
    if values.ndim == 1:
        # Its own kernel: a loop over one component kept the gathers from pipelining.
        out = host_empty(cut.lo.shape[0], values.dtype)
        on_claimed(_scalar_edges, _blocks(cut), values, cut.lo, cut.hi, cut.t, out)
        return out
    table = values.reshape(values.shape[0], -1)
    out = host_empty((cut.lo.shape[0], table.shape[1]), values.dtype)
    on_claimed(_field_edges, _blocks(cut), table, cut.lo, cut.hi, cut.t, out)
    return out.reshape((cut.lo.shape[0],) + values.shape[1:])
