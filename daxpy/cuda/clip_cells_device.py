"""The CUDA device functions both kernels of :mod:`daxpy.cuda.clip_cells` call (a
point's cut edges and their weights, a column's kept corners, a warp's scan), once
per source (:data:`DEVICE_FUNCTIONS`).

Examples
--------
>>> "clip_weight" in DEVICE_FUNCTIONS
True
"""

from .warp_owner import WARP_OWNER

DEVICE_FUNCTIONS = WARP_OWNER + r"""
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

// A field's value at point p, which is (i, j, k) (F): as stored (clip_values), or a
// plane's signed distance made from the grid's axes' terms where it is read
// (clip_plane_values).
template <typename V>
struct clip_values {
  const V* s;
  __device__ __forceinline__ V operator()(long long p, int, int, int) const {
    return __ldg(s + p);
  }
};

// Point (i, j, k)'s distance is (px[i] + py[j]) + pz[k], each sum rounded on its
// own: the array program's (x - o0) n0 + (y - o1) n1 + (z - o2) n2 of the same terms.
struct clip_plane_values {
  const double *px, *py, *pz;
  __device__ __forceinline__ double operator()(long long, int i, int j, int k) const {
    return __dadd_rn(__dadd_rn(__ldg(px + i), __ldg(py + j)), __ldg(pz + k));
  }
};

// The array program's cut weight along the edge from point lo, at (i, j, k), to its
// next point along axis (step further in memory), in float64. The intrinsics round
// each operation on its own: no contraction, the CPU's bits.
template <typename F>
__device__ __forceinline__ double clip_weight(const F& field, double value, long long lo,
                                              int i, int j, int k, int axis,
                                              long long step) {
  const double low = (double)field(lo, i, j, k);
  const double high = (double)field(lo + step, i + (axis == 0), j + (axis == 1),
                                    k + (axis == 2));
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

// The same bits of a plane's distance at column x of rows j, j1 (the next, or j
// past the last row) and planes k, k1 (as up and out are 0 past the last).
__device__ __forceinline__ unsigned clip_plane_column(const double* __restrict__ px,
                                                      const double* __restrict__ py,
                                                      const double* __restrict__ pz, int x,
                                                      int j, int j1, int k, int k1,
                                                      double bound, unsigned flip) {
  const double a = __ldg(px + x), b = __ldg(py + j), c = __ldg(py + j1);
  const double d = __ldg(pz + k), e = __ldg(pz + k1);
  return ((unsigned)(__dadd_rn(__dadd_rn(a, b), d) >= bound) ^ flip)
       | ((unsigned)(__dadd_rn(__dadd_rn(a, c), d) >= bound) ^ flip) << 1
       | ((unsigned)(__dadd_rn(__dadd_rn(a, b), e) >= bound) ^ flip) << 2
       | ((unsigned)(__dadd_rn(__dadd_rn(a, c), e) >= bound) ^ flip) << 3;
}

// A point row's cut edges at point p, which is (i, j, k), by axis (made rows from
// cut: a kept point is a bit of the kept words, its values copied by them).
template <typename F>
__device__ __forceinline__ void clip_points(const F& field, double value, long long p,
                                            int i, int j, int k, unsigned flag, long long nx,
                                            long long nxy, long long n, long long cut,
                                            long long* __restrict__ ids,
                                            double* __restrict__ weights,
                                            long long* __restrict__ keys) {
#pragma unroll
  for (int axis = 0; axis < 3; ++axis) {
    if (flag & 2u << axis) {
      const long long step = axis == 0 ? 1 : axis == 1 ? nx : nxy, q = p + step;
      const double t = clip_weight(field, value, p, i, j, k, axis, step);
      reinterpret_cast<longlong2*>(ids)[cut] = make_longlong2(p, q);
      reinterpret_cast<double2*>(weights)[cut] = make_double2(__dsub_rn(1.0, t), t);
      keys[cut] = n + p * n + q;
      ++cut;
    }
  }
}
#endif
"""
