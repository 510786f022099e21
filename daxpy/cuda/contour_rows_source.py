"""The CUDA source of the row kernels of :mod:`daxpy.cuda.contour_rows`: classify
and emit, specialized per field dtype, with VTK's voxel tables compiled in
(:func:`source_for`).
"""

from __future__ import annotations

import numpy as np

from .codegen import ctype, dtype_tag

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

// Bit i of a 4-bit mask to bit 8i (byte i's lowest bit); bits i and i + 1 of a
// 5-bit mask to bits 8i and 8i + 1. One multiply: the four shifted copies of
// the mask (by 0, 7, 14 and 21) do not overlap, so nothing carries.
__device__ __forceinline__ unsigned to_bytes(unsigned m) { return m * 0x204081u & 0x01010101u; }
__device__ __forceinline__ unsigned pairs_to_bytes(unsigned m) {
  return m * 0x204081u & 0x03030303u;
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
#endif

extern "C" __global__ void __launch_bounds__(256) NAME_classify(
    const T* __restrict__ s, const T bound, const T at, const int nx,
    const int ny, const int nz, const int aligned, unsigned char* __restrict__ flags,
    int* __restrict__ row_points, int* __restrict__ row_tris, unsigned char* __restrict__ active,
    int* __restrict__ unusual)
{
  __shared__ unsigned char counts[256];
  for (int i = threadIdx.y * 32 + threadIdx.x; i < 256; i += 32 * ROWS) counts[i] = COUNTS[i];
  __syncthreads();
  const long long r = (long long)blockIdx.x * ROWS + threadIdx.y;  // j + ny k
  if (r >= (long long)ny * nz) return;  // a whole warp: its shuffles stay full
  const int lane = threadIdx.x, j = (int)(r % ny), k = (int)(r / ny);
  const bool hy = j + 1 < ny, hz = k + 1 < nz, cells = hy && hz;
  const long long plane = (long long)nx * ny;
  const T* const row[4] = {s + r * nx, s + r * nx + (hy ? nx : 0), s + r * nx + (hz ? plane : 0),
                           s + r * nx + (cells ? nx + plane : 0)};
  // Each lane takes four consecutive points (a warp 128): the bits of a point's
  // x, y and z edges and of its cell are then a few operations on 4-bit masks.
  const bool wide = aligned && nx % 4 == 0;  // rows start 16-byte aligned
  const int chunks = (nx + 31) / 32;  // the emit pass's stretches of 32 points
  int points = 0, tris = 0, odd = 0;
  for (int x0 = 0; x0 < nx; x0 += 128) {
    const int x = x0 + 4 * lane;
    T v[4][4];
#pragma unroll
    for (int q = 0; q < 4; ++q) load4(row[q], x < nx ? x : nx - 1, nx, wide, v[q]);
    // Per row q, bits 0-3 the lane's points, bit 4 the next one: at or above the
    // bound (in), equal to the value (ex: rare, its bits made only where a value
    // of the warp's stretch is).
    unsigned in[4] = {0u, 0u, 0u, 0u}, ex[4] = {0u, 0u, 0u, 0u};
    bool equal = false;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        in[q] |= (unsigned)(v[q][i] >= bound) << i;
        equal |= v[q][i] == at;
      }
    }
    const bool some_equal = __any_sync(FULL, equal);
    if (some_equal) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
#pragma unroll
        for (int i = 0; i < 4; ++i) ex[q] |= (unsigned)(v[q][i] == at) << i;
      }
    }
    const unsigned packed = in[0] | in[1] << 4 | in[2] << 8 | in[3] << 12;
    unsigned after = __shfl_down_sync(FULL, packed, 1), after_ex = 0;
    if (some_equal)
      after_ex = __shfl_down_sync(FULL, ex[0] | ex[1] << 4 | ex[2] << 8 | ex[3] << 12, 1);
    if (lane == 31 && x + 4 < nx) {  // the first point of the next 128
      after = 0;
      after_ex = 0;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const T w = row[q][x + 4];
        after |= (unsigned)(w >= bound) << (4 * q);
        after_ex |= (unsigned)(w == at) << (4 * q);
      }
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      in[q] |= (after >> (4 * q) & 1) << 4;
      ex[q] |= (after_ex >> (4 * q) & 1) << 4;
    }
    const int left = nx - x;  // points of this lane's four that exist, and their x edges
    const unsigned valid = left >= 4 ? 15u : left > 0 ? (1u << left) - 1 : 0u;
    const unsigned with_x = left >= 5 ? 15u : left > 1 ? (1u << (left - 1)) - 1 : 0u;
    const unsigned cut_x = (in[0] ^ in[0] >> 1) & with_x;
    const unsigned cut_y = hy ? (in[0] ^ in[1]) & valid : 0u;
    const unsigned cut_z = hz ? (in[0] ^ in[2]) & valid : 0u;
    // An edge with an end at the value makes no point of its own.
    const unsigned here_ex = ex[0] & 15u;
    const unsigned own_x = cut_x & ~here_ex & ~(ex[0] >> 1);
    const unsigned own_y = cut_y & ~here_ex & ~ex[1];
    const unsigned own_z = cut_z & ~here_ex & ~ex[2];
    unsigned alone = 0;
    for (unsigned todo = here_ex & valid; todo; todo &= todo - 1) {  // rare
      const int i = __ffs(todo) - 1;
      const long long p = r * nx + x + i;
      const bool below = (x + i > 0 && !(s[p - 1] >= bound)) || (j > 0 && !(s[p - nx] >= bound))
                      || (k > 0 && !(s[p - plane] >= bound));
      if (((cut_x | cut_y | cut_z) >> i & 1) || below) alone |= 1u << i;
    }
    // The four points' bytes (see IN, ALONE, EXACT), byte i point x + i.
    const unsigned bytes = to_bytes(in[0] & 15u) | to_bytes(own_x) << 1 | to_bytes(own_y) << 2
                         | to_bytes(own_z) << 3 | to_bytes(alone) << 4 | to_bytes(here_ex) << 5;
    unsigned char* out = flags + r * nx + x;
    if (wide && left >= 4) {
      *reinterpret_cast<unsigned*>(out) = bytes;
    } else {
      for (int i = 0; i < left && i < 4; ++i) out[i] = (unsigned char)(bytes >> (8 * i));
    }
    points += __popc(own_x) + __popc(own_y) + __popc(own_z) + __popc(alone);
#pragma unroll
    for (int i = 0; i < 4; ++i) odd |= (valid >> i & 1) && !isfinite(v[0][i]);
    if (cells) {
      // Byte i: the case of cell x + i (VTK's voxel corner order: x fastest, then y,
      // then z), and which of its corners equal the value.
      const unsigned cases = pairs_to_bytes(in[0]) | pairs_to_bytes(in[1]) << 2
                           | pairs_to_bytes(in[2]) << 4 | pairs_to_bytes(in[3]) << 6;
      const unsigned exact = (ex[0] | ex[1] | ex[2] | ex[3]) == 0 ? 0u
                           : pairs_to_bytes(ex[0]) | pairs_to_bytes(ex[1]) << 2
                             | pairs_to_bytes(ex[2]) << 4 | pairs_to_bytes(ex[3]) << 6;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const unsigned c = cases >> (8 * i) & 255u;
        if (with_x >> i & 1) tris += made_by(c, exact >> (8 * i) & 255u, counts[c], TABLE);
      }
    }
    // The 32-point stretches the emit pass visits: a cut edge or a point in them.
    const unsigned busy = __ballot_sync(FULL, (cut_x | cut_y | cut_z | alone) != 0);
    if (lane == 0) {
      for (int part = 0; part < 4 && x0 / 32 + part < chunks; ++part)
        active[r * chunks + x0 / 32 + part] = (busy >> (8 * part) & 255u) != 0;
    }
  }
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    points += __shfl_down_sync(FULL, points, d);
    tris += __shfl_down_sync(FULL, tris, d);
  }
  odd = __any_sync(FULL, odd);
  if (lane == 0) {
    row_points[r] = points;
    row_tris[r] = tris;
    if (odd) atomicOr(unusual, 1);
  }
}

// Four blocks a multiprocessor (at most 64 registers), not two: each stretch is a
// chain of dependent loads, and more warps hide their latency. Point ids are
// below 2^31 (the caller checks), so a lane's twelve fit in 48 bytes of shared memory.
extern "C" __global__ void __launch_bounds__(256, 4) NAME_emit(
    const T* __restrict__ s, const double value, const int nx, const int ny, const int nz,
    const unsigned char* __restrict__ flags, const unsigned char* __restrict__ active,
    const long long* __restrict__ point_start,
    const long long* __restrict__ tri_start, long long* __restrict__ lo,
    long long* __restrict__ hi, double* __restrict__ t, long long* __restrict__ tris,
    long long* __restrict__ source)
{
  __shared__ unsigned char counts[256];
  __shared__ signed char table[256 * 15];
  __shared__ int ids[ROWS][32][12];  // each lane's cell: the point of each cut edge
  for (int i = threadIdx.y * 32 + threadIdx.x; i < 256 * 15; i += 32 * ROWS) {
    table[i] = TABLE[i];
    if (i < 256) counts[i] = COUNTS[i];
  }
  __syncthreads();
  const long long r = (long long)blockIdx.x * ROWS + threadIdx.y;
  if (r >= (long long)ny * nz) return;
  const int lane = threadIdx.x, w = threadIdx.y, j = (int)(r % ny), k = (int)(r / ny);
  const bool hy = j + 1 < ny, hz = k + 1 < nz, cells = hy && hz;
  const long long plane = (long long)nx * ny;
  // The four point rows of the cells of this row, and where their points start.
  const long long rows[4] = {r, r + (hy ? 1 : 0), r + (hz ? ny : 0), r + (cells ? ny + 1 : 0)};
  long long run[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) run[q] = point_start[rows[q]];
  long long tri_run = tri_start[r];
  // A row with no point of its own and no triangle of its cells writes nothing
  // (the rows far from the surface).
  if (point_start[r + 1] == run[0] && tri_start[r + 1] == tri_run) return;
  const long long first_cell = (long long)(nx - 1) * (j + (long long)(ny - 1) * k);
  const int chunks = (nx + 31) / 32;
  for (int first = 0; first < chunks; first += 32) {
    // Only the stretches where one of the four rows has a cut edge or a point: every
    // cell with triangles has a cut edge whose lower end is its own corner row's.
    unsigned busy = 0;
    if (first + lane < chunks) {
#pragma unroll
      for (int q = 0; q < 4; ++q) busy |= active[rows[q] * chunks + first + lane];
    }
    for (unsigned todo = __ballot_sync(FULL, busy != 0); todo; todo &= todo - 1) {
      const int x0 = (first + __ffs(todo) - 1) * 32;
      const int x = x0 + lane, xc = x < nx ? x : nx - 1;
      unsigned f[4], g[4], here = 0, next = 0, here_ex = 0, next_ex = 0;
      int n[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        f[q] = x < nx ? flags[rows[q] * nx + xc] : 0u;
        n[q] = points_at(f[q]);
        g[q] = __shfl_down_sync(FULL, f[q], 1);
        if (lane == 31) g[q] = x + 1 < nx ? flags[rows[q] * nx + x + 1] : 0u;
        here |= (f[q] & IN) << q;
        next |= (g[q] & IN) << q;
        here_ex |= (f[q] >> 5 & 1) << q;
        next_ex |= (g[q] >> 5 & 1) << q;
      }
      const unsigned c = voxel_bits(here, next);
      const unsigned exact = (here_ex | next_ex) ? voxel_bits(here_ex, next_ex) : 0u;
      const int made = cells && x + 1 < nx ? made_by(c, exact, counts[c], table) : 0;
      // One scan for the four rows: a lane's counts are at most 3, a warp's at most
      // 96, so each row's sum keeps to its own byte of the word.
      const int counted = n[0] | n[1] << 8 | n[2] << 16 | n[3] << 24;
      const int inclusive = scan_warp(counted), row_totals = __shfl_sync(FULL, inclusive, 31);
      long long at[4][2];  // the first output point of this lane's point and the next, per row
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        at[q][0] = run[q] + (inclusive >> (8 * q) & 255) - n[q];
        at[q][1] = at[q][0] + n[q];
        run[q] += row_totals >> (8 * q) & 255;
      }
      if (x < nx && (f[0] & ALONE)) {  // the point itself
        const long long p = r * nx + x;
        lo[at[0][0]] = p;
        hi[at[0][0]] = p;
        t[at[0][0]] = 0.0;
      } else if (x < nx) {  // this row's points: its cut edges, axis by axis
        const long long p = r * nx + x, steps[3] = {1, nx, plane};
        long long o = at[0][0];
#pragma unroll
        for (int a = 0; a < 3; ++a) {
          if (f[0] >> (1 + a) & 1) {
            const double low = (double)s[p], high = (double)s[p + steps[a]];
            lo[o] = p;
            hi[o] = p + steps[a];
            t[o] = (value - low) / (high - low);
            ++o;
          }
        }
      }
      const int made_inclusive = scan_warp(made);
      if (made) {
#pragma unroll
        for (int e = 0; e < 12; ++e) {
          const int info = (int)(EDGE_INFO >> (5 * e) & 31ull);
          const int q = info & 3, dx = info >> 2 & 1, axis = info >> 3;
          // The far end: x + 1 for x edges, the next row for y (q + 1) and z (q + 2).
          const int hq = q | (axis == 1 ? 1 : axis == 2 ? 2 : 0), hdx = axis == 0 ? 1 : dx;
          const unsigned fl = dx ? g[q] : f[q], fh = hdx ? g[hq] : f[hq];
          if (((fl ^ fh) & IN) == 0) continue;  // not cut
          ids[w][lane][e] = (int)((fl & EXACT) ? at[q][dx] : (fh & EXACT) ? at[hq][hdx]
                                  : at[q][dx] + __popc((fl >> 1) & ((1u << axis) - 1)));
        }
        long long out = tri_run + made_inclusive - made;
        const int listed = counts[c];
        for (int m = 0; m < listed; ++m) {
          if (collapsed(c, m, exact, table)) continue;
#pragma unroll
          for (int v = 0; v < 3; ++v) tris[3 * out + v] = ids[w][lane][table[c * 15 + 3 * m + v]];
          source[out] = first_cell + x;
          ++out;
        }
      }
      tri_run += __shfl_sync(FULL, made_inclusive, 31);
    }
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


def source_for(dtype, counts: np.ndarray, table: np.ndarray,
               edges: np.ndarray) -> tuple[str, str]:
    """``(name, source)`` of the two kernels for a field of ``dtype`` (float32 or
    float64), with VTK's voxel case ``counts`` (256), padded ``table``
    (256, 5, 3) and ``edges`` (12, 2) compiled in. The kernels are ``name +
    "_classify"`` and ``name + "_emit"``.

    Examples
    --------
    >>> from daxpy.worklets._marching import TABLES
    >>> name, source = source_for("float64", *TABLES["voxel"])
    >>> name, "contour_rows__f64_emit(" in source
    ('contour_rows__f64', True)
    """
    name = f"contour_rows__{dtype_tag(dtype)}"
    padded = np.zeros((256, 5, 3), np.int64)
    padded[:, :table.shape[1]] = table
    body = (_SOURCE.replace("NAME", name)
            .replace("COUNTS_INIT", ", ".join(str(int(c)) for c in counts))
            .replace("TABLE_INIT", ", ".join(str(int(e)) for e in padded.ravel()))
            .replace("EDGE_INFO_INIT", f"{_edge_info(edges)}ull"))
    return name, f"#define T {ctype(dtype)}\n{body}#undef T\n"
