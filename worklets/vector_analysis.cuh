// Divergence, vorticity and Q-criterion from the 9-component gradient of a
// vector field (VTK's layout g[3 * i + j] = d(u_i)/dx_j), vtkGradientFilter's
// formulas. One work item per tuple.
#ifndef DAXPY_VECTOR_ANALYSIS_CUH
#define DAXPY_VECTOR_ANALYSIS_CUH

namespace dax {

template <int C, typename I, typename T>
__device__ __forceinline__ void load_tuple(I item, const T* __restrict__ in, T (&g)[C]) {
#pragma unroll
  for (int c = 0; c < C; ++c) g[c] = load(in + item * I(C) + c);
}

template <int C, typename I, typename In, typename Out>
__device__ __forceinline__ void divergence(I item, const In* __restrict__ in, Out* __restrict__ out) {
  static_assert(C == 9, "divergence reads a 3x3 gradient");
  In g[9];
  load_tuple<9>(item, in, g);
  __stcs(out + item, Out(g[0] + g[4] + g[8]));
}

template <int C, typename I, typename In, typename Out>
__device__ __forceinline__ void vorticity(I item, const In* __restrict__ in, Out* __restrict__ out) {
  static_assert(C == 9, "vorticity reads a 3x3 gradient");
  In g[9];
  load_tuple<9>(item, in, g);
  __stcs(out + 3 * item, Out(g[7] - g[5]));
  __stcs(out + 3 * item + 1, Out(g[2] - g[6]));
  __stcs(out + 3 * item + 2, Out(g[3] - g[1]));
}

template <int C, typename I, typename In, typename Out>
__device__ __forceinline__ void qcriterion(I item, const In* __restrict__ in, Out* __restrict__ out) {
  static_assert(C == 9, "the Q-criterion reads a 3x3 gradient");
  In g[9];
  load_tuple<9>(item, in, g);
  In q = (g[0] * g[0] + g[4] * g[4] + g[8] * g[8]) * In(-0.5);
  q -= g[1] * g[3];
  q -= g[2] * g[6];
  q -= g[5] * g[7];
  __stcs(out + item, Out(q));
}

}  // namespace dax

#endif  // DAXPY_VECTOR_ANALYSIS_CUH
