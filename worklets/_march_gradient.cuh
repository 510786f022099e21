// Marching point gradient on 3-D structured grids (_march.cuh): central
// differences as StructuredPoint's, from the planes a thread keeps.
#ifndef DAXPY_MARCH_GRADIENT_CUH
#define DAXPY_MARCH_GRADIENT_CUH

#include "_structured_gradient.cuh"

namespace dax {

// A Sample is one point's values (and coordinates, on grids with explicit
// points).
template <int C, typename R>
struct Sample {
  R f[C];
  V3<R> x;
};

template <bool P, int C, typename R>
__device__ __forceinline__ Sample<C, R> pick(bool first, const Sample<C, R>& a,
                                             const Sample<C, R>& b) {
  Sample<C, R> s;
#pragma unroll
  for (int c = 0; c < C; ++c) s.f[c] = first ? a.f[c] : b.f[c];
  if constexpr (P) s.x = first ? a.x : b.x;
  return s;
}

template <bool P, int C, typename R>
__device__ __forceinline__ void shuffle_sample(const Sample<C, R>& a, Sample<C, R>& b, bool up) {
  if (up) shuffle_up<C>(a.f, b.f); else shuffle_down<C>(a.f, b.f);
  if constexpr (P) {
    R in[3] = {a.x.x, a.x.y, a.x.z}, out[3];
    if (up) shuffle_up<3>(in, out); else shuffle_down<3>(in, out);
    b.x = V3<R>{out[0], out[1], out[2]};
  }
}

// N consecutive points from p0 (a multiple of N).
template <int N, class G, class Src, typename R, typename I>
__device__ __forceinline__ void load_samples(const G& topo, const Src& src, I p0,
                                             Sample<Src::C, R> (&s)[N]) {
  typename Src::T x[N][Src::C];
  src.template row<N>(p0, x);
#pragma unroll
  for (int n = 0; n < N; ++n) {
#pragma unroll
    for (int c = 0; c < Src::C; ++c) s[n].f[c] = R(x[n][c]);
    if constexpr (G::explicit_points) s[n].x = topo.point_coords(p0 + n);
  }
}

// Cold: a thread's march again point by point, after its last store (one of
// its points came out non-finite or with a Jacobian float could not invert).
// Each point takes the fast path first, whose metrics and sums are the
// march's, so only the points that need it are redone: the others keep
// their bits, and a value depends on its own stencil alone. Not inlined, so
// the march keeps its registers and its loop.
template <int V, class G, class Src, class Dst, typename I>
__device__ __noinline__ void march_gradient_redo(G topo, Src src, Dst dst, I first, I k0, I k1) {
  const I plane = topo.n[0] * topo.n[1];
  for (I k = k0; k < k1; ++k)
    for (int v = 0; v < V; ++v) gradient_at<StructuredPoint>(topo, k * plane + first + v, src, dst);
}

template <int V, int W, class G, class Src, class Dst>
__device__ __forceinline__ void point_gradient_march(const G& topo, const Src& src, const Dst& dst,
                                                     int zc) {
  typedef typename G::Index I;
  typedef typename G::Coord R;
  typedef typename Dst::Final F;
  typedef Sample<Src::C, R> S;
  constexpr int C = Src::C, FC = Dst::final_c;
  constexpr bool P = G::explicit_points;
  static_assert(Dst::C == 3 * C, "a gradient has three values per input component");
  __shared__ F stage[kMarchRows][32 * V * FC];
  const I nx = topo.n[0], ny = topo.n[1], nz = topo.n[2], plane = nx * ny;
  const Tile<V, I> t(nx / V, nz, zc);
  if (t.j >= ny) return;
  const I row = t.j * nx + t.x0;
  const I ylo = t.j > 0 ? t.j - 1 : t.j, yhi = t.j < ny - 1 ? t.j + 1 : t.j;
  // Clamped neighbour rows and planes are the point itself: one-sided differences.
  S below[V], cur[V], above[V], ym[V], yp[V];
  load_samples<V>(topo, src, (t.k0 > 0 ? t.k0 - 1 : 0) * plane + row, below);
  load_samples<V>(topo, src, t.k0 * plane + row, cur);
  bool redo = false;
  for (I k = t.k0; k < t.k1; ++k) {
    const I base = k * plane;
    const I zhi = k < nz - 1 ? k + 1 : k;
    load_samples<V>(topo, src, zhi * plane + row, above);
    load_samples<V>(topo, src, base + ylo * nx + t.x0, ym);
    load_samples<V>(topo, src, base + yhi * nx + t.x0, yp);
    // x neighbours of the group: the lanes beside it, or memory at the warp's ends.
    S left[1], right[1];
    shuffle_sample<P>(cur[V - 1], left[0], true);
    shuffle_sample<P>(cur[0], right[0], false);
    if (t.lane == 0 && t.x0 > 0) load_samples<1>(topo, src, base + row - 1, left);
    if (t.lane == 31 && t.x0 + V < nx) load_samples<1>(topo, src, base + row + V, right);
    F o[V * FC];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const I i = t.x0 + v;
      const I lo[3] = {i > 0 ? i - 1 : i, ylo, k > 0 ? k - 1 : k};
      const I hi[3] = {i < nx - 1 ? i + 1 : i, yhi, zhi};
      const S a[3] = {pick<P>(i > 0, v > 0 ? cur[v > 0 ? v - 1 : 0] : left[0], cur[v]), ym[v],
                      below[v]};
      const S b[3] = {pick<P>(i < nx - 1, v < V - 1 ? cur[v < V - 1 ? v + 1 : v] : right[0], cur[v]),
                      yp[v], above[v]};
      V3<R> dX[3], m[3];
#pragma unroll
      for (int d = 0; d < 3; ++d) {
        if constexpr (P) dX[d] = b[d].x - a[d].x;
        else dX[d] = V3<R>{R(0), R(0), R(0)};
      }
      const I at[3] = {i, t.j, k};
      const bool ok = topo.march_metric(at, lo, hi, dX, m);
      V3<R> g[C];
      zero(g);
#pragma unroll
      for (int d = 0; d < 3; ++d) {
#pragma unroll
        for (int c = 0; c < C; ++c) g[c] = g[c] + (b[d].f[c] - a[d].f[c]) * m[d];
      }
      redo = redo || !(ok && no_redo(g));
      typename Dst::T out[3 * C];
      gradient_tuple<C, R, Dst>(g, out);
      F fin[FC];
      dst.apply(base + row + v, out, fin);
#pragma unroll
      for (int c = 0; c < FC; ++c) o[v * FC + c] = fin[c];
    }
    store_staged<V * FC, W>(stage[threadIdx.y], o,
                            dst.data() + (base + t.j * nx + t.first()) * I(FC), FC * t.valid(nx));
#pragma unroll
    for (int v = 0; v < V; ++v) {
      below[v] = cur[v];
      cur[v] = above[v];
    }
  }
  // store_staged ends with __syncwarp: the redo's stores come after the march's.
  if (redo) march_gradient_redo<V>(topo, src, dst, row, t.k0, t.k1);
}

}  // namespace dax

#endif  // DAXPY_MARCH_GRADIENT_CUH
