// Float's range, where it is not enough. VTK computes derivatives and
// averages in double; the kernels compute in the field's type (float for
// float32: half the registers of double, and the occupancy and speed they
// buy), exactly as before, and redo the rare case in float with powers of two
// (exact) that keep it inside float's range:
// - a Jacobian whose determinant float cannot invert accurately (cells
//   smaller than ~1e-10 or larger than ~1e10) is inverted with its rows
//   scaled to size ~1 (inverse_rows), a 2-D cell's normal likewise
//   (cell_normal);
// - a gradient or mean that comes out non-finite (a float sum of values near
//   float's maximum overflowed) is redone from memory with the values shrunk
//   by 2^-32 and the result grown back (shrink).
// Double redos were measured to cost the fast path its occupancy: a kernel's
// register count is the maximum over everything it may call, cold calls too.
// Non-finite inputs give non-finite results on both paths, the same ones.
#ifndef DAXPY_WIDE_CUH
#define DAXPY_WIDE_CUH

#include "_vectors.cuh"

namespace dax {

// N values returned by value from a function that is not inlined (an array
// passed by reference would have to live in local memory on the fast path).
template <typename T, int N> struct Tuple { T v[N]; };

// Zeros (sums start from them): T{} is 0 for numbers, (0, 0, 0) for V3.
template <int N, typename T>
__device__ __forceinline__ void zero(T (&x)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) x[i] = T{};
}

// Finite: for floating types, isfinite; integers always are.
__device__ __forceinline__ bool finite(float v) { return isfinite(v); }
__device__ __forceinline__ bool finite(double v) { return isfinite(v); }
template <typename T> __device__ __forceinline__ bool finite(T) { return true; }

template <int N, typename T>
__device__ __forceinline__ bool all_finite(const T (&x)[N]) {
  bool ok = true;
#pragma unroll
  for (int i = 0; i < N; ++i) ok = ok && finite(x[i]);
  return ok;
}

template <int N, typename T>
__device__ __forceinline__ bool all_finite(const V3<T> (&g)[N]) {
  bool ok = true;
#pragma unroll
  for (int i = 0; i < N; ++i) ok = ok && finite(g[i].x) && finite(g[i].y) && finite(g[i].z);
  return ok;
}

// No redo needed: R is already double, or every value came out finite.
template <int N, typename R>
__device__ __forceinline__ bool no_redo(const V3<R> (&g)[N]) {
  return sizeof(R) >= sizeof(double) || all_finite(g);
}

template <int N, typename R>
__device__ __forceinline__ bool no_redo(const R (&x)[N]) {
  return sizeof(R) >= sizeof(double) || all_finite(x);
}

// Rows m[a] of J^-1 for the Jacobian rows J[a] = dX/dxi_a (grad f = sum_a
// (df/dxi_a) m[a], m[a] . J[b] = delta_ab); a singular J gives zero rows, as
// in VTK. Returns the determinant.
template <typename R>
__device__ __forceinline__ R inverse_rows_in(const V3<R> (&J)[3], V3<R> (&m)[3]) {
  const V3<R> c0 = cross(J[1], J[2]), c1 = cross(J[2], J[0]), c2 = cross(J[0], J[1]);
  const R det = dot(J[0], c0);
  const R inv = det != R(0) ? R(1) / det : R(0);
  m[0] = inv * c0; m[1] = inv * c1; m[2] = inv * c2;
  return det;
}

template <typename R>
__device__ __forceinline__ R max_abs(V3<R> a) { return fmax(fabs(a.x), fmax(fabs(a.y), fabs(a.z))); }

// Exponent e with 2^-e a of size ~1 (0 for a zero or non-finite a), kept
// where 2^-e and 2^e are normal floats, so that scaling by them is exact.
template <typename R>
__device__ __forceinline__ int exponent_of(V3<R> a) {
  const R big = max_abs(a);
  const int e = big > R(0) && isfinite(big) ? ilogb(big) : 0;
  return e < -125 ? -125 : e > 125 ? 125 : e;
}

template <typename R>
__device__ __forceinline__ V3<R> times_pow2(V3<R> a, int e) { return R(scalbn(1.0f, e)) * a; }

// True where the determinant's size keeps R's inverse and rows normal.
template <typename R>
__device__ __forceinline__ bool invertible_in_place(R det) {
  return sizeof(R) >= sizeof(double) || (fabs(det) >= R(0x1p-100) && fabs(det) <= R(0x1p100));
}

// In R, as before; returns false where R's determinant is not of a size R
// can invert accurately (a size cubed: float cells smaller than ~1e-10 or
// larger than ~1e10). The caller redoes those with Scaled: each row scaled by
// a power of two near its size (exact), as scaling row a by 2^-e scales m[a]
// by 2^e and leaves the other rows alone: float's answer without float's
// range limits.
template <bool Scaled, typename R>
__device__ __forceinline__ bool inverse_rows(const V3<R> (&J)[3], V3<R> (&m)[3]) {
  if constexpr (!Scaled) {
    return invertible_in_place(inverse_rows_in(J, m));
  } else {
    int e[3];
    V3<R> S[3];
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      e[a] = exponent_of(J[a]);
      S[a] = times_pow2(J[a], -e[a]);
    }
    inverse_rows_in(S, m);
#pragma unroll
    for (int a = 0; a < 3; ++a) m[a] = times_pow2(m[a], -e[a]);
    return true;
  }
}

// The normal a x b of a 2-D cell (the third Jacobian row, as in VTK). Only
// its direction matters (m[0] and m[1] do not depend on its length): Scaled
// scales the edges to size ~1 first, where a x b may leave float's range.
template <bool Scaled, typename R>
__device__ __forceinline__ V3<R> cell_normal(V3<R> a, V3<R> b) {
  if constexpr (Scaled) return cross(times_pow2(a, -exponent_of(a)), times_pow2(b, -exponent_of(b)));
  else return cross(a, b);
}

// Values shrunk by 2^-32 (exact) for a redo where a float sum of values near
// float's maximum overflowed; the result is grown back by 2^32. Bitwise the
// float answer without the overflow, unless the tuple also holds values
// below ~1e-29, which lose bits to float's subnormal range there. A redo
// first tries shrink 1 (the rows alone may have been the problem).
constexpr float kShrink = 0x1p-32f;

template <bool Redo, int N, typename T>
__device__ __forceinline__ void shrink(T (&x)[N], T by) {
  if constexpr (Redo) {
#pragma unroll
    for (int i = 0; i < N; ++i) x[i] = by * x[i];
  }
}

// One term of a mean's sum: src's tuple at item, in Out, shrunk for a redo.
template <bool Redo, class Src, typename I, typename Out>
__device__ __forceinline__ void add_shrunk(const Src& src, I item, Out (&sum)[Src::C]) {
  constexpr int C = Src::C;
  typename Src::T x[C];
  src.one(item, x);
  Out y[C];
#pragma unroll
  for (int c = 0; c < C; ++c) y[c] = Out(x[c]);
  shrink<Redo>(y, Out(kShrink));
#pragma unroll
  for (int c = 0; c < C; ++c) sum[c] += y[c];
}

// The mean from add_shrunk's sum: times scale (one over the count), grown back
// after a redo.
template <bool Redo, int C, typename Out>
__device__ __forceinline__ void scale_shrunk(Out (&sum)[C], Out scale) {
#pragma unroll
  for (int c = 0; c < C; ++c) sum[c] = Redo ? Out(1 / kShrink) * (sum[c] * scale) : sum[c] * scale;
}

}  // namespace dax

#endif  // DAXPY_WIDE_CUH
