// FieldMap: an elementwise expression over one or more fields, one work item
// per tuple. The expression itself is generated from the parsed IR as a
// struct with a static eval() (never from the user's text); fields with one
// component broadcast over the components of the others.
#ifndef DAXPY_FIELD_MAP_CUH
#define DAXPY_FIELD_MAP_CUH

namespace dax {

// One input field: Wide fields have C components per tuple, others one.
template <typename T, bool Wide>
struct FieldArg {
  const T* p;
  template <int C, typename I>
  __device__ __forceinline__ T get(I item, int c) const {
    return load(p + (Wide ? item * I(C) + c : item));
  }
};

// NumPy's semantics where CUDA's differ: floor modulo, NaN-propagating
// minimum/maximum, clip as minimum(maximum(x, lo), hi), truth as 1 or 0.
template <typename T> __device__ __forceinline__ T fm_mod(T x, T y) {
  T r = fmod(x, y);
  return (r != T(0) && ((r < T(0)) != (y < T(0)))) ? r + y : r;
}
template <typename T> __device__ __forceinline__ T fm_min(T a, T b) {
  return (a != a || b != b) ? a + b : (b < a ? b : a);
}
template <typename T> __device__ __forceinline__ T fm_max(T a, T b) {
  return (a != a || b != b) ? a + b : (b > a ? b : a);
}
template <typename T> __device__ __forceinline__ T fm_truth(bool b) { return b ? T(1) : T(0); }
template <typename T> __device__ __forceinline__ bool fm_true(T x) { return x != T(0); }
template <typename T> __device__ __forceinline__ T fm_where(T c, T a, T b) { return c != T(0) ? a : b; }

// The other fields of an expression, kept in order; call() evaluates E on
// the first field's value and each field's value at (item, c).
template <class... A> struct ArgList;
template <> struct ArgList<> {
  template <int C, class E, typename I, typename... X>
  __device__ __forceinline__ auto call(I, int, X... x) const { return E::eval(x...); }
};
template <class A0, class... A> struct ArgList<A0, A...> {
  A0 head;
  ArgList<A...> tail;
  template <int C, class E, typename I, typename... X>
  __device__ __forceinline__ auto call(I item, int c, X... x) const {
    return tail.template call<C, E>(item, c, x..., head.template get<C>(item, c));
  }
};

// A map of one tuple (dax::map_chain runs it alone or in a fused kernel). CI: components of the
// first field; C: of the output (the widest field); Wide: whether the first
// field has C components (else it broadcasts).
template <int CI, typename In_, typename Out_, class E, bool Wide, int C, class... Args>
struct ExpressionMap {
  typedef In_ In;
  typedef Out_ Out;
  static constexpr int in_c = Wide ? C : 1, out_c = C;
  ArgList<Args...> args;
  template <typename I>
  __device__ __forceinline__ void operator()(I item, const In (&x)[in_c], Out (&y)[C]) const {
#pragma unroll
    for (int c = 0; c < C; ++c) y[c] = args.template call<C, E>(item, c, Out(x[Wide ? c : 0]));
  }
};

}  // namespace dax

#endif  // DAXPY_FIELD_MAP_CUH
