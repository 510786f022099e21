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

}  // namespace dax

#endif  // DAXPY_PASS_THROUGH_CUH
