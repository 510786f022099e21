"""The merge of marched cells' cut edges on the GPU: each distinct edge's ends and
weight in one kernel, and the check for collapsed output cells in one more.

:func:`daxpy.worklets._merge_cuts.merge` as an array program on CuPy splits each
key into its ends, gathers and widens the two values, takes the differences and
the quotient, looks for grid values equal to the value, then looks for output
cells that list a point twice: some twenty-five launches and two host syncs
between the sort of the keys and the surface's points, while the GPU waits on
the host (a slice of 10M hexahedra: 67 kernels, 0.85 ms of them, in a call of
2.1-3.3 ms on an H100). Here :func:`edge_terms` writes ``lo``, ``hi`` and ``t``
and raises a flag where an end's value equals the value (the array program's
snapping then runs, as before), :func:`mark_collapsed` raises the other flag
where an output cell repeats a point; the caller reads both flags in one sync.

``t`` is ``(value - low) / (high - low)`` in float64, each operation rounded on
its own, ``low`` and ``high`` the field's values widened: the array program's bits.

Specialization: the field's dtype (float32 or float64).

Examples
--------
>>> source_for("float32")[0]
'cut_edge_terms__f32'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .codegen import ctype, dtype_tag
from .compile import get_kernel

_TERMS = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const long long* __restrict__ keys, const long long n_edges, const long long n_points,
    const T* __restrict__ scalars, const double value, long long* __restrict__ lo,
    long long* __restrict__ hi, double* __restrict__ t, int* __restrict__ flags)
{
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n_edges) return;
    const long long key = keys[e], a = key / n_points, b = key - a * n_points;
    lo[e] = a;
    hi[e] = b;
    const double low = (double)scalars[a], high = (double)scalars[b];
    t[e] = __ddiv_rn(__dsub_rn(value, low), __dsub_rn(high, low));
    if (low == value || high == value) atomicOr(flags, 1);
}
"""

_COLLAPSED = r"""
extern "C" __global__ void __launch_bounds__(256) cut_cells_collapsed(
    const long long* __restrict__ cells, const long long n_cells, const int k,
    int* __restrict__ flags)
{
    const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (c >= n_cells) return;
    const long long* cell = cells + c * k;
    bool distinct = cell[0] != cell[k - 1];
    for (int i = 0; i + 1 < k; ++i) distinct &= cell[i] != cell[i + 1];
    if (!distinct) atomicOr(flags + 1, 1);
}
"""

_KERNELS: dict[str, Any] = {}
"""The compiled kernels by name (their sources hashed once, not per call)."""


def source_for(dtype) -> tuple[str, str]:
    """``(name, source)`` of :func:`edge_terms`' kernel for a field of ``dtype``.

    Examples
    --------
    >>> name, source = source_for("float64")
    >>> name, "__ddiv_rn" in source
    ('cut_edge_terms__f64', True)
    """
    dtype = np.dtype(dtype)
    name = f"cut_edge_terms__{dtype_tag(dtype)}"
    return name, f"#define T {ctype(dtype)}\n{_TERMS.replace('NAME', name)}#undef T\n"


def collapsed_source() -> tuple[str, str]:
    """``(name, source)`` of :func:`mark_collapsed`'s kernel.

    Examples
    --------
    >>> collapsed_source()[0]
    'cut_cells_collapsed'
    """
    return "cut_cells_collapsed", _COLLAPSED


def _kernel(name: str, source: str):
    kernel = _KERNELS.get(name)
    if kernel is None:
        kernel = _KERNELS[name] = get_kernel(name, source)
    return kernel


def _blocks(n: int) -> tuple[tuple[int], tuple[int]]:
    return ((n + 255) // 256,), (256,)


def edge_terms(keys: Any, scalars: Any, value: float, n_points: int) -> tuple | None:
    """``(lo, hi, t, flags)`` of distinct edge ``keys`` (``lo * n_points + hi``, int64
    device array) of a float32 or float64 device field: ``flags[0]`` is raised where
    an end's value equals ``value`` (``flags``: two int32 on the device, the second
    for :func:`mark_collapsed`). None for other dtypes (the array program serves).

    Examples
    --------
    >>> callable(edge_terms)
    True
    """
    dtype = np.dtype(scalars.dtype)
    if dtype not in (np.float32, np.float64) or scalars.ndim != 1:
        return None
    import cupy

    n = int(keys.shape[0])
    lo, hi = cupy.empty(n, cupy.int64), cupy.empty(n, cupy.int64)
    t = cupy.empty(n, cupy.float64)
    flags = cupy.zeros(2, cupy.int32)
    if n:
        _kernel(*source_for(dtype))(
            *_blocks(n), (cupy.ascontiguousarray(keys, dtype=cupy.int64), np.int64(n),
                          np.int64(n_points), cupy.ascontiguousarray(scalars),
                          np.float64(value), lo, hi, t, flags))
    return lo, hi, t, flags


def mark_collapsed(cells: Any, flags: Any) -> None:
    """Raise ``flags[1]`` where a row of ``cells`` (int64 device array ``(m, k)``,
    ``k`` at least 2) lists a point twice in a row or at both ends, as
    :func:`daxpy.worklets._merge_cuts._uncollapsed` drops them.

    Examples
    --------
    >>> callable(mark_collapsed)
    True
    """
    import cupy

    n, k = (int(s) for s in cells.shape)
    if n:
        _kernel(*collapsed_source())(
            *_blocks(n), (cupy.ascontiguousarray(cells, dtype=cupy.int64), np.int64(n),
                          np.int32(k), flags))
