// Magnitude: the Euclidean norm of each tuple (|x| for one component).
#ifndef DAXPY_MAGNITUDE_CUH
#define DAXPY_MAGNITUDE_CUH

namespace dax {

template <int C, typename I, typename In, typename Out>
__device__ __forceinline__ void magnitude(I item, const In* __restrict__ in, Out* __restrict__ out) {
  Out sum = Out(0);
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const Out x = Out(load(in + item * I(C) + c));
    sum += x * x;
  }
  __stcs(out + item, C == 1 ? Out(fabs(Out(load(in + item)))) : Out(sqrt(sum)));
}

}  // namespace dax

#endif  // DAXPY_MAGNITUDE_CUH
