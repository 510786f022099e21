"""The CUDA source of the bits kernel of :mod:`daxpy.cuda.contour_rows` (joined to the
shared helpers and the other row kernels by
:func:`daxpy.cuda.contour_rows_source.source_for`): each point's value compared once,
into words of 32 points along each row, which the classify kernel reads.
"""

BITS = r"""
// A bit a point, in words of 32 along each row (word w of row r: points 32 w ..
// 32 w + 31, bits past the row's end 0): at or above the bound (``in_words``), equal
// to the value (``ex_words``); each value read once, four a lane (one 16-byte load
// where rows start 16-byte aligned), and ``unusual`` raised where one is not finite
// (the array program's rules apply). A warp a row, 128 points at a time: lanes
// 8 m .. 8 m + 7 hold word m's points, gathered by three shuffles.
extern "C" __global__ void __launch_bounds__(256) NAME_bits(
    const T* __restrict__ s, const double* __restrict__ py, const double* __restrict__ pz,
    const T bound, const T at, const int nx, const int ny, const int nz, const int aligned,
    unsigned* __restrict__ in_words, unsigned* __restrict__ ex_words,
    int* __restrict__ unusual)
{
  const long long r = (long long)blockIdx.x * ROWS + threadIdx.y;  // j + ny k
  if (r >= (long long)ny * nz) return;  // a whole warp: its shuffles stay full
  const int lane = threadIdx.x, chunks = (nx + 31) / 32;
#if PLANE
  const PlaneRow row = {s, __dadd_rn(pz[r / ny], py[r % ny])};
#else
  const T* const row = s + r * nx;
#endif
  const bool wide = aligned && nx % 4 == 0;
  bool odd = false;
  for (int x0 = 0; x0 < nx; x0 += 128) {
    const int x = x0 + 4 * lane, left = nx - x;
    T v[4];
    load4(row, x < nx ? x : nx - 1, nx, wide, v);
    unsigned in = 0, ex = 0;
    bool equal = false;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const bool here = i < left;
      in |= (unsigned)(here && v[i] >= bound) << i;
      equal |= here && v[i] == at;
      odd |= here && !isfinite(v[i]);
    }
    // The lane's nibble at its place in its word, then the word's eight nibbles or'd.
    in <<= 4 * (lane & 7);
    in |= __shfl_xor_sync(FULL, in, 1);
    in |= __shfl_xor_sync(FULL, in, 2);
    in |= __shfl_xor_sync(FULL, in, 4);
    if (__any_sync(FULL, equal)) {  // rare: the equal bits made only where one is
#pragma unroll
      for (int i = 0; i < 4; ++i) ex |= (unsigned)(i < left && v[i] == at) << i;
      ex <<= 4 * (lane & 7);
      ex |= __shfl_xor_sync(FULL, ex, 1);
      ex |= __shfl_xor_sync(FULL, ex, 2);
      ex |= __shfl_xor_sync(FULL, ex, 4);
    }
    const int word = x0 / 32 + lane / 8;
    if ((lane & 7) == 0 && word < chunks) {
      in_words[r * chunks + word] = in;
      ex_words[r * chunks + word] = ex;
    }
  }
  if (__any_sync(FULL, odd) && lane == 0) atomicOr(unusual, 1);
}
"""
