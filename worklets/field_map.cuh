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

// CI: components of the first field; C: of the output (the widest field).
template <int CI, typename I, typename In, typename Out, class E, bool Wide, int C, class... Args>
__device__ __forceinline__ void field_map(I item, const In* __restrict__ in, Out* __restrict__ out,
                                          Args... args) {
  const FieldArg<In, Wide> first{in};
#pragma unroll
  for (int c = 0; c < C; ++c)
    __stcs(out + item * I(C) + c,
           E::eval(Out(first.template get<C>(item, c)), args.template get<C>(item, c)...));
}

}  // namespace dax

#endif  // DAXPY_FIELD_MAP_CUH
