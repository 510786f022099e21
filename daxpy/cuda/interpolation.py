"""Weighted sums of point values on the GPU in one pass: a clip's output points and
point fields, each output row ``sum_j weights[r, j] * x[ids[r, j]]``.

The array program (:func:`daxpy.filters._geometry.weighted_sum`) runs a dozen
CuPy operations per column and gathers a grid's coordinates from its axes for
each; this kernel reads each row's ids and weights once and writes its sum. It
keeps the array program's order of operations, and each product and sum is
rounded on its own (``__dmul_rn``, ``__dadd_rn``: no fused multiply-add), so it
gives the host's bits: every row's two columns added, then, in a second launch
over the few centre rows only, those rows made again with their later terms
(the centre table) summed among themselves and added last.

Specializations: what is gathered (a field of one dtype and component count, or
the coordinates of an image or rectilinear grid, its axes' float64 values), and
the output's dtype: float64, or the result's own (a float rounded once, an integer
to the nearest), so that no second pass converts it.

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
    const long long* __restrict__ rows, const long long* __restrict__ later_ids,
    const double* __restrict__ later_weights, OUT* __restrict__ out, long long count,
    int width, int later)
{
    long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (r >= count) return;
    // Launched twice: every row's first terms (later == 0), then the centre rows
    // again, whole (row rows[r]), their later terms summed and added last.
    long long p = later ? rows[r] : r;
    const long long* id = ids + p * width;
    const double* w = weights + p * width;
    const long long* more_id = later_ids + r * later;
    const double* more_w = later_weights + r * later;
    // Each term's point is read once for all its components (an image's point id
    // is split into (i, j, k) once); each component's sum keeps its order.
    double v[K], total[K];
    GATHER(id[0], v);
    for (int c = 0; c < K; ++c) total[c] = __dmul_rn(v[c], w[0]);
    if (width > 1) {
        GATHER(id[1], v);
        for (int c = 0; c < K; ++c) total[c] = __dadd_rn(total[c], __dmul_rn(v[c], w[1]));
    }
    if (later) {
        double extra[K];
        GATHER(more_id[0], v);
        for (int c = 0; c < K; ++c) extra[c] = __dmul_rn(v[c], more_w[0]);
        for (int j = 1; j < later; ++j) {
            GATHER(more_id[j], v);
            for (int c = 0; c < K; ++c)
                extra[c] = __dadd_rn(extra[c], __dmul_rn(v[c], more_w[j]));
        }
        for (int c = 0; c < K; ++c) total[c] = __dadd_rn(total[c], extra[c]);
    }
    // Rounded once into the output's type (integers to the nearest, as NumPy's rint).
    for (int c = 0; c < K; ++c) out[p * K + c] = STORE(total[c]);
}
"""

# An image's point p at its axes' float64 values (as vtkTableBasedClipDataSet reads
# an image's points); 32-bit division where the grid's ids fit (the quotients are
# the same, and 64-bit division is a long emulated sequence on the GPU).
_AXES_GATHER = ("{ const long long q_ = (P); long long i_, j_, k_; "
                "if (narrow) { const unsigned u_ = (unsigned)q_, row_ = u_ / (unsigned)nx; "
                "i_ = u_ - row_ * (unsigned)nx; j_ = row_ % (unsigned)ny; "
                "k_ = row_ / (unsigned)ny; } "
                "else { const long long row_ = q_ / nx; i_ = q_ - row_ * nx; "
                "j_ = row_ % ny; k_ = row_ / ny; } "
                "V[0] = ax[i_]; V[1] = ay[j_]; V[2] = az[k_]; }")

_OUT_TYPES = {"f64": "double", "f32": "float", "i8": "signed char", "i16": "short",
              "i32": "int", "i64": "long long", "u8": "unsigned char",
              "u16": "unsigned short", "u32": "unsigned int", "u64": "unsigned long long"}
"""Output type codes and their C types."""


def source_for(kind: str, components: int, out: str = "f64") -> tuple[str, str]:
    """``(name, source)`` of the kernel gathering ``kind`` (a value type code, or
    ``"axes"``) with ``components`` values per point, writing type code ``out``.

    Examples
    --------
    >>> name, source = source_for("i32", 3)
    >>> name, "const int* __restrict__ values" in source
    ('weighted_sum__i32__c3', True)
    >>> source_for("axes", 3, "f32")[0]
    'weighted_sum__axes__c3__f32'
    """
    name = f"weighted_sum__{kind}__c{components}" + ("" if out == "f64" else f"__{out}")
    if kind == "axes":
        params = ("const double* __restrict__ ax, const double* __restrict__ ay, "
                  "const double* __restrict__ az, long long nx, long long ny, int narrow")
        gather = _AXES_GATHER
    else:
        params = f"const {_TYPES[kind]}* __restrict__ values"
        gather = "{ for (int c_ = 0; c_ < K; ++c_) V[c_] = (double)values[(P) * K + c_]; }"
    store = "(OUT)(X)" if out[0] == "f" else "(OUT)rint(X)"
    body = _BODY.replace("NAME", name).replace("PARAMS", params)
    return name, (f"#define K {components}\n#define OUT {_OUT_TYPES[out]}\n"
                  f"#define GATHER(P, V) {gather}\n#define STORE(X) {store}\n{body}"
                  "#undef STORE\n#undef GATHER\n#undef OUT\n#undef K\n")


def _code(dtype: np.dtype) -> str:
    return {"f": "f", "i": "i", "u": "u"}[dtype.kind] + str(8 * dtype.itemsize)


def _launch(kind: str, components: int, inputs: tuple, ids: Any, weights: Any,
            centres: Any, dtype: Any, out: Any = None) -> Any:
    import cupy

    ids = cupy.ascontiguousarray(ids, dtype=cupy.int64)
    weights = cupy.ascontiguousarray(weights, dtype=cupy.float64)
    rows, width = (int(n) for n in ids.shape)
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    if out is None:
        out = cupy.empty((rows, components), dtype=dtype)
    if rows:
        kernel = get_kernel(*source_for(kind, components, _code(dtype)))
        none = cupy.zeros(0, dtype=cupy.int64)
        kernel(((rows + 255) // 256,), (256,),
               inputs + (ids, weights, none, none, none.astype(cupy.float64), out,
                         np.int64(rows), np.int32(width), np.int32(0)))
        if centres is not None and centres[0].shape[0] and centres[1].shape[1]:
            at, later_ids, later_weights = centres
            count, later = (int(n) for n in later_ids.shape)
            kernel(((count + 255) // 256,), (256,),
                   inputs + (ids, weights, cupy.ascontiguousarray(at, dtype=cupy.int64),
                             cupy.ascontiguousarray(later_ids, dtype=cupy.int64),
                             cupy.ascontiguousarray(later_weights, dtype=cupy.float64), out,
                             np.int64(count), np.int32(width), np.int32(later)))
    return out


def weighted_values(values: Any, ids: Any, weights: Any, centres: Any = None,
                    dtype: Any = None, out: Any = None) -> Any:
    """``sum_j weights[:, j] * values[ids[:, j]]`` in float64, plus the centre rows'
    later terms, on the device, rounded once to ``dtype`` where one is given.

    Parameters
    ----------
    values : cupy.ndarray, shape (n,) or (n, k)
        A point field (any real dtype).
    ids : cupy.ndarray of int64, shape (m, 2) (or (m, 1))
    weights : cupy.ndarray of float64, shape (m, 2)
    centres : (rows, ids, weights) of cupy.ndarray, optional
        The centre rows and their later terms, shapes (c,), (c, w), (c, w), as
        :func:`daxpy.filters._geometry.weighted_sum` takes them.
    dtype : numpy dtype, optional
        The result's: a float is the float64 sum rounded, an integer the sum
        rounded to the nearest (ties to even, as ``numpy.rint``). Default float64.
    out : cupy.ndarray, optional
        Where to write the result (C-contiguous, of its shape and dtype).

    Returns
    -------
    cupy.ndarray of ``dtype``, shape (m,) or (m, k)

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
    wanted = None if dtype is None else np.dtype(dtype)
    # Written as asked where the kernel has the type; others (bool, float16) converted
    # after, integers and bools rounded to the nearest first as VTK interpolates them.
    direct = wanted is None or (wanted.kind in "fiu" and _code(wanted) in _OUT_TYPES)
    shape = (int(ids.shape[0]),) + tuple(values.shape[1:])
    made = _launch(_code(values.dtype), components, (values,), ids, weights, centres,
                   wanted if direct else None,
                   None if out is None or not direct else out.reshape(-1, components))
    if not direct:
        made = (made if wanted.kind == "f" else cupy.rint(made)).astype(wanted)
    if out is None:
        return made.reshape(shape)
    if not direct:
        out[...] = made.reshape(shape)
    return out


def weighted_axes(axes: tuple, ids: Any, weights: Any, centres: Any = None,
                  dtype: Any = None, out: Any = None) -> Any:
    """The weighted sums of the points of an image or rectilinear grid given by its
    three axes' coordinates (the points are ``axes[a][index_a]`` in float64), shape
    ``(m, 3)``, on the device; ``ids``, ``weights``, ``centres``, ``dtype`` (float64
    by default) and ``out`` as :func:`weighted_values` takes them.

    Examples
    --------
    >>> callable(weighted_axes)
    True
    """
    import cupy

    x, y, z = (cupy.asarray(a, dtype=cupy.float64) for a in axes)
    narrow = x.shape[0] * y.shape[0] * z.shape[0] < 2**32
    return _launch("axes", 3, (x, y, z, np.int64(x.shape[0]), np.int64(y.shape[0]),
                               np.int32(narrow)), ids, weights, centres, dtype, out)
