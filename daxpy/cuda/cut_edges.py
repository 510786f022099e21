"""The merge of marched cells' cut edges on the GPU: the distinct edges, with the
tests for exact values and collapsed output cells, in one host sync, then each
distinct edge's ends and weight in one kernel.

:func:`daxpy.worklets._merge_cuts.merge` as an array program on CuPy splits each
key into its ends, gathers and widens the two values, takes the differences and
the quotient, looks for grid values equal to the value, then looks for output
cells that list a point twice: some twenty-five launches and two host syncs
between the sort of the keys and the surface's points, while the GPU waits on
the host (a slice of 10M hexahedra: 67 kernels, 0.85 ms of them, in a call of
2.1-3.3 ms on an H100). Here :func:`distinct_keys` sorts the keys, raises one flag
where an edge's end has the value exactly (the array program's snapping then
runs, as before) and another where an output cell lists an edge twice, and
learns the distinct keys' count and both flags in one host sync (``unique``'s
own sync and a second for the flags were two); :func:`edge_terms` then writes
``lo``, ``hi`` and ``t``. That slice is now 30 kernels, 0.60 ms of them, in 1.07-1.35
ms of device time.

``t`` is ``(value - low) / (high - low)`` in float64, each operation rounded on
its own, ``low`` and ``high`` the field's values widened: the array program's bits.

Specialization: the field's dtype (float32 or float64).

Examples
--------
>>> source_for("float32")[0]
('cut_edge_terms__f32', 'cut_edge_terms__f32_heads')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .codegen import ctype, dtype_tag
from .compile import kernels_from

_TERMS = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const long long* __restrict__ keys, const long long n_edges, const long long n_points,
    const T* __restrict__ scalars, const double value, long long* __restrict__ lo,
    long long* __restrict__ hi, double* __restrict__ t)
{
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n_edges) return;
    const long long key = keys[e], a = key / n_points, b = key - a * n_points;
    lo[e] = a;
    hi[e] = b;
    const double low = (double)scalars[a], high = (double)scalars[b];
    t[e] = __ddiv_rn(__dsub_rn(value, low), __dsub_rn(high, low));
}

// Per sorted key: 1 where it starts a run of equal keys; flags[0] raised where an
// end's value is the value exactly.
extern "C" __global__ void __launch_bounds__(256) NAME_heads(
    const long long* __restrict__ sorted, const long long n, const long long n_points,
    const T* __restrict__ scalars, const double value, long long* __restrict__ heads,
    unsigned long long* __restrict__ flags)
{
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n) return;
    const long long key = sorted[e], a = key / n_points, b = key - a * n_points;
    heads[e] = e == 0 || key != sorted[e - 1];
    if ((double)scalars[a] == value || (double)scalars[b] == value) atomicOr(flags, 1ull);
}
"""

# Shared by every dtype: an output cell listing one edge twice (its keys, unsnapped,
# are its points), and the distinct keys written from their run starts.
_SHARED = r"""
extern "C" __global__ void __launch_bounds__(256) cut_cells_collapsed(
    const long long* __restrict__ cells, const long long n_cells, const int k,
    unsigned long long* __restrict__ flags)
{
    const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (c >= n_cells) return;
    const long long* cell = cells + c * k;
    bool distinct = cell[0] != cell[k - 1];
    for (int i = 0; i + 1 < k; ++i) distinct &= cell[i] != cell[i + 1];
    if (!distinct) atomicOr(flags + 1, 1ull);
}

extern "C" __global__ void __launch_bounds__(256) cut_keys_distinct(
    const long long* __restrict__ sorted, const long long* __restrict__ ends,
    const long long n, long long* __restrict__ distinct)
{
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n) return;
    if (e == 0 || ends[e] != ends[e - 1]) distinct[ends[e] - 1] = sorted[e];
}
"""

def source_for(dtype) -> tuple[tuple[str, str], str]:
    """``(names, source)`` of :func:`edge_terms`' kernel and :func:`distinct_keys`'
    first kernel (``_heads``) for a field of ``dtype``.

    Examples
    --------
    >>> names, source = source_for("float64")
    >>> names, "__ddiv_rn" in source
    (('cut_edge_terms__f64', 'cut_edge_terms__f64_heads'), True)
    """
    dtype = np.dtype(dtype)
    name = f"cut_edge_terms__{dtype_tag(dtype)}"
    return ((name, f"{name}_heads"),
            f"#define T {ctype(dtype)}\n{_TERMS.replace('NAME', name)}#undef T\n")


def shared_source() -> tuple[tuple[str, str], str]:
    """``(names, source)`` of the kernels every dtype shares: the collapsed cells'
    test and the distinct keys' scatter.

    Examples
    --------
    >>> names, source = shared_source()
    >>> names, all(name in source for name in names)
    (('cut_cells_collapsed', 'cut_keys_distinct'), True)
    """
    return ("cut_cells_collapsed", "cut_keys_distinct"), _SHARED


def _blocks(n: int) -> tuple[tuple[int], tuple[int]]:
    return ((n + 255) // 256,), (256,)


def serves(scalars: Any) -> bool:
    """Whether the kernels serve a cut of these device ``scalars`` (float32 or float64,
    one value a point).

    Examples
    --------
    >>> serves(np.zeros(2, np.float32)), serves(np.zeros(2, np.int32))
    (True, False)
    """
    return np.dtype(scalars.dtype) in (np.float32, np.float64) and scalars.ndim == 1


def distinct_keys(keys: Any, rows: list, scalars: Any, value: float,
                  n_points: int) -> tuple[Any, Any, bool, bool]:
    """``(distinct, inverse, snapped, collapsed)`` of edge ``keys`` (``lo * n_points +
    hi``, a flat int64 device array): the distinct keys ascending, each key's index
    among them, whether an edge's end has ``value`` exactly (the array program snaps
    those edges to the point), and whether an output cell lists one edge twice;
    ``rows``: ``(first, count, k)`` per part of ``keys`` that holds output cells of
    ``k`` edges. One host sync, for the count and both flags. For
    :func:`serves` ``scalars``.

    Examples
    --------
    >>> callable(distinct_keys)
    True
    """
    import cupy

    from .sizes import totals_at

    n = int(keys.shape[0])
    keys = cupy.ascontiguousarray(keys, dtype=cupy.int64)
    flags = cupy.zeros(2, cupy.int64)
    if n == 0:
        return keys, cupy.zeros(0, cupy.int64), False, False
    _, heads_kernel = kernels_from(source_for, np.dtype(scalars.dtype))
    cells_collapsed, keys_distinct = kernels_from(shared_source)
    ordered = cupy.sort(keys)
    heads = cupy.empty(n, cupy.int64)
    heads_kernel(
        *_blocks(n), (ordered, np.int64(n), np.int64(n_points),
                      cupy.ascontiguousarray(scalars), np.float64(value), heads, flags))
    for first, count, k in rows:
        if k > 1 and count:
            cells_collapsed(
                *_blocks(count // k), (keys[first:first + count], np.int64(count // k),
                                       np.int32(k), flags))
    ends = cupy.cumsum(heads)  # each sorted key's distinct key's number, from 1
    n_distinct, snapped, collapsed = totals_at(ends, [n - 1], also=[(flags, 0), (flags, 1)])
    distinct = cupy.empty(n_distinct, cupy.int64)
    keys_distinct(*_blocks(n), (ordered, ends, np.int64(n), distinct))
    return distinct, cupy.searchsorted(distinct, keys), bool(snapped), bool(collapsed)


def edge_terms(keys: Any, scalars: Any, value: float, n_points: int) -> tuple:
    """``(lo, hi, t)`` of distinct edge ``keys`` (``lo * n_points + hi``, int64 device
    array) of :func:`serves` ``scalars``.

    Examples
    --------
    >>> callable(edge_terms)
    True
    """
    import cupy

    n = int(keys.shape[0])
    lo, hi = cupy.empty(n, cupy.int64), cupy.empty(n, cupy.int64)
    t = cupy.empty(n, cupy.float64)
    if n:
        kernels_from(source_for, np.dtype(scalars.dtype))[0](
            *_blocks(n), (cupy.ascontiguousarray(keys, dtype=cupy.int64), np.int64(n),
                          np.int64(n_points), cupy.ascontiguousarray(scalars),
                          np.float64(value), lo, hi, t))
    return lo, hi, t
