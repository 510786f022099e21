// Normalize: each tuple divided by its Euclidean norm (a zero tuple gives NaN).
#ifndef DAXPY_NORMALIZE_CUH
#define DAXPY_NORMALIZE_CUH

namespace dax {

// A map of one tuple (dax::map_chain runs it alone or in a fused kernel).
template <int C, typename In, typename Out>
struct NormalizeMap : MapTypes<In, Out, C, C> {
  template <typename I>
  __device__ __forceinline__ void operator()(I, const In (&x)[C], Out (&y)[C]) const {
    Out sum = Out(0);
#pragma unroll
    for (int c = 0; c < C; ++c) sum += Out(x[c]) * Out(x[c]);
    const Out norm = C == 1 ? Out(fabs(Out(x[0]))) : Out(sqrt(sum));
#pragma unroll
    for (int c = 0; c < C; ++c) y[c] = Out(x[c]) / norm;  // 0 / 0: NaN, as NumPy and VTK
  }
};

}  // namespace dax

#endif  // DAXPY_NORMALIZE_CUH
