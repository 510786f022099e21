"""The signed distance of a grid's points to a plane on the GPU, in one pass.

The array program (:func:`daxpy.filters._implicit.plane_distance` on CuPy
arrays) widens the points to float64 and takes each column's difference,
product and sum as a pass of its own: about ten passes and 1 GB of temporaries
for 10M points. This kernel reads each point once and writes its distance,
each operation rounded as NumPy rounds it (``(x - o0) n0 + (y - o1) n1 +
(z - o2) n2`` in float64, left to right, no fused multiply-add), so it gives the
array program's bits.

Specialization: the points' dtype (float32 or float64).

Examples
--------
>>> source_for("float32")[0]
'plane_distance__f32'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .codegen import ctype, dtype_tag
from .compile import get_kernel

_BODY = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const P* __restrict__ points, const double o0, const double o1, const double o2,
    const double n0, const double n1, const double n2, double* __restrict__ out,
    const long long n)
{
    const long long m = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (m >= n) return;
    const double x = (double)points[3 * m], y = (double)points[3 * m + 1],
                 z = (double)points[3 * m + 2];
    out[m] = __dadd_rn(__dadd_rn(__dmul_rn(__dsub_rn(x, o0), n0),
                                 __dmul_rn(__dsub_rn(y, o1), n1)),
                       __dmul_rn(__dsub_rn(z, o2), n2));
}
"""

# An axis-aligned grid's three axes' terms (axis - origin) * normal, one launch for
# all three, into one array: three CuPy passes a term were six launches a call.
_TERMS = r"""
extern "C" __global__ void __launch_bounds__(256) plane_distance_terms(
    const double* __restrict__ ax, const double* __restrict__ ay,
    const double* __restrict__ az, const int nx, const int ny, const int nz,
    const double o0, const double o1, const double o2, const double n0,
    const double n1, const double n2, double* __restrict__ out)
{
    const int m = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= nx + ny + nz) return;
    const double term = m < nx ? __dmul_rn(__dsub_rn(ax[m], o0), n0)
                      : m < nx + ny ? __dmul_rn(__dsub_rn(ay[m - nx], o1), n1)
                      : __dmul_rn(__dsub_rn(az[m - nx - ny], o2), n2);
    out[m] = term;
}
"""

_TERMS_KERNEL: list = []
"""The terms' kernel once compiled (its source hashed once, not per call)."""


def axis_terms(axes: list, origin: Any, normal: Any) -> list:
    """Each axis' plane term ``(axis - origin[a]) * normal[a]`` (float64) of three
    float64 device ``axes``, in one launch: the bits of the array program's
    ``(axes[a] - o) * n``, each operation rounded on its own.

    Examples
    --------
    >>> callable(axis_terms)
    True
    """
    import cupy

    if not _TERMS_KERNEL:
        _TERMS_KERNEL.append(get_kernel("plane_distance_terms", _TERMS))
    axes = [cupy.ascontiguousarray(a, dtype=cupy.float64) for a in axes]
    sizes = [int(a.size) for a in axes]
    out = cupy.empty(sum(sizes), cupy.float64)
    _TERMS_KERNEL[0](((sum(sizes) + 255) // 256,), (256,),
                     (*axes, *(np.int32(n) for n in sizes),
                      *(np.float64(float(v)) for v in (*origin[:3], *normal[:3])), out))
    return [out[:sizes[0]], out[sizes[0]:sizes[0] + sizes[1]], out[sizes[0] + sizes[1]:]]


@dataclass(frozen=True)
class PlaneDistance:
    """The signed distance to a plane at a 3-D image's or rectilinear grid's points,
    as its axes' terms on the device (``(axis - origin) * normal``, float64): point
    ``(i, j, k)``'s is ``(pz[k] + py[j]) + px[i]`` (the slice's array program's
    order), or with ``x_first`` ``(px[i] + py[j]) + pz[k]`` (vtkPlane's, which the
    clip's implicit function keeps), each sum rounded on its own. The slice's and
    the clip's row kernels make it where they read it: no field of the grid's size.

    Examples
    --------
    >>> PlaneDistance.dtype
    dtype('float64')
    """

    px: Any
    py: Any
    pz: Any
    x_first: bool = False
    dtype = np.dtype(np.float64)


KINDS = (np.dtype(np.float32), np.dtype(np.float64))
"""Point dtypes with a kernel."""


def source_for(dtype) -> tuple[str, str]:
    """``(name, source)`` of the kernel for points of ``dtype``.

    Examples
    --------
    >>> name, source = source_for("float64")
    >>> name, "#define P double" in source
    ('plane_distance__f64', True)
    """
    name = f"plane_distance__{dtype_tag(dtype)}"
    return name, f"#define P {ctype(dtype)}\n{_BODY.replace('NAME', name)}#undef P\n"


def plane_distance(points: Any, origin: list, normal: list) -> Any | None:
    """The float64 signed distance of device ``points`` ``(n, 3)`` to the plane
    through ``origin`` with ``normal`` (three floats each); None for points of
    another dtype or layout (the array program serves them).

    Examples
    --------
    >>> callable(plane_distance)
    True
    """
    import cupy

    if points.ndim != 2 or points.shape[1] != 3 or points.dtype not in KINDS:
        return None
    points = cupy.ascontiguousarray(points)
    n = int(points.shape[0])
    out = cupy.empty(n, cupy.float64)
    if n:
        kernel = get_kernel(*source_for(points.dtype))
        kernel(((n + 255) // 256,), (256,),
               (points, *(np.float64(v) for v in (*origin, *normal)), out, np.int64(n)))
    return out
