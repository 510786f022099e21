"""An exclusive scan of int32 counts into int64 starts on the GPU, with a few of its
values written straight into page-locked host memory: the output sizes a
topology-generating kernel needs before its emit pass, after one sync.

CuPy's ``cumsum`` followed by a copy of each total costs the host about 0.19 ms
(the scan's launches and temporaries about 0.1 ms, ``cupy.zeros`` for the leading
0, the copies of the totals and their pinned buffer): at 256³ a threshold's GPU
work before its emit is 0.08 ms, so the GPU waited on the host
(``benchmarks/NOTES.md``). Here three kernels do it: each tile of
:data:`TILE` counts sums itself; one block scans the tiles' sums; each tile scans
itself from its start, writes its starts (``starts[0] = 0`` too) and, where one of
them is asked for, writes it into the caller's pinned memory. The sums are exact
(int64), so the starts are ``cumsum``'s.

Examples
--------
>>> TILE
4096
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from .block_scan import WIDE_SCAN
from .compile import kernels_from

TILE = 4096
"""Counts a block of 1024 threads scans, four a thread."""

AT_MOST = 8
"""Starts a scan can write into host memory."""

_SOURCE = r"""
#ifndef DAXPY_SCAN  // once per source
#define DAXPY_SCAN
__device__ __forceinline__ long long four(const int* __restrict__ counts, long long n,
                                          long long first, int v[4]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = first + i < n ? counts[first + i] : 0;
  return (long long)v[0] + v[1] + v[2] + v[3];
}

// 1. Each tile's sum.
extern "C" __global__ void __launch_bounds__(1024) scan_tile_sums(
    const int* __restrict__ counts, const long long n, long long* __restrict__ sums)
{
  __shared__ long long warps[32];
  int v[4];
  long long total;
  wide_scan(four(counts, n, blockIdx.x * (long long)TILE + 4 * threadIdx.x, v), warps, total);
  if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

// 2. The tiles' sums scanned in place into their starts, by one block.
extern "C" __global__ void __launch_bounds__(1024) scan_tile_starts(
    long long* __restrict__ sums, const long long tiles)
{
  __shared__ long long warps[32];
  long long carry = 0, total;
  for (long long base = 0; base < tiles; base += 1024) {
    const long long t = base + threadIdx.x;
    const long long v = t < tiles ? sums[t] : 0;
    const long long before = wide_scan(v, warps, total);
    if (t < tiles) sums[t] = carry + before;
    carry += total;
  }
}

// 3. Each tile's starts from its own start; the asked-for starts into host memory.
extern "C" __global__ void __launch_bounds__(1024) scan_tile_write(
    const int* __restrict__ counts, const long long n, const long long* __restrict__ tile_starts,
    long long* __restrict__ starts, const long long a0, const long long a1,
    const long long a2, const long long a3, const long long a4, const long long a5,
    const long long a6, const long long a7, volatile long long* host)
{
  __shared__ long long warps[32];
  int v[4];
  long long total;
  const long long asked[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
  const long long first = blockIdx.x * (long long)TILE + 4 * threadIdx.x;
  long long at = tile_starts[blockIdx.x] + wide_scan(four(counts, n, first, v), warps, total);
  if (first == 0) {
    starts[0] = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (asked[j] == 0) host[j] = 0;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const long long k = first + i + 1;  // the start this item ends at
    if (k > n) break;
    at += v[i];
    starts[k] = at;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (k == asked[j]) host[j] = at;
  }
}
#endif
"""

NAMES = ("scan_tile_sums", "scan_tile_starts", "scan_tile_write")
"""The three kernels of :func:`source`, in the order they run."""

_HOST = threading.local()
"""Each thread's page-locked slots for the starts read back."""


def _named_source() -> tuple[tuple[str, ...], str]:
    return NAMES, source()


def source() -> str:
    """The kernels' CUDA source.

    Examples
    --------
    >>> all(name in source() for name in NAMES)
    True
    """
    return f"#define TILE {TILE}\n{WIDE_SCAN}{_SOURCE}#undef TILE\n"


def scan_into(counts: Any, starts: Any, at: Sequence[int] = (), host: int = 0) -> None:
    """Enqueue the exclusive scan of the int32 ``counts`` (``n``) into the int64
    ``starts`` (``n + 1``, ``starts[0] = 0``) on the current stream, with no host
    sync; ``starts[i]`` for each ``i`` of ``at`` (at most :data:`AT_MOST`) is also
    written to the page-locked ``host`` address, in order.

    Examples
    --------
    >>> import cupy  # doctest: +SKIP
    >>> starts = cupy.empty(4, cupy.int64)  # doctest: +SKIP
    >>> scan_into(cupy.array([2, 0, 3], cupy.int32), starts)  # doctest: +SKIP
    >>> starts.tolist()  # doctest: +SKIP
    [0, 2, 2, 5]
    """
    import cupy

    n = int(counts.shape[0])
    if len(at) > AT_MOST or not all(0 <= int(i) <= n for i in at) \
            or starts.shape != (n + 1,) or counts.dtype != np.int32 \
            or starts.dtype != np.int64 or not counts.flags.c_contiguous \
            or not starts.flags.c_contiguous:
        raise ValueError(f"the scan takes n contiguous int32 counts, n + 1 contiguous "
                         f"int64 starts and at most {AT_MOST} places in 0..n")
    sum_tiles, start_tiles, write_tiles = kernels_from(_named_source)
    tiles = max(1, (n + TILE - 1) // TILE)
    tile_sums = cupy.empty(tiles, cupy.int64)
    places = [np.int64(i) for i in at] + [np.int64(-1)] * (AT_MOST - len(at))
    sum_tiles((tiles,), (1024,), (counts, np.int64(n), tile_sums))
    start_tiles((1,), (1024,), (tile_sums, np.int64(tiles)))
    write_tiles((tiles,), (1024,), (counts, np.int64(n), tile_sums, starts, *places,
                                    np.uint64(host)))


def scan_counts(counts: Any, starts: Any, at: Sequence[int]) -> list[int]:
    """:func:`scan_into`, then ``starts[i]`` for each ``i`` of ``at`` (at most
    :data:`AT_MOST`), after one sync.

    Examples
    --------
    >>> import cupy  # doctest: +SKIP
    >>> starts = cupy.empty(4, cupy.int64)  # doctest: +SKIP
    >>> scan_counts(cupy.array([2, 0, 3], cupy.int32), starts, [1, 3])  # doctest: +SKIP
    [2, 5]
    """
    import cupy

    host = getattr(_HOST, "slots", None)
    if host is None:
        host = _HOST.slots = cupy.cuda.alloc_pinned_memory(8 * AT_MOST)
    scan_into(counts, starts, at, host.ptr)
    cupy.cuda.get_current_stream().synchronize()
    return [int(v) for v in np.frombuffer(host, np.int64, len(at))]
