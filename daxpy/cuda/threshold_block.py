"""The threshold of an unstructured grid of one cell shape on the GPU: three kernels
and two scans.

The array program (:func:`daxpy.worklets.threshold.threshold_cells`) gathers every
cell's corner values into a table to test them, then builds the kept cells'
corners through per-cell tables of sizes, types and slots, a scatter, a point mask
and a gather: for 10M hexahedra about 6 ms of an H100's time, most of it
temporaries. Here:

1. *classify*: a thread a cell reads its corner ids and values (or its own value)
   and writes its verdict byte (:data:`MODES`; ``invert`` flips it);
2. the kept cells' ids (``flatnonzero``, whose size read-back is the host sync);
3. *mark*: a thread a kept cell's corner sets its point's byte;
4. the used points' ids and numbers (``flatnonzero`` and a running sum);
5. *emit*: a thread a kept cell's corner writes its point's number.

Output is the array program's, bit for bit: cells ascending, each cell's corners
in its order, points ascending, int64 ids and offsets, uint8 types. Values
compare with the range as in float64: the caller passes the dtype's numbers at or
inside it (and the range itself for the continuous test, taken in float64). A
corner id outside the field (which a validated grid never holds) is read nowhere:
its cell is not kept (kept, inverted) and its output corner is -1.

Specializations: the field's dtype, the corner ids' dtype, the corners per cell and
the test (classify); the ids' dtype and the corners per cell (mark, emit).

Examples
--------
>>> classify_source("float32", "int64", 8, MODES["all"])[0]
'threshold_block_classify__f32__i64__k8__m1'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .codegen import ctype, dtype_tag
from .compile import get_kernel

MODES = {"cells": 0, "all": 1, "any": 2, "range": 3}
"""The tests: the cell's own value in range; all or any of its corners' values in
range; the range of its corners' values (none with a NaN) meeting the range."""

_CLASSIFY = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const T* __restrict__ s, const long long n_values, const I* __restrict__ corners,
    const T low, const T high, const double lower, const double upper, const int invert,
    unsigned char* __restrict__ keep, const long long n_cells)
{
    const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (c >= n_cells) return;
    bool kept = true;
#if MODE == 0
    const T v = s[c];
    kept = (v >= low) && (v <= high);
#else
    const I* row = corners + c * K;
    int inside = 0;
    // -inf and +inf by their bits: NVRTC has no INFINITY (no math headers).
    double top = __longlong_as_double(0xfff0000000000000LL);
    double bottom = __longlong_as_double(0x7ff0000000000000LL);
    bool number = true;
#pragma unroll
    for (int b = 0; b < K; ++b) {
        const long long id = (long long)row[b];
        if ((unsigned long long)id >= (unsigned long long)n_values) {
            kept = false;
            continue;
        }
        const T v = s[id];
#if MODE == 3
        const double w = (double)v;
        number = number && (w == w);
        top = fmax(top, w);
        bottom = fmin(bottom, w);
#else
        inside += (v >= low) && (v <= high);
#endif
    }
#if MODE == 1
    kept = kept && inside == K;
#elif MODE == 2
    kept = kept && inside > 0;
#else
    kept = kept && number && top >= lower && bottom <= upper;
#endif
#endif
    keep[c] = (unsigned char)(kept != (invert != 0));
}
"""

_MARK = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const I* __restrict__ corners, const long long* __restrict__ kept,
    const long long n_corners, const long long n_points, unsigned char* __restrict__ used)
{
    const long long m = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (m >= n_corners) return;
    const long long id = (long long)corners[kept[m / K] * K + m % K];
    // Threads may mark one point together: each stores the same byte.
    if ((unsigned long long)id < (unsigned long long)n_points) used[id] = 1;
}
"""

_EMIT = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const I* __restrict__ corners, const long long* __restrict__ kept,
    const long long n_corners, const long long n_points,
    const long long* __restrict__ number, long long* __restrict__ connectivity)
{
    const long long m = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (m >= n_corners) return;
    const long long id = (long long)corners[kept[m / K] * K + m % K];
    connectivity[m] = (unsigned long long)id < (unsigned long long)n_points ? number[id] : -1;
}
"""


def _source(body: str, name: str, defines: dict) -> tuple[str, str]:
    head = "".join(f"#define {key} {value}\n" for key, value in defines.items())
    tail = "".join(f"#undef {key}\n" for key in reversed(defines))
    return name, head + body.replace("NAME", name) + tail


def classify_source(dtype, id_dtype, corners: int, mode: int) -> tuple[str, str]:
    """``(name, source)`` of the classify kernel.

    Examples
    --------
    >>> name, source = classify_source("float64", "int32", 4, MODES["cells"])
    >>> name, "#define MODE 0" in source
    ('threshold_block_classify__f64__i32__k4__m0', True)
    """
    name = (f"threshold_block_classify__{dtype_tag(dtype)}__{dtype_tag(id_dtype)}__k{corners}"
            f"__m{mode}")
    return _source(_CLASSIFY, name, {"T": ctype(dtype), "I": ctype(id_dtype), "K": corners,
                                     "MODE": mode})


def corner_source(part: str, id_dtype, corners: int) -> tuple[str, str]:
    """``(name, source)`` of the ``"mark"`` or ``"emit"`` kernel.

    Examples
    --------
    >>> corner_source("emit", "int64", 8)[0]
    'threshold_block_emit__i64__k8'
    """
    name = f"threshold_block_{part}__{dtype_tag(id_dtype)}__k{corners}"
    return _source({"mark": _MARK, "emit": _EMIT}[part], name,
                   {"I": ctype(id_dtype), "K": corners})


def _launch(kernel, n: int, *args) -> None:
    if n:
        kernel(((n + 255) // 256,), (256,), args)


def threshold_block(values: Any, corners: Any, n_points: int, mode: int, bounds: tuple,
                    invert: bool, vtk_type: int) -> tuple:
    """The kept cells of a grid whose cells are all ``corners`` (device, ``(n, k)``,
    int32 or int64), from ``values`` (device float32 or float64, one per point, or
    one per cell for the ``"cells"`` test).

    Parameters
    ----------
    values, corners : cupy.ndarray
    n_points : int
        The grid's points.
    mode : int
        One of :data:`MODES`.
    bounds : tuple
        ``(low, high, lower, upper)``: the range in the values' dtype, rounded
        inwards, and as given (the continuous test).
    invert : bool
    vtk_type : int
        The cells' VTK type.

    Returns
    -------
    tuple
        ``(cell_ids, point_ids, connectivity, offsets, cell_types)``.

    Examples
    --------
    >>> callable(threshold_block)
    True
    """
    import cupy

    values, corners = cupy.ascontiguousarray(values), cupy.ascontiguousarray(corners)
    n_cells, k = (int(n) for n in corners.shape)
    low, high, lower, upper = bounds
    keep = cupy.empty(n_cells, cupy.uint8)
    _launch(get_kernel(*classify_source(values.dtype, corners.dtype, k, mode)), n_cells,
            values, np.int64(values.shape[0]), corners, values.dtype.type(low),
            values.dtype.type(high), np.float64(lower), np.float64(upper),
            np.int32(bool(invert)), keep, np.int64(n_cells))
    kept = cupy.flatnonzero(keep)   # the host sync: the output's size
    n_corners = int(kept.shape[0]) * k
    used = cupy.zeros(n_points, cupy.uint8)
    _launch(get_kernel(*corner_source("mark", corners.dtype, k)), n_corners, corners, kept,
            np.int64(n_corners), np.int64(n_points), used)
    point_ids = cupy.flatnonzero(used)
    number = cupy.cumsum(used, dtype=cupy.int64)
    number -= 1
    connectivity = cupy.empty(n_corners, cupy.int64)
    _launch(get_kernel(*corner_source("emit", corners.dtype, k)), n_corners, corners, kept,
            np.int64(n_corners), np.int64(n_points), number, connectivity)
    offsets = cupy.arange(0, n_corners + 1, k, dtype=cupy.int64)
    types = cupy.full(kept.shape[0], vtk_type, dtype=cupy.uint8)
    return kept, point_ids, connectivity, offsets, types
