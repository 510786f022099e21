// Pass-through: copy a field, converting its dtype. Work items are groups of
// V consecutive flat elements, loaded and stored as one vector where the
// layout allows (V > 1 only for 16-byte aligned, V-divisible data).
#ifndef DAXPY_PASS_THROUGH_CUH
#define DAXPY_PASS_THROUGH_CUH

namespace dax {

template <int C, typename In, typename Out> struct PassThroughMap;

template <int V, typename I, typename In, typename Out>
__device__ __forceinline__ void pass_through(I item, const In* __restrict__ in, Out* __restrict__ out) {
  map_flat<V>(item, in, out, PassThroughMap<V, In, Out>());
}

// The same as a map stage of a fused kernel (_fields.cuh); pass_through runs
// it on flat groups.
template <int C, typename In, typename Out>
struct PassThroughMap : MapTypes<In, Out, C, C> {
  template <typename I>
  __device__ __forceinline__ void operator()(I, const In (&x)[C], Out (&y)[C]) const {
#pragma unroll
    for (int c = 0; c < C; ++c) y[c] = Out(x[c]);
  }
};

}  // namespace dax

#endif  // DAXPY_PASS_THROUGH_CUH
