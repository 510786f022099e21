"""The CUDA source of the kernels of :mod:`daxpy.cuda.clip_block`: count, keys, point
rows and emit, specialized per field dtype and cell shape (its corners and edges
compiled in, :func:`source_for`). The case tables come as small device arrays.

Examples
--------
>>> source_for("float32", "hexahedron", ((0, 1), (1, 2)))[0][3]
'clip_block__f32_hexahedron_emit'
"""

from __future__ import annotations

import numpy as np

from .block_scan import BLOCK_SCAN
from .warp_owner import WARP_OWNER
from .cell_edges import edge_defines
from .codegen import ctype, dtype_tag

CORNER_CODES = 8
"""Codes below this are a cell's corners; ``8 + e`` is its edge ``e`` (the codes of
:func:`daxpy.worklets._clip_arrays._case_arrays`)."""

_COMMON = r"""
#ifndef DAXPY_CLIP_BLOCK  // what every shape's kernels share, once per source
#define DAXPY_CLIP_BLOCK

// The array program's cut weight along (lo, hi), in float64 (no fused operations).
template <typename T>
__device__ __forceinline__ double clip_weight(const T* s, double value, long long lo,
                                              long long hi) {
  const double low = (double)s[lo], high = (double)s[hi];
  return high != low ? __ddiv_rn(__dsub_rn(value, low), __dsub_rn(high, low)) : 0.0;
}
#endif
"""

_BODY = r"""
// Each cell's case (bit c: corner c kept) into ``cases``, and per chunk the sums of
// its cells' output cells, slots, centre points and cut edges, and of its cells
// with a corner id out of range (refused by the caller), as (5, chunks).
extern "C" __global__ void __launch_bounds__(CHUNK) NAME_count(
    const unsigned char* __restrict__ kept, const I* __restrict__ corners,
    const long long n_cells, const long long n_points, const int* __restrict__ per_case,
    unsigned char* __restrict__ cases, long long* __restrict__ chunk_counts,
    const long long chunks)
{
  __shared__ unsigned long long shared[8];
  const long long x = (long long)blockIdx.x * CHUNK + threadIdx.x;
  unsigned long long counted[5] = {0, 0, 0, 0, 0};
  if (x < n_cells) {
    int c = 0;
    bool bad = false;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const long long p = corners[x * K + k];
      bad |= (unsigned long long)p >= (unsigned long long)n_points;  // below 0 wraps
      if (!bad) c |= (int)kept[p] << k;
    }
    if (bad) c = 0;  // counted as making nothing; the call is refused after
    cases[x] = (unsigned char)c;
#pragma unroll
    for (int f = 0; f < 4; ++f) counted[f] = per_case[4 * c + f];
    counted[4] = bad;
  }
  // The five sums in one block scan, packed: a chunk's 256 cells make at most 256 * 16
  // cells, 256 * 64 slots, 256 * 8 centres and 256 * 12 cut edges, and 256 refusals
  // (13, 15, 12, 12 and 9 bits). Five scans, a barrier pair each, were a third of
  // the kernel.
  unsigned long long total;
  block_scan<unsigned long long>(counted[0] | counted[1] << 13 | counted[2] << 28
                                 | counted[3] << 40 | counted[4] << 52, shared, total);
  if (threadIdx.x == 0) {
    const int shift[5] = {0, 13, 28, 40, 52}, width[5] = {13, 15, 12, 12, 9};
#pragma unroll
    for (int f = 0; f < 5; ++f)
      chunk_counts[f * chunks + blockIdx.x] =
          (long long)(total >> shift[f] & ((1ull << width[f]) - 1ull));
  }
}

// Each cell's cut edges as lo * n + hi, in cell order from its chunk's first key.
extern "C" __global__ void __launch_bounds__(CHUNK) NAME_keys(
    const I* __restrict__ corners, const unsigned char* __restrict__ cases,
    const long long n_cells, const long long n_points, const int* __restrict__ per_case,
    const long long* __restrict__ key_start, long long* __restrict__ keys)
{
  __shared__ int shared[8];
  const long long x = (long long)blockIdx.x * CHUNK + threadIdx.x;
  const int c = x < n_cells ? cases[x] : 0;
  const int crossed = x < n_cells ? per_case[4 * c + 3] : 0;
  int total;
  long long at = key_start[blockIdx.x] + block_scan<int>(crossed, shared, total);
  if (crossed == 0) return;
#pragma unroll
  for (int e = 0; e < EDGES; ++e) {
    if (((c >> EDGE_A[e]) ^ (c >> EDGE_B[e])) & 1) {
      const long long a = corners[x * K + EDGE_A[e]], b = corners[x * K + EDGE_B[e]];
      keys[at++] = (a < b ? a : b) * n_points + (a < b ? b : a);
    }
  }
}

// The kept points' rows (ascending id), then the cut edges' (ascending key).
extern "C" __global__ void __launch_bounds__(CHUNK) NAME_points(
    const T* __restrict__ s, const double value, const unsigned char* __restrict__ kept,
    const long long* __restrict__ renumber, const long long n_points,
    const long long* __restrict__ cut_keys, const long long n_cut, long long* __restrict__ ids,
    double* __restrict__ weights, long long* __restrict__ point_keys)
{
  const long long i = (long long)blockIdx.x * CHUNK + threadIdx.x;
  const long long n_kept = renumber[n_points];
  if (i < n_points) {
    if (!kept[i]) return;
    const long long q = renumber[i];
    ids[2 * q] = i;
    ids[2 * q + 1] = i;
    weights[2 * q] = 1.0;
    weights[2 * q + 1] = 0.0;
    point_keys[q] = i;
  } else if (i < n_points + n_cut) {
    const long long e = i - n_points, key = cut_keys[e];
    const long long lo = key / n_points, hi = key - lo * n_points;
    const double t = clip_weight<T>(s, value, lo, hi);
    ids[2 * (n_kept + e)] = lo;
    ids[2 * (n_kept + e) + 1] = hi;
    weights[2 * (n_kept + e)] = __dsub_rn(1.0, t);
    weights[2 * (n_kept + e) + 1] = t;
    point_keys[n_kept + e] = n_points + key;
  }
}

// Each cell's output cells and centre points from its starts: its chunk's, plus the
// cells before it in the chunk (one scan of the three counts, packed).
extern "C" __global__ void __launch_bounds__(CHUNK) NAME_emit(
    const T* __restrict__ s, const double value, const I* __restrict__ corners,
    const unsigned char* __restrict__ cases, const long long n_cells, const long long n_points,
    const int* __restrict__ per_case, const int* __restrict__ case_starts,
    const int* __restrict__ cells, const int* __restrict__ slot_codes,
    const int* __restrict__ terms, const double* __restrict__ shares, const int term_width,
    const long long* __restrict__ renumber, const long long* __restrict__ rank,
    const long long* __restrict__ starts, const long long chunks,
    const long long first_centre, long long* __restrict__ ids, double* __restrict__ weights,
    long long* __restrict__ centre_ids, double* __restrict__ centre_weights,
    long long* __restrict__ connectivity, long long* __restrict__ offsets,
    unsigned char* __restrict__ types, long long* __restrict__ source,
    long long* __restrict__ point_keys)
{
  __shared__ unsigned long long shared[8];
  const long long x = (long long)blockIdx.x * CHUNK + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int c = x < n_cells ? cases[x] : 0;
  const int made = x < n_cells ? per_case[4 * c] : 0;
  const int slots = x < n_cells ? per_case[4 * c + 1] : 0;
  const int centres = x < n_cells ? per_case[4 * c + 2] : 0;
  const int crossed = x < n_cells ? per_case[4 * c + 3] : 0;
  // A chunk's 256 cells make at most 256 * 16 cells, 256 * 64 slots, 256 * 8 centres
  // and 256 * 12 cut edges: 14, 16, 13 and 13 bits.
  unsigned long long total;
  const unsigned long long before = block_scan<unsigned long long>(
      (unsigned long long)made | (unsigned long long)slots << 14
      | (unsigned long long)centres << 30 | (unsigned long long)crossed << 43, shared, total);
  long long q = starts[blockIdx.x] + (long long)(before & 0x3fffu);
  long long slot = starts[chunks + 1 + blockIdx.x] + (long long)(before >> 14 & 0xffffu);
  // A warp of cells all kept whole (most warps that make cells) writes their K * 32
  // slots together, lane t of round r slot t + 32 r: its corners and its slots are
  // consecutive. A thread a cell storing its K corners K * 8 bytes apart wrote each
  // sector in pieces (the threshold's emit measured the same: 0.5 ms for 10M
  // hexahedra, a thread a cell).
  const bool whole = x < n_cells && c == (1 << K) - 1;
  if (__all_sync(0xffffffffu, whole)) {
    const long long first_slot = __shfl_sync(0xffffffffu, slot, 0);
    const I* warp_corners = corners + (x - lane) * K;
#pragma unroll
    for (int r = 0; r < K; ++r)
      connectivity[first_slot + lane + 32 * r] = renumber[warp_corners[lane + 32 * r]];
  } else if (whole) {  // every corner kept: the cell itself, renumbered
#pragma unroll
    for (int k = 0; k < K; ++k) connectivity[slot + k] = renumber[corners[x * K + k]];
  }
  if (whole) {
    types[q] = (unsigned char)cells[2 * case_starts[3 * c]];
    source[q] = x;
    offsets[q + 1] = slot + K;
  }
  // Cut cells, written by their warp together, as three lists: the warp's cut
  // cells' slots, then their output cells, then their centre points' terms, 32 a
  // round, each lane finding its item's cell among the cut cells (warp_owner) and
  // its numbers by shuffles from that cell's lane. A cut cell at a time (a lane
  // each of its up to 64 slots, 16 cells and 56 terms, the rest idle) left most
  // lanes idle, most rounds. A slot is a corner (renumbered), a cut edge (its rank
  // among the sorted distinct keys numbers its point; the keys kernel placed the
  // cell's keys in edge order from key_at), or a centre point.
  const bool cut_cell = made > 0 && !whole;
  if (!__any_sync(0xffffffffu, cut_cell)) return;
  __shared__ int round_owner[CHUNK / 32][32];
  int* owner_stage = round_owner[threadIdx.x >> 5];
  const long long n_kept = renumber[n_points];
  const long long key_at = starts[3 * (chunks + 1) + blockIdx.x] + (long long)(before >> 43);
  const long long centre_at = first_centre + starts[2 * (chunks + 1) + blockIdx.x]
                              + (long long)(before >> 30 & 0x1fffu);
  unsigned cut = 0u;
#pragma unroll
  for (int e = 0; e < EDGES; ++e)
    cut |= (unsigned)(((c >> EDGE_A[e]) ^ (c >> EDGE_B[e])) & 1) << e;
  // The lane's slots, cells and terms, and those of the lanes below (at most 32 *
  // 64, 32 * 16 and 32 * 56: 12, 10 and 11 bits, the first two in one scan).
  const int my_slots = cut_cell ? slots : 0, my_made = cut_cell ? made : 0;
  const int my_terms = cut_cell ? centres * term_width : 0;
  int both = my_slots | my_made << 16, terms_to = my_terms;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int b = __shfl_up_sync(0xffffffffu, both, d);
    const int t = __shfl_up_sync(0xffffffffu, terms_to, d);
    if (lane >= d) {
      both += b;
      terms_to += t;
    }
  }
  const int all_both = __shfl_sync(0xffffffffu, both, 31);
  const int all_terms = __shfl_sync(0xffffffffu, terms_to, 31);
  const int slots_below = (both & 0xffff) - my_slots, made_below = (both >> 16) - my_made;
  const int terms_below = terms_to - my_terms;
  int carry = 0, carry_first = 0;
  for (int at0 = 0; at0 < (all_both & 0xffff); at0 += 32) {
    int o, first;
    warp_owner(owner_stage, slots_below, my_slots, at0, carry, carry_first, o, first);
    const int c_o = __shfl_sync(0xffffffffu, c, o);
    const unsigned cut_o = __shfl_sync(0xffffffffu, cut, o);
    const long long x_o = __shfl_sync(0xffffffffu, x, o);
    const long long slot_o = __shfl_sync(0xffffffffu, slot, o);
    const long long key_o = __shfl_sync(0xffffffffu, key_at, o);
    const long long centre_o = __shfl_sync(0xffffffffu, centre_at, o);
    const int m = at0 + lane - first;
    if (at0 + lane >= (all_both & 0xffff)) continue;
    const int code = slot_codes[case_starts[3 * c_o + 2] + m];
    long long id;
    if (code < 0) {
      id = centre_o - 1 - code;
    } else if (code < CORNER_CODES) {
      id = renumber[corners[x_o * K + code]];
    } else {  // its rank: a binary search of the sorted keys here took 1 ms of 1.6
      id = n_kept + rank[key_o + __popc(cut_o & ((1u << (code - CORNER_CODES)) - 1u))];
    }
    connectivity[slot_o + m] = id;
  }
  // The output cells: each one's end, its case's cells' ends counted from the
  // case's first slot.
  for (int at0 = 0; at0 < all_both >> 16; at0 += 32) {
    int o, first;
    warp_owner(owner_stage, made_below, my_made, at0, carry, carry_first, o, first);
    const int c_o = __shfl_sync(0xffffffffu, c, o);
    const long long x_o = __shfl_sync(0xffffffffu, x, o);
    const long long q_o = __shfl_sync(0xffffffffu, q, o);
    const long long slot_o = __shfl_sync(0xffffffffu, slot, o);
    const int m = at0 + lane - first;
    if (at0 + lane >= all_both >> 16) continue;
    const int* out = cells + 2 * (case_starts[3 * c_o] + m);
    types[q_o + m] = (unsigned char)out[0];
    source[q_o + m] = x_o;
    offsets[q_o + m + 1] = slot_o + out[1] - case_starts[3 * c_o + 2];
  }
  // The centre points' terms: the first in the point's two columns, the others in
  // the centre table.
  for (int at0 = 0; at0 < all_terms; at0 += 32) {
    int o, first;
    warp_owner(owner_stage, terms_below, my_terms, at0, carry, carry_first, o, first);
    const int c_o = __shfl_sync(0xffffffffu, c, o);
    const long long x_o = __shfl_sync(0xffffffffu, x, o);
    const long long centre_o = __shfl_sync(0xffffffffu, centre_at, o);
    const int m = at0 + lane - first;
    if (at0 + lane >= all_terms) continue;
    const int j = m / term_width, t = m - j * term_width, term = case_starts[3 * c_o + 1] + j;
    const long long row = centre_o + j;
    const int code = terms[term * term_width + t];
    const double share = shares[term * term_width + t];
    long long a, b;
    double w = 0.0;
    if (code < CORNER_CODES) {
      a = b = corners[x_o * K + code];
    } else {
      const long long one = corners[x_o * K + EDGE_A[code - CORNER_CODES]];
      const long long other = corners[x_o * K + EDGE_B[code - CORNER_CODES]];
      a = one < other ? one : other;
      b = one < other ? other : one;
      w = clip_weight<T>(s, value, a, b);
    }
    const double w0 = __dmul_rn(__dsub_rn(1.0, w), share), w1 = __dmul_rn(w, share);
    if (t == 0) {
      ids[2 * row] = a;
      ids[2 * row + 1] = b;
      weights[2 * row] = w0;
      weights[2 * row + 1] = w1;
      point_keys[row] = n_points + n_points * n_points + x_o * 64 + j;
    } else {
      const long long r = row - first_centre, width = 2 * term_width - 2;
      centre_ids[r * width + 2 * t - 2] = a;
      centre_ids[r * width + 2 * t - 1] = b;
      centre_weights[r * width + 2 * t - 2] = w0;
      centre_weights[r * width + 2 * t - 1] = w1;
    }
  }
}
"""


def source_for(dtype, kind: str, edges, id_dtype="int64") -> tuple[tuple[str, ...], str]:
    """``(names, source)`` of the four kernels for a field of ``dtype`` and cells of
    ``kind`` (VTK's table name: ``hexahedron``, ``tetra``...) whose edges join the
    corners ``edges``, the corners' ids of ``id_dtype`` (int64, or int32: half the
    bytes read, ``__i32`` in the kernels' names).

    Examples
    --------
    >>> names, source = source_for("float64", "tetra", ((0, 1), (1, 2), (2, 0)))
    >>> names[0], "#define K 4" in source
    ('clip_block__f64_tetra_count', True)
    """
    corners = {"line": 2, "triangle": 3, "quad": 4, "tetra": 4, "pyramid": 5, "wedge": 6,
               "hexahedron": 8}[kind]
    narrow = np.dtype(id_dtype) == np.int32
    name = f"clip_block__{dtype_tag(dtype)}_{kind}{'__i32' if narrow else ''}"
    edge_head, edge_tail = edge_defines(name, edges)
    head = (f"#define T {ctype(dtype)}\n#define I {ctype(id_dtype)}\n#define K {corners}\n"
            f"#define EDGES {len(edges)}\n#define CORNER_CODES {CORNER_CODES}\n" + edge_head)
    tail = "#undef T\n#undef I\n#undef K\n#undef EDGES\n#undef CORNER_CODES\n" + edge_tail
    names = tuple(f"{name}_{part}" for part in ("count", "keys", "points", "emit"))
    return names, BLOCK_SCAN + WARP_OWNER + _COMMON + head + _BODY.replace("NAME", name) + tail
