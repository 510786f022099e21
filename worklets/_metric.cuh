// Metric rows of a cell or point stencil: the rows m[d] with grad f =
// sum_d (df/dxi_d) m[d], from the Jacobian rows J[d] = dX/dxi_d, as VTK's
// vtkCell::Derivatives computes them (float's range limits in _wide.cuh).
#ifndef DAXPY_METRIC_CUH
#define DAXPY_METRIC_CUH

#include "_wide.cuh"

// An array with one entry per active axis (at least one, for D = 0).
#define DAX_AXES(D) [D > 0 ? D : 1]

namespace dax {

// vtkLine::Derivatives divides by each coordinate difference on its own
// (zero where the line does not move along that axis).
template <typename R>
__device__ __forceinline__ V3<R> reciprocal_row(V3<R> dx) {
  return {dx.x != R(0) ? R(1) / dx.x : R(0), dx.y != R(0) ? R(1) / dx.y : R(0),
          dx.z != R(0) ? R(1) / dx.z : R(0)};
}

// The first D rows of J's inverse (J has all three rows); false where float
// could not invert J accurately (Scaled: see inverse_rows).
template <int D, bool Scaled, typename R>
__device__ __forceinline__ bool inverse_first_rows(const V3<R> (&J)[3], V3<R> (&m) DAX_AXES(D)) {
  V3<R> all[3];
  const bool ok = inverse_rows<Scaled>(J, all);
#pragma unroll
  for (int d = 0; d < D; ++d) m[d] = all[d];
  return ok;
}

// Metric rows of a D-dimensional cell from its Jacobian rows J[0..D) and
// corner points X: a 3-D cell inverts J, a 2-D cell first takes as third row
// the normal through corners 0, 1 and K2 (its first three in VTK's order), a
// line divides per coordinate.
template <int D, int K2, bool Scaled, typename R, int K>
__device__ __forceinline__ bool cell_rows(V3<R> (&J)[3], const V3<R> (&X)[K],
                                          V3<R> (&m) DAX_AXES(D)) {
  bool ok = true;
  if constexpr (D == 1) {
    m[0] = reciprocal_row(J[0]);
  } else if constexpr (D >= 2) {
    if constexpr (D == 2) J[2] = cell_normal<Scaled>(X[1] - X[0], X[K2] - X[0]);
    ok = inverse_first_rows<D, Scaled>(J, m);
  }
  return ok;
}

}  // namespace dax

#endif  // DAXPY_METRIC_CUH
