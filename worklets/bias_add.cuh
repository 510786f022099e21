// BiasAdd: out.flat[i] = in.flat[i] + bias[i % n_bias] (TensorFlow's BiasAdd).
// Work items are groups of V flat elements moved as 16-byte vectors; the
// small bias stays in L1 through read-only loads, and its index is computed
// once per item, then stepped.
#ifndef DAXPY_BIAS_ADD_CUH
#define DAXPY_BIAS_ADD_CUH

namespace dax {

// Adds bias[j], bias[j + 1], ... (wrapping) to V consecutive values.
template <int V, typename I, typename In, typename Out>
__device__ __forceinline__ void add_bias_from(I j, const In (&x)[V], Out (&y)[V],
                                              const In* __restrict__ bias, I n_bias) {
#pragma unroll
  for (int v = 0; v < V; ++v) {
    y[v] = Out(x[v] + load(bias + j));
    j = j + 1 == n_bias ? I(0) : j + 1;
  }
}

template <int V, typename I, typename In, typename Out>
__device__ __forceinline__ void bias_add(I item, const In* __restrict__ in, Out* __restrict__ out,
                                         const In* __restrict__ bias, I n_bias) {
  map_flat<V>(item, in, out, [&](I, const In (&x)[V], Out (&y)[V]) {
    add_bias_from<V>((item * I(V)) % n_bias, x, y, bias, n_bias);
  });
}

// The same as a map stage of a fused kernel: tuple id's flat values start
// at id * C.
template <int C, typename In_, typename Out_>
struct BiasAddMap {
  typedef In_ In;
  typedef Out_ Out;
  static constexpr int in_c = C, out_c = C;
  const In* bias;
  long long n_bias;
  template <typename I>
  __device__ __forceinline__ void operator()(I id, const In (&x)[C], Out (&y)[C]) const {
    add_bias_from<C>((id * I(C)) % I(n_bias), x, y, bias, I(n_bias));
  }
};

}  // namespace dax

#endif  // DAXPY_BIAS_ADD_CUH
