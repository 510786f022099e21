"""Weighted sums of point values on the GPU in one pass: a clip's output points and
point fields, each output row ``sum_j weights[r, j] * x[ids[r, j]]``.

The array program (:func:`daxpy.filters._geometry.weighted_sum`) runs a dozen
CuPy operations per column and gathers a grid's coordinates from its axes for
each; this kernel reads each row's ids and weights once and writes its sum. It
keeps the array program's order of operations, and each product and sum is
rounded on its own (``__dmul_rn``, ``__dadd_rn``: no fused multiply-add), so it
gives the host's bits: the first two columns added, then the later columns summed
among themselves and added, on the rows where one of their weights is not zero.

Specializations: what is gathered (a field of one dtype and component count, or
the coordinates of an image or rectilinear grid, float32 as VTK gives them).

Examples
--------
>>> source_for("f32", 1)[0]
'weighted_sum__f32__c1'
>>> source_for("axes", 3)[0]
'weighted_sum__axes__c3'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compile import get_kernel

_TYPES = {"f32": "float", "f64": "double", "i8": "signed char", "i16": "short",
          "i32": "int", "i64": "long long", "u8": "unsigned char", "u16": "unsigned short",
          "u32": "unsigned int", "u64": "unsigned long long"}
"""Value type codes and their C types (the dtypes a point field may have)."""

_BODY = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    PARAMS, const long long* __restrict__ ids, const double* __restrict__ weights,
    double* __restrict__ out, long long rows, int width)
{
    long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const long long* id = ids + r * width;
    const double* w = weights + r * width;
    // The array program adds the later columns only on rows with a weight there.
    bool more = false;
    for (int j = 2; j < width; ++j) more |= (w[j] != 0.0);
    for (int c = 0; c < K; ++c) {
        double total = __dmul_rn(VALUE(id[0]), w[0]);
        if (width > 1) total = __dadd_rn(total, __dmul_rn(VALUE(id[1]), w[1]));
        if (more) {
            double extra = __dmul_rn(VALUE(id[2]), w[2]);
            for (int j = 3; j < width; ++j) extra = __dadd_rn(extra, __dmul_rn(VALUE(id[j]), w[j]));
            total = __dadd_rn(total, extra);
        }
        out[r * K + c] = total;
    }
}
"""


def source_for(kind: str, components: int) -> tuple[str, str]:
    """``(name, source)`` of the kernel gathering ``kind`` (a value type code, or
    ``"axes"``) with ``components`` values per point.

    Examples
    --------
    >>> name, source = source_for("i32", 3)
    >>> name, "const int* __restrict__ values" in source
    ('weighted_sum__i32__c3', True)
    """
    name = f"weighted_sum__{kind}__c{components}"
    if kind == "axes":
        # Point p of an image or rectilinear grid: its axes' values at p's (i, j, k),
        # rounded to float32 first, as the grid's points are.
        params = ("const double* __restrict__ ax, const double* __restrict__ ay, "
                  "const double* __restrict__ az, long long nx, long long ny")
        value = ("((double)(float)(c == 0 ? ax[(P) % nx] : c == 1 ? ay[(P) / nx % ny] "
                 ": az[(P) / (nx * ny)]))")
    else:
        params = f"const {_TYPES[kind]}* __restrict__ values"
        value = "((double)values[(P) * K + c])"
    body = _BODY.replace("NAME", name).replace("PARAMS", params)
    return name, (f"#define K {components}\n#define VALUE(P) {value}\n{body}"
                  "#undef VALUE\n#undef K\n")


def _code(dtype: np.dtype) -> str:
    return {"f": "f", "i": "i", "u": "u"}[dtype.kind] + str(8 * dtype.itemsize)


def _launch(kind: str, components: int, inputs: tuple, ids: Any, weights: Any) -> Any:
    import cupy

    ids = cupy.ascontiguousarray(ids, dtype=cupy.int64)
    weights = cupy.ascontiguousarray(weights, dtype=cupy.float64)
    rows, width = (int(n) for n in ids.shape)
    out = cupy.empty((rows, components), dtype=cupy.float64)
    if rows:
        kernel = get_kernel(*source_for(kind, components))
        kernel(((rows + 255) // 256,), (256,),
               inputs + (ids, weights, out, np.int64(rows), np.int32(width)))
    return out


def weighted_values(values: Any, ids: Any, weights: Any) -> Any:
    """``sum_j weights[:, j] * values[ids[:, j]]`` in float64, on the device.

    Parameters
    ----------
    values : cupy.ndarray, shape (n,) or (n, k)
        A point field (any real dtype).
    ids : cupy.ndarray of int64, shape (m, w)
    weights : cupy.ndarray of float64, shape (m, w)

    Returns
    -------
    cupy.ndarray of float64, shape (m,) or (m, k)

    Examples
    --------
    >>> callable(weighted_values)
    True
    """
    import cupy

    values = cupy.ascontiguousarray(values)
    if values.dtype.kind == "b":
        values = values.astype(cupy.uint8)
    components = 1 if values.ndim == 1 else int(np.prod(values.shape[1:]))
    out = _launch(_code(values.dtype), components, (values,), ids, weights)
    return out.reshape((out.shape[0],) + tuple(values.shape[1:]))


def weighted_axes(axes: tuple, ids: Any, weights: Any) -> Any:
    """The weighted sums of the points of an image or rectilinear grid given by its
    three axes' coordinates (the points are ``float32(axes[a][index_a])``), float64,
    shape ``(m, 3)``, on the device.

    Examples
    --------
    >>> callable(weighted_axes)
    True
    """
    import cupy

    x, y, z = (cupy.asarray(a, dtype=cupy.float64) for a in axes)
    return _launch("axes", 3, (x, y, z, np.int64(x.shape[0]), np.int64(y.shape[0])),
                   ids, weights)
