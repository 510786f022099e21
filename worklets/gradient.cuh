// Point and cell gradients of a point field, VTK's layout (n, 3C):
// [dc0/dx, dc0/dy, dc0/dz, dc1/dx, ...].
//
// Every variant ends the same way: derivatives along the parametric (or
// index) axes df_d, and metric rows m[d] from the topology, give
// grad f = sum_d df_d m[d]. Loops over corners, axes and components have
// compile-time trip counts; the work item's base index is computed once.
//
// Numerics: every corner is weighted, zero weights too, so a NaN or Inf
// corner value reaches every derivative of its cell, as in VTK. VTK
// differentiates in double; here the coordinates' type R is used, with the
// float cases that need more range redone (_wide.cuh): Jacobians inverted
// with rows scaled, and a non-finite gradient redone with the values shrunk.
#ifndef DAXPY_GRADIENT_CUH
#define DAXPY_GRADIENT_CUH

namespace dax {

// ------------------------------------------------- interpolation derivatives
// dN[d][k]: derivative along parametric axis d of corner k's interpolation
// function at (r, s, t); corner(k) is the corner's parametric point (VTK's
// orders; a pyramid's apex uses the limit along its axis, as vtkPyramid).
template <class S> struct Interp;

template <> struct Interp<Vertex> {
  template <typename R> __device__ static void derivs(R, R, R, R (&)[1][1]) {}
  template <typename R> __device__ static void corner(int, R& r, R& s, R& t) { r = s = t = R(0); }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = t = R(0); }
};
template <> struct Interp<Line> {
  template <typename R> __device__ static void derivs(R, R, R, R (&dN)[1][2]) { dN[0][0] = R(-1); dN[0][1] = R(1); }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) { r = R(k); s = t = R(0); }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = R(0.5); s = t = R(0); }
};
template <> struct Interp<Tri> {
  template <typename R> __device__ static void derivs(R, R, R, R (&dN)[2][3]) {
    dN[0][0] = R(-1); dN[0][1] = R(1); dN[0][2] = R(0);
    dN[1][0] = R(-1); dN[1][1] = R(0); dN[1][2] = R(1);
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) { r = R(k == 1); s = R(k == 2); t = R(0); }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = R(1.0 / 3.0); t = R(0); }
};
template <> struct Interp<Quad> {
  template <typename R> __device__ static void derivs(R r, R s, R, R (&dN)[2][4]) {
    dN[0][0] = -(R(1) - s); dN[0][1] = R(1) - s; dN[0][2] = s; dN[0][3] = -s;
    dN[1][0] = -(R(1) - r); dN[1][1] = -r; dN[1][2] = r; dN[1][3] = R(1) - r;
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) { r = R((k ^ (k >> 1)) & 1); s = R((k >> 1) & 1); t = R(0); }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = R(0.5); t = R(0); }
};
template <> struct Interp<Tet> {
  template <typename R> __device__ static void derivs(R, R, R, R (&dN)[3][4]) {
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      dN[d][0] = R(-1);
#pragma unroll
      for (int k = 1; k < 4; ++k) dN[d][k] = R(k == d + 1);
    }
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) { r = R(k == 1); s = R(k == 2); t = R(k == 3); }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = t = R(0.25); }
};
template <> struct Interp<Hex> {
  template <typename R> __device__ static void derivs(R r, R s, R t, R (&dN)[3][8]) {
    const R rm = R(1) - r, sm = R(1) - s, tm = R(1) - t;
    const R d0[8] = {-sm * tm, sm * tm, s * tm, -s * tm, -sm * t, sm * t, s * t, -s * t};
    const R d1[8] = {-rm * tm, -r * tm, r * tm, rm * tm, -rm * t, -r * t, r * t, rm * t};
    const R d2[8] = {-rm * sm, -r * sm, -r * s, -rm * s, rm * sm, r * sm, r * s, rm * s};
#pragma unroll
    for (int k = 0; k < 8; ++k) { dN[0][k] = d0[k]; dN[1][k] = d1[k]; dN[2][k] = d2[k]; }
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) {
    r = R((k ^ (k >> 1)) & 1); s = R((k >> 1) & 1); t = R((k >> 2) & 1);
  }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = t = R(0.5); }
};
template <> struct Interp<Wedge> {
  template <typename R> __device__ static void derivs(R r, R s, R t, R (&dN)[3][6]) {
    const R u = R(1) - r - s, tm = R(1) - t;
    const R d0[6] = {-tm, tm, R(0), -t, t, R(0)};
    const R d1[6] = {-tm, R(0), tm, -t, R(0), t};
    const R d2[6] = {-u, -r, -s, u, r, s};
#pragma unroll
    for (int k = 0; k < 6; ++k) { dN[0][k] = d0[k]; dN[1][k] = d1[k]; dN[2][k] = d2[k]; }
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) {
    r = R(k % 3 == 1); s = R(k % 3 == 2); t = R(k >= 3);
  }
  // VTK writes the wedge centre with six digits; kept to match it.
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = R(0.333333); t = R(0.5); }
};
template <> struct Interp<Pyramid> {
  template <typename R> __device__ static void derivs(R r, R s, R t, R (&dN)[3][5]) {
    const R rm = R(1) - r, sm = R(1) - s, tm = R(1) - t;
    const R d0[5] = {-sm * tm, sm * tm, s * tm, -s * tm, R(0)};
    const R d1[5] = {-rm * tm, -r * tm, r * tm, rm * tm, R(0)};
    const R d2[5] = {-rm * sm, -r * sm, -r * s, -rm * s, R(1)};
#pragma unroll
    for (int k = 0; k < 5; ++k) { dN[0][k] = d0[k]; dN[1][k] = d1[k]; dN[2][k] = d2[k]; }
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) {
    const bool apex = k == 4;
    r = apex ? R(0.5) : R((k ^ (k >> 1)) & 1);
    s = apex ? R(0.5) : R((k >> 1) & 1);
    t = R(0);
  }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = R(0.4); t = R(0.2); }
};

#define DAX_DIM(S) [S::dim > 0 ? S::dim : 1]

// Metric rows of a cell of shape S from its corner coordinates, as VTK's
// vtkCell::Derivatives: 3-D cells invert the Jacobian, 2-D cells add the
// normal through their first three corners, lines divide per coordinate.
// False where float could not invert the Jacobian (Scaled: see inverse_rows).
template <class S, bool Scaled, typename R>
__device__ __forceinline__ bool shape_metric(const R (&dN) DAX_DIM(S)[S::n_corners],
                                             const V3<R> (&X)[S::n_corners],
                                             V3<R> (&m) DAX_DIM(S)) {
  bool ok = true;
  if constexpr (S::dim > 0) {
    V3<R> J[3];
#pragma unroll
    for (int d = 0; d < S::dim; ++d) {
      J[d] = V3<R>{R(0), R(0), R(0)};
#pragma unroll
      for (int k = 0; k < S::n_corners; ++k) J[d] = J[d] + dN[d][k] * X[k];
    }
    if constexpr (S::dim == 1) {
      m[0] = reciprocal_row(J[0]);
    } else {
      if constexpr (S::dim == 2) J[2] = cell_normal<Scaled>(X[1] - X[0], X[2] - X[0]);
      V3<R> all[3];
      ok = inverse_rows<Scaled>(J, all);
#pragma unroll
      for (int d = 0; d < S::dim; ++d) m[d] = all[d];
    }
  }
  return ok;
}

// grad[c] += sum_d (sum_k dN[d][k] f[k][c]) m[d] over a cell's corners.
template <class S, int C, typename R>
__device__ __forceinline__ void add_shape_gradient(const R (&dN) DAX_DIM(S)[S::n_corners],
                                                   const R (&f)[S::n_corners][C],
                                                   const V3<R> (&m) DAX_DIM(S), V3<R> (&g)[C]) {
#pragma unroll
  for (int d = 0; d < S::dim; ++d) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      R df = R(0);
#pragma unroll
      for (int k = 0; k < S::n_corners; ++k) df += dN[d][k] * f[k][c];
      g[c] = g[c] + df * m[d];
    }
  }
}

// VTK's layout: [dc0/dx, dc0/dy, dc0/dz, dc1/dx, ...] in the sink's type.
template <int C, typename R, class Dst>
__device__ __forceinline__ void gradient_tuple(const V3<R> (&g)[C], typename Dst::T (&o)[3 * C]) {
  typedef typename Dst::T Out;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    o[3 * c] = Out(g[c].x);
    o[3 * c + 1] = Out(g[c].y);
    o[3 * c + 2] = Out(g[c].z);
  }
}

template <int C, typename R, typename I, class Dst>
__device__ __forceinline__ void store_gradient(const V3<R> (&g)[C], I id, const Dst& dst) {
  static_assert(Dst::C == 3 * C, "a gradient has three values per input component");
  typename Dst::T o[3 * C];
  gradient_tuple<C, R, Dst>(g, o);
  dst.put(id, o);
}

template <int C, typename R>
__device__ __forceinline__ void zero(V3<R> (&g)[C]) {
#pragma unroll
  for (int c = 0; c < C; ++c) g[c] = V3<R>{R(0), R(0), R(0)};
}

// Tuple p of a source, converted to R, times `by` in a redo (see shrink).
template <typename R, bool Redo = false, class Src, typename I>
__device__ __forceinline__ void gather(const Src& src, I p, R (&f)[Src::C], R by = R(1)) {
  typename Src::T x[Src::C];
  src.one(p, x);
#pragma unroll
  for (int c = 0; c < Src::C; ++c) f[c] = R(x[c]);
  shrink<Redo>(f, by);
}

// ------------------------------------------------------------ the rare case
// A redo (cold, not inlined) computes with Scaled metrics and the values as
// they are, then, if the gradient is still not finite (a float sum of values
// near the maximum overflowed), with the values shrunk; `by` says which, and
// the caller grows the result back by 1 / by (exact). One copy of the sum.
template <typename R, class Sum>
__device__ __forceinline__ auto two_tries(Sum&& sum, R& by) -> decltype(sum(by)) {
  decltype(sum(by)) g;
#pragma unroll 1
  for (int attempt = 0; attempt < 2; ++attempt) {
    by = attempt == 0 ? R(1) : R(kShrink);
    g = sum(by);
    if (no_redo(g.v)) break;
  }
  return g;
}

template <int C, typename R>
__device__ __forceinline__ void grow(V3<R> (&g)[C], R by) {
#pragma unroll
  for (int c = 0; c < C; ++c) g[c] = (R(1) / by) * g[c];
}

// ------------------------------------------------------- structured grids
// Point gradient: central differences inside, one-sided at the border. A NaN
// or Inf difference multiplies the zeros of m as well, giving NaN there, as
// VTK's product with the inverse Jacobian does. ok: no redo needed.
template <bool Redo, class G, typename I, class Src>
__device__ __forceinline__ Tuple<V3<typename G::Coord>, Src::C> structured_point_sum(
    const G& topo, I p, const Src& src, typename G::Coord by, bool& ok) {
  constexpr int D = G::dim, C = Src::C;
  typedef typename G::Coord R;
  I ijk DAX_AXES(D), lo DAX_AXES(D), hi DAX_AXES(D), plo DAX_AXES(D), phi DAX_AXES(D);
  topo.split(p, topo.n, ijk);
#pragma unroll
  for (int d = 0; d < D; ++d) {
    const I stride = topo.stride(d);
    lo[d] = ijk[d] > 0 ? ijk[d] - 1 : ijk[d];
    hi[d] = ijk[d] < topo.n[d] - 1 ? ijk[d] + 1 : ijk[d];
    plo[d] = p - (ijk[d] - lo[d]) * stride;
    phi[d] = p + (hi[d] - ijk[d]) * stride;
  }
  V3<R> m DAX_AXES(D);
  ok = topo.template point_metric<Redo>(lo, hi, plo, phi, m);
  Tuple<V3<R>, C> g;
  zero(g.v);
#pragma unroll
  for (int d = 0; d < D; ++d) {
    R a[C], b[C];
    gather<R, Redo>(src, plo[d], a, by);
    gather<R, Redo>(src, phi[d], b, by);
#pragma unroll
    for (int c = 0; c < C; ++c) g.v[c] = g.v[c] + (b[c] - a[c]) * m[d];
  }
  ok = ok && no_redo(g.v);
  return g;
}

template <class G, typename I, class Src, class Dst>
__device__ __noinline__ void structured_point_redo(G topo, I p, Src src, Dst dst) {
  typedef typename G::Coord R;
  R by;
  auto g = two_tries([&](R b) { bool ok; return structured_point_sum<true>(topo, p, src, b, ok); },
                     by);
  grow(g.v, by);
  store_gradient<Src::C>(g.v, p, dst);
}

template <class G, typename I, class Src, class Dst>
__device__ __forceinline__ void structured_point_gradient(const G& topo, I p, const Src& src,
                                                          const Dst& dst) {
  bool ok;
  const auto g = structured_point_sum<false>(topo, p, src, typename G::Coord(1), ok);
  if (ok) store_gradient<Src::C>(g.v, p, dst);
  else structured_point_redo(topo, p, src, dst);
}

// s m; on an axis-aligned grid (Axis) the zero components of m stay zero, a
// NaN or Inf s included: VTK's pixel and line derivatives have no term there.
template <bool Axis, typename R>
__device__ __forceinline__ V3<R> along_axis(R s, V3<R> m) {
  if constexpr (Axis) {
    return {m.x != R(0) ? s * m.x : R(0), m.y != R(0) ? s * m.y : R(0), m.z != R(0) ? s * m.z : R(0)};
  } else {
    return s * m;
  }
}

// Cell gradient at the centre: the mean difference over the edges along each axis.
template <bool Redo, class G, typename I, class Src>
__device__ __forceinline__ Tuple<V3<typename G::Coord>, Src::C> structured_cell_sum(
    const G& topo, I item, const Src& src, typename G::Coord by, bool& ok) {
  constexpr int D = G::dim, C = Src::C;
  constexpr int K = 1 << D;
  typedef typename G::Coord R;
  const auto cell = topo.cell(item);
  R f[K][C];
#pragma unroll
  for (int k = 0; k < K; ++k) gather<R, Redo>(src, cell.point(k), f[k], by);
  V3<R> m DAX_AXES(D);
  ok = topo.template cell_metric<Redo>(cell, m);
  Tuple<V3<R>, C> g;
  zero(g.v);
  const R scale = R(1) / R(K > 1 ? K / 2 : 1);
#pragma unroll
  for (int d = 0; d < D; ++d) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      R df = R(0);
#pragma unroll
      for (int k = 0; k < K; ++k) df += ((k >> d) & 1) ? f[k][c] : -f[k][c];
      g.v[c] = g.v[c] + along_axis<!G::explicit_points>(df * scale, m[d]);
    }
  }
  ok = ok && no_redo(g.v);
  return g;
}

template <class G, typename I, class Src, class Dst>
__device__ __noinline__ void structured_cell_redo(G topo, I item, Src src, Dst dst) {
  typedef typename G::Coord R;
  R by;
  auto g = two_tries([&](R b) { bool ok; return structured_cell_sum<true>(topo, item, src, b, ok); },
                     by);
  grow(g.v, by);
  store_gradient<Src::C>(g.v, topo.cell(item).id, dst);
}

template <class G, typename I, class Src, class Dst>
__device__ __forceinline__ void structured_cell_gradient(const G& topo, I item, const Src& src,
                                                         const Dst& dst) {
  bool ok;
  const auto g = structured_cell_sum<false>(topo, item, src, typename G::Coord(1), ok);
  if (ok) store_gradient<Src::C>(g.v, topo.cell(item).id, dst);
  else structured_cell_redo(topo, item, src, dst);
}

// Marching point gradient (3-D structured, _march.cuh). A Sample is one
// point's values (and coordinates, on grids with explicit points).
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

// Cold: every point of a thread's march redone, after its last store (one
// of them came out non-finite or with a Jacobian float could not invert);
// not inlined, so the march keeps its registers and its loop.
template <int V, class G, class Src, class Dst, typename I>
__device__ __noinline__ void march_gradient_redo(G topo, Src src, Dst dst, I first, I k0, I k1) {
  const I plane = topo.n[0] * topo.n[1];
  for (I k = k0; k < k1; ++k)
    for (int v = 0; v < V; ++v) structured_point_redo(topo, k * plane + first + v, src, dst);
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

// ----------------------------------------------------- unstructured grids
template <class S, bool Redo, typename R, class Src, typename I>
__device__ __forceinline__ void gather_corners(const I (&ids)[S::n_corners], const Src& src,
                                               R (&f)[S::n_corners][Src::C], R by) {
#pragma unroll
  for (int k = 0; k < S::n_corners; ++k) gather<R, Redo>(src, ids[k], f[k], by);
}

// Cell gradient of a cell of one shape, at its parametric centre.
template <bool Redo, class S, typename I, typename R, bool Sole, class Src>
__device__ __forceinline__ Tuple<V3<R>, Src::C> shape_cell_sum(const CellBlock<S, I, R, Sole>& topo,
                                                               I item, const Src& src, R by,
                                                               bool& ok) {
  constexpr int K = S::n_corners, C = Src::C;
  const auto cell = topo.cell(item);
  Tuple<V3<R>, C> g;
  zero(g.v);
  ok = true;
  if constexpr (S::dim > 0) {
    R r, s, t, dN DAX_DIM(S)[K];
    Interp<S>::centre(r, s, t);
    Interp<S>::derivs(r, s, t, dN);
    V3<R> X[K];
    R f[K][C];
#pragma unroll
    for (int k = 0; k < K; ++k) X[k] = topo.point_coords(cell.ids[k]);
    gather_corners<S, Redo>(cell.ids, src, f, by);
    V3<R> m DAX_DIM(S);
    ok = shape_metric<S, Redo>(dN, X, m);
    add_shape_gradient<S, C>(dN, f, m, g.v);
  }
  ok = ok && no_redo(g.v);
  return g;
}

template <class S, typename I, typename R, bool Sole, class Src, class Dst>
__device__ __forceinline__ void shape_cell_redo(const CellBlock<S, I, R, Sole>& topo, I item,
                                                const Src& src, const Dst& dst) {
  R by;
  auto g = two_tries([&](R b) { bool ok; return shape_cell_sum<true>(topo, item, src, b, ok); }, by);
  grow(g.v, by);
  store_gradient<Src::C>(g.v, topo.cell(item).id, dst);
}

template <class S, typename I, typename R, bool Sole, class Src, class Dst>
__device__ __forceinline__ void cell_gradient(const CellBlock<S, I, R, Sole>& topo, I item,
                                              const Src& src, const Dst& dst) {
  bool ok;
  const auto g = shape_cell_sum<false>(topo, item, src, R(1), ok);
  if (ok) store_gradient<Src::C>(g.v, topo.cell(item).id, dst);
  else shape_cell_redo(topo, item, src, dst);
}

// Point gradient: the sum over the cells of this shape using point p of each
// cell's derivative there. Point-centric over the links (no atomics, fixed
// order).
template <bool Redo, class S, typename I, typename R, bool First, bool Last, class Src>
__device__ __forceinline__ Tuple<V3<R>, Src::C> shape_point_sum(
    const ShapeLinks<S, I, R, First, Last>& topo, I p, const Src& src, R by, bool& ok) {
  constexpr int K = S::n_corners, C = Src::C;
  Tuple<V3<R>, C> g;
  zero(g.v);
  ok = true;
  const I end = load(topo.offsets + p + 1);
  for (I l = load(topo.offsets + p); l < end; ++l) {
    const I slot = load(topo.slots + l);
    const I cell = slot / K;
    const int corner = int(slot - cell * K);
    I ids[K];
    V3<R> X[K];
    R f[K][C];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      ids[k] = load(topo.corners + cell * K + k);
      X[k] = topo.point_coords(ids[k]);
    }
    gather_corners<S, Redo>(ids, src, f, by);
    R r, s, t, dN DAX_DIM(S)[K];
    Interp<S>::corner(corner, r, s, t);
    Interp<S>::derivs(r, s, t, dN);
    V3<R> m DAX_DIM(S);
    ok = shape_metric<S, Redo>(dN, X, m) && ok;
    add_shape_gradient<S, C>(dN, f, m, g.v);
  }
  ok = ok && no_redo(g.v);
  return g;
}

// The mean over the point's cells: the sum g times scale (1 / count), grown
// by `grow` after a redo. Shapes after the first add to the partial sums in
// the output, so only a single-shape grid (First and Last) may map its
// output on store.
template <bool First, bool Last, int C, typename I, typename R, class Dst>
__device__ __forceinline__ void store_point_gradient(V3<R> (&g)[C], I p, R scale, R grow,
                                                     const Dst& dst) {
  if constexpr (First && Last) {
#pragma unroll
    for (int c = 0; c < C; ++c) g[c] = grow * (scale * g[c]);
    store_gradient<C>(g, p, dst);
  } else {
    typedef typename Dst::T Out;
    Out* row = dst.data() + p * I(3 * C);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      V3<R> total = grow * g[c];
      if constexpr (!First) total = total + V3<R>{R(row[3 * c]), R(row[3 * c + 1]), R(row[3 * c + 2])};
      row[3 * c] = Out(total.x * scale);
      row[3 * c + 1] = Out(total.y * scale);
      row[3 * c + 2] = Out(total.z * scale);
    }
  }
}

template <class S, typename I, typename R, bool First, bool Last, class Src, class Dst>
__device__ __noinline__ void shape_point_redo(ShapeLinks<S, I, R, First, Last> topo, I p, Src src,
                                              Dst dst, R scale) {
  R by;
  auto g = two_tries([&](R b) { bool ok; return shape_point_sum<true>(topo, p, src, b, ok); }, by);
  store_point_gradient<First, Last, Src::C>(g.v, p, scale, R(1) / by, dst);
}

template <class S, typename I, typename R, bool First, bool Last, class Src, class Dst>
__device__ __forceinline__ void point_gradient(const ShapeLinks<S, I, R, First, Last>& topo, I p,
                                               const Src& src, const Dst& dst) {
  static_assert(Dst::C == 3 * Src::C, "a gradient has three values per input component");
  R scale = R(1);
  if constexpr (Last) {
    const I count = load(topo.counts + p);
    scale = R(1) / R(count > 0 ? count : 1);
  }
  bool ok;
  auto g = shape_point_sum<false>(topo, p, src, R(1), ok);
  if (ok) store_point_gradient<First, Last, Src::C>(g.v, p, scale, R(1), dst);
  else shape_point_redo(topo, p, src, dst, scale);
}

// The structured variants under the worklet names.
#define DAX_STRUCTURED_GRADIENTS(GRID)                                                      \
  template <int D, typename I, typename R, class Src, class Dst>                            \
  __device__ __forceinline__ void point_gradient(const GRID<D, I, R>& topo, I p,            \
                                                 const Src& src, const Dst& dst) {          \
    structured_point_gradient(topo, p, src, dst);                                           \
  }                                                                                         \
  template <int D, typename I, typename R, class Src, class Dst>                            \
  __device__ __forceinline__ void cell_gradient(const GRID<D, I, R>& topo, I item,          \
                                                const Src& src, const Dst& dst) {           \
    structured_cell_gradient(topo, item, src, dst);                                         \
  }
DAX_STRUCTURED_GRADIENTS(UniformGrid)
DAX_STRUCTURED_GRADIENTS(RectilinearGrid)
DAX_STRUCTURED_GRADIENTS(CurvilinearGrid)
#undef DAX_STRUCTURED_GRADIENTS

}  // namespace dax

#endif  // DAXPY_GRADIENT_CUH
