"""Block-wide exclusive scans for the CUDA sources: :data:`BLOCK_SCAN` for the kernels
that work on chunks of 256 cells, one a thread (:mod:`daxpy.cuda.clip_block`,
:mod:`daxpy.cuda.march_block`): each cell's place among its chunk's outputs;
:data:`WIDE_SCAN` for blocks of 1024 threads scanning counts in tiles
(:mod:`daxpy.cuda.scan`, the contour's row counts in :mod:`daxpy.cuda.contour_rows`).

Examples
--------
>>> "block_scan" in BLOCK_SCAN
True
"""

CHUNK = 256
"""Cells per block (a chunk): the kernels' counts are summed and scanned per chunk."""

BLOCK_SCAN = r"""
#ifndef DAXPY_BLOCK_SCAN  // once per source
#define DAXPY_BLOCK_SCAN
#define FULL 0xffffffffu
#define CHUNK 256
// Exclusive scan over the block's 256 threads (warp scans, then the warps' totals);
// ``total`` gets the block's sum. ``shared`` holds 8 values.
template <typename V>
__device__ __forceinline__ V block_scan(V v, V* shared, V& total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  V inclusive = v;
  for (int d = 1; d < 32; d <<= 1) {
    const V u = __shfl_up_sync(FULL, inclusive, d);
    if (lane >= d) inclusive += u;
  }
  if (lane == 31) shared[warp] = inclusive;
  __syncthreads();
  V before = 0;
  total = 0;
  for (int w = 0; w < CHUNK / 32; ++w) {
    if (w < warp) before += shared[w];
    total += shared[w];
  }
  __syncthreads();  // the shared values may be reused by the next scan
  return before + inclusive - v;
}
#endif
"""


WIDE_SCAN = r"""
#ifndef DAXPY_WIDE_SCAN  // once per source
#define DAXPY_WIDE_SCAN
// Exclusive scan of one value a thread over a block of 1024 threads (warp scans, then
// one warp over the 32 warps' totals); ``total`` gets the block's sum. ``warps``
// holds 32 values; it may be reused by the next call.
__device__ __forceinline__ long long wide_scan(long long v, long long* warps,
                                               long long& total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  long long inclusive = v;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const long long u = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += u;
  }
  if (lane == 31) warps[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    long long w = warps[lane];
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const long long u = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w += u;
    }
    warps[lane] = w;
  }
  __syncthreads();
  total = warps[31];
  const long long before = (warp ? warps[warp - 1] : 0) + inclusive - v;
  __syncthreads();  // the next call writes warps again
  return before;
}
#endif
"""
