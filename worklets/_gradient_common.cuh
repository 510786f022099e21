// What every gradient does alike: read values, store tuples in VTK's layout,
// and redo the rare case (_wide.cuh).
#ifndef DAXPY_GRADIENT_COMMON_CUH
#define DAXPY_GRADIENT_COMMON_CUH

namespace dax {

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

// Where a work item's gradient goes (Kind::id): tuple p of a point field, or
// the id of the work item's cell.
struct AtPoint {
  template <class G, typename I>
  __device__ static __forceinline__ I id(const G&, I p) { return p; }
};
struct AtCell {
  template <class G, typename I>
  __device__ static __forceinline__ I id(const G& topo, I item) { return topo.cell(item).id; }
};

// A gradient that a work item computes and stores as one tuple, as Kind
// says: Kind::sum<Redo>(topo, item, src, by, ok) is the gradient (ok: no
// redo needed), Kind::id(topo, item) the tuple's id, and Kind::cold whether
// the redo is a call (not inlined: the fast path keeps its registers).
template <class Kind, class G, typename I, class Src, class Dst>
__device__ __forceinline__ void redo_gradient(const G& topo, I item, const Src& src, const Dst& dst) {
  typedef typename G::Coord R;
  R by;
  auto g = two_tries([&](R b) { bool ok; return Kind::template sum<true>(topo, item, src, b, ok); },
                     by);
  grow(g.v, by);
  store_gradient<Src::C>(g.v, Kind::id(topo, item), dst);
}

template <class Kind, class G, typename I, class Src, class Dst>
__device__ __noinline__ void redo_gradient_noinline(G topo, I item, Src src, Dst dst) {
  redo_gradient<Kind>(topo, item, src, dst);
}

template <class Kind, class G, typename I, class Src, class Dst>
__device__ __forceinline__ void gradient_at(const G& topo, I item, const Src& src, const Dst& dst) {
  bool ok;
  const auto g = Kind::template sum<false>(topo, item, src, typename G::Coord(1), ok);
  if (ok) store_gradient<Src::C>(g.v, Kind::id(topo, item), dst);
  else if constexpr (Kind::cold) redo_gradient_noinline<Kind>(topo, item, src, dst);
  else redo_gradient<Kind>(topo, item, src, dst);
}

}  // namespace dax

#endif  // DAXPY_GRADIENT_COMMON_CUH
