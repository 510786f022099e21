// Pass-through: copy a field, converting its dtype. Work items are groups of
// V consecutive flat elements, loaded and stored as one vector where the
// layout allows (V > 1 only for 16-byte aligned, V-divisible data).
#ifndef DAXPY_PASS_THROUGH_CUH
#define DAXPY_PASS_THROUGH_CUH

namespace dax {

template <int V, typename I, typename In, typename Out>
__device__ __forceinline__ void pass_through(I item, const In* __restrict__ in, Out* __restrict__ out) {
  In x[V];
  load_vector<V>(in + item * I(V), x);
  Out y[V];
#pragma unroll
  for (int v = 0; v < V; ++v) y[v] = Out(x[v]);
  store_vector<V>(out + item * I(V), y);
}

// The same as a map stage of a fused kernel (_fields.cuh).
template <int C, typename In_, typename Out_>
struct PassThroughMap {
  typedef In_ In;
  typedef Out_ Out;
  static constexpr int in_c = C, out_c = C;
  template <typename I>
  __device__ __forceinline__ void operator()(I, const In (&x)[C], Out (&y)[C]) const {
#pragma unroll
    for (int c = 0; c < C; ++c) y[c] = Out(x[c]);
  }
};

}  // namespace dax

#endif  // DAXPY_PASS_THROUGH_CUH
