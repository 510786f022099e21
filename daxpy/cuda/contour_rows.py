"""The contour of a 3-D structured grid's point field on the GPU, one grid row per warp.

The array program (:mod:`daxpy.worklets._marching`) classifies every cell, then
sorts the cut edges of the output triangles to merge them into points: about
twenty CuPy passes, a sort among them. Here, as in Flying Edges, each warp owns a
row of points ``(j, k)`` (``x`` along its lanes) and two kernels do the work:

1. *classify*: each point's byte (bit 0: at or above the value; bits 1-3: its
   x, y and z edges cut), and each row's number of cut edges (output points) and
   of triangles (of the cells whose corner 0 is in the row);
2. two exclusive scans over rows, then the one host sync: the output sizes;
3. *emit*: each row's points at their final index (a warp scan gives each
   lane's first), and each cell's triangles, whose corners are the ids of its
   cut edges: its four corner rows' starts plus in-row scans.

Output order is the array program's: points by lower point id, then axis (x, y,
z), which is ascending ``(lo, hi)``; triangles by cell id, then VTK's table
order; the same ``t`` bits (``(value - s[lo]) / (s[hi] - s[lo])`` in float64).
Every cut edge is used by a triangle (true of VTK's voxel table: checked by the
tests), so there is nothing to drop. Where a point's value is not finite or
equals the value exactly (a merge of cuts at that point, and cells with NaN
corners that make nothing) the array program's rules apply: :func:`contour_rows`
returns None, and the caller runs the array program.

Specialization: the field's dtype. The case tables come from the caller (VTK's,
:data:`daxpy.worklets._marching.TABLES`) and are compiled into the source.

Examples
--------
>>> import numpy as np
>>> counts = np.zeros(256, np.int64); table = np.zeros((256, 5, 3), np.int64)
>>> edges = np.array([[0, 1], [1, 3], [2, 3], [0, 2], [4, 5], [5, 7], [6, 7], [4, 6],
...                   [0, 4], [1, 5], [2, 6], [3, 7]])
>>> source_for("f32", counts, table, edges)[0]
'contour_rows__f32'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compile import get_kernel

_TYPES = {"f32": "float", "f64": "double"}
_ROWS = 8  # warps (rows) per block

_SOURCE = r"""
#ifndef DAXPY_CONTOUR_ROWS  // what both specializations share, once per source
#define DAXPY_CONTOUR_ROWS
#define FULL 0xffffffffu
#define ROWS 8
static __device__ const unsigned char COUNTS[256] = {COUNTS_INIT};
static __device__ const signed char TABLE[256 * 15] = {TABLE_INIT};
// Edge e of a voxel: bits 5e..5e+4 hold its lower corner's row (0: (j, k),
// 1: (j+1, k), 2: (j, k+1), 3: (j+1, k+1)), x offset (bit 2) and axis (bits 3-4).
#define EDGE_INFO EDGE_INFO_INIT

__device__ __forceinline__ int scan_warp(int v) {  // inclusive, over the 32 lanes
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const int u = __shfl_up_sync(FULL, v, d);
    if ((int)threadIdx.x >= d) v += u;
  }
  return v;
}

// Cell case from the in-bits (bit q: row q) of a point and of its x neighbour:
// VTK's voxel corner order, x fastest, then y, then z.
__device__ __forceinline__ unsigned voxel_case(unsigned here, unsigned next) {
  return (here & 1) | (next & 1) << 1 | (here >> 1 & 1) << 2 | (next >> 1 & 1) << 3
       | (here >> 2 & 1) << 4 | (next >> 2 & 1) << 5 | (here >> 3 & 1) << 6
       | (next >> 3 & 1) << 7;
}
#endif

extern "C" __global__ void __launch_bounds__(256) NAME_classify(
    const T* __restrict__ s, const T bound, const double value, const int nx,
    const int ny, const int nz, unsigned char* __restrict__ flags,
    int* __restrict__ row_points, int* __restrict__ row_tris, int* __restrict__ unusual)
{
  __shared__ unsigned char counts[256];
  for (int i = threadIdx.y * 32 + threadIdx.x; i < 256; i += 32 * ROWS) counts[i] = COUNTS[i];
  __syncthreads();
  const long long r = (long long)blockIdx.x * ROWS + threadIdx.y;  // j + ny k
  if (r >= (long long)ny * nz) return;  // a whole warp: its shuffles stay full
  const int lane = threadIdx.x, j = (int)(r % ny), k = (int)(r / ny);
  const bool hy = j + 1 < ny, hz = k + 1 < nz, cells = hy && hz;
  const long long plane = (long long)nx * ny;
  const T* row0 = s + r * nx;
  const T* row1 = row0 + (hy ? nx : 0);
  const T* row2 = row0 + (hz ? plane : 0);
  const T* row3 = row0 + (cells ? nx + plane : 0);
  int points = 0, tris = 0, odd = 0;
  for (int x0 = 0; x0 < nx; x0 += 32) {
    const int x = x0 + lane, xc = x < nx ? x : nx - 1;
    const T a = row0[xc];
    const unsigned in = (a >= bound) | (row1[xc] >= bound) << 1 | (row2[xc] >= bound) << 2
                      | (row3[xc] >= bound) << 3;
    unsigned next = __shfl_down_sync(FULL, in, 1);
    if (lane == 31 && x + 1 < nx)
      next = (row0[x + 1] >= bound) | (row1[x + 1] >= bound) << 1
           | (row2[x + 1] >= bound) << 2 | (row3[x + 1] >= bound) << 3;
    if (x < nx) {
      const unsigned cut = (x + 1 < nx && ((in ^ next) & 1)) | (hy && ((in ^ in >> 1) & 1)) << 1
                         | (hz && ((in ^ in >> 2) & 1)) << 2;
      flags[r * nx + x] = (unsigned char)((in & 1) | cut << 1);
      points += __popc(cut);
      odd |= !isfinite(a) || (double)a == value;
      if (cells && x + 1 < nx) tris += counts[voxel_case(in, next)];
    }
  }
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    points += __shfl_down_sync(FULL, points, d);
    tris += __shfl_down_sync(FULL, tris, d);
  }
  odd = __any_sync(FULL, odd);
  if (lane == 0) {
    row_points[r] = points;
    row_tris[r] = tris;
    if (odd) atomicOr(unusual, 1);
  }
}

extern "C" __global__ void __launch_bounds__(256) NAME_emit(
    const T* __restrict__ s, const double value, const int nx, const int ny, const int nz,
    const unsigned char* __restrict__ flags, const long long* __restrict__ point_start,
    const long long* __restrict__ tri_start, long long* __restrict__ lo,
    long long* __restrict__ hi, double* __restrict__ t, long long* __restrict__ tris,
    long long* __restrict__ source)
{
  __shared__ unsigned char counts[256];
  __shared__ signed char table[256 * 15];
  __shared__ long long ids[ROWS][32][12];  // each lane's cell: the point of each cut edge
  for (int i = threadIdx.y * 32 + threadIdx.x; i < 256 * 15; i += 32 * ROWS) {
    table[i] = TABLE[i];
    if (i < 256) counts[i] = COUNTS[i];
  }
  __syncthreads();
  const long long r = (long long)blockIdx.x * ROWS + threadIdx.y;
  if (r >= (long long)ny * nz) return;
  const int lane = threadIdx.x, w = threadIdx.y, j = (int)(r % ny), k = (int)(r / ny);
  const bool hy = j + 1 < ny, hz = k + 1 < nz, cells = hy && hz;
  const long long plane = (long long)nx * ny;
  // The four point rows of the cells of this row, and where their points start.
  const long long rows[4] = {r, r + (hy ? 1 : 0), r + (hz ? ny : 0), r + (cells ? ny + 1 : 0)};
  long long run[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) run[q] = point_start[rows[q]];
  long long tri_run = tri_start[r];
  const long long first_cell = (long long)(nx - 1) * (j + (long long)(ny - 1) * k);
  for (int x0 = 0; x0 < nx; x0 += 32) {
    const int x = x0 + lane, xc = x < nx ? x : nx - 1;
    unsigned f[4], g[4];
    long long before[4];  // this lane's point's first output point, per row
    int total[4], n[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      f[q] = x < nx ? flags[rows[q] * nx + xc] : 0u;
      n[q] = __popc(f[q] >> 1);
      const int inclusive = scan_warp(n[q]);
      total[q] = __shfl_sync(FULL, inclusive, 31);
      before[q] = run[q] + inclusive - n[q];
      g[q] = __shfl_down_sync(FULL, f[q], 1);
      if (lane == 31) g[q] = x + 1 < nx ? flags[rows[q] * nx + x + 1] : 0u;
    }
    if (x < nx) {  // this row's points: its cut edges, axis by axis
      const long long p = r * nx + x, steps[3] = {1, nx, plane};
      long long at = before[0];
#pragma unroll
      for (int a = 0; a < 3; ++a) {
        if (f[0] >> (1 + a) & 1) {
          const double low = (double)s[p], high = (double)s[p + steps[a]];
          lo[at] = p;
          hi[at] = p + steps[a];
          t[at] = (value - low) / (high - low);
          ++at;
        }
      }
    }
    const bool live = cells && x + 1 < nx;
    const unsigned here = (f[0] & 1) | (f[1] & 1) << 1 | (f[2] & 1) << 2 | (f[3] & 1) << 3;
    const unsigned next = (g[0] & 1) | (g[1] & 1) << 1 | (g[2] & 1) << 2 | (g[3] & 1) << 3;
    const unsigned c = voxel_case(here, next);
    const int made = live ? counts[c] : 0;
    const int made_inclusive = scan_warp(made);
    if (made) {
#pragma unroll
      for (int e = 0; e < 12; ++e) {
        const int info = (int)(EDGE_INFO >> (5 * e) & 31ull);
        const int q = info & 3, dx = info >> 2 & 1, axis = info >> 3;
        const unsigned fe = dx ? g[q] : f[q];
        if (fe >> (1 + axis) & 1)  // the point's cut edges before this axis come first
          ids[w][lane][e] = before[q] + (dx ? n[q] : 0) + __popc((fe >> 1) & ((1u << axis) - 1));
      }
      long long out = tri_run + made_inclusive - made;
      for (int m = 0; m < made; ++m, ++out) {
#pragma unroll
        for (int v = 0; v < 3; ++v) tris[3 * out + v] = ids[w][lane][table[c * 15 + 3 * m + v]];
        source[out] = first_cell + x;
      }
    }
    tri_run += __shfl_sync(FULL, made_inclusive, 31);
#pragma unroll
    for (int q = 0; q < 4; ++q) run[q] += total[q];
  }
}
"""


def _edge_info(edges: np.ndarray) -> int:
    """Pack each voxel edge's lower corner row, x offset and axis (5 bits an edge)."""
    info = 0
    for e, (a, b) in enumerate(np.asarray(edges).tolist()):
        low, axis = min(a, b), (a ^ b).bit_length() - 1
        row = (low >> 1 & 1) | (low >> 2 & 1) << 1
        info |= (row | (low & 1) << 2 | axis << 3) << (5 * e)
    return info


def source_for(dtype_code: str, counts: np.ndarray, table: np.ndarray,
               edges: np.ndarray) -> tuple[str, str]:
    """``(name, source)`` of the two kernels for a field of ``dtype_code`` (``"f32"``
    or ``"f64"``), with VTK's voxel case ``counts`` (256), padded ``table``
    (256, 5, 3) and ``edges`` (12, 2) compiled in. The kernels are ``name +
    "_classify"`` and ``name + "_emit"``.

    Examples
    --------
    >>> from daxpy.worklets._marching import TABLES
    >>> name, source = source_for("f64", *TABLES["voxel"])
    >>> name, "contour_rows__f64_emit(" in source
    ('contour_rows__f64', True)
    """
    name = f"contour_rows__{dtype_code}"
    padded = np.zeros((256, 5, 3), np.int64)
    padded[:, :table.shape[1]] = table
    body = (_SOURCE.replace("NAME", name)
            .replace("COUNTS_INIT", ", ".join(str(int(c)) for c in counts))
            .replace("TABLE_INIT", ", ".join(str(int(e)) for e in padded.ravel()))
            .replace("EDGE_INFO_INIT", f"{_edge_info(edges)}ull"))
    return name, f"#define T {_TYPES[dtype_code]}\n{body}#undef T\n"


_KERNELS: dict[str, tuple] = {}


def _kernels(code: str, tables: tuple) -> tuple:
    """The classify and emit kernels of a dtype, kept per tables object: building
    and hashing the source (its tables are 4,000 numbers) takes about a millisecond,
    longer than the kernels at 256³."""
    kept = _KERNELS.get(code)
    if kept is None or kept[0] is not tables:
        name, source = source_for(code, *tables)
        kept = _KERNELS[code] = (tables, *(get_kernel(f"{name}_{part}", source)
                                            for part in ("classify", "emit")))
    return kept[1:]


def contour_rows(scalars: Any, dims: tuple, value: float, bound: Any,
                 tables: tuple) -> tuple | None:
    """Cut a 3-D structured grid's point field at ``value`` on the GPU.

    Parameters
    ----------
    scalars : cupy.ndarray of float32 or float64, shape (n_points,)
    dims : tuple of int
        The grid's points along x, y and z, each at least 2.
    value : float
    bound : NumPy scalar of the scalars' dtype
        A point is in where its value is at or above it (the float64 comparison
        with ``value``, :func:`daxpy.worklets._marching.at_least_bound`).
    tables : (counts, table, edges)
        VTK's voxel tables.

    Returns
    -------
    (lo, hi, t, triangles, source) or None
        The cut edges (int64, int64, float64), the triangles (int64, (m, 3)) and
        their input cells (int64); None where a value is not finite or equals
        ``value`` (the array program's rules apply there).

    Examples
    --------
    >>> callable(contour_rows)
    True
    """
    import cupy

    nx, ny, nz = (int(d) for d in dims)
    scalars = cupy.ascontiguousarray(scalars)
    code = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}[scalars.dtype]
    classify, emit = _kernels(code, tables)
    rows = ny * nz
    blocks, threads = ((rows + _ROWS - 1) // _ROWS,), (32, _ROWS)
    flags = cupy.empty(nx * rows, cupy.uint8)
    row_counts = cupy.empty((2, rows), cupy.int32)
    unusual = cupy.zeros(1, cupy.int32)
    classify(blocks, threads, (scalars, scalars.dtype.type(bound), np.float64(value),
                               np.int32(nx), np.int32(ny), np.int32(nz), flags,
                               row_counts[0], row_counts[1], unusual))
    starts = cupy.zeros((2, rows + 1), cupy.int64)
    cupy.cumsum(row_counts[0], dtype=cupy.int64, out=starts[0, 1:])
    cupy.cumsum(row_counts[1], dtype=cupy.int64, out=starts[1, 1:])
    # The one host sync: the output's sizes, and whether the array program must run.
    n_points, n_tris, odd = (int(v) for v in cupy.concatenate(
        [starts[:, -1], unusual.astype(cupy.int64)]).get())
    if odd:
        return None
    lo, hi = cupy.empty(n_points, cupy.int64), cupy.empty(n_points, cupy.int64)
    t = cupy.empty(n_points, cupy.float64)
    triangles, source = cupy.empty((n_tris, 3), cupy.int64), cupy.empty(n_tris, cupy.int64)
    if n_tris:
        emit(blocks, threads, (scalars, np.float64(value), np.int32(nx), np.int32(ny),
                               np.int32(nz), flags, starts[0], starts[1], lo, hi, t,
                               triangles, source))
    return lo, hi, t, triangles, source
