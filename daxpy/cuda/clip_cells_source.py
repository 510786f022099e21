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

CASE_FIELDS = 6
"""Per case: its output cells, its first output cell, slots, centre points, first
centre (the order of :func:`daxpy.worklets._clip_arrays._case_arrays`), and its
first entry in the slot table (every slot of its cells in order, as a place)."""

CELL_FIELDS = 2
"""Per output cell of the tables: its VTK type, and its last slot's end counted
from its case's first slot."""

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
           int* __restrict__ counts) {
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
    if (lane == 0) counts[(long long)q * rows + r] = (int)total[q];
  }
}
"""

# emit: a warp per point row, 32 points (and cells) at a time. starts holds the
# exclusive scan over the five counts' rows, one count's after the other. A lane's kept point
# and cut edges are numbered from its row's starts plus the ones of the lanes
# below (a ballot and a scan) and of the chunks before; so are the corners and
# edges of the cell at x in each of its four point rows. Cells kept whole are
# written from those numbers alone (by the warp, coalesced, where all 32 are);
# cut cells' slots and cells by the warp, lane by lane (a cut cell's up to 49
# slots would leave the other lanes idle for 49 rounds), each lane finding its
# slot's cell by a search over the cut cells' first slots, staged in shared memory.
_EMIT = r"""
extern "C" __global__ void __launch_bounds__(32 * WARPS)
NAME_emit(const T* __restrict__ s, double value, int nx, int ny, int nz,
          const int* __restrict__ cases, const int* __restrict__ cells,
          const int* __restrict__ slot_places, const int* __restrict__ terms,
          const double* __restrict__ shares, int width, const int* __restrict__ places,
          const unsigned char* __restrict__ flags, const long long* __restrict__ starts,
          long long first_cut, long long first_centre, long long* __restrict__ ids,
          double* __restrict__ weights, long long* __restrict__ centre_ids,
          double* __restrict__ centre_weights, long long* __restrict__ connectivity,
          long long* __restrict__ offsets, unsigned char* __restrict__ types,
          long long* __restrict__ source, long long* __restrict__ keys) {
  // Per warp, per lane (cell): its first slot and output cell among the 32 cells'
  // (and among the cut cells', part), its case, its four rows' flags at x and x + 1,
  // and the numbers of its four rows' kept points and cut edges among the lanes'.
  __shared__ int lane_slot[WARPS][32], lane_cell[WARPS][32], lane_case[WARPS][32],
                 lane_flags[WARPS][32], lane_kept[WARPS][32], lane_cut[WARPS][32],
                 lane_part[WARPS][32];
  const int rows = ny * nz, warp = threadIdx.y, r = blockIdx.x * WARPS + warp;
  const int lane = threadIdx.x;
  if (r >= rows) return;  // whole warps only; each warp syncs only itself
  if (r == 0 && lane == 0) offsets[0] = 0;
  // One scan over the five counts' rows in turn: a count's starts are its rows'
  // less its first.
  const long long *kept_start = starts, *cut_start = starts + rows;
  const long long *cell_start = starts + 2 * rows, *slot_start = starts + 3 * rows;
  const long long *centre_start = starts + 4 * rows;
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
    cut_at[q] = first_cut + cut_start[row] - cut_start[0];
  }
  long long cell_at = cell_start[r] - cell_start[0], slot_at = slot_start[r] - slot_start[0];
  long long centre_at = first_centre + centre_start[r] - centre_start[0];
  const long long first_cell = (long long)(j + (ny - 1) * k) * (nx - 1);
  const unsigned below = (1u << lane) - 1u;
  const int centre_width = 2 * width - 2;
  // Every corner kept: one cell, uncut (its type read once, not per 32 cells).
  const int type_whole = cells[CELL_FIELDS * cases[CASE_FIELDS * 255 + 1]];
  for (int x0 = 0; x0 < nx; x0 += 32) {
    const int x = x0 + lane;
    unsigned f[4], g[4];  // the flags at x and x + 1 of the four rows
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      f[q] = x < nx && (q == 0 || any_cells) ? flags[base[q] + x] : 0u;
      g[q] = __shfl_down_sync(FULL, f[q], 1);  // lane 31's x + 1 is the next word's
      if (lane == 31) g[q] = any_cells && x + 1 < nx ? flags[base[q] + x + 1] : 0u;
    }
    // The four rows' cut edges before x in one scan, a byte each (at most 96).
    const int packed = clip_cuts(f[0]) | clip_cuts(f[1]) << 8 | clip_cuts(f[2]) << 16
                     | clip_cuts(f[3]) << 24;
    const int cuts_to = clip_scan(packed), cuts_before = cuts_to - packed;
    const int cuts_all = __shfl_sync(FULL, cuts_to, 31);
    unsigned ballots[4];
    int kept_before = 0;  // per row, a byte: the kept points of the lanes below
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      ballots[q] = __ballot_sync(FULL, f[q] & 1u);
      kept_before |= __popc(ballots[q] & below) << 8 * q;
    }
    if (points && f[0])
      clip_points(s, value, base[0] + x, f[0], nx, nxy, n, kept_at[0] + (kept_before & 255),
                  cut_at[0] + (cuts_before & 255), ids, weights, keys);
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
      const long long centre = centre_at + ((both_to - both) >> 16);
      const long long id = first_cell + x;
      // The centre points (few: a lane each): each term's ends side by side, as the
      // array program writes them (the first term in the point's two columns, the
      // others in the centre table).
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
      const int slots_all = __shfl_sync(FULL, slots_to, 31);
      const int both_all = __shfl_sync(FULL, both_to, 31), cells_all = both_all & 0xffff;
      if (__all_sync(FULL, c == 255u || x + 1 >= nx)) {
        // Cells kept whole (most of a clip's cells), up to the row's end: each the
        // next kept point of its four rows, corner m at row m >> 1, x step
        // ((m + 1) >> 1) & 1 (VTK's hexahedron order: 0 1 3 2 4 5 7 6), nothing
        // staged or searched. A lane writes slots lane, lane + 32, ...: always
        // corner lane & 7, of cells lane >> 3, + 4, ...
        const int m = lane & 7;
        const long long corner = PICK(kept_at, m >> 1) + (lane >> 3) + ((m + 1) >> 1 & 1);
        long long* to = connectivity + slot_at + lane;
#pragma unroll
        for (int round = 0; round < 8; ++round)
          if (lane + 32 * round < slots_all) to[32 * round] = corner + 4 * round;
        if (lane < cells_all) {
          types[cell_at + lane] = (unsigned char)type_whole;
          source[cell_at + lane] = id;
          offsets[cell_at + lane + 1] = slot_at + 8 * lane + 8;
        }
      } else {
        // A whole cell is written by its lane; the cut cells' slots and cells by
        // the warp, lane by lane, each lane finding its slot's (cell's) cut cell by
        // a search over the cut cells' first ones, staged in shared memory.
        const long long slot = slot_at + slots_to - info[2];
        const long long cell = cell_at + ((both_to - both) & 0xffff);
        if (c == 255u) {
          long long* to = connectivity + slot;
#pragma unroll
          for (int m = 0; m < 8; ++m) {
            const int row = m >> 1;
            to[m] = PICK(kept_at, row) + (kept_before >> 8 * row & 255) + ((m + 1) >> 1 & 1);
          }
          types[cell] = (unsigned char)type_whole;
          source[cell] = id;
          offsets[cell + 1] = slot + 8;
        }
        const int cut = c == 255u ? 0 : info[2] | made << 16, cut_to = clip_scan(cut);
        lane_part[warp][lane] = cut_to - cut;  // the cut cells' slots below, cells << 16
        lane_slot[warp][lane] = slots_to - info[2];
        lane_cell[warp][lane] = both_to - both;  // cells below, centres below << 16
        lane_case[warp][lane] = (int)c;
        lane_flags[warp][lane] = (int)(f[0] | g[0] << 4 | f[1] << 8 | g[1] << 12 | f[2] << 16
                                       | g[2] << 20 | f[3] << 24 | g[3] << 28);
        lane_kept[warp][lane] = kept_before;
        lane_cut[warp][lane] = cuts_before;
        __syncwarp();
        const int cut_all = __shfl_sync(FULL, cut_to, 31);
        for (int at = lane; at < (cut_all & 0xffff); at += 32) {
          // The cell of cut slot at: the last lane whose first one is at or before
          // it (a lane with none shares its first with the next one).
          int o = 0;
#pragma unroll
          for (int step = 16; step; step >>= 1)
            if ((lane_part[warp][o + step] & 0xffff) <= at) o += step;
          const int m = at - (lane_part[warp][o] & 0xffff);
          const int place = slot_places[cases[CASE_FIELDS * lane_case[warp][o] + 5] + m];
          long long point;
          if (place < 0) {  // a centre: -1 - its index among the cell's
            point = centre_at + (lane_cell[warp][o] >> 16) - 1 - place;
          } else {
            // A corner's kept number, or an edge's: the cut edges of the row's points
            // before it, then its lower end's edges of lower axes.
            const int row = place & 3, dx = place >> 2 & 1, axis = (place >> 3) - 1;
            const unsigned both_flags = (unsigned)lane_flags[warp][o] >> 8 * row;
            const unsigned flag = both_flags & 15u;
            point = axis < 0
                ? PICK(kept_at, row) + (lane_kept[warp][o] >> 8 * row & 255) + dx * (flag & 1u)
                : PICK(cut_at, row) + (lane_cut[warp][o] >> 8 * row & 255)
                      + dx * clip_cuts(flag)
                      + clip_cuts((dx ? both_flags >> 4 : flag) & ((2u << axis) - 2u));
          }
          connectivity[slot_at + lane_slot[warp][o] + m] = point;
        }
        for (int at = lane; at < cut_all >> 16; at += 32) {
          int o = 0;
#pragma unroll
          for (int step = 16; step; step >>= 1)
            if ((lane_part[warp][o + step] >> 16) <= at) o += step;
          const int m = at - (lane_part[warp][o] >> 16);
          const int* out = cells + CELL_FIELDS * (cases[CASE_FIELDS * lane_case[warp][o] + 1]
                                                  + m);
          const long long to = cell_at + (lane_cell[warp][o] & 0xffff) + m;
          types[to] = (unsigned char)out[0];
          source[to] = first_cell + x0 + o;
          offsets[to + 1] = slot_at + lane_slot[warp][o] + out[1];
        }
        __syncwarp();  // the next 32 cells' staging overwrites these
      }
      cell_at += cells_all;
      slot_at += slots_all;
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
