"""A point field on an edge cut's output points on the GPU, in one kernel.

The array program (:func:`daxpy.worklets._edge_cut.interpolate` on CuPy arrays)
takes ``v[lo]``, ``v[hi]``, ``t`` in the field's dtype, the difference, the product
and the sum as a pass each: six launches, most of a slice's host time after its
sizes are known, while the GPU waits. This kernel does each output value's
operations in that order, each rounded on its own (``lo + t (hi - lo)``, no fused
multiply-add), so it gives the array program's bits.

Specialization: the field's dtype (float32 or float64).

Examples
--------
>>> source_for("float32")[0]
'edge_values__f32'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .codegen import ctype, dtype_tag
from .compile import kernel_from

_BODY = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const T* __restrict__ values, const long long* __restrict__ lo,
    const long long* __restrict__ hi, const double* __restrict__ t, const long long n,
    const int width, T* __restrict__ out)
{
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n * width) return;
    const long long row = e / width;
    const int c = (int)(e - row * width);
    const W a = (W)values[lo[row] * width + c], b = (W)values[hi[row] * width + c];
    out[e] = (T)ADD(a, MUL((W)t[row], SUB(b, a)));
}
"""

_OPERATIONS = {np.dtype(np.float32): ("__fadd_rn", "__fmul_rn", "__fsub_rn"),
               np.dtype(np.float64): ("__dadd_rn", "__dmul_rn", "__dsub_rn")}
"""Per field dtype with a kernel: its rounded add, multiply and subtract."""

def source_for(dtype, widened: bool = False) -> tuple[str, str]:
    """``(name, source)`` of the kernel for a field of ``dtype`` (float32 or float64);
    ``widened``: computed in float64, stored in ``dtype`` (a points grid's coordinates).

    Examples
    --------
    >>> name, source = source_for("float64")
    >>> name, "__dmul_rn" in source
    ('edge_values__f64', True)
    >>> name, source = source_for("float32", widened=True)
    >>> name, "__dmul_rn" in source
    ('edge_values_wide__f32', True)
    """
    dtype = np.dtype(dtype)
    name = f"edge_values{'_wide' if widened else ''}__{dtype_tag(dtype)}"
    work = np.dtype(np.float64) if widened else dtype
    add, mul, sub = _OPERATIONS[work]
    return name, (f"#define T {ctype(dtype)}\n#define W {ctype(work)}\n#define ADD {add}\n"
                  f"#define MUL {mul}\n#define SUB {sub}\n{_BODY.replace('NAME', name)}"
                  "#undef SUB\n#undef MUL\n#undef ADD\n#undef W\n#undef T\n")


def edge_values(values: Any, lo: Any, hi: Any, t: Any, widened: bool = False) -> Any | None:
    """``values[lo] + t (values[hi] - values[lo])`` in the field's dtype (``t``
    rounded to it first) for a float32 or float64 device field of shape ``(n,)`` or
    ``(n, k)``; None for other dtypes (the array program serves them). ``widened``:
    in float64, rounded to the field's dtype at the end (the coordinates of
    :func:`daxpy.filters._surface.coordinates`).

    Examples
    --------
    >>> callable(edge_values)
    True
    """
    dtype = np.dtype(values.dtype)
    if dtype not in _OPERATIONS:
        return None
    import cupy

    kernel = kernel_from(source_for, dtype, widened)
    values = cupy.ascontiguousarray(values)
    width = int(np.prod(values.shape[1:], dtype=np.int64))
    n = int(lo.shape[0])
    out = cupy.empty((n,) + values.shape[1:], dtype)
    if n * width:
        kernel((((n * width) + 255) // 256,), (256,),
               (values, cupy.ascontiguousarray(lo, dtype=cupy.int64),
                cupy.ascontiguousarray(hi, dtype=cupy.int64),
                cupy.ascontiguousarray(t, dtype=cupy.float64), np.int64(n), np.int32(width),
                out))
    return out
