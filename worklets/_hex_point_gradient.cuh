// The point gradient of a grid whose first (or only) shape is the hexahedron,
// in three kernels that share two scratch arrays (daxpy/cuda/hex_gradient.py):
//
// 1. hex_point_gradient_fast: each (point, cell) pair's term from four corners,
//    no other path compiled in. The one-kernel form (point_gradient) reads all
//    eight corner values of every pair for the NaN rule and holds the
//    eight-corner path and the redo: 64 registers, and a pair's loads are the
//    slot, the cell's ids, the eight values and the neighbours. Here they are
//    the slot, two words of ids, then the neighbours, in about 40 registers.
//    Each thread checks its own point's value, so every value is checked once:
//    one not finite raises words[0] (the results are then all redone). A point
//    whose sum needs a redo goes on a list (words[1] counts it);
// 2. hex_point_gradient_all: point_gradient for every point where words[0] is
//    up, the points are not all finite, or the list overflowed (kHexListed): a
//    point is then stored twice, the same bits the second time (the first
//    shape's sums are stored, not added to). A small grid strides over the
//    points, so that when nothing is left to it, it ends at once;
// 3. hex_point_gradient_listed: point_gradient for the listed points, otherwise.
//    Two kernels, not one: a kernel that does both holds 8-14 more registers.
//
// Results are those of point_gradient bit for bit: with all eight values of
// a pair finite it takes the same four-corner term (hex_corner_term).
#ifndef DAXPY_HEX_POINT_GRADIENT_CUH
#define DAXPY_HEX_POINT_GRADIENT_CUH

#include "_unstructured_gradient.cuh"

namespace dax {

// Points a run may list for the last kernel (daxpy.cuda.hex_gradient.LISTED).
constexpr int kHexListed = 16384;

// w[k] for k in 0..3 by selects (a runtime index into registers would go
// through local memory).
template <typename I>
__device__ __forceinline__ I pick4(const I (&w)[4], int k) {
  const I a = (k & 1) ? w[1] : w[0];
  const I b = (k & 1) ? w[3] : w[2];
  return (k & 2) ? b : a;
}

template <typename I, typename R, bool Last, class Src, class Dst>
__device__ __forceinline__ void hex_point_gradient_fast(
    const ShapeLinks<Hex, I, R, true, Last>& topo, I p, const Src& src, const Dst& dst,
    int* words, I* listed) {
  constexpr int C = Src::C;
  if (!topo.finite_points) return;
  Tuple<V3<R>, C> g;
  zero(g.v);
  bool ok = true;
  V3<R> X[4];
  R f[4][C];
  X[0] = topo.point_coords(p);
  gather<R>(src, p, f[0]);
  // Every thread that sees one writes the same word: no atomic needed.
  if (!all_finite(f[0])) words[0] = 1;
  const I end = load(topo.offsets + p + 1);
  for (I l = load(topo.offsets + p); l < end; ++l) {
    const I slot = load(topo.slots + l);
    const I cell = slot / I(8);
    const int corner = int(slot - cell * I(8));
    // The cell's face holding the corner as one 16-byte word (corners ^ 1 and
    // ^ 3 are on it), the corner across it (^ 4) alone: two loads, not three.
    I face[4];
    load_cached<4>(topo.corners + cell * I(8) + (corner & 4), face);
    const int k = corner & 3;
    const I q[3] = {pick4(face, k ^ 1), pick4(face, k ^ 3),
                    load(topo.corners + cell * I(8) + (corner ^ 4))};
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      X[d + 1] = topo.point_coords(q[d]);
      gather<R>(src, q[d], f[d + 1]);
    }
    ok = hex_corner_term<R, C>(corner, X, f, g.v) && ok;
  }
  if (ok && no_redo(g.v)) {
    const I count = load(topo.counts + p);
    store_point_gradient<true, Last, C>(g.v, p, R(1) / R(count > 0 ? count : 1), R(1), dst);
    return;
  }
  const int at = atomicAdd(words + 1, 1);
  if (at < kHexListed) listed[at] = p;
}

// Whether the four-corner kernel left every point to point_gradient.
template <typename I, typename R, bool Last>
__device__ __forceinline__ bool left_all(const ShapeLinks<Hex, I, R, true, Last>& topo,
                                         const int* words) {
  return !topo.finite_points || load(words) != 0 || load(words + 1) > kHexListed;
}

template <typename I, typename R, bool Last, class Src, class Dst>
__device__ __forceinline__ void hex_point_gradient_all(
    const ShapeLinks<Hex, I, R, true, Last>& topo, I item, const Src& src, const Dst& dst,
    int* words, I*) {
  if (!left_all(topo, words)) return;
  const I stride = I(gridDim.x) * I(blockDim.x);
  for (I p = item; p < topo.n_points(); p += stride) point_gradient(topo, p, src, dst);
}

// Launched over kHexListed items.
template <typename I, typename R, bool Last, class Src, class Dst>
__device__ __forceinline__ void hex_point_gradient_listed(
    const ShapeLinks<Hex, I, R, true, Last>& topo, I item, const Src& src, const Dst& dst,
    int* words, I* listed) {
  if (!left_all(topo, words) && item < I(load(words + 1)))
    point_gradient(topo, load(listed + item), src, dst);
}

}  // namespace dax

#endif  // DAXPY_HEX_POINT_GRADIENT_CUH
