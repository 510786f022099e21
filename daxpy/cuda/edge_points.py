"""The points of an edge cut of an axis-aligned grid (uniform, rectilinear) on the
GPU, in one pass; and the grid's own points of given ids (:func:`grid_points`).

The array program finds each end's ``(i, j, k)`` with integer divisions, gathers
its three coordinates for each end, stacks them and interpolates: a dozen CuPy
passes over the cut (half a millisecond for the 2.2M points of the wavelet at
512³ on an H200). This kernel does the same arithmetic per point, each operation
rounded as NumPy rounds it (``low + t * (high - low)`` with ``high - low`` in the
axis's dtype, then the rest in float64, no fused multiply-add), and writes the
float32 point, so it gives the array program's bits.

Specialization: the axes' dtype (float32 or float64, the same for the three), and
the width of the arithmetic that splits a point id into ``(i, j, k)``: 32 bits for
grids of fewer than 2^32 points (a 64-bit division is a long emulated sequence on
the GPU: the points of the 64M ids a 512³ threshold keeps took 0.76 ms, bound by
it), else 64. The quotients are the same either way.

Examples
--------
>>> source_for("float64", True)[0]
'edge_points__f64_u32'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .codegen import ctype, dtype_tag
from .compile import kernel_from

_BODY = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const long long* __restrict__ lo, const long long* __restrict__ hi,
    const double* __restrict__ t, const A* __restrict__ ax, const A* __restrict__ ay,
    const A* __restrict__ az, const long long nx, const long long ny,
    float* __restrict__ out, const long long n)
{
  const long long m = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (m >= n) return;
  const IDX a = (IDX)lo[m], b = (IDX)hi[m], x = (IDX)nx, y = (IDX)ny;
  const IDX ia[3] = {a % x, a / x % y, a / (x * y)};
  const IDX ib[3] = {b % x, b / x % y, b / (x * y)};
  const A* axes[3] = {ax, ay, az};
  const double w = t[m];
#pragma unroll
  for (int c = 0; c < 3; ++c) {
    const A low = axes[c][ia[c]], span = axes[c][ib[c]] - low;
    out[3 * m + c] = __double2float_rn(__dadd_rn((double)low, __dmul_rn(w, (double)span)));
  }
}
"""


_IDS_BODY = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const long long* __restrict__ ids, const A* __restrict__ ax, const A* __restrict__ ay,
    const A* __restrict__ az, const long long nx, const long long ny,
    float* __restrict__ out, const long long n)
{
  const long long m = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (m >= n) return;
  const IDX a = (IDX)ids[m], x = (IDX)nx, y = (IDX)ny;
  out[3 * m] = __double2float_rn((double)ax[a % x]);
  out[3 * m + 1] = __double2float_rn((double)ay[a / x % y]);
  out[3 * m + 2] = __double2float_rn((double)az[a / (x * y)]);
}
"""


def _specialized(stem: str, body: str, axis_dtype, narrow: bool) -> tuple[str, str]:
    """``(name, source)`` of ``body`` for axes of ``axis_dtype`` and ids split in 32-bit
    (``narrow``) or 64-bit arithmetic."""
    name = f"{stem}__{dtype_tag(axis_dtype)}_{'u32' if narrow else 'i64'}"
    head = f"#define A {ctype(axis_dtype)}\n#define IDX {_INDEX[narrow]}\n"
    return name, f"{head}{body.replace('NAME', name)}#undef A\n#undef IDX\n"


_INDEX = {True: "unsigned int", False: "long long"}


def source_for(axis_dtype, narrow: bool) -> tuple[str, str]:
    """``(name, source)`` of the edge kernel for axes of ``axis_dtype`` (float32,
    float64), ids split in 32-bit arithmetic where ``narrow``.

    Examples
    --------
    >>> name, source = source_for("float32", False)
    >>> name, "#define A float" in source
    ('edge_points__f32_i64', True)
    """
    return _specialized("edge_points", _BODY, axis_dtype, narrow)


def ids_source_for(axis_dtype, narrow: bool) -> tuple[str, str]:
    """``(name, source)`` of the kernel that writes the points of given ids.

    Examples
    --------
    >>> ids_source_for("float64", True)[0]
    'grid_points__f64_u32'
    """
    return _specialized("grid_points", _IDS_BODY, axis_dtype, narrow)


def _axis_dtype(axes: list) -> Any:
    """The axes' one dtype where the kernels serve it (float32, float64), else None.

    Examples
    --------
    >>> _axis_dtype([np.zeros(2), np.zeros(3)]), _axis_dtype([np.zeros(2, np.int8)])
    (dtype('float64'), None)
    """
    kinds = {axis.dtype for axis in axes}
    kind = next(iter(kinds))
    return kind if len(kinds) == 1 and kind in (np.float32, np.float64) else None


def _points(sources, edges: list, dims: tuple, axes: list) -> Any | None:
    """Run the kernel ``sources(kind)`` names over ``edges`` (device arrays of one
    length: the ids or the edges' ends and weights), then the axes and dims, into
    fresh float32 points; None where the axes' dtype has no kernel."""
    import cupy

    kind = _axis_dtype(axes)
    if kind is None:
        return None
    n = int(edges[0].shape[0])
    out = cupy.empty((n, 3), cupy.float32)
    if n:
        narrow = int(np.prod(dims)) < 2**32
        kernel_from(sources, kind, narrow)(
            ((n + 255) // 256,), (256,),
            (*edges, *(cupy.ascontiguousarray(axis) for axis in axes), np.int64(dims[0]),
             np.int64(dims[1]), out, np.int64(n)))
    return out


def axis_points(lo: Any, hi: Any, t: Any, dims: tuple, axes: list) -> Any | None:
    """The float32 points at ``t`` along the edges ``(lo, hi)`` of an axis-aligned
    grid of ``dims`` points whose coordinates along x, y and z are ``axes`` (device
    arrays); None where the axes are not all float32 or all float64.

    Examples
    --------
    >>> callable(axis_points)
    True
    """
    import cupy

    return _points(source_for, [cupy.ascontiguousarray(a) for a in (lo, hi, t)], dims, axes)


def grid_points(ids: Any, dims: tuple, axes: list) -> Any | None:
    """The float32 points ``ids`` of an axis-aligned grid of ``dims`` points whose
    coordinates along x, y and z are ``axes`` (device arrays), in one pass: each
    coordinate rounded from its axis's value as NumPy's ``astype`` rounds it;
    None where the axes are not all float32 or all float64.

    Examples
    --------
    >>> callable(grid_points)
    True
    """
    import cupy

    return _points(ids_source_for, [cupy.ascontiguousarray(ids, dtype=cupy.int64)], dims, axes)
