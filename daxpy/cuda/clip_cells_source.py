"""The CUDA source of the kernels of :mod:`daxpy.cuda.clip_cells`: count and emit,
specialized per field dtype (:func:`source_for`). The case tables are not
compiled in: they come as small device arrays, in the layout :data:`CASE_FIELDS`
and :data:`CELL_FIELDS` name.

Examples
--------
>>> source_for("float32")[0]
('clip_cells__f32_count', 'clip_cells__f32_emit')
"""

from __future__ import annotations

from .codegen import ctype, dtype_tag

WARPS = 8
"""Warps (point rows) per block."""

CASE_FIELDS = 5
"""Per case: its output cells, its first output cell, slots, centre points, first
centre (the order of :func:`daxpy.worklets._clip_arrays._case_arrays`)."""

CELL_FIELDS = 10
"""Per output cell of the tables: its VTK type, its size, its eight point codes."""

_COMMON = r"""
#ifndef DAXPY_CLIP_CELLS  // what both dtypes' kernels share, once per source
#define DAXPY_CLIP_CELLS
#define FULL 0xffffffffu
// One of four values held in registers, by a row number known only at run time
// (indexing the array would put it in local memory).
#define PICK(v, q) ((q) == 0 ? v[0] : (q) == 1 ? v[1] : (q) == 2 ? v[2] : v[3])

// A point's flag: bit 0 kept; bits 1 to 3 its x, y and z edges cut.
__device__ __forceinline__ int clip_cuts(unsigned f) {
  return (int)((f >> 1 & 1u) + (f >> 2 & 1u) + (f >> 3 & 1u));
}

// A column's bits (its rows (y, z): (0, 0), (1, 0), (0, 1), (1, 1)) at the case bits
// of the voxel corners at x = 0 (VTK's voxel corner order).
__device__ __forceinline__ unsigned clip_spread(unsigned c) {
  return (c & 1u) | (c & 2u) << 1 | (c & 4u) << 2 | (c & 8u) << 3;
}

__device__ __forceinline__ int clip_scan(int v) {  // inclusive, over the 32 lanes
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int u = __shfl_up_sync(FULL, v, d);
    if ((int)threadIdx.x >= d) v += u;
  }
  return v;
}

// The array program's cut weight along edge (lo, hi), in float64. The intrinsics
// round each operation on its own: no contraction, the CPU's bits.
template <typename V>
__device__ __forceinline__ double clip_weight(const V* __restrict__ s, double value,
                                              long long lo, long long hi) {
  const double low = (double)s[lo], high = (double)s[hi];
  return high != low ? __ddiv_rn(__dsub_rn(value, low), __dsub_rn(high, low)) : 0.0;
}

// Which of the points p, p + up, p + out, p + up + out are kept, as bits 0 to 3
// (up, out: 0 past the grid's last row or plane, so that no edge leaves it). The
// bound makes the comparison in V the float64 one; NaN is not at or above it.
template <typename V>
__device__ __forceinline__ unsigned clip_column(const V* __restrict__ s, long long p,
                                                long long up, long long out, V bound,
                                                unsigned flip) {
  return ((unsigned)(s[p] >= bound) ^ flip) | ((unsigned)(s[p + up] >= bound) ^ flip) << 1
       | ((unsigned)(s[p + out] >= bound) ^ flip) << 2
       | ((unsigned)(s[p + up + out] >= bound) ^ flip) << 3;
}

// A point row's outputs at point p: itself if kept (row kept), then its cut edges by
// axis (rows from cut).
template <typename V>
__device__ __forceinline__ void clip_points(const V* __restrict__ s, double value,
                                            long long p, unsigned flag, long long nx,
                                            long long nxy, long long n, long long kept,
                                            long long cut, long long* __restrict__ ids,
                                            double* __restrict__ weights,
                                            long long* __restrict__ keys) {
  if (flag & 1u) {
    reinterpret_cast<longlong2*>(ids)[kept] = make_longlong2(p, p);
    reinterpret_cast<double2*>(weights)[kept] = make_double2(1.0, 0.0);
    keys[kept] = p;
  }
#pragma unroll
  for (int axis = 0; axis < 3; ++axis) {
    if (flag & 2u << axis) {
      const long long q = p + (axis == 0 ? 1 : axis == 1 ? nx : nxy);
      const double t = clip_weight(s, value, p, q);
      reinterpret_cast<longlong2*>(ids)[cut] = make_longlong2(p, q);
      reinterpret_cast<double2*>(weights)[cut] = make_double2(__dsub_rn(1.0, t), t);
      keys[cut] = n + p * n + q;
      ++cut;
    }
  }
}
#endif
"""

# count: a warp per point row (j, k), its lanes along x, 32 points at a time. The x
# + 1 column comes from the next lane (lane 31 reads its own).
_COUNT = r"""
extern "C" __global__ void __launch_bounds__(32 * WARPS)
NAME_count(const T* __restrict__ s, T bound, int invert, int nx, int ny, int nz,
           const int* __restrict__ cases, unsigned char* __restrict__ flags,
           long long* __restrict__ counts) {
  const int rows = ny * nz, r = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
  if (r >= rows) return;  // whole warps only: the shuffles below need them
  const int j = r % ny, k = r / ny;
  const long long first = (long long)r * nx;
  const long long up = j + 1 < ny ? nx : 0, out = k + 1 < nz ? (long long)nx * ny : 0;
  const bool cells = j + 1 < ny && k + 1 < nz;
  const unsigned flip = invert != 0;
  // Per lane, then per row: kept points, cut edges, output cells, slots, centres.
  long long total[5] = {0, 0, 0, 0, 0};
  for (int x0 = 0; x0 < nx; x0 += 32) {
    const int x = x0 + lane;
    const unsigned column = x < nx ? clip_column(s, first + x, up, out, bound, flip) : 0u;
    unsigned after = __shfl_down_sync(FULL, column, 1);
    if (lane == 31 && x + 1 < nx) after = clip_column(s, first + x + 1, up, out, bound, flip);
    if (x + 1 >= nx) after = column;  // the row's last point has no x edge
    if (x < nx) {
      const unsigned flag = (column & 1u) | ((column ^ after) & 1u) << 1
                          | ((column ^ column >> 1) & 1u) << 2
                          | ((column ^ column >> 2) & 1u) << 3;
      flags[first + x] = (unsigned char)flag;
      total[0] += flag & 1u;
      total[1] += clip_cuts(flag);
      if (cells && x + 1 < nx) {
        const int* info = cases + CASE_FIELDS * (clip_spread(column) | clip_spread(after) << 1);
        total[2] += info[0];
        total[3] += info[2];
        total[4] += info[3];
      }
    }
  }
#pragma unroll
  for (int q = 0; q < 5; ++q) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) total[q] += __shfl_xor_sync(FULL, total[q], d);
    // Rows without cells (the last row and plane) count none: one scan per field
    // over the point rows serves the cell rows too.
    if (lane == 0) counts[(long long)q * rows + r] = total[q];
  }
}
"""

# emit: a warp per point row, 32 points (and cells) at a time. starts holds the
# exclusive scans over rows of the five counts, rows + 1 each. A lane's kept point
# and cut edges are numbered from its row's starts plus the ones of the lanes
# below (a ballot and a scan) and of the chunks before; so are the corners and
# edges of the cell at x in each of its four point rows, which a cut cell's output
# cells read through the tables; cells, slots and centres the same way.
_EMIT = r"""
extern "C" __global__ void __launch_bounds__(32 * WARPS)
NAME_emit(const T* __restrict__ s, double value, int nx, int ny, int nz,
          const int* __restrict__ cases, const int* __restrict__ cells,
          const int* __restrict__ terms, const double* __restrict__ shares, int width,
          const int* __restrict__ places, const unsigned char* __restrict__ flags,
          const long long* __restrict__ starts, long long first_cut, long long first_centre,
          long long* __restrict__ ids, double* __restrict__ weights,
          long long* __restrict__ centre_ids, double* __restrict__ centre_weights,
          long long* __restrict__ connectivity, long long* __restrict__ offsets,
          unsigned char* __restrict__ types, long long* __restrict__ source,
          long long* __restrict__ keys) {
  const int rows = ny * nz, r = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
  if (r >= rows) return;  // whole warps only
  if (r == 0 && lane == 0) offsets[0] = 0;
  const long long stride = rows + 1;
  const long long *kept_start = starts, *cut_start = starts + stride;
  const long long *cell_start = starts + 2 * stride, *slot_start = starts + 3 * stride;
  const long long *centre_start = starts + 4 * stride;
  const int j = r % ny, k = r / ny;
  const long long nxy = (long long)nx * ny, n = nxy * nz;
  // Rows that keep and cut nothing, and cell rows that make no cell, write nothing.
  const bool points = kept_start[r + 1] + cut_start[r + 1] > kept_start[r] + cut_start[r];
  const bool any_cells = j + 1 < ny && k + 1 < nz && cell_start[r + 1] > cell_start[r];
  if (!points && !any_cells) return;
  // The cells' four point rows (j, k), (j + 1, k), (j, k + 1), (j + 1, k + 1): their
  // first points, and the numbers of their next kept point and cut edge.
  long long base[4], kept_at[4], cut_at[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const int row = any_cells ? r + (q & 1) + (q >> 1) * ny : r;
    base[q] = (long long)row * nx;
    kept_at[q] = kept_start[row];
    cut_at[q] = first_cut + cut_start[row];
  }
  long long cell_at = cell_start[r], slot_at = slot_start[r];
  long long centre_at = first_centre + centre_start[r];
  const long long first_cell = (long long)(j + (ny - 1) * k) * (nx - 1);
  const unsigned below = (1u << lane) - 1u;
  const int whole = cases[CASE_FIELDS * 255 + 1];  // every corner kept: one cell, uncut
  const int centre_width = 2 * width - 2;
  for (int x0 = 0; x0 < nx; x0 += 32) {
    const int x = x0 + lane;
    unsigned f[4], g[4];  // the flags at x and x + 1 of the four rows
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      f[q] = x < nx && (q == 0 || any_cells) ? flags[base[q] + x] : 0u;
      g[q] = any_cells && x + 1 < nx ? flags[base[q] + x + 1] : 0u;
    }
    // The four rows' cut edges before x in one scan, a byte each (at most 96).
    const int packed = clip_cuts(f[0]) | clip_cuts(f[1]) << 8 | clip_cuts(f[2]) << 16
                     | clip_cuts(f[3]) << 24;
    const int cuts_to = clip_scan(packed), cuts_before = cuts_to - packed;
    const int cuts_all = __shfl_sync(FULL, cuts_to, 31);
    long long kn[4], cn[4];  // per row: the number of the kept point, first cut edge at x
    unsigned ballots[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      ballots[q] = __ballot_sync(FULL, f[q] & 1u);
      kn[q] = kept_at[q] + __popc(ballots[q] & below);
      cn[q] = cut_at[q] + (cuts_before >> 8 * q & 255);
    }
    if (points && f[0])
      clip_points(s, value, base[0] + x, f[0], nx, nxy, n, kn[0], cn[0], ids, weights, keys);
    if (any_cells) {
      unsigned c = 0u;
      if (x + 1 < nx) {
        const unsigned here = (f[0] & 1u) | (f[1] & 1u) << 1 | (f[2] & 1u) << 2
                            | (f[3] & 1u) << 3;
        const unsigned there = (g[0] & 1u) | (g[1] & 1u) << 1 | (g[2] & 1u) << 2
                             | (g[3] & 1u) << 3;
        c = clip_spread(here) | clip_spread(there) << 1;
      }
      const int* info = cases + CASE_FIELDS * c;
      const int made = info[0], centres = info[3];
      // Cells (at most 11 a cell) and centres (at most 1) in one scan, slots in another.
      const int both = made | centres << 16, both_to = clip_scan(both);
      const int slots_to = clip_scan(info[2]);
      long long cell = cell_at + ((both_to - both) & 0xffff);
      long long slot = slot_at + (slots_to - info[2]);
      const long long centre = centre_at + ((both_to - both) >> 16);
      const long long id = first_cell + x;
      if (c == 255u) {
        // Most cells are kept whole: clip_cpu._WHOLE's corners, each the next kept
        // point of its row, written without reading the tables' codes.
        long long* to = connectivity + slot;
        to[0] = kn[0]; to[1] = kn[0] + 1; to[2] = kn[1] + 1; to[3] = kn[1];
        to[4] = kn[2]; to[5] = kn[2] + 1; to[6] = kn[3] + 1; to[7] = kn[3];
        types[cell] = (unsigned char)cells[CELL_FIELDS * whole];
        source[cell] = id;
        offsets[cell + 1] = slot + 8;
      } else if (c) {
        for (int o = info[1]; o < info[1] + made; ++o, ++cell) {
          const int* out = cells + CELL_FIELDS * o;
          for (int m = 0; m < out[1]; ++m) {
            const int code = out[2 + m];
            long long point = centre - 1 - code;  // a centre: -1 - its index
            if (code >= 0) {
              // A corner's kept number, or an edge's: the cut edges of the row's
              // points before it, then its lower end's edges of lower axes.
              const int row = places[3 * code], dx = places[3 * code + 1];
              const int axis = places[3 * code + 2];
              const unsigned flag = PICK(f, row);
              point = axis < 0 ? PICK(kn, row) + dx * (flag & 1u)
                               : PICK(cn, row) + dx * clip_cuts(flag)
                                     + clip_cuts((dx ? PICK(g, row) : flag)
                                                 & ((2u << axis) - 2u));
            }
            connectivity[slot++] = point;
          }
          types[cell] = (unsigned char)out[0];
          source[cell] = id;
          offsets[cell + 1] = slot;
        }
        // The centre points: each term's ends side by side, as the array program
        // writes them (the first term in the point's two columns, the others in
        // the centre table).
        for (int u = 0; u < centres; ++u) {
          const int term = info[4] + u;
          const long long row = centre + u;
          keys[row] = n + n * n + id * 64 + u;
          for (int m = 0; m < width; ++m) {
            const int code = terms[term * width + m];
            const int at = places[3 * code], axis = places[3 * code + 2];
            const long long a = base[0] + x + places[3 * code + 1] + (at & 1) * (long long)nx
                              + (at >> 1) * nxy;
            const long long b = axis < 0 ? a : a + (axis == 0 ? 1 : axis == 1 ? nx : nxy);
            const double t = axis < 0 ? 0.0 : clip_weight(s, value, a, b);
            const double share = shares[term * width + m];
            const double w0 = __dmul_rn(__dsub_rn(1.0, t), share), w1 = __dmul_rn(t, share);
            if (m == 0) {
              reinterpret_cast<longlong2*>(ids)[row] = make_longlong2(a, b);
              reinterpret_cast<double2*>(weights)[row] = make_double2(w0, w1);
            } else {
              const long long e = (row - first_centre) * centre_width + 2 * m - 2;
              centre_ids[e] = a;
              centre_ids[e + 1] = b;
              centre_weights[e] = w0;
              centre_weights[e + 1] = w1;
            }
          }
        }
      }
      const int both_all = __shfl_sync(FULL, both_to, 31);
      cell_at += both_all & 0xffff;
      slot_at += __shfl_sync(FULL, slots_to, 31);
      centre_at += both_all >> 16;
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      kept_at[q] += __popc(ballots[q]);
      cut_at[q] += cuts_all >> 8 * q & 255;
    }
  }
}
"""


def source_for(dtype) -> tuple[tuple[str, str], str]:
    """``((count, emit), source)``: the kernels' names for a field of ``dtype``
    (float32 or float64), and their source.

    Examples
    --------
    >>> names, source = source_for("float64")
    >>> names[1], "#define T double" in source
    ('clip_cells__f64_emit', True)
    """
    name = f"clip_cells__{dtype_tag(dtype)}"
    sizes = {"WARPS": WARPS, "CASE_FIELDS": CASE_FIELDS, "CELL_FIELDS": CELL_FIELDS}
    return (f"{name}_count", f"{name}_emit"), (
        f"#define T {ctype(dtype)}\n"
        + "".join(f"#define {k} {v}\n" for k, v in sizes.items())
        + f"{_COMMON}{_COUNT.replace('NAME', name)}{_EMIT.replace('NAME', name)}"
        + "".join(f"#undef {k}\n" for k in sizes) + "#undef T\n")
