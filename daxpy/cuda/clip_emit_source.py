"""The CUDA source of the clip's emit kernel (:mod:`daxpy.cuda.clip_cells`), kept apart
from the count's (:mod:`daxpy.cuda.clip_cells_source`, which joins them per
specialization): ``NAME`` stands for the specialization's name; ``T``, ``WARPS``,
``PLANE``, ``TERMS``, ``CASE_FIELDS`` and ``CELL_FIELDS`` are defined by the caller.

Examples
--------
>>> "NAME_emit" in EMIT
True
"""

# emit: a warp per point row, a word of 32 points (and cells) at a time. starts holds
# the exclusive scan over the five counts' rows, one count's after the other; the
# count's prefixes, each word's first kept point and cut edge in its row. Three
# kinds of words:
# - every cell kept whole (all the word's points and the next of the four rows
#   kept, from their bit words: most words of a clip): the corners are the rows' next
#   kept points, written by the whole warp, coalesced, no flag read, nothing scanned;
# - no cell (no point of the four rows kept): the row's cut edges alone, if any;
# - the others: a lane's cut edges, and the corners and edges of the cell at x in
#   each of its four point rows, numbered from the word's first ones plus a ballot or
#   a scan over the lanes below. Whole cells by their lane; cut cells' slots and cells
#   by the warp, lane by lane (a cut cell's up to 49 slots would leave the other lanes
#   idle for 49 rounds), each lane finding its slot's cell among the cut cells whose
#   slots start in its round of 32 (:mod:`daxpy.cuda.warp_owner`); the centre points'
#   terms a lane each.
EMIT = r"""
extern "C" __global__ void __launch_bounds__(32 * WARPS, 2)
NAME_emit(const T* __restrict__ s, const double* __restrict__ py,
          const double* __restrict__ pz, double value, int nx, int ny, int nz,
          const int* __restrict__ cases, const int* __restrict__ cells,
          const int* __restrict__ slot_places, const int* __restrict__ terms,
          const double* __restrict__ shares, const int* __restrict__ places,
          const unsigned char* __restrict__ flags, const unsigned* __restrict__ words,
          const int2* __restrict__ prefix, const long long* __restrict__ starts,
          long long first_cut, long long first_centre, long long* __restrict__ word_starts,
          long long* __restrict__ ids,
          double* __restrict__ weights, long long* __restrict__ centre_ids,
          double* __restrict__ centre_weights, long long* __restrict__ connectivity,
          long long* __restrict__ offsets, unsigned char* __restrict__ types,
          long long* __restrict__ source, long long* __restrict__ keys) {
  // Per warp, per lane (cell): its first slot and output cell among the 32 cells',
  // its case's first slot place and first output cell in the tables, its four
  // rows' flags at x and x + 1, and the numbers of its four rows' kept points and
  // cut edges among the lanes'; per round of a cut cells' loop, the lane whose
  // slots (cells) start at each of its 32 places.
  __shared__ int lane_slot[WARPS][32], lane_cell[WARPS][32], lane_places[WARPS][32],
                 lane_cells[WARPS][32], lane_flags[WARPS][32], lane_kept[WARPS][32],
                 lane_cut[WARPS][32], round_owner[WARPS][32], centre_lane[WARPS][32];
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
#if PLANE
  const clip_plane_values field{s, py, pz};
#else
  const clip_values<T> field{s};
#endif
  const int chunks = (nx + 31) / 32;
  // Each kept word's first output point (a gather by the words reads every word's).
  for (int w = lane; w < chunks; w += 32)
    word_starts[(long long)r * chunks + w] = kept_start[r] + prefix[(long long)r * chunks + w].x;
  // Rows that cut no edge, and cell rows that make no cell, write nothing more.
  const bool points = cut_start[r + 1] > cut_start[r];
  const bool any_cells = j + 1 < ny && k + 1 < nz && cell_start[r + 1] > cell_start[r];
  if (!points && !any_cells) return;
  // The cells' four point rows (j, k), (j + 1, k), (j, k + 1), (j + 1, k + 1): their
  // first points, their kept points' and cut edges' first numbers, and (per word)
  // the numbers of the word's first kept point and cut edge.
  long long base[4], kept_row[4], cut_row[4], kept_at[4], cut_at[4];
  int row_of[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const int row = row_of[q] = any_cells ? r + (q & 1) + (q >> 1) * ny : r;
    base[q] = (long long)row * nx;
    kept_row[q] = kept_start[row];
    cut_row[q] = first_cut + cut_start[row] - cut_start[0];
  }
  long long cell_at = cell_start[r] - cell_start[0], slot_at = slot_start[r] - slot_start[0];
  long long centre_at = first_centre + centre_start[r] - centre_start[0];
  const long long first_cell = (long long)(j + (ny - 1) * k) * (nx - 1);
  const unsigned below = (1u << lane) - 1u;
  const int centre_width = 2 * TERMS - 2;
  // Every corner kept: one cell, uncut (its type read once, not per 32 cells).
  const int type_whole = cells[CELL_FIELDS * cases[CASE_FIELDS * 255 + 1]];
  // The four rows' kept words and prefixes, read a word ahead: a warp's words are
  // in turn, and waiting on each word's reads left the whole words bound by latency.
  unsigned word_ahead[4];
  int2 prefix_ahead[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const long long at = (long long)row_of[q] * chunks;
    word_ahead[q] = words[at];
    prefix_ahead[q] = prefix[at];
  }
  for (int x0 = 0, word = 0; x0 < nx; x0 += 32, ++word) {
    const int x = x0 + lane;
    const bool last = word + 1 == chunks;
    // The word's kept points of the four rows, and their next points' (x0 + 32).
    unsigned all_kept = FULL, any_kept = 0u;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const long long at = (long long)row_of[q] * chunks + word + 1;
      const unsigned w = word_ahead[q];
      const int2 pre = prefix_ahead[q];
      word_ahead[q] = last ? 0u : words[at];
      prefix_ahead[q] = last ? make_int2(0, 0) : prefix[at];
      kept_at[q] = kept_row[q] + pre.x;
      cut_at[q] = cut_row[q] + pre.y;
      const unsigned next = word_ahead[q] & 1u;
      all_kept &= last ? w | (FULL << (nx - x0 - 1) << 1) : (next ? w : 0u);
      any_kept |= w | next;
    }
    // Row (j, k)'s cut edges in this word: its next word's first number less this one's.
    const int cut_end = last ? (int)(cut_start[r + 1] - cut_start[r]) : prefix_ahead[0].y;
    const bool cuts_here = cut_row[0] + cut_end > cut_at[0];
    if (any_cells && all_kept == FULL) {
      // Every cell kept whole (most words of a clip): each the next kept point of its
      // four rows, corner m at row m >> 1, x step ((m + 1) >> 1) & 1 (VTK's
      // hexahedron order: 0 1 3 2 4 5 7 6), no flag read, nothing scanned; no edge
      // of row (j, k) is cut. A lane writes slots lane, lane + 32, ...: always
      // corner lane & 7, of cells lane >> 3, + 4, ...
      const int cells_all = last ? nx - 1 - x0 : 32, slots_all = 8 * cells_all;
      const int m = lane & 7;
      const long long corner = PICK(kept_at, m >> 1) + (lane >> 3) + ((m + 1) >> 1 & 1);
      long long* to = connectivity + slot_at + lane;
#pragma unroll
      for (int round = 0; round < 8; ++round)
        if (lane + 32 * round < slots_all) to[32 * round] = corner + 4 * round;
      if (lane < cells_all) {
        types[cell_at + lane] = (unsigned char)type_whole;
        source[cell_at + lane] = first_cell + x;
        offsets[cell_at + lane + 1] = slot_at + 8 * lane + 8;
      }
      cell_at += cells_all;
      slot_at += slots_all;
      continue;
    }
    if (!any_cells || !any_kept) {
      // No cell here (none kept): the row's cut edges alone, if any.
      if (cuts_here) {
        const unsigned f0 = x < nx ? flags[base[0] + x] : 0u;
        const int cuts = clip_cuts(f0), cuts_to = clip_scan(cuts);
        if (f0 & 14u)
          clip_points(field, value, base[0] + x, x, j, k, f0, nx, nxy, n,
                      cut_at[0] + cuts_to - cuts - first_cut, ids, weights, keys);
      }
      continue;
    }
    unsigned f[4], g[4];  // the flags at x and x + 1 of the four rows
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      f[q] = x < nx ? flags[base[q] + x] : 0u;
      g[q] = __shfl_down_sync(FULL, f[q], 1);  // lane 31's x + 1 is the next word's
      if (lane == 31) g[q] = x + 1 < nx ? flags[base[q] + x + 1] : 0u;
    }
    // The four rows' cut edges before x in one scan, a byte each (at most 96).
    const int packed = clip_cuts(f[0]) | clip_cuts(f[1]) << 8 | clip_cuts(f[2]) << 16
                     | clip_cuts(f[3]) << 24;
    const int cuts_before = clip_scan(packed) - packed;
    int kept_before = 0;  // per row, a byte: the kept points of the lanes below
#pragma unroll
    for (int q = 0; q < 4; ++q) kept_before |= __popc(__ballot_sync(FULL, f[q] & 1u) & below)
                                               << 8 * q;
    if (f[0] & 14u)
      clip_points(field, value, base[0] + x, x, j, k, f[0], nx, nxy, n,
                  cut_at[0] + (cuts_before & 255) - first_cut, ids, weights, keys);
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
    // The centre points (at most one a cell), each term by a lane of its own: a lane
    // walking its centre's TERMS terms (each a chain of loads and a division) while
    // the other 31 lanes waited cost a fifth of the emit. Each term's ends side by
    // side, as the array program writes them (the first term in the point's two
    // columns, the others in the centre table).
    const unsigned with_centre = __ballot_sync(FULL, centres > 0);
    if (centres > 0) centre_lane[warp][__popc(with_centre & below)] = lane;
    __syncwarp();
    const int centre_terms = __popc(with_centre) * TERMS;
    for (int i0 = 0; i0 < centre_terms; i0 += 32) {
      const int i = i0 + lane, nth = i / TERMS, m = i - nth * TERMS;
      const int owner = i < centre_terms ? centre_lane[warp][nth] : 0;
      const int term = __shfl_sync(FULL, info[4], owner);
      const long long row = __shfl_sync(FULL, centre, owner), made_row = row - first_cut;
      if (i >= centre_terms) continue;
      const int xo = x0 + owner;
      if (m == 0) keys[made_row] = n + n * n + (first_cell + xo) * 64;
      const int code = terms[term * TERMS + m];
      const int at = places[3 * code], dx = places[3 * code + 1];
      const int axis = places[3 * code + 2];
      const long long a = base[0] + xo + dx + (at & 1) * (long long)nx + (at >> 1) * nxy;
      const long long step = axis < 0 ? 0 : axis == 0 ? 1 : axis == 1 ? nx : nxy;
      const long long b = a + step;
      const double t = axis < 0 ? 0.0 : clip_weight(field, value, a, xo + dx, j + (at & 1),
                                                    k + (at >> 1), axis, step);
      const double share = shares[term * TERMS + m];
      const double w0 = __dmul_rn(__dsub_rn(1.0, t), share), w1 = __dmul_rn(t, share);
      if (m == 0) {
        reinterpret_cast<longlong2*>(ids)[made_row] = make_longlong2(a, b);
        reinterpret_cast<double2*>(weights)[made_row] = make_double2(w0, w1);
      } else {
        const long long e = (row - first_centre) * centre_width + 2 * m - 2;
        centre_ids[e] = a;
        centre_ids[e + 1] = b;
        centre_weights[e] = w0;
        centre_weights[e + 1] = w1;
      }
    }
    const int slots_all = __shfl_sync(FULL, slots_to, 31);
    const int both_all = __shfl_sync(FULL, both_to, 31), cells_all = both_all & 0xffff;
    // A whole cell is written by its lane; the cut cells' slots and cells by
    // the warp, lane by lane, each lane finding its slot's (cell's) cut cell by
    // warp_owner.
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
    lane_slot[warp][lane] = slots_to - info[2];
    lane_cell[warp][lane] = both_to - both;  // cells below, centres below << 16
    lane_places[warp][lane] = info[5];
    lane_cells[warp][lane] = info[1];
    lane_flags[warp][lane] = (int)(f[0] | g[0] << 4 | f[1] << 8 | g[1] << 12 | f[2] << 16
                                   | g[2] << 20 | f[3] << 24 | g[3] << 28);
    lane_kept[warp][lane] = kept_before;
    lane_cut[warp][lane] = cuts_before;
    __syncwarp();
    // The cut cells' slots, then their cells, 32 at a time: slot (cell) at0 + lane's
    // cut cell from the cut cells that start in the round (warp_owner).
    const int cut_all = __shfl_sync(FULL, cut_to, 31), cut_below = cut_to - cut;
    int carry = 0, carry_first = 0;
    for (int at0 = 0; at0 < (cut_all & 0xffff); at0 += 32) {
      int o, first;
      warp_owner(round_owner[warp], cut_below & 0xffff, cut & 0xffff, at0, carry, carry_first,
                 o, first);
      const int at = at0 + lane;
      if (at >= (cut_all & 0xffff)) continue;
      const int m = at - first;
      const int place = slot_places[lane_places[warp][o] + m];
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
    for (int at0 = 0; at0 < cut_all >> 16; at0 += 32) {
      int o, first;
      warp_owner(round_owner[warp], cut_below >> 16, cut >> 16, at0, carry, carry_first, o,
                 first);
      const int at = at0 + lane;
      if (at >= cut_all >> 16) continue;
      const int m = at - first;
      const int* out = cells + CELL_FIELDS * (lane_cells[warp][o] + m);
      const long long to = cell_at + (lane_cell[warp][o] & 0xffff) + m;
      types[to] = (unsigned char)out[0];
      source[to] = first_cell + x0 + o;
      offsets[to + 1] = slot_at + lane_slot[warp][o] + out[1];
    }
    __syncwarp();  // the next 32 cells' staging overwrites these
    cell_at += cells_all;
    slot_at += slots_all;
    centre_at += both_all >> 16;
  }
}
"""
