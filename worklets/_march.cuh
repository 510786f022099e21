// Marching kernels for 3-D structured grids (benchmarks/NOTES.md has the
// measurements behind each choice). A block is 32 x 8 threads; each warp
// covers one row j of 32 groups of V consecutive x items, and walks a chunk
// of zc planes along z, keeping in registers the planes it still needs, so
// each input value comes from DRAM about once. x neighbours come from the
// lanes beside it (shuffles), y neighbours from the rows of the warps beside
// it (L1 hits). A warp's outputs are staged in shared memory and written as
// one contiguous segment, W values per store, with plain stores (streaming
// ones measured up to 7% slower here, benchmarks/NOTES.md).
//
// Rows are per warp (blockDim.x == 32), so a warp past the last row returns
// at once and every shuffle and __syncwarp runs with all 32 lanes.
#ifndef DAXPY_MARCH_CUH
#define DAXPY_MARCH_CUH

namespace dax {

constexpr int kMarchRows = 8;  // warps (rows) per block: 32 x 8 = 256 threads
constexpr unsigned kAllLanes = 0xffffffffu;

// Where a thread sits: its group q of V items (x0 its first item; lanes past
// the last group repeat it, so that they can still take part in shuffles),
// its row j and its planes [k0, k1).
template <int V, typename I>
struct Tile {
  int lane;
  I x0, j, k0, k1;
  __device__ __forceinline__ Tile(I groups, I planes, int zc) {
    lane = int(threadIdx.x);
    const I q = I(blockIdx.x) * 32 + lane;
    x0 = (q < groups ? q : groups - 1) * V;
    j = I(blockIdx.y) * kMarchRows + I(threadIdx.y);
    k0 = I(blockIdx.z) * zc;
    k1 = k0 + zc < planes ? k0 + zc : planes;
  }
  // First item of the warp, and how many of the warp's items exist.
  __device__ __forceinline__ I first() const { return I(blockIdx.x) * 32 * V; }
  __device__ __forceinline__ int valid(I n_items) const {
    const I left = n_items - first();
    return left <= 0 ? 0 : left < 32 * V ? int(left) : 32 * V;
  }
};

template <int N, typename R>
__device__ __forceinline__ void shuffle_up(const R (&x)[N], R (&y)[N]) {
#pragma unroll
  for (int n = 0; n < N; ++n) y[n] = __shfl_up_sync(kAllLanes, x[n], 1);
}

template <int N, typename R>
__device__ __forceinline__ void shuffle_down(const R (&x)[N], R (&y)[N]) {
#pragma unroll
  for (int n = 0; n < N; ++n) y[n] = __shfl_down_sync(kAllLanes, x[n], 1);
}

// Lane l's N values go to stage[N*l ...]; the warp then writes the first
// n_valid staged values to dst, W consecutive values per store (W > 1 only
// where dst and n_valid are multiples of W, which the plan checked).
template <int N, int W, typename T>
__device__ __forceinline__ void store_staged(T* stage, const T (&x)[N], T* dst, int n_valid) {
  const int lane = int(threadIdx.x);
  if constexpr (N == W) {
    // A lane's values are one word at its own place: stored as they are, without
    // the round trip through shared memory or a warp sync (a redo of this lane's
    // points after it is this lane's, in program order).
    if (N * lane < n_valid) store_vector<W>(dst + N * lane, x);
    return;
  }
#pragma unroll
  for (int n = 0; n < N; ++n) stage[N * lane + n] = x[n];
  __syncwarp();
#pragma unroll
  for (int s = 0; s < (N + W - 1) / W; ++s) {
    const int at = (32 * s + lane) * W;
    if (at < n_valid) {
      T v[W];
#pragma unroll
      for (int w = 0; w < W; ++w) v[w] = stage[at + w];
      store_vector<W>(dst + at, v);
    }
  }
  __syncwarp();
}

// The averaging marches' output for one plane: each of the group's V means
// (mean(v, avg) writes the v-th) goes through dst.apply into the warp's
// staged segment of the row of n_items items from first, stored as one;
// then the items whose mean needs the redo (see no_redo) are handed to
// redo(item), which writes them again.
template <int V, int W, class Dst, typename I, class Mean, class Redo>
__device__ __forceinline__ void store_means(const Dst& dst, const Tile<V, I>& t, I first,
                                            I n_items, Mean mean, Redo redo) {
  typedef typename Dst::Final F;
  constexpr int FC = Dst::final_c;
  __shared__ F stage[kMarchRows][32 * V * FC];
  F o[V * FC];
  unsigned redo_mask = 0;
#pragma unroll
  for (int v = 0; v < V; ++v) {
    typename Dst::T avg[Dst::C];
    mean(v, avg);
    redo_mask |= no_redo(avg) ? 0u : 1u << v;
    F fin[FC];
    dst.apply(first + t.x0 + v, avg, fin);
#pragma unroll
    for (int c = 0; c < FC; ++c) o[v * FC + c] = fin[c];
  }
  store_staged<V * FC, W>(stage[threadIdx.y], o, dst.data() + (first + t.first()) * I(FC),
                          FC * t.valid(n_items));
  // After store_staged's __syncwarp: these stores come after the group's.
  if (redo_mask) {
#pragma unroll 1
    for (int v = 0; v < V; ++v)
      if (((redo_mask >> v) & 1u) && t.x0 + v < n_items) redo(first + t.x0 + v);
  }
}

}  // namespace dax

#endif  // DAXPY_MARCH_CUH
