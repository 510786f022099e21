// Point and cell gradients of a point field, VTK's layout (n, 3C):
// [dc0/dx, dc0/dy, dc0/dz, dc1/dx, ...].
//
// Every variant ends the same way: derivatives along the parametric (or
// index) axes df_d, and metric rows m[d] from the topology, give
// grad f = sum_d df_d m[d]. Loops over corners, axes and components have
// compile-time trip counts; the work item's base index is computed once.
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
template <class S, typename R>
__device__ __forceinline__ void shape_metric(const R (&dN) DAX_DIM(S)[S::n_corners],
                                             const V3<R> (&X)[S::n_corners],
                                             V3<R> (&m) DAX_DIM(S)) {
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
      if constexpr (S::dim == 2) J[2] = cross(X[1] - X[0], X[2] - X[0]);
      V3<R> all[3];
      inverse_rows(J, all);
#pragma unroll
      for (int d = 0; d < S::dim; ++d) m[d] = all[d];
    }
  }
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

template <int C, typename R, typename I, typename Out>
__device__ __forceinline__ void store_gradient(const V3<R> (&g)[C], I id, Out* __restrict__ out) {
  Out* row = out + id * I(3 * C);
#pragma unroll
  for (int c = 0; c < C; ++c) {
    __stcs(row + 3 * c, Out(g[c].x));
    __stcs(row + 3 * c + 1, Out(g[c].y));
    __stcs(row + 3 * c + 2, Out(g[c].z));
  }
}

template <int C, typename R>
__device__ __forceinline__ void zero(V3<R> (&g)[C]) {
#pragma unroll
  for (int c = 0; c < C; ++c) g[c] = V3<R>{R(0), R(0), R(0)};
}

// ------------------------------------------------------- structured grids
// Point gradient: central differences inside, one-sided at the border.
template <int C, class G, typename I, typename In, typename Out>
__device__ __forceinline__ void structured_point_gradient(const G& topo, I p,
                                                          const In* __restrict__ in,
                                                          Out* __restrict__ out) {
  constexpr int D = G::dim;
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
  topo.point_metric(lo, hi, plo, phi, m);
  V3<R> g[C];
  zero(g);
#pragma unroll
  for (int d = 0; d < D; ++d) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const R df = R(load(in + phi[d] * I(C) + c)) - R(load(in + plo[d] * I(C) + c));
      g[c] = g[c] + df * m[d];
    }
  }
  store_gradient<C>(g, p, out);
}

// Cell gradient at the centre: the mean difference over the edges along each axis.
template <int C, class G, typename I, typename In, typename Out>
__device__ __forceinline__ void structured_cell_gradient(const G& topo, I item,
                                                         const In* __restrict__ in,
                                                         Out* __restrict__ out) {
  constexpr int D = G::dim;
  constexpr int K = 1 << D;
  typedef typename G::Coord R;
  const auto cell = topo.cell(item);
  R f[K][C];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const I p = cell.point(k);
#pragma unroll
    for (int c = 0; c < C; ++c) f[k][c] = R(load(in + p * I(C) + c));
  }
  V3<R> m DAX_AXES(D);
  topo.cell_metric(cell, m);
  V3<R> g[C];
  zero(g);
  const R scale = R(1) / R(K > 1 ? K / 2 : 1);
#pragma unroll
  for (int d = 0; d < D; ++d) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      R df = R(0);
#pragma unroll
      for (int k = 0; k < K; ++k) df += ((k >> d) & 1) ? f[k][c] : -f[k][c];
      g[c] = g[c] + (df * scale) * m[d];
    }
  }
  store_gradient<C>(g, cell.id, out);
}

// ----------------------------------------------------- unstructured grids
template <class S, int C, typename R, typename I, typename In>
__device__ __forceinline__ void gather_corners(const I (&ids)[S::n_corners],
                                               const In* __restrict__ in, R (&f)[S::n_corners][C]) {
#pragma unroll
  for (int k = 0; k < S::n_corners; ++k) {
#pragma unroll
    for (int c = 0; c < C; ++c) f[k][c] = R(load(in + ids[k] * I(C) + c));
  }
}

// Cell gradient of a cell of one shape, at its parametric centre.
template <int C, class S, typename I, typename R, typename In, typename Out>
__device__ __forceinline__ void cell_gradient(const CellBlock<S, I, R>& topo, I item,
                                              const In* __restrict__ in, Out* __restrict__ out) {
  constexpr int K = S::n_corners;
  const auto cell = topo.cell(item);
  V3<R> g[C];
  zero(g);
  if constexpr (S::dim > 0) {
    R r, s, t, dN DAX_DIM(S)[K];
    Interp<S>::centre(r, s, t);
    Interp<S>::derivs(r, s, t, dN);
    V3<R> X[K];
    R f[K][C];
#pragma unroll
    for (int k = 0; k < K; ++k) X[k] = topo.point_coords(cell.ids[k]);
    gather_corners<S, C>(cell.ids, in, f);
    V3<R> m DAX_DIM(S);
    shape_metric<S>(dN, X, m);
    add_shape_gradient<S, C>(dN, f, m, g);
  }
  store_gradient<C>(g, cell.id, out);
}

// Point gradient: the mean over the cells using the point of each cell's
// derivative there. Point-centric over the links (no atomics, fixed order).
template <int C, class S, typename I, typename R, bool First, bool Last, typename In, typename Out>
__device__ __forceinline__ void point_gradient(const ShapeLinks<S, I, R, First, Last>& topo, I p,
                                               const In* __restrict__ in, Out* __restrict__ out) {
  constexpr int K = S::n_corners;
  V3<R> g[C];
  zero(g);
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
    gather_corners<S, C>(ids, in, f);
    R r, s, t, dN DAX_DIM(S)[K];
    Interp<S>::corner(corner, r, s, t);
    Interp<S>::derivs(r, s, t, dN);
    V3<R> m DAX_DIM(S);
    shape_metric<S>(dN, X, m);
    add_shape_gradient<S, C>(dN, f, m, g);
  }
  Out* row = out + p * I(3 * C);
  R scale = R(1);
  if constexpr (Last) {
    const I count = load(topo.counts + p);
    scale = R(1) / R(count > 0 ? count : 1);
  }
#pragma unroll
  for (int c = 0; c < C; ++c) {
    V3<R> total = g[c];
    if constexpr (!First) total = total + V3<R>{R(row[3 * c]), R(row[3 * c + 1]), R(row[3 * c + 2])};
    row[3 * c] = Out(total.x * scale);
    row[3 * c + 1] = Out(total.y * scale);
    row[3 * c + 2] = Out(total.z * scale);
  }
}

// The structured variants under the worklet names.
#define DAX_STRUCTURED_GRADIENTS(GRID)                                                      \
  template <int C, int D, typename I, typename R, typename In, typename Out>                \
  __device__ __forceinline__ void point_gradient(const GRID<D, I, R>& topo, I p,            \
                                                 const In* __restrict__ in,                 \
                                                 Out* __restrict__ out) {                   \
    structured_point_gradient<C>(topo, p, in, out);                                         \
  }                                                                                         \
  template <int C, int D, typename I, typename R, typename In, typename Out>                \
  __device__ __forceinline__ void cell_gradient(const GRID<D, I, R>& topo, I item,          \
                                                const In* __restrict__ in,                  \
                                                Out* __restrict__ out) {                    \
    structured_cell_gradient<C>(topo, item, in, out);                                       \
  }
DAX_STRUCTURED_GRADIENTS(UniformGrid)
DAX_STRUCTURED_GRADIENTS(RectilinearGrid)
DAX_STRUCTURED_GRADIENTS(CurvilinearGrid)
#undef DAX_STRUCTURED_GRADIENTS

}  // namespace dax

#endif  // DAXPY_GRADIENT_CUH
