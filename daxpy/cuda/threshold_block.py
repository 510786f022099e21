"""The threshold of an unstructured grid of one cell shape on the GPU: two kernels and
a scan, its outputs gathered by bit words.

The array program (:func:`daxpy.worklets.threshold.threshold_cells`) gathers every
cell's corner values into a table to test them, then builds the kept cells' corners
through per-cell tables of sizes, types and slots, a scatter, a point mask and a
gather: for 10M hexahedra about 6 ms of an H100's time, most of it temporaries.
Here, as for structured grids (:mod:`daxpy.cuda.threshold_cells`), what lives
between the kernels is a bit a cell and a bit a point:

1. *classify*: a thread a cell reads its corner ids and values (or its own value),
   tests them (:data:`MODES`; ``invert`` flips the verdict), and a ballot makes a
   word of 32 cells' bits with its count; a kept cell sets its corners' bits among
   the points' words (``atomicOr``: its corner ids are in its registers, so the kept
   cells' corners are not read again to mark them);
2. *count*: each point word's used points;
3. one exclusive scan over both kinds of words' counts, then the one host sync;
4. *emit*: a warp a word of cells writes its kept cells' offsets, types and
   corners (coalesced), each corner numbered by its point word's start and the
   used points below it in the word.

The ids are made only where asked for, and the output's arrays are gathered by the
words (:class:`~daxpy.cuda.bit_words.BitWords`). On an H100, 10M hexahedra, the
upper half of the range: 1.39 ms of kernels before (a dozen CuPy passes among
three kernels: two ``flatnonzero`` and a ``cumsum``, the kept cells' corners read
three times), 1.5 ms a call.

Output is the array program's, bit for bit: cells ascending, each cell's corners
in its order, points ascending, int64 ids and offsets, uint8 types. Values
compare with the range as in float64: the caller passes the dtype's numbers at or
inside it (and the range itself for the continuous test, taken in float64). A
corner id outside the field (which a validated grid never holds) is read nowhere:
its cell is not kept (kept, inverted) and its output corner is -1.

Specializations: the field's dtype, the corner ids' dtype, the corners per cell and
the test (classify); the ids' dtype and the corners per cell (emit).

Examples
--------
>>> classify_source("float32", "int64", 8, MODES["all"])[0]
'threshold_block_classify__f32__i64__k8__m1'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .bit_words import kept_by_words, topology_arrays
from .codegen import ctype, dtype_tag
from .compile import kernel_from
from .scan import scan_counts

_WARPS = 8
"""Warps per block of the emit: a warp a word of cells."""

MODES = {"cells": 0, "all": 1, "any": 2, "range": 3}
"""The tests: the cell's own value in range; all or any of its corners' values in
range; the range of its corners' values (none with a NaN) meeting the range."""

_CLASSIFY = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const T* __restrict__ s, const long long n_values, const I* __restrict__ corners,
    const long long n_points, const T low, const T high, const double lower,
    const double upper, const int invert, const int n_cells,
    unsigned* __restrict__ cell_words, int* __restrict__ counts,
    unsigned* __restrict__ point_words)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    // Whole warps to the ballot: the cells past the last are not kept.
    bool kept = false;
    const I* row = corners + (long long)c * K;
    long long id[K];
    if (c < n_cells) {
        kept = true;
#if MODE == 0
        const T v = s[c];
        kept = (v >= low) && (v <= high);
#else
#pragma unroll
        for (int b = 0; b < K; ++b) id[b] = (long long)row[b];
        int inside = 0;
        // -inf and +inf by their bits: NVRTC has no INFINITY (no math headers).
        double top = __longlong_as_double(0xfff0000000000000LL);
        double bottom = __longlong_as_double(0x7ff0000000000000LL);
        bool number = true;
#pragma unroll
        for (int b = 0; b < K; ++b) {
            if ((unsigned long long)id[b] >= (unsigned long long)n_values) {
                kept = false;
                continue;
            }
            const T v = s[id[b]];
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
        kept = kept != (invert != 0);
    }
    const unsigned word = __ballot_sync(0xffffffffu, kept);
    if ((threadIdx.x & 31) == 0 && c < n_cells) {
        cell_words[c >> 5] = word;
        counts[c >> 5] = __popc(word);
    }
    if (!word) return;  // the whole warp: none of its cells is kept
    // The kept cells' corners are used points: their bits set with an atomic or (the
    // words are few enough to stay in L2), one a point word a warp: neighbouring
    // cells share most corners, and an atomic a corner (36M for 10M hexahedra, 116
    // on each word) took 0.7 ms, the atomics on one word waiting on one another.
    // Cell scalars read the kept cells' corners alone.
#if MODE == 0
    if (kept) {
#pragma unroll
        for (int b = 0; b < K; ++b) id[b] = (long long)row[b];
    }
#endif
#pragma unroll
    for (int b = 0; b < K; ++b) {
        const bool marks = kept && (unsigned long long)id[b] < (unsigned long long)n_points;
        const unsigned marking = __ballot_sync(0xffffffffu, marks);
        if (!marks) continue;
        const unsigned long long w = (unsigned long long)id[b] >> 5;
#if __CUDA_ARCH__ >= 800
        const unsigned peers = __match_any_sync(marking, w);
        const unsigned bits = __reduce_or_sync(peers, 1u << (id[b] & 31));
        if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicOr(point_words + w, bits);
#else  // no warp reductions before sm_80: an atomic a corner
        atomicOr(point_words + w, 1u << (id[b] & 31));
#endif
    }
}
"""

# count: each point word's used points, after the cells' counts.
_COUNT = r"""
extern "C" __global__ void __launch_bounds__(256) threshold_block_count(
    const unsigned* __restrict__ point_words, const int n_words, int* __restrict__ counts)
{
    const int w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w < n_words) counts[w] = __popc(point_words[w]);
}
"""

# emit: a warp a word of 32 cells. Its kept cells' outputs are consecutive: the
# lanes write their offsets and types, then the warp their corners, lane t of round r
# corner t + 32 r of them (a thread a cell storing its K corners, K * 8 bytes apart,
# took 0.5 ms for 10M hexahedra). A corner's output number is its point word's start
# (starts, less the kept cells) plus the used points below it in the word.
_EMIT = r"""
extern "C" __global__ void __launch_bounds__(32 * WARPS) NAME(
    const I* __restrict__ corners, const unsigned* __restrict__ cell_words,
    const unsigned* __restrict__ point_words, const long long* __restrict__ starts,
    const int n_cell_words, const long long n_points, const long long n_kept,
    const unsigned char vtk_type, long long* __restrict__ connectivity,
    long long* __restrict__ offsets, unsigned char* __restrict__ types)
{
    __shared__ int cell_of[WARPS][32];  // per kept cell of the word, in order: its lane
    const int g = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
    if (g >= n_cell_words) return;
    const unsigned word = cell_words[g];
    if (!word) return;
    const long long out = starts[g];
    const int n = __popc(word);
    if (word >> lane & 1u) {
        const int slot = __popc(word & ((1u << lane) - 1u));
        cell_of[threadIdx.y][slot] = lane;
        offsets[out + slot] = K * (out + slot);
        types[out + slot] = vtk_type;
        if (out + slot == n_kept - 1) offsets[n_kept] = K * n_kept;
    }
    __syncwarp();
    const I* first = corners + 32LL * g * K;
    for (int t = lane; t < K * n; t += 32) {
        const long long id = (long long)first[cell_of[threadIdx.y][t / K] * K + t % K];
        long long number = -1;
        if ((unsigned long long)id < (unsigned long long)n_points) {
            const long long w = id >> 5;
            number = starts[n_cell_words + w] - n_kept
                     + __popc(point_words[w] & ((1u << (id & 31)) - 1u));
        }
        connectivity[K * out + t] = number;
    }
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


def emit_source(id_dtype, corners: int) -> tuple[str, str]:
    """``(name, source)`` of the emit kernel.

    Examples
    --------
    >>> emit_source("int64", 8)[0]
    'threshold_block_emit__i64__k8'
    """
    name = f"threshold_block_emit__{dtype_tag(id_dtype)}__k{corners}"
    return _source(_EMIT, name, {"I": ctype(id_dtype), "K": corners, "WARPS": _WARPS})


def count_source() -> tuple[str, str]:
    """``(name, source)`` of the point words' count.

    Examples
    --------
    >>> count_source()[0]
    'threshold_block_count'
    """
    return "threshold_block_count", _COUNT


def _launch(kernel, n: int, *args) -> None:
    if n:
        kernel(((n + 255) // 256,), (256,), args)


def threshold_block(values: Any, corners: Any, n_points: int, mode: int, bounds: tuple,
                    invert: bool, vtk_type: int, ids: bool = True) -> tuple | None:
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
    ids : bool
        Make the kept cells' and used points' ids (False: None for both).

    Returns
    -------
    tuple or None
        ``(cell_ids, point_ids, connectivity, offsets, cell_types, point_words,
        cell_words)``, as :class:`daxpy.worklets.threshold.Kept` holds them; None
        for grids of 2^31 cells or points or more (the kernels number them in 32
        bits).

    Examples
    --------
    >>> callable(threshold_block)
    True
    """
    import cupy

    values, corners = cupy.ascontiguousarray(values), cupy.ascontiguousarray(corners)
    n_cells, k = (int(n) for n in corners.shape)
    if max(n_cells, n_points) >= 2**31 - 32:
        return None
    low, high, lower, upper = bounds
    cell_words_n, point_words_n = (n_cells + 31) // 32, (n_points + 31) // 32
    # The words and their counts in one allocation, zeroed for the points' bits.
    scratch = cupy.zeros(2 * (cell_words_n + point_words_n), cupy.int32)
    words = scratch[:cell_words_n + point_words_n].view(cupy.uint32)
    cell_words, point_words = words[:cell_words_n], words[cell_words_n:]
    counts = scratch[cell_words_n + point_words_n:]
    _launch(kernel_from(classify_source, values.dtype, corners.dtype, k, mode), n_cells,
            values, np.int64(values.shape[0]), corners, np.int64(n_points),
            values.dtype.type(low), values.dtype.type(high), np.float64(lower),
            np.float64(upper), np.int32(bool(invert)), np.int32(n_cells), cell_words,
            counts, point_words)
    _launch(kernel_from(count_source), point_words_n, point_words, np.int32(point_words_n),
            counts[cell_words_n:])
    starts = cupy.empty(cell_words_n + point_words_n + 1, cupy.int64)
    # The one host sync: the kept cells and, with them, the used points.
    n_kept, n_both = scan_counts(counts, starts, (cell_words_n, cell_words_n + point_words_n))
    connectivity, offsets, types = topology_arrays(n_kept, k)
    if n_kept:
        kernel_from(emit_source, corners.dtype, k)(
            ((cell_words_n + _WARPS - 1) // _WARPS,), (32, _WARPS),
            (corners, cell_words, point_words, starts, np.int32(cell_words_n),
             np.int64(n_points), np.int64(n_kept), np.uint8(vtk_type), connectivity, offsets,
             types))
    else:
        offsets[0] = 0  # emit writes every offset, the last by the last cell's thread
    cell_ids, point_ids, *words = kept_by_words(cell_words, point_words, starts,
                                                (n_kept, n_both - n_kept), (n_cells, n_points),
                                                ids)
    return (cell_ids, point_ids, connectivity, offsets, types, *words)
