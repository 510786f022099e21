"""The CUDA source of the row kernels of :mod:`daxpy.cuda.contour_rows`: the helpers
they share and classify here, the bits in :mod:`daxpy.cuda.contour_rows_bits`, emit in
:mod:`daxpy.cuda.contour_rows_emit`,
specialized per field dtype, with VTK's voxel tables compiled in
(:func:`source_for`).
"""

from __future__ import annotations

import numpy as np

from .block_scan import WIDE_SCAN
from .codegen import ctype, dtype_tag
from .contour_rows_bits import BITS
from .contour_rows_emit import EMIT

ROWS = 8
"""Warps (rows) per block."""

_SOURCE = r"""
#ifndef DAXPY_CONTOUR_ROWS  // what both specializations share, once per source
#define DAXPY_CONTOUR_ROWS
#define FULL 0xffffffffu
#define ROWS 8
static __device__ const unsigned char COUNTS[256] = {COUNTS_INIT};
static __device__ const signed char TABLE[256 * 15] = {TABLE_INIT};
// Edge e of a voxel: bits 5e..5e+4 hold its lower corner's row (0: (j, k),
// 1: (j+1, k), 2: (j, k+1), 3: (j+1, k+1)), x offset (bit 2) and axis (bits 3-4).
#define EDGE_INFO EDGE_INFO_INIT
// A point's byte: bit 0 in (at or above the value); bits 1-3 its x, y and z edges
// that are cut and make their own output point (neither end equal to the value);
// bit 4 its value equals the value and an edge at it is cut: the cuts there are
// one output point, the point itself; bit 5 its value equals the value.
#define IN 1u
#define ALONE 16u
#define EXACT 32u

__device__ __forceinline__ int scan_warp(int v) {  // inclusive, over the 32 lanes
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int u = __shfl_up_sync(FULL, v, d);
    if ((int)threadIdx.x >= d) v += u;
  }
  return v;
}

// A cell's corner bits (VTK's voxel order, x fastest, then y, then z) from bit b of
// its corner rows' bytes (bit q of here/next: row q) at x and x + 1.
__device__ __forceinline__ unsigned voxel_bits(unsigned here, unsigned next) {
  return (here & 1) | (next & 1) << 1 | (here >> 1 & 1) << 2 | (next >> 1 & 1) << 3
       | (here >> 2 & 1) << 4 | (next >> 2 & 1) << 5 | (here >> 3 & 1) << 6
       | (next >> 3 & 1) << 7;
}

// Where edge e's cut lands: its end corner where that corner's value equals the
// value (exact: bit per corner), else the edge itself (8 + e).
__device__ __forceinline__ int landing(int e, unsigned exact) {
  const int info = (int)(EDGE_INFO >> (5 * e) & 31ull);
  const int low = (info >> 2 & 1) | (info & 3) << 1, high = low | 1 << (info >> 3);
  return (exact >> low & 1) ? low : (exact >> high & 1) ? high : 8 + e;
}

// Whether triangle m of case c collapses: two of its corners land on one point
// (dropped, as the array program and VTK drop them).
__device__ __forceinline__ bool collapsed(unsigned c, int m, unsigned exact,
                                          const signed char* table) {
  if (!exact) return false;
  const int a = landing(table[c * 15 + 3 * m], exact);
  const int b = landing(table[c * 15 + 3 * m + 1], exact);
  const int d = landing(table[c * 15 + 3 * m + 2], exact);
  return a == b || b == d || a == d;
}

__device__ __forceinline__ int made_by(unsigned c, unsigned exact, int made,
                                       const signed char* table) {
  if (!exact) return made;
  int kept = 0;
  for (int m = 0; m < made; ++m) kept += !collapsed(c, m, exact, table);
  return kept;
}

__device__ __forceinline__ int points_at(unsigned f) {
  return (f & ALONE) ? 1 : __popc(f >> 1 & 7u);
}

// Bit i of a 4-bit mask to bit 8i (byte i's lowest bit). One multiply: the four
// shifted copies of the mask (by 0, 7, 14 and 21) do not overlap, so nothing carries.
__device__ __forceinline__ unsigned to_bytes(unsigned m) { return m * 0x204081u & 0x01010101u; }

// Bit i of a cell's corner rows' words (bit q of in/next: row q, x and x + 1) in
// VTK's voxel corner order (x fastest, then y, then z): the cell's case.
__device__ __forceinline__ unsigned corner_bits(const unsigned (&in)[4],
                                                const unsigned (&next)[4], int i) {
  return (in[0] >> i & 1) | (next[0] >> i & 1) << 1 | (in[1] >> i & 1) << 2
       | (next[1] >> i & 1) << 3 | (in[2] >> i & 1) << 4 | (next[2] >> i & 1) << 5
       | (in[3] >> i & 1) << 6 | (next[3] >> i & 1) << 7;
}

// Points x .. x + 3 of a row (the last point repeated past its end): one 16-byte
// load (two for doubles) where rows start 16-byte aligned.
__device__ __forceinline__ void load4(const float* row, int x, int nx, bool wide, float (&v)[4]) {
  if (wide && x + 3 < nx) {
    const float4 w = *reinterpret_cast<const float4*>(row + x);
    v[0] = w.x; v[1] = w.y; v[2] = w.z; v[3] = w.w;
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = row[x + i < nx ? x + i : nx - 1];
}

__device__ __forceinline__ void load4(const double* row, int x, int nx, bool wide,
                                      double (&v)[4]) {
  if (wide && x + 3 < nx) {
    const double2 a = *reinterpret_cast<const double2*>(row + x);
    const double2 b = *reinterpret_cast<const double2*>(row + x + 2);
    v[0] = a.x; v[1] = a.y; v[2] = b.x; v[3] = b.y;
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = row[x + i < nx ? x + i : nx - 1];
}
// PLANE: the field is a plane's signed distance, made where it is read from the
// grid's axes' terms px, py, pz (float64): point (i, j, k)'s is (pz[k] + py[j]) +
// px[i], each sum rounded on its own, as the array program adds the terms; no field
// of the grid's size is made. A row's points: its (pz + py), then + px[x].
struct PlaneRow {
  const double* px;
  double yz;
  __device__ double operator[](long long x) const { return __dadd_rn(yz, px[x]); }
};

__device__ __forceinline__ void load4(const PlaneRow& row, int x, int nx, bool,
                                      double (&v)[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = row[x + i < nx ? x + i : nx - 1];
}

__device__ __forceinline__ double plane_at(const double* __restrict__ px,
                                           const double* __restrict__ py,
                                           const double* __restrict__ pz, int nx, int ny,
                                           long long p) {
  const long long row = p / nx;
  return __dadd_rn(__dadd_rn(pz[row / ny], py[row % ny]), px[p - row * nx]);
}

// A lane's four flag bytes: one 4-byte store where the row allows it.
__device__ __forceinline__ void store4(unsigned char* out, unsigned bytes, bool wide, int left) {
  if (wide && left >= 4) {
    *reinterpret_cast<unsigned*>(out) = bytes;
    return;
  }
  for (int i = 0; i < left && i < 4; ++i) out[i] = (unsigned char)(bytes >> (8 * i));
}

#endif

#if PLANE
#define VALUE(p) plane_at(s, py, pz, nx, ny, (p))
#else
#define VALUE(p) s[(p)]
#endif

// Each point row's point and triangle counts, and which of its stretches of 32
// points (a word of BITS's) has work for the emit pass, from the rows' words: a lane
// a word (a stretch), every test a few operations on 32 points at once; a row a group
// of ``group`` lanes (a power of two, at least its words or 32), 32 / group rows a
// warp. Each stretch's points' flag bytes (IN, the cut edges that make their own
// points, ALONE, EXACT), which the emit pass reads.
extern "C" __global__ void __launch_bounds__(256) NAME_classify(
    const T* __restrict__ s, const double* __restrict__ py, const double* __restrict__ pz,
    const T bound, const int nx, const int ny, const int nz,
    const unsigned* __restrict__ in_words, const unsigned* __restrict__ ex_words,
    unsigned char* __restrict__ flags, int* __restrict__ row_points,
    int* __restrict__ row_tris, unsigned char* __restrict__ active, const int plane_below,
    const int group)
{
  __shared__ unsigned char counts[256];
  for (int i = threadIdx.y * 32 + threadIdx.x; i < 256; i += 32 * ROWS) counts[i] = COUNTS[i];
  __syncthreads();
  const int lane = threadIdx.x, part = lane & (group - 1);  // the lane's place in its row
  const long long first_row = ((long long)blockIdx.x * ROWS + threadIdx.y) * (32 / group);
  const long long n_rows = (long long)ny * nz;
  if (first_row >= n_rows) return;  // a whole warp: its shuffles stay full
  // A row past the grid's last (the last warp's): its lanes read and write nothing.
  const long long r = first_row + lane / group < n_rows ? first_row + lane / group : n_rows - 1;
  const bool real = first_row + lane / group < n_rows;  // j + ny k
  const int j = (int)(r % ny), k = (int)(r / ny);
  const bool hy = j + 1 < ny, hz = k + 1 < nz, cells = hy && hz;
  const long long plane = (long long)nx * ny;
  const int chunks = (nx + 31) / 32;
  // The cells' four corner rows: (j, k), (j + 1, k), (j, k + 1), (j + 1, k + 1); the
  // row itself where the grid ends (no y or z edge, no cell, then).
  const long long rows[4] = {r, r + (hy ? 1 : 0), r + (hz ? ny : 0), r + (cells ? ny + 1 : 0)};
  // Each stretch's bytes start on 4 bytes, or on 16 (the flags start on 256).
  const bool wide = nx % 4 == 0, wide16 = nx % 16 == 0;
  int points = 0, tris = 0;
  for (int w0 = 0; w0 < chunks; w0 += group) {
    const int w = w0 + part;
    const bool mine = real && w < chunks;
    // Per row q: bit i point 32 w + i (in), and point 32 w + i + 1 (next): at or above
    // the bound; ex, ex_next: equal to the value.
    unsigned in[4], next[4], ex[4], ex_next[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const long long at = rows[q] * chunks + w;
      in[q] = mine ? in_words[at] : 0u;
      ex[q] = mine ? ex_words[at] : 0u;
      unsigned after = __shfl_down_sync(FULL, in[q], 1), after_ex = __shfl_down_sync(FULL, ex[q], 1);
      if (part == group - 1) {  // the next round's first word, or past the row
        after = mine && w + 1 < chunks ? in_words[at + 1] : 0u;
        after_ex = mine && w + 1 < chunks ? ex_words[at + 1] : 0u;
      }
      next[q] = in[q] >> 1 | after << 31;
      ex_next[q] = ex[q] >> 1 | after_ex << 31;
    }
    const int left = nx - 32 * w;  // points of this stretch, and their x edges
    const unsigned valid = left >= 32 ? FULL : left > 0 ? (1u << left) - 1 : 0u;
    const unsigned with_x = left >= 33 ? FULL : left > 1 ? (1u << (left - 1)) - 1 : 0u;
    const unsigned cut_x = (in[0] ^ next[0]) & with_x;
    const unsigned cut_y = hy ? (in[0] ^ in[1]) & valid : 0u;
    const unsigned cut_z = hz ? (in[0] ^ in[2]) & valid : 0u;
    // An edge with an end at the value makes no point of its own.
    const unsigned here_ex = ex[0] & valid;
    const unsigned own_x = cut_x & ~here_ex & ~ex_next[0];
    const unsigned own_y = cut_y & ~here_ex & ~ex[1];
    const unsigned own_z = cut_z & ~here_ex & ~ex[2];
    unsigned alone = 0;
    // A point at the value is a point of its own where an edge to it from below is
    // cut too; a slab's first plane has the whole grid's plane below it in memory
    // (``plane_below``).
    for (unsigned todo = here_ex; todo; todo &= todo - 1) {  // rare
      const int i = __ffs(todo) - 1, x = 32 * w + i;
      const long long p = r * nx + x;
      const bool below = (x > 0 && !(VALUE(p - 1) >= bound))
                      || (j > 0 && !(VALUE(p - nx) >= bound))
                      || ((k > 0 || plane_below) && !(VALUE(p - plane) >= bound));
      if (((cut_x | cut_y | cut_z) >> i & 1) || below) alone |= 1u << i;
    }
    points += __popc(own_x) + __popc(own_y) + __popc(own_z) + __popc(alone);
    if (cells) {
      // Only cells whose corners are not all in or all out have triangles.
      const unsigned any = in[0] | next[0] | in[1] | next[1] | in[2] | next[2] | in[3] | next[3];
      const unsigned all = in[0] & next[0] & in[1] & next[1] & in[2] & next[2] & in[3] & next[3];
      const bool some_ex = (ex[0] | ex_next[0] | ex[1] | ex_next[1] | ex[2] | ex_next[2]
                            | ex[3] | ex_next[3]) != 0;
      for (unsigned todo = any & ~all & with_x; todo; todo &= todo - 1) {
        const int i = __ffs(todo) - 1;
        const unsigned c = corner_bits(in, next, i);
        tris += made_by(c, some_ex ? corner_bits(ex, ex_next, i) : 0u, counts[c], TABLE);
      }
    }
    const bool busy = (cut_x | cut_y | cut_z | alone) != 0;
    if (mine) active[r * chunks + w] = busy;
    // The stretch's bytes (see IN, ALONE, EXACT), byte i point 32 w + i: all of a
    // stretch without work (most of them) are one byte, where no value is equal.
    unsigned char* out = flags + r * nx + 32 * w;
    const bool plain = !busy && here_ex == 0 && (in[0] == 0u || in[0] == valid);
    if (mine && plain) {
      const unsigned bytes = in[0] ? 0x01010101u : 0u;
      if (wide16 && left >= 32) {
        const uint4 all = make_uint4(bytes, bytes, bytes, bytes);
        reinterpret_cast<uint4*>(out)[0] = all;
        reinterpret_cast<uint4*>(out)[1] = all;
      } else {
#pragma unroll
        for (int n = 0; n < 32; n += 4) store4(out + n, bytes, wide, left - n);
      }
    } else if (mine) {
#pragma unroll
      for (int n = 0; n < 32; n += 4) {
        const unsigned bytes = to_bytes(in[0] >> n & 15u) | to_bytes(own_x >> n & 15u) << 1
                             | to_bytes(own_y >> n & 15u) << 2 | to_bytes(own_z >> n & 15u) << 3
                             | to_bytes(alone >> n & 15u) << 4 | to_bytes(here_ex >> n & 15u) << 5;
        store4(out + n, bytes, wide, left - n);
      }
    }
  }
  for (int d = group / 2; d > 0; d >>= 1) {  // each group's sums at its first lane
    points += __shfl_down_sync(FULL, points, d);
    tris += __shfl_down_sync(FULL, tris, d);
  }
  if (part == 0 && real) {
    row_points[r] = points;
    row_tris[r] = tris;
  }
}


// The output's sizes and whether the array program must run, written straight into
// page-locked host memory (``host``: with unified addressing a kernel writes it
// through the host's own pointer), so that the host reads them after one sync with
// no copy and no kernel of its own to gather them.
extern "C" __global__ void NAME_sizes(const long long* __restrict__ point_start,
                                      const long long* __restrict__ tri_start,
                                      const int rows, const int* __restrict__ unusual,
                                      volatile long long* host)
{
  host[0] = point_start[rows];
  host[1] = tri_start[rows] - tri_start[0];  // the scan continues the points' (emit)
  host[2] = *unusual;
}


// The rows' point counts then their triangle counts (``n`` items, few enough for one
// block: a slab's) scanned into ``starts[1..n]`` (``starts[0]`` stays 0), and the
// output's sizes written as NAME_sizes writes them (``rows`` rows, the first
// ``own`` of which emit): one launch where CuPy's scan and the sizes kernel took two,
// and about 40 us of the host's time a slab. Tiles of 4 items a thread, in order.
extern "C" __global__ void __launch_bounds__(1024) NAME_scan(
    const int* __restrict__ counts, const int n, long long* __restrict__ starts,
    const int rows, const int own, const int* __restrict__ unusual,
    volatile long long* host)
{
  __shared__ long long warp_sums[32];
  long long carry = 0, total;
  for (int base = 0; base < n; base += 4 * 1024) {
    const int first = base + 4 * threadIdx.x;
    int v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = first + i < n ? counts[first + i] : 0;
    long long at = carry + wide_scan((long long)v[0] + v[1] + v[2] + v[3], warp_sums, total);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      at += v[i];
      if (first + i < n) starts[first + i + 1] = at;
    }
    carry += total;
  }
  __syncthreads();
  // The block's writes to starts are visible to its threads after the barrier.
  if (threadIdx.x == 0) {
    host[0] = starts[own];
    host[1] = starts[rows + own] - starts[rows];
    host[2] = *unusual;
  }
}
"""


def _edge_info(edges: np.ndarray) -> int:
    """Pack each voxel edge's lower corner row, x offset and axis (5 bits an edge)."""
    info = 0
    for e, (a, b) in enumerate(np.asarray(edges).tolist()):
        low, axis = min(a, b), (a ^ b).bit_length() - 1
        row = (low >> 1 & 1) | (low >> 2 & 1) << 1
        info |= (row | (low & 1) << 2 | axis << 3) << (5 * e)
    return info


def source_for(dtype, counts: np.ndarray, table: np.ndarray, edges: np.ndarray,
               plane: bool = False) -> tuple[str, str]:
    """``(name, source)`` of the kernels for a field of ``dtype`` (float32 or
    float64), or (``plane``) for a plane's float64 signed distance made from the
    grid's axes' terms where it is read, with VTK's voxel case ``counts`` (256),
    padded ``table`` (256, 5, 3) and ``edges`` (12, 2) compiled in. The kernels
    are ``name + "_classify"``, ``"_sizes"``, ``"_emit"`` and ``"_scan"``.

    Examples
    --------
    >>> from daxpy.worklets._marching import TABLES
    >>> name, source = source_for("float64", *TABLES["voxel"])
    >>> name, "contour_rows__f64_emit(" in source
    ('contour_rows__f64', True)
    >>> source_for("float64", *TABLES["voxel"], plane=True)[0]
    'contour_rows__plane'
    """
    name = "contour_rows__plane" if plane else f"contour_rows__{dtype_tag(dtype)}"
    padded = np.zeros((256, 5, 3), np.int64)
    padded[:, :table.shape[1]] = table
    body = ((WIDE_SCAN + _SOURCE + BITS + EMIT).replace("NAME", name)
            .replace("COUNTS_INIT", ", ".join(str(int(c)) for c in counts))
            .replace("TABLE_INIT", ", ".join(str(int(e)) for e in padded.ravel()))
            .replace("EDGE_INFO_INIT", f"{_edge_info(edges)}ull"))
    field = "double" if plane else ctype(dtype)
    return name, (f"#define T {field}\n#define PLANE {int(plane)}\n{body}"
                  "#undef VALUE\n#undef PLANE\n#undef T\n")
