// Magnitude: the Euclidean norm of each tuple (|x| for one component).
#ifndef DAXPY_MAGNITUDE_CUH
#define DAXPY_MAGNITUDE_CUH

namespace dax {

// As a map stage (also of fused kernels, _fields.cuh).
template <int C, typename In_, typename Out_>
struct MagnitudeMap {
  typedef In_ In;
  typedef Out_ Out;
  static constexpr int in_c = C, out_c = 1;
  template <typename I>
  __device__ __forceinline__ void operator()(I, const In (&x)[C], Out (&y)[1]) const {
    Out sum = Out(0);
#pragma unroll
    for (int c = 0; c < C; ++c) sum += Out(x[c]) * Out(x[c]);
    y[0] = C == 1 ? Out(fabs(Out(x[0]))) : Out(sqrt(sum));
  }
};

template <int C, typename I, typename In, typename Out>
__device__ __forceinline__ void magnitude(I item, const In* __restrict__ in, Out* __restrict__ out) {
  map_tuple(MagnitudeMap<C, In, Out>{}, item, in, out);
}

}  // namespace dax

#endif  // DAXPY_MAGNITUDE_CUH
