// Divergence, vorticity and Q-criterion from the 9-component gradient of a
// vector field (VTK's layout g[3 * i + j] = d(u_i)/dx_j), vtkGradientFilter's
// formulas. Each is a map of one tuple (dax::map_chain runs it alone, or as a
// map stage of a fused kernel such as gradient -> Q-criterion).
#ifndef DAXPY_VECTOR_ANALYSIS_CUH
#define DAXPY_VECTOR_ANALYSIS_CUH

namespace dax {

template <int C, typename In, typename Out, int OutC>
struct GradientMap : MapTypes<In, Out, 9, OutC> {
  static_assert(C == 9, "vector analysis reads a 3x3 gradient");
};

template <int C, typename In, typename Out>
struct DivergenceMap : GradientMap<C, In, Out, 1> {
  template <typename I>
  __device__ __forceinline__ void operator()(I, const In (&g)[9], Out (&y)[1]) const {
    y[0] = Out(g[0] + g[4] + g[8]);
  }
};

template <int C, typename In, typename Out>
struct VorticityMap : GradientMap<C, In, Out, 3> {
  template <typename I>
  __device__ __forceinline__ void operator()(I, const In (&g)[9], Out (&y)[3]) const {
    y[0] = Out(g[7] - g[5]);
    y[1] = Out(g[2] - g[6]);
    y[2] = Out(g[3] - g[1]);
  }
};

template <int C, typename In, typename Out>
struct QCriterionMap : GradientMap<C, In, Out, 1> {
  template <typename I>
  __device__ __forceinline__ void operator()(I, const In (&g)[9], Out (&y)[1]) const {
    In q = (g[0] * g[0] + g[4] * g[4] + g[8] * g[8]) * In(-0.5);
    q -= g[1] * g[3];
    q -= g[2] * g[6];
    q -= g[5] * g[7];
    y[0] = Out(q);
  }
};

}  // namespace dax

#endif  // DAXPY_VECTOR_ANALYSIS_CUH
