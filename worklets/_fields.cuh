// How worklets read and write fields. A Source yields the C values (type T)
// of a tuple; a Sink takes the C values (type T) of an output tuple. The
// plain ones read and write arrays; a map stage (fusion of elementwise
// worklets) wraps them, so a chain of maps runs where the worklet loads its
// input (map on load) or stores its output (map on store), and the
// intermediate fields never reach memory.
//
// A map M is a struct with In, Out, in_c, out_c and
//   operator()(id, const In (&x)[in_c], Out (&y)[out_c]) const,
// id being the tuple's index in its field (bias and field maps need it).
#ifndef DAXPY_FIELDS_CUH
#define DAXPY_FIELDS_CUH

namespace dax {

// The types of a map with no data members (it derives from this one).
template <typename In_, typename Out_, int InC, int OutC>
struct MapTypes {
  typedef In_ In;
  typedef Out_ Out;
  static constexpr int in_c = InC, out_c = OutC;
};

// A value at a map boundary, hidden from the optimizer: a multiply before the
// boundary is never contracted with an add after it into one FMA, so a fused
// chain rounds exactly as the unfused kernels, which store every stage.
__device__ __forceinline__ float settle(float v) {
  asm("" : "+f"(v));
  return v;
}
__device__ __forceinline__ double settle(double v) {
  asm("" : "+d"(v));
  return v;
}
template <typename T> __device__ __forceinline__ T settle(T v) { return v; }

template <int C, typename T>
__device__ __forceinline__ void settle_all(T (&x)[C]) {
#pragma unroll
  for (int c = 0; c < C; ++c) x[c] = settle(x[c]);
}

// Tuples of a C-component array. Vec: row<N> may load the N*C values of N
// consecutive tuples as vector words (the plan checked the alignment).
template <typename T_, int C_, bool Vec>
struct ArraySource {
  typedef T_ T;
  static constexpr int C = C_;
  const T* p;
  template <typename I>
  __device__ __forceinline__ void one(I i, T (&x)[C]) const {
#pragma unroll
    for (int c = 0; c < C; ++c) x[c] = load(p + i * I(C) + c);
  }
  // N tuples from i0, a multiple of N.
  template <int N, typename I>
  __device__ __forceinline__ void row(I i0, T (&x)[N][C]) const {
    if constexpr (Vec) {
      T flat[N * C];
      load_cached<N * C>(p + i0 * I(C), flat);
#pragma unroll
      for (int n = 0; n < N; ++n) {
#pragma unroll
        for (int c = 0; c < C; ++c) x[n][c] = flat[n * C + c];
      }
    } else {
#pragma unroll
      for (int n = 0; n < N; ++n) one(i0 + n, x[n]);
    }
  }
};

// Base's tuples seen through map M (map on load).
template <class Base, class M>
struct MapSource {
  typedef typename M::Out T;
  static constexpr int C = M::out_c;
  static_assert(M::in_c == Base::C, "a map's input components must match its source");
  Base base;
  M map;
  template <typename I>
  __device__ __forceinline__ void one(I i, T (&x)[C]) const {
    typename M::In t[M::in_c];
    base.one(i, t);
    map(i, t, x);
    settle_all(x);
  }
  template <int N, typename I>
  __device__ __forceinline__ void row(I i0, T (&x)[N][C]) const {
    typename M::In t[N][M::in_c];
    base.template row<N>(i0, t);
#pragma unroll
    for (int n = 0; n < N; ++n) {
      map(i0 + n, t[n], x[n]);
      settle_all(x[n]);
    }
  }
};

// Output tuples into a C-component array. apply() gives the values that
// reach memory (Final, final_c) without storing them (staged writes).
template <typename T_, int C_>
struct ArraySink {
  typedef T_ T;
  typedef T_ Final;
  static constexpr int C = C_, final_c = C_;
  T* p;
  __device__ __forceinline__ T* data() const { return p; }
  template <typename I>
  __device__ __forceinline__ void apply(I, const T (&x)[C], Final (&y)[C]) const {
#pragma unroll
    for (int c = 0; c < C; ++c) y[c] = x[c];
  }
  template <typename I>
  __device__ __forceinline__ void put(I id, const T (&x)[C]) const {
#pragma unroll
    for (int c = 0; c < C; ++c) __stcs(p + id * I(C) + c, x[c]);
  }
};

// Map M applied to output tuples before Next takes them (map on store).
template <class M, class Next>
struct MapSink {
  typedef typename M::In T;
  typedef typename Next::Final Final;
  static constexpr int C = M::in_c, final_c = Next::final_c;
  static_assert(M::out_c == Next::C, "a map's output components must match its sink");
  M map;
  Next next;
  __device__ __forceinline__ Final* data() const { return next.data(); }
  template <typename I>
  __device__ __forceinline__ void apply(I id, const T (&x)[C], Final (&y)[final_c]) const {
    typename M::Out t[M::out_c];
    run(id, x, t);
    next.apply(id, t, y);
  }
  template <typename I>
  __device__ __forceinline__ void put(I id, const T (&x)[C]) const {
    typename M::Out t[M::out_c];
    run(id, x, t);
    next.put(id, t);
  }
  template <typename I>
  __device__ __forceinline__ void run(I id, const T (&x)[C], typename M::Out (&y)[M::out_c]) const {
    T s[C];
#pragma unroll
    for (int c = 0; c < C; ++c) s[c] = settle(x[c]);
    map(id, s, y);
  }
};

// Flat work item `item` (V consecutive elements moved as vector words) through
// map M, the group seen as tuple `item` of V components.
template <int V, typename I, typename In, typename Out, class M>
__device__ __forceinline__ void map_flat(I item, const In* __restrict__ in, Out* __restrict__ out,
                                         const M& map) {
  In x[V];
  load_vector<V>(in + item * I(V), x);
  Out y[V];
  map(item, x, y);
  store_vector<V>(out + item * I(V), y);
}

// N tuples from first through src and dst (map-only fused kernels): their
// final values leave as one vector.
template <int N, class Src, class Dst, typename I>
__device__ __forceinline__ void map_tuples(I first, const Src& src, const Dst& dst) {
  constexpr int FC = Dst::final_c;
  typename Src::T x[N][Src::C];
  src.template row<N>(first, x);
  typename Dst::Final y[N * FC];
#pragma unroll
  for (int n = 0; n < N; ++n) {
    typename Dst::Final t[FC];
    dst.apply(first + n, x[n], t);
#pragma unroll
    for (int c = 0; c < FC; ++c) y[n * FC + c] = t[c];
  }
  store_vector<N * FC>(dst.data() + first * I(FC), y);
}

// Work item of a map-only fused kernel: a group of V tuples, or, past the
// n_groups groups, one of the n % V tuples left.
template <int V, class Src, class Dst, typename I>
__device__ __forceinline__ void map_chain(I item, I n_groups, const Src& src, const Dst& dst) {
  if (item < n_groups) map_tuples<V>(item * I(V), src, dst);
  else map_tuples<1>(n_groups * I(V) + (item - n_groups), src, dst);
}

}  // namespace dax

#endif  // DAXPY_FIELDS_CUH
