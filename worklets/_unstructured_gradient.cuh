// Point and cell gradients on unstructured grids, one shape at a time: cell
// gradients at each cell's centre, point gradients as the mean over a
// point's cells of each cell's gradient at that corner (_shape_functions.cuh).
#ifndef DAXPY_UNSTRUCTURED_GRADIENT_CUH
#define DAXPY_UNSTRUCTURED_GRADIENT_CUH

#include "_gradient_common.cuh"
#include "_shape_functions.cuh"

namespace dax {

template <class S, bool Redo, typename R, class Src, typename I>
__device__ __forceinline__ void gather_corners(const I (&ids)[S::n_corners], const Src& src,
                                               R (&f)[S::n_corners][Src::C], R by) {
#pragma unroll
  for (int k = 0; k < S::n_corners; ++k) gather<R, Redo>(src, ids[k], f[k], by);
}

// Cell gradient of a cell of one shape, at its parametric centre (G: a
// CellBlock); its redo is inlined.
struct ShapeCell : AtCell {
  template <bool Redo, class G, typename I, class Src>
  __device__ static __forceinline__ Tuple<V3<typename G::Coord>, Src::C> sum(
      const G& topo, I item, const Src& src, typename G::Coord by, bool& ok) {
    typedef typename G::Shape S;
    typedef typename G::Coord R;
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
  static constexpr bool cold = false;
};

template <class S, typename I, typename R, bool Sole, class Src, class Dst>
__device__ __forceinline__ void cell_gradient(const CellBlock<S, I, R, Sole>& topo, I item,
                                              const Src& src, const Dst& dst) {
  gradient_at<ShapeCell>(topo, item, src, dst);
}

template <class S> struct IsHex { static constexpr bool value = false; };
template <> struct IsHex<Hex> { static constexpr bool value = true; };

// A hexahedron's derivative at its corner `corner` (point p, at X[0] and f[0]
// here, the corner's three neighbours along r, s and t after it), where every
// coordinate and all eight corner values are finite. There the interpolation
// derivatives are -1, +1 and zeros, so each of shape_metric's sums and of
// add_shape_gradient's is one rounded difference of two corners: the same bits
// from 4 of the 8 corners' points and none of the derivative arithmetic. Those
// sums start at +0, so a zero difference is +0 there, never -0 ((-0) - (+0)):
// adding +0 keeps that sign, which shows where an underflowed sum is -0.
template <typename R>
__device__ __forceinline__ R rise(bool up, R own, R other) {
  return (up ? own - other : other - own) + R(0);
}

template <typename R, int C>
__device__ __forceinline__ bool hex_corner_term(int corner, const V3<R> (&X)[4],
                                                const R (&f)[4][C], V3<R> (&g)[C]) {
  const bool up[3] = {((corner ^ (corner >> 1)) & 1) != 0, ((corner >> 1) & 1) != 0,
                      ((corner >> 2) & 1) != 0};
  V3<R> J[3];
#pragma unroll
  for (int d = 0; d < 3; ++d)
    J[d] = {rise(up[d], X[0].x, X[d + 1].x), rise(up[d], X[0].y, X[d + 1].y),
            rise(up[d], X[0].z, X[d + 1].z)};
  V3<R> m[3];
  const bool ok = inverse_first_rows<3, false>(J, m);
#pragma unroll
  for (int d = 0; d < 3; ++d) {
#pragma unroll
    for (int c = 0; c < C; ++c) g[c] = g[c] + rise(up[d], f[0][c], f[d + 1][c]) * m[d];
  }
  return ok;
}

// The point and value of corner `corner`'s three neighbours along r, s and t in
// VTK's order (corner ^ 1, ^ 3, ^ 4) of hexahedron `cell`, after point p's own in
// X[0] and f[0]. Their ids load again (L1 hits) rather than being picked from
// registers by a runtime index (chains of selects, slower: benchmarks/NOTES.md).
template <typename I, typename R, bool First, bool Last, class Src>
__device__ __forceinline__ void hex_neighbours(const ShapeLinks<Hex, I, R, First, Last>& topo,
                                               I cell, int corner, const Src& src,
                                               V3<R> (&X)[4], R (&f)[4][Src::C]) {
  const int flips[3] = {1, 3, 4};
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    const I q = load(topo.corners + cell * I(8) + (corner ^ flips[d]));
    X[d + 1] = topo.point_coords(q);
    gather<R>(src, q, f[d + 1]);
  }
}

// Point gradient: the sum over the cells of this shape using point p of each
// cell's derivative there. Point-centric over the links (no atomics, fixed
// order).
template <bool Redo, class S, typename I, typename R, bool First, bool Last, class Src>
__device__ __forceinline__ Tuple<V3<R>, Src::C> shape_point_sum(
    const ShapeLinks<S, I, R, First, Last>& topo, I p, const Src& src, R by, bool& ok) {
  constexpr int K = S::n_corners, C = Src::C;
  constexpr bool by_corner = IsHex<S>::value && !Redo;
  Tuple<V3<R>, C> g;
  zero(g.v);
  ok = true;
  V3<R> own_point;
  R own[C];
  if constexpr (by_corner) {
    own_point = topo.point_coords(p);
    gather<R>(src, p, own);
  }
  const I end = load(topo.offsets + p + 1);
  for (I l = load(topo.offsets + p); l < end; ++l) {
    const I slot = load(topo.slots + l);
    const I cell = slot / K;
    const int corner = int(slot - cell * K);
    I ids[K];
    R f[K][C];
    // The gathers bound this kernel (L1 wavefronts, benchmarks/NOTES.md): the
    // cell's ids come as vector words, each corner's point as one row.
    load_cached<K>(topo.corners + cell * K, ids);
    gather_corners<S, Redo>(ids, src, f, by);
    if constexpr (by_corner) {
      // The NaN rule reads all eight values; the term itself only four corners.
      bool finite_values = true;
#pragma unroll
      for (int k = 0; k < K; ++k) finite_values = finite_values && all_finite(f[k]);
      if (topo.finite_points && finite_values) {
        V3<R> Xc[4];
        R fc[4][C];
        Xc[0] = own_point;
#pragma unroll
        for (int c = 0; c < C; ++c) fc[0][c] = own[c];
        hex_neighbours(topo, cell, corner, src, Xc, fc);
        ok = hex_corner_term<R, C>(corner, Xc, fc, g.v) && ok;
        continue;
      }
    }
    V3<R> X[K];
#pragma unroll
    for (int k = 0; k < K; ++k) X[k] = topo.point_coords(ids[k]);
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

// The mean over the point's cells: each shape adds its sum g times scale
// (1 / count), grown by `grow` after a redo, to the partial mean in the
// output, so only a single-shape grid (First and Last) may map its output on
// store. Scaling before adding keeps every partial result within the largest
// cell gradient's magnitude: an unscaled partial sum of float values near
// float's maximum could overflow where the mean does not.
template <bool First, bool Last, int C, typename I, typename R, class Dst>
__device__ __forceinline__ void store_point_gradient(V3<R> (&g)[C], I p, R scale, R grow,
                                                     const Dst& dst) {
#pragma unroll
  for (int c = 0; c < C; ++c) g[c] = grow * (scale * g[c]);
  if constexpr (First && Last) {
    store_gradient<C>(g, p, dst);
  } else {
    typedef typename Dst::T Out;
    Out* row = dst.data() + p * I(3 * C);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      V3<R> total = g[c];
      if constexpr (!First) total = total + V3<R>{R(row[3 * c]), R(row[3 * c + 1]), R(row[3 * c + 2])};
      row[3 * c] = Out(total.x);
      row[3 * c + 1] = Out(total.y);
      row[3 * c + 2] = Out(total.z);
    }
  }
}

template <class S, typename I, typename R, bool First, bool Last, class Src, class Dst>
__device__ __forceinline__ void shape_point_redo(const ShapeLinks<S, I, R, First, Last>& topo, I p,
                                                 const Src& src, const Dst& dst, R scale) {
  R by;
  auto g = two_tries([&](R b) { bool ok; return shape_point_sum<true>(topo, p, src, b, ok); }, by);
  store_point_gradient<First, Last, Src::C>(g.v, p, scale, R(1) / by, dst);
}

template <class S, typename I, typename R, bool First, bool Last, class Src, class Dst>
__device__ __forceinline__ void point_gradient(const ShapeLinks<S, I, R, First, Last>& topo, I p,
                                               const Src& src, const Dst& dst) {
  static_assert(Dst::C == 3 * Src::C, "a gradient has three values per input component");
  const I count = load(topo.counts + p);
  const R scale = R(1) / R(count > 0 ? count : 1);
  bool ok;
  auto g = shape_point_sum<false>(topo, p, src, R(1), ok);
  if (ok) store_point_gradient<First, Last, Src::C>(g.v, p, scale, R(1), dst);
  else shape_point_redo(topo, p, src, dst, scale);
}

}  // namespace dax

#endif  // DAXPY_UNSTRUCTURED_GRADIENT_CUH
