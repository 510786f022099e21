// Point and cell gradients on structured grids (uniform, rectilinear,
// curvilinear), one work item per point or cell; 3-D point gradients also
// march (_march_gradient.cuh).
#ifndef DAXPY_STRUCTURED_GRADIENT_CUH
#define DAXPY_STRUCTURED_GRADIENT_CUH

#include "_gradient_common.cuh"

namespace dax {

// Point gradient: central differences inside, one-sided at the border. A NaN
// or Inf difference multiplies the zeros of m as well, giving NaN there, as
// VTK's product with the inverse Jacobian does. ok: no redo needed.
struct StructuredPoint : AtPoint {
  template <bool Redo, class G, typename I, class Src>
  __device__ static __forceinline__ Tuple<V3<typename G::Coord>, Src::C> sum(
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
  static constexpr bool cold = true;
};

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
struct StructuredCell : AtCell {
  template <bool Redo, class G, typename I, class Src>
  __device__ static __forceinline__ Tuple<V3<typename G::Coord>, Src::C> sum(
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
  static constexpr bool cold = true;
};

// The worklets on structured grids; the unstructured overloads
// (_unstructured_gradient.cuh) take their more specialized topologies.
template <class G, typename I, class Src, class Dst>
__device__ __forceinline__ void point_gradient(const G& topo, I p, const Src& src, const Dst& dst) {
  gradient_at<StructuredPoint>(topo, p, src, dst);
}

template <class G, typename I, class Src, class Dst>
__device__ __forceinline__ void cell_gradient(const G& topo, I item, const Src& src, const Dst& dst) {
  gradient_at<StructuredCell>(topo, item, src, dst);
}

}  // namespace dax

#endif  // DAXPY_STRUCTURED_GRADIENT_CUH
