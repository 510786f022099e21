// Cell-to-point average: each point gets the mean of the cells that use it
// (0 where no cell does). Point-centric: each point gathers from its cells
// (computed on structured grids, CSR links on unstructured ones), so there
// are no atomics and the sums run in a fixed order. On 3-D structured grids
// a marching kernel averages separably (the cells around a point form a box:
// the mean over it is the mean along z of means along y and x).
#ifndef DAXPY_CELL_TO_POINT_CUH
#define DAXPY_CELL_TO_POINT_CUH

namespace dax {

// The average is computed in the output's type (Dst::T), the cells added in
// a fixed order. Redo: the values shrunk by 2^-32 and the mean grown back
// (see shrink): the float sum of values near float's maximum overflowed.
template <bool Redo, class Topo, class Src, typename Out>
__device__ __forceinline__ Tuple<Out, Src::C> cell_mean(const Topo& topo, typename Topo::Index p,
                                                         const Src& src) {
  typedef typename Topo::Index I;
  constexpr int C = Src::C;
  Tuple<Out, C> sum;
#pragma unroll
  for (int c = 0; c < C; ++c) sum.v[c] = Out(0);
  int count = 0;
  topo.for_each_cell_of_point(p, [&](I cell) {
    ++count;
    add_shrunk<Redo>(src, cell, sum.v);
  });
  scale_shrunk<Redo>(sum.v, count > 0 ? Out(1) / Out(count) : Out(0));
  return sum;
}

// Cold; inlined, as a call in the march's loop measured slower.
template <class Topo, class Src, class Dst>
__device__ __forceinline__ void cell_mean_redo(Topo topo, typename Topo::Index p, Src src, Dst dst) {
  dst.put(p, cell_mean<true, Topo, Src, typename Dst::T>(topo, p, src).v);
}

template <class Topo, class Src, class Dst>
__device__ __forceinline__ void cell_to_point(const Topo& topo, typename Topo::Index p,
                                              const Src& src, const Dst& dst) {
  static_assert(Dst::C == Src::C, "cell_to_point keeps the components");
  const auto mean = cell_mean<false, Topo, Src, typename Dst::T>(topo, p, src);
  if (no_redo(mean.v)) dst.put(p, mean.v);
  else cell_mean_redo(topo, p, src, dst);
}

// Mean of a and b, or a alone where only one of the two exists.
template <typename R>
__device__ __forceinline__ R mean_of(bool single, R a, R b) {
  return single ? a : R(0.5) * (a + b);
}

// x-y means around the V points x0.. of row j in cell plane kc: columns x0-1
// .. x0+V-1 (clamped), each the mean of cell rows j0 and j1, then the mean of
// the two columns beside each point (one at the x borders).
template <int V, class Src, typename R, typename I>
__device__ __forceinline__ void xy_means(const Src& src, I row0, I row1, bool single_row, I x0,
                                         I nx, int lane, R (&w)[V][Src::C]) {
  constexpr int C = Src::C;
  const I last = nx - 2;  // last cell column
  R col[V][C], left[C];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const I x = x0 + v < last ? x0 + v : last;
    typename Src::T a[C], b[C];
    src.one(row0 + x, a);
    src.one(row1 + x, b);
#pragma unroll
    for (int c = 0; c < C; ++c) col[v][c] = mean_of(single_row, R(a[c]), R(b[c]));
  }
  shuffle_up<C>(col[V - 1], left);
  if (lane == 0 && x0 > 0) {
    typename Src::T a[C], b[C];
    src.one(row0 + x0 - 1, a);
    src.one(row1 + x0 - 1, b);
#pragma unroll
    for (int c = 0; c < C; ++c) left[c] = mean_of(single_row, R(a[c]), R(b[c]));
  }
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const I i = x0 + v;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const R lo = v > 0 ? col[v - 1][c] : left[c];
      w[v][c] = i == 0 ? col[v][c] : mean_of(i >= nx - 1, lo, col[v][c]);
    }
  }
}

// Marching cell-to-point on a 3-D structured grid: a thread owns V points of
// one row and walks zc point planes, keeping the x-y means of the cell plane
// below.
template <int V, int W, class G, class Src, class Dst>
__device__ __forceinline__ void cell_to_point_march(const G& topo, const Src& src, const Dst& dst,
                                                    int zc) {
  typedef typename G::Index I;
  typedef typename Dst::T R;
  constexpr int C = Src::C;
  static_assert(Dst::C == C, "cell_to_point keeps the components");
  const I nx = topo.n[0], ny = topo.n[1], nz = topo.n[2];
  const I cx = nx - 1, cy = ny - 1, cxy = (nx - 1) * (ny - 1), plane = nx * ny;
  const Tile<V, I> t((nx + V - 1) / V, nz, zc);
  if (t.j >= ny) return;
  const I j0 = t.j > 0 ? t.j - 1 : 0, j1 = t.j < cy ? t.j : cy - 1;
  const bool single_row = t.j == 0 || t.j == ny - 1;
  R below[V][C], above[V][C];
  const I kb = t.k0 > 0 ? t.k0 - 1 : 0;
  xy_means<V>(src, kb * cxy + j0 * cx, kb * cxy + j1 * cx, single_row, t.x0, nx, t.lane, below);
  for (I k = t.k0; k < t.k1; ++k) {
    const I kc = k < nz - 1 ? k : nz - 2;
    xy_means<V>(src, kc * cxy + j0 * cx, kc * cxy + j1 * cx, single_row, t.x0, nx, t.lane, above);
    const I first_point = k * plane + t.j * nx;
    store_means<V, W>(dst, t, first_point, nx,
                      [&](int v, R (&avg)[C]) {
#pragma unroll
                        for (int c = 0; c < C; ++c)
                          avg[c] = k == 0 ? above[v][c]
                                          : mean_of(k == nz - 1, below[v][c], above[v][c]);
                      },
                      [&](I p) { cell_mean_redo(topo, p, src, dst); });
#pragma unroll
    for (int v = 0; v < V; ++v) {
#pragma unroll
      for (int c = 0; c < C; ++c) below[v][c] = above[v][c];
    }
  }
}

}  // namespace dax

#endif  // DAXPY_CELL_TO_POINT_CUH
