"""The CUDA source of the emit kernel of :mod:`daxpy.cuda.contour_rows` (joined to
the shared helpers and the classify kernel by
:func:`daxpy.cuda.contour_rows_source.source_for`): over the stretches of 32
points where one of a row's four corner rows has work, each row's points at their
final index and each cell's triangles.
"""

EMIT = r"""
// Five blocks a multiprocessor (at most 48 registers), not two: each stretch is a
// chain of dependent loads, and more warps hide their latency. At 512³ on an H200:
// 0.97 ms with three blocks, 0.80 with four, 0.76 with five (a few values spill to
// local memory), 0.77 with six. Point ids are below 2^31 (the caller checks), so a
// lane's twelve fit in 48 bytes of shared memory.
extern "C" __global__ void __launch_bounds__(256, 5) NAME_emit(
    const T* __restrict__ s, const double* __restrict__ py, const double* __restrict__ pz,
    const double value, const int nx, const int ny, const int nz,
    const unsigned char* __restrict__ flags, const unsigned char* __restrict__ active,
    const long long* __restrict__ point_start,
    const long long* __restrict__ tri_start, long long* __restrict__ lo,
    long long* __restrict__ hi, double* __restrict__ t, long long* __restrict__ tris,
    long long* __restrict__ source, const long long own_rows, const long long point_base,
    const long long id_base, const long long cell_base)
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
  // A slab of a larger grid (daxpy.stream.slab_contour) has two more point planes
  // than it owns: its last cells' far corners, and their z edges, which set those
  // corners' ids. Only its own rows emit; ids and cells are the whole grid's.
  if (r >= own_rows) return;
  const int lane = threadIdx.x, w = threadIdx.y, j = (int)(r % ny), k = (int)(r / ny);
  const bool hy = j + 1 < ny, hz = k + 1 < nz, cells = hy && hz;
  const long long plane = (long long)nx * ny;
  // The four point rows of the cells of this row, and where their points start.
  const long long rows[4] = {r, r + (hy ? 1 : 0), r + (hz ? ny : 0), r + (cells ? ny + 1 : 0)};
  // Point ids in 32 bits (the caller checks that there are fewer than 2^31): half
  // the instructions of 64-bit sums, for every lane of every stretch.
  int run[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) run[q] = (int)point_start[rows[q]];
  // ``tri_start`` continues the points' scan (one scan of both counts): each entry
  // less the first is the triangles' own.
  const long long tri0 = tri_start[0];
  long long tri_run = tri_start[r] - tri0;
  // A row with no point of its own and no triangle of its cells writes nothing
  // (the rows far from the surface).
  if ((int)point_start[r + 1] == run[0] && tri_start[r + 1] - tri0 == tri_run) return;
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
      int at[4][2];  // the first output point of this lane's point and the next, per row
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        at[q][0] = run[q] + (inclusive >> (8 * q) & 255) - n[q];
        at[q][1] = at[q][0] + n[q];
        run[q] += row_totals >> (8 * q) & 255;
      }
      if (x < nx && (f[0] & ALONE)) {  // the point itself
        const long long p = point_base + r * nx + x;
        lo[at[0][0]] = p;
        hi[at[0][0]] = p;
        t[at[0][0]] = 0.0;
      } else if (x < nx) {  // this row's points: its cut edges, axis by axis
        const long long p = r * nx + x, steps[3] = {1, nx, plane};
        int o = at[0][0];
#pragma unroll
        for (int a = 0; a < 3; ++a) {
          if (f[0] >> (1 + a) & 1) {
            const double low = (double)VALUE(p), high = (double)VALUE(p + steps[a]);
            lo[o] = point_base + p;
            hi[o] = point_base + p + steps[a];
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
          for (int v = 0; v < 3; ++v) tris[3 * out + v] = id_base + ids[w][lane][table[c * 15 + 3 * m + v]];
          source[out] = cell_base + first_cell + x;
          ++out;
        }
      }
      tri_run += __shfl_sync(FULL, made_inclusive, 31);
    }
  }
}
"""
