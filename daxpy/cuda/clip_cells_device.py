"""The CUDA device functions both kernels of :mod:`daxpy.cuda.clip_cells` call (a
point's cut edges and their weights, a column's kept corners, a warp's scan), once
per source (:data:`DEVICE_FUNCTIONS`).

Examples
--------
>>> "clip_weight" in DEVICE_FUNCTIONS
True
"""

DEVICE_FUNCTIONS = r"""
#ifndef DAXPY_CLIP_CELLS  // what both dtypes' kernels share, once per source
#define DAXPY_CLIP_CELLS
#define FULL 0xffffffffu
// One of four values held in registers, by a row number known only at run time
// (indexing the array would put it in local memory).
#define PICK(v, q) ((q) == 0 ? v[0] : (q) == 1 ? v[1] : (q) == 2 ? v[2] : v[3])

// A point's flag: bit 0 kept; bits 1 to 3 its x, y and z edges cut.
__device__ __forceinline__ int clip_cuts(unsigned f) {
  return (int)((f >> 1 & 1u) + (f >> 2 & 1u) + (f >> 3 & 1u));
}

// A column's bits (its rows (y, z): (0, 0), (1, 0), (0, 1), (1, 1)) at the case bits
// of the voxel corners at x = 0 (VTK's voxel corner order).
__device__ __forceinline__ unsigned clip_spread(unsigned c) {
  return (c & 1u) | (c & 2u) << 1 | (c & 4u) << 2 | (c & 8u) << 3;
}

__device__ __forceinline__ int clip_scan(int v) {  // inclusive, over the 32 lanes
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int u = __shfl_up_sync(FULL, v, d);
    if ((int)threadIdx.x >= d) v += u;
  }
  return v;
}

// The array program's cut weight along edge (lo, hi), in float64. The intrinsics
// round each operation on its own: no contraction, the CPU's bits.
template <typename V>
__device__ __forceinline__ double clip_weight(const V* __restrict__ s, double value,
                                              long long lo, long long hi) {
  const double low = (double)s[lo], high = (double)s[hi];
  return high != low ? __ddiv_rn(__dsub_rn(value, low), __dsub_rn(high, low)) : 0.0;
}

// Which of the points p, p + up, p + out, p + up + out are kept, as bits 0 to 3
// (up, out: 0 past the grid's last row or plane, so that no edge leaves it). The
// bound makes the comparison in V the float64 one; NaN is not at or above it.
template <typename V>
__device__ __forceinline__ unsigned clip_column(const V* __restrict__ s, long long p,
                                                long long up, long long out, V bound,
                                                unsigned flip) {
  return ((unsigned)(s[p] >= bound) ^ flip) | ((unsigned)(s[p + up] >= bound) ^ flip) << 1
       | ((unsigned)(s[p + out] >= bound) ^ flip) << 2
       | ((unsigned)(s[p + up + out] >= bound) ^ flip) << 3;
}

// A point row's cut edges at point p, by axis (made rows from cut: a kept point is
// a bit of the kept words, its values copied by them).
template <typename V>
__device__ __forceinline__ void clip_points(const V* __restrict__ s, double value,
                                            long long p, unsigned flag, long long nx,
                                            long long nxy, long long n, long long cut,
                                            long long* __restrict__ ids,
                                            double* __restrict__ weights,
                                            long long* __restrict__ keys) {
#pragma unroll
  for (int axis = 0; axis < 3; ++axis) {
    if (flag & 2u << axis) {
      const long long q = p + (axis == 0 ? 1 : axis == 1 ? nx : nxy);
      const double t = clip_weight(s, value, p, q);
      reinterpret_cast<longlong2*>(ids)[cut] = make_longlong2(p, q);
      reinterpret_cast<double2*>(weights)[cut] = make_double2(__dsub_rn(1.0, t), t);
      keys[cut] = n + p * n + q;
      ++cut;
    }
  }
}
#endif
"""
