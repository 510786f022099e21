// VTK's linear cell shapes as a gradient sees them: derivatives of the
// interpolation functions, and the metric rows and gradient of one cell from
// its corners (vtkCell::Derivatives).
#ifndef DAXPY_SHAPE_FUNCTIONS_CUH
#define DAXPY_SHAPE_FUNCTIONS_CUH

namespace dax {

// dN[d][k]: derivative along parametric axis d of corner k's interpolation
// function at (r, s, t); corner(k) is the corner's parametric point (VTK's
// orders; a pyramid's apex uses the limit along its axis, as vtkPyramid).
template <class S> struct Interp;

template <> struct Interp<Vertex> {
  template <typename R> __device__ static void derivs(R, R, R, R (&)[1][1]) {}
  template <typename R> __device__ static void corner(int, R& r, R& s, R& t) { r = s = t = R(0); }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = t = R(0); }
};
template <> struct Interp<Line> {
  template <typename R> __device__ static void derivs(R, R, R, R (&dN)[1][2]) { dN[0][0] = R(-1); dN[0][1] = R(1); }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) { r = R(k); s = t = R(0); }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = R(0.5); s = t = R(0); }
};
template <> struct Interp<Tri> {
  template <typename R> __device__ static void derivs(R, R, R, R (&dN)[2][3]) {
    dN[0][0] = R(-1); dN[0][1] = R(1); dN[0][2] = R(0);
    dN[1][0] = R(-1); dN[1][1] = R(0); dN[1][2] = R(1);
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) { r = R(k == 1); s = R(k == 2); t = R(0); }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = R(1.0 / 3.0); t = R(0); }
};
template <> struct Interp<Quad> {
  template <typename R> __device__ static void derivs(R r, R s, R, R (&dN)[2][4]) {
    dN[0][0] = -(R(1) - s); dN[0][1] = R(1) - s; dN[0][2] = s; dN[0][3] = -s;
    dN[1][0] = -(R(1) - r); dN[1][1] = -r; dN[1][2] = r; dN[1][3] = R(1) - r;
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) { r = R((k ^ (k >> 1)) & 1); s = R((k >> 1) & 1); t = R(0); }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = R(0.5); t = R(0); }
};
template <> struct Interp<Tet> {
  template <typename R> __device__ static void derivs(R, R, R, R (&dN)[3][4]) {
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      dN[d][0] = R(-1);
#pragma unroll
      for (int k = 1; k < 4; ++k) dN[d][k] = R(k == d + 1);
    }
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) { r = R(k == 1); s = R(k == 2); t = R(k == 3); }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = t = R(0.25); }
};
template <> struct Interp<Hex> {
  template <typename R> __device__ static void derivs(R r, R s, R t, R (&dN)[3][8]) {
    const R rm = R(1) - r, sm = R(1) - s, tm = R(1) - t;
    const R d0[8] = {-sm * tm, sm * tm, s * tm, -s * tm, -sm * t, sm * t, s * t, -s * t};
    const R d1[8] = {-rm * tm, -r * tm, r * tm, rm * tm, -rm * t, -r * t, r * t, rm * t};
    const R d2[8] = {-rm * sm, -r * sm, -r * s, -rm * s, rm * sm, r * sm, r * s, rm * s};
#pragma unroll
    for (int k = 0; k < 8; ++k) { dN[0][k] = d0[k]; dN[1][k] = d1[k]; dN[2][k] = d2[k]; }
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) {
    r = R((k ^ (k >> 1)) & 1); s = R((k >> 1) & 1); t = R((k >> 2) & 1);
  }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = t = R(0.5); }
};
template <> struct Interp<Wedge> {
  template <typename R> __device__ static void derivs(R r, R s, R t, R (&dN)[3][6]) {
    const R u = R(1) - r - s, tm = R(1) - t;
    const R d0[6] = {-tm, tm, R(0), -t, t, R(0)};
    const R d1[6] = {-tm, R(0), tm, -t, R(0), t};
    const R d2[6] = {-u, -r, -s, u, r, s};
#pragma unroll
    for (int k = 0; k < 6; ++k) { dN[0][k] = d0[k]; dN[1][k] = d1[k]; dN[2][k] = d2[k]; }
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) {
    r = R(k % 3 == 1); s = R(k % 3 == 2); t = R(k >= 3);
  }
  // VTK writes the wedge centre with six digits; kept to match it.
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = R(0.333333); t = R(0.5); }
};
template <> struct Interp<Pyramid> {
  template <typename R> __device__ static void derivs(R r, R s, R t, R (&dN)[3][5]) {
    const R rm = R(1) - r, sm = R(1) - s, tm = R(1) - t;
    const R d0[5] = {-sm * tm, sm * tm, s * tm, -s * tm, R(0)};
    const R d1[5] = {-rm * tm, -r * tm, r * tm, rm * tm, R(0)};
    const R d2[5] = {-rm * sm, -r * sm, -r * s, -rm * s, R(1)};
#pragma unroll
    for (int k = 0; k < 5; ++k) { dN[0][k] = d0[k]; dN[1][k] = d1[k]; dN[2][k] = d2[k]; }
  }
  template <typename R> __device__ static void corner(int k, R& r, R& s, R& t) {
    const bool apex = k == 4;
    r = apex ? R(0.5) : R((k ^ (k >> 1)) & 1);
    s = apex ? R(0.5) : R((k >> 1) & 1);
    t = R(0);
  }
  template <typename R> __device__ static void centre(R& r, R& s, R& t) { r = s = R(0.4); t = R(0.2); }
};

#define DAX_DIM(S) DAX_AXES(S::dim)

// Metric rows of a cell of shape S from its corner coordinates (cell_rows;
// a 2-D cell's first three corners are 0, 1 and 2). False where float could
// not invert the Jacobian (Scaled: see inverse_rows).
template <class S, bool Scaled, typename R>
__device__ __forceinline__ bool shape_metric(const R (&dN) DAX_DIM(S)[S::n_corners],
                                             const V3<R> (&X)[S::n_corners],
                                             V3<R> (&m) DAX_DIM(S)) {
  V3<R> J[3];
#pragma unroll
  for (int d = 0; d < S::dim; ++d) {
    J[d] = V3<R>{R(0), R(0), R(0)};
#pragma unroll
    for (int k = 0; k < S::n_corners; ++k) J[d] = J[d] + dN[d][k] * X[k];
  }
  return cell_rows<S::dim, 2, Scaled>(J, X, m);
}

// grad[c] += sum_d (sum_k dN[d][k] f[k][c]) m[d] over a cell's corners.
template <class S, int C, typename R>
__device__ __forceinline__ void add_shape_gradient(const R (&dN) DAX_DIM(S)[S::n_corners],
                                                   const R (&f)[S::n_corners][C],
                                                   const V3<R> (&m) DAX_DIM(S), V3<R> (&g)[C]) {
#pragma unroll
  for (int d = 0; d < S::dim; ++d) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      R df = R(0);
#pragma unroll
      for (int k = 0; k < S::n_corners; ++k) df += dN[d][k] * f[k][c];
      g[c] = g[c] + df * m[d];
    }
  }
}

}  // namespace dax

#endif  // DAXPY_SHAPE_FUNCTIONS_CUH
