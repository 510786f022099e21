// BiasAdd: out.flat[i] = in.flat[i] + bias[i % n_bias] (TensorFlow's BiasAdd).
// Work items are groups of V flat elements moved as 16-byte vectors; the
// small bias stays in L1 through read-only loads, and its index is computed
// once per item, then stepped.
#ifndef DAXPY_BIAS_ADD_CUH
#define DAXPY_BIAS_ADD_CUH

namespace dax {

template <int V, typename I, typename In, typename Out>
__device__ __forceinline__ void bias_add(I item, const In* __restrict__ in, Out* __restrict__ out,
                                         const In* __restrict__ bias, I n_bias) {
  In x[V];
  load_vector<V>(in + item * I(V), x);
  I j = (item * I(V)) % n_bias;
  Out y[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    y[v] = Out(x[v] + load(bias + j));
    j = j + 1 == n_bias ? I(0) : j + 1;
  }
  store_vector<V>(out + item * I(V), y);
}

}  // namespace dax

#endif  // DAXPY_BIAS_ADD_CUH
