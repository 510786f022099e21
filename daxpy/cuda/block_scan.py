"""A block-wide exclusive scan for the CUDA sources of the kernels that work on chunks
of 256 cells, one a thread (:mod:`daxpy.cuda.clip_block`, :mod:`daxpy.cuda.march_block`):
each cell's place among its chunk's outputs.

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
