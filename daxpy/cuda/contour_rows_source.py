"""The CUDA source of the row kernels of :mod:`daxpy.cuda.contour_rows`: classify
and emit, specialized per field dtype, with VTK's voxel tables compiled in.

Examples
--------
>>> from daxpy.worklets._marching import TABLES
>>> source_for("f32", *TABLES["voxel"])[0]
'contour_rows__f32'
"""

from __future__ import annotations

import numpy as np

_TYPES = {"f32": "float", "f64": "double"}
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

// A point's in bits (bit q: row q) and its bits of values equal to the value.
template <typename R>
__device__ __forceinline__ void point_bits(const R* const (&row)[4], int x, R bound, R at,
                                          unsigned& in, unsigned& ex) {
  in = 0;
  ex = 0;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const R v = row[q][x];
    in |= (unsigned)(v >= bound) << q;
    ex |= (unsigned)(v == at) << q;
  }
}
#endif

extern "C" __global__ void __launch_bounds__(256) NAME_classify(
    const T* __restrict__ s, const T bound, const T at, const int nx,
    const int ny, const int nz, unsigned char* __restrict__ flags,
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
  const int chunks = (nx + 31) / 32;
  int points = 0, tris = 0, odd = 0;
  // The x + 1 neighbours of a stretch's last lane are the next stretch's first:
  // each stretch's bits are read one step ahead.
  unsigned in_ahead, ex_ahead;
  point_bits(row, lane < nx ? lane : nx - 1, bound, at, in_ahead, ex_ahead);
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const int x = chunk * 32 + lane;
    const unsigned in = in_ahead, ex = ex_ahead;
    const T a = row[0][x < nx ? x : nx - 1];
    const int x_ahead = x + 32 < nx ? x + 32 : nx - 1;
    point_bits(row, x_ahead, bound, at, in_ahead, ex_ahead);
    const unsigned first_in = __shfl_sync(FULL, in_ahead, 0);
    const unsigned first_ex = __shfl_sync(FULL, ex_ahead, 0);
    unsigned next = __shfl_down_sync(FULL, in, 1), next_ex = __shfl_down_sync(FULL, ex, 1);
    if (lane == 31) {
      next = first_in;
      next_ex = first_ex;
    }
    const unsigned cut = x < nx ? ((x + 1 < nx && ((in ^ next) & 1))
                                   | (hy && ((in ^ in >> 1) & 1)) << 1
                                   | (hz && ((in ^ in >> 2) & 1)) << 2) : 0u;
    unsigned f = 0;
    if (x < nx) {
      // An edge with an end at the value makes no point of its own.
      const unsigned own = (ex & 1) ? 0u : cut & ~((next_ex & 1) | (ex & 6u));
      f = (in & 1) | own << 1 | (ex & 1) * EXACT;
      if (ex & 1) {  // rare: is an edge at this point cut, from below too?
        const long long p = r * nx + x;
        const bool below = (x > 0 && !(s[p - 1] >= bound)) || (j > 0 && !(s[p - nx] >= bound))
                        || (k > 0 && !(s[p - plane] >= bound));
        if (cut || below) f |= ALONE;
      }
      flags[r * nx + x] = (unsigned char)f;
      points += points_at(f);
      odd |= !isfinite(a);
      if (cells && x + 1 < nx) {
        const unsigned c8 = voxel_bits(in, next);
        tris += made_by(c8, voxel_bits(ex, next_ex), counts[c8], TABLE);
      }
    }
    // The stretches the emit pass visits: a cut edge or an output point in them.
    const unsigned busy = __ballot_sync(FULL, cut != 0 || points_at(f) != 0);
    if (lane == 0) active[r * chunks + chunk] = busy != 0;
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

// Three blocks a multiprocessor (at most 85 registers, no spills), not two: more
// warps to hide the latency of its scattered stores.
extern "C" __global__ void __launch_bounds__(256, 3) NAME_emit(
    const T* __restrict__ s, const double value, const int nx, const int ny, const int nz,
    const unsigned char* __restrict__ flags, const unsigned char* __restrict__ active,
    const long long* __restrict__ point_start,
    const long long* __restrict__ tri_start, long long* __restrict__ lo,
    long long* __restrict__ hi, double* __restrict__ t, long long* __restrict__ tris,
    long long* __restrict__ source)
{
  __shared__ unsigned char counts[256];
  __shared__ signed char table[256 * 15];
  __shared__ long long ids[ROWS][32][12];  // each lane's cell: the point of each cut edge
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
      const unsigned c = voxel_bits(here, next), exact = voxel_bits(here_ex, next_ex);
      const int made = cells && x + 1 < nx ? made_by(c, exact, counts[c], table) : 0;
      long long at[4][2];  // the first output point of this lane's point and the next, per row
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int inclusive = scan_warp(n[q]);
        at[q][0] = run[q] + inclusive - n[q];
        at[q][1] = at[q][0] + n[q];
        run[q] += __shfl_sync(FULL, inclusive, 31);
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
          ids[w][lane][e] = (fl & EXACT) ? at[q][dx] : (fh & EXACT) ? at[hq][hdx]
                          : at[q][dx] + __popc((fl >> 1) & ((1u << axis) - 1));
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


def source_for(dtype_code: str, counts: np.ndarray, table: np.ndarray,
               edges: np.ndarray) -> tuple[str, str]:
    """``(name, source)`` of the two kernels for a field of ``dtype_code`` (``"f32"``
    or ``"f64"``), with VTK's voxel case ``counts`` (256), padded ``table``
    (256, 5, 3) and ``edges`` (12, 2) compiled in. The kernels are ``name +
    "_classify"`` and ``name + "_emit"``.

    Examples
    --------
    >>> from daxpy.worklets._marching import TABLES
    >>> name, source = source_for("f64", *TABLES["voxel"])
    >>> name, "contour_rows__f64_emit(" in source
    ('contour_rows__f64', True)
    """
    name = f"contour_rows__{dtype_code}"
    padded = np.zeros((256, 5, 3), np.int64)
    padded[:, :table.shape[1]] = table
    body = (_SOURCE.replace("NAME", name)
            .replace("COUNTS_INIT", ", ".join(str(int(c)) for c in counts))
            .replace("TABLE_INIT", ", ".join(str(int(e)) for e in padded.ravel()))
            .replace("EDGE_INFO_INIT", f"{_edge_info(edges)}ull"))
    return name, f"#define T {_TYPES[dtype_code]}\n{body}#undef T\n"


