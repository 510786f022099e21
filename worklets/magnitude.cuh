// Magnitude: the Euclidean norm of each tuple (|x| for one component).
#ifndef DAXPY_MAGNITUDE_CUH
#define DAXPY_MAGNITUDE_CUH

namespace dax {

// A map of one tuple (dax::map_chain runs it alone or in a fused kernel).
template <int C, typename In, typename Out>
struct MagnitudeMap : MapTypes<In, Out, C, 1> {
  template <typename I>
  __device__ __forceinline__ void operator()(I, const In (&x)[C], Out (&y)[1]) const {
    Out sum = Out(0);
#pragma unroll
    for (int c = 0; c < C; ++c) sum += Out(x[c]) * Out(x[c]);
    y[0] = C == 1 ? Out(fabs(Out(x[0]))) : Out(sqrt(sum));
  }
};

}  // namespace dax

#endif  // DAXPY_MAGNITUDE_CUH
