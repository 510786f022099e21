// Point-to-cell average: each cell gets the mean of its corner values.
// One work item per cell; the cell's corner ids are computed (structured) or
// loaded (unstructured) once, then every component is averaged. On 3-D
// structured grids a marching kernel keeps each plane's corner sums in
// registers (_march.cuh), so a point is loaded about once.
#ifndef DAXPY_POINT_TO_CELL_CUH
#define DAXPY_POINT_TO_CELL_CUH

namespace dax {

// The average is computed in the output's type (Dst::T), the corners added
// in corner order. Redo: the values shrunk by 2^-32 and the mean grown back
// (see shrink): the float sum of values near float's maximum overflowed.
template <bool Redo, class Topo, class Src, typename Out>
__device__ __forceinline__ Tuple<Out, Src::C> corner_mean(const Topo& topo,
                                                           typename Topo::Index item,
                                                           const Src& src) {
  constexpr int C = Src::C;
  const auto cell = topo.cell(item);
  Tuple<Out, C> sum;
#pragma unroll
  for (int c = 0; c < C; ++c) sum.v[c] = Out(0);
#pragma unroll
  for (int k = 0; k < Topo::n_corners; ++k) add_shrunk<Redo>(src, cell.point(k), sum.v);
  scale_shrunk<Redo>(sum.v, Out(1) / Out(Topo::n_corners));
  return sum;
}

// Cold, not inlined: the fast path keeps its registers.
template <class Topo, class Src, class Dst>
__device__ __noinline__ void corner_mean_redo(Topo topo, typename Topo::Index item, Src src,
                                              Dst dst) {
  dst.put(topo.cell(item).id, corner_mean<true, Topo, Src, typename Dst::T>(topo, item, src).v);
}

template <class Topo, class Src, class Dst>
__device__ __forceinline__ void point_to_cell(const Topo& topo, typename Topo::Index item,
                                              const Src& src, const Dst& dst) {
  static_assert(Dst::C == Src::C, "point_to_cell keeps the components");
  const auto mean = corner_mean<false, Topo, Src, typename Dst::T>(topo, item, src);
  if (no_redo(mean.v)) dst.put(topo.cell(item).id, mean.v);
  else corner_mean_redo(topo, item, src, dst);
}

// Sum over rows j and j + 1 of the V points of a group and of the point after
// it (from the next lane; lane 31 loads it): s[v] + s[v + 1] is then the
// x-y sum of cell v's four corners in this plane.
template <int V, class Src, typename R, typename I>
__device__ __forceinline__ void plane_pair_sums(const Src& src, I r0, I r1, I x0, I nx, int lane,
                                                R (&s)[V + 1][Src::C]) {
  constexpr int C = Src::C;
  typename Src::T a[V][C], b[V][C];
  src.template row<V>(r0, a);
  src.template row<V>(r1, b);
#pragma unroll
  for (int v = 0; v < V; ++v) {
#pragma unroll
    for (int c = 0; c < C; ++c) s[v][c] = R(a[v][c]) + R(b[v][c]);
  }
  shuffle_down<C>(s[0], s[V]);
  if (lane == 31 && x0 + V < nx) {
    typename Src::T a1[C], b1[C];
    src.one(r0 + V, a1);
    src.one(r1 + V, b1);
#pragma unroll
    for (int c = 0; c < C; ++c) s[V][c] = R(a1[c]) + R(b1[c]);
  }
}

// Marching point-to-cell on a 3-D structured grid: a thread owns V cells of
// one cell row (V divides nx) and walks zc cell planes.
template <int V, int W, class G, class Src, class Dst>
__device__ __forceinline__ void point_to_cell_march(const G& topo, const Src& src, const Dst& dst,
                                                    int zc) {
  typedef typename G::Index I;
  typedef typename Dst::T R;
  constexpr int C = Src::C;
  static_assert(Dst::C == C, "point_to_cell keeps the components");
  const I nx = topo.n[0], ny = topo.n[1], nz = topo.n[2];
  const I cx = nx - 1, cxy = (nx - 1) * (ny - 1), plane = nx * ny;
  const Tile<V, I> t(nx / V, nz - 1, zc);
  if (t.j >= ny - 1) return;
  const I r0 = t.j * nx + t.x0, r1 = r0 + nx;
  R prev[V + 1][C], cur[V + 1][C];
  plane_pair_sums<V>(src, t.k0 * plane + r0, t.k0 * plane + r1, t.x0, nx, t.lane, prev);
  for (I k = t.k0; k < t.k1; ++k) {
    plane_pair_sums<V>(src, (k + 1) * plane + r0, (k + 1) * plane + r1, t.x0, nx, t.lane, cur);
    const I first_cell = k * cxy + t.j * cx;
    store_means<V, W>(dst, t, first_cell, cx,
                      [&](int v, R (&avg)[C]) {
#pragma unroll
                        for (int c = 0; c < C; ++c)
                          avg[c] = ((prev[v][c] + prev[v + 1][c]) + (cur[v][c] + cur[v + 1][c]))
                                   * R(0.125);
                      },
                      [&](I item) { corner_mean_redo(topo, item, src, dst); });
#pragma unroll
    for (int v = 0; v <= V; ++v) {
#pragma unroll
      for (int c = 0; c < C; ++c) prev[v][c] = cur[v][c];
    }
  }
}

}  // namespace dax

#endif  // DAXPY_POINT_TO_CELL_CUH
