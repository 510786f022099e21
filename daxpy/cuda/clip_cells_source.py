"""The CUDA source of the kernels of :mod:`daxpy.cuda.clip_cells`: count and emit,
specialized per field dtype or for a plane's distance (:func:`source_for`). The case
tables are not compiled in: they come as small device arrays, in the layout
:data:`CASE_FIELDS` and :data:`CELL_FIELDS` name.

Examples
--------
>>> source_for("float32")[0]
('clip_cells__f32_count', 'clip_cells__f32_emit')
"""

from __future__ import annotations

from .clip_cells_device import DEVICE_FUNCTIONS
from .clip_emit_source import EMIT
from .codegen import ctype, dtype_tag

WARPS = 8
"""Warps (point rows) per block."""

CASE_FIELDS = 6
"""Per case: its output cells, its first output cell, slots, centre points, first
centre (the order of :func:`daxpy.worklets._clip_arrays._case_arrays`), and its
first entry in the slot table (every slot of its cells in order, as a place)."""

CELL_FIELDS = 2
"""Per output cell of the tables: its VTK type, and its last slot's end counted
from its case's first slot."""

CENTRE_TERMS = 7
"""Terms of a centre point in the tables (VTK's voxel tables, either side): compiled
in, so that the emit's loop over them unrolls and their reads are in flight together
(0.03 ms of a 256³ clip by scalar on an H100)."""

# count: a warp per point row (j, k), its lanes along x, 32 points at a time. The x
# + 1 column comes from the next lane (lane 31 reads its own).
_COUNT = r"""
extern "C" __global__ void __launch_bounds__(32 * WARPS)
NAME_count(const T* __restrict__ s, const double* __restrict__ py,
           const double* __restrict__ pz, T bound, int invert, int nx, int ny, int nz,
           const int* __restrict__ count_codes, unsigned char* __restrict__ flags,
           unsigned* __restrict__ words, int2* __restrict__ prefix,
           int* __restrict__ counts) {
  const int rows = ny * nz, r = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
  if (r >= rows) return;  // whole warps only: the shuffles below need them
  const int j = r % ny, k = r / ny;
  const long long first = (long long)r * nx;
  const long long up = j + 1 < ny ? nx : 0, out = k + 1 < nz ? (long long)nx * ny : 0;
  const bool cells = j + 1 < ny && k + 1 < nz;
  const unsigned flip = invert != 0;
#if PLANE
  const int j1 = up ? j + 1 : j, k1 = out ? k + 1 : k;
#define COLUMN(x) clip_plane_column(s, py, pz, (x), j, j1, k, k1, bound, flip)
#else
#define COLUMN(x) clip_column(s, first + (x), up, out, bound, flip)
#endif
  // Per lane, then per row: kept points, cut edges, output cells, slots, centres;
  // the first two the warp's own, counted a word of points at a time. In 32 bits,
  // as the rows' counts are: the count is bound by its instructions' issue.
  int total[5] = {0, 0, 0, 0, 0};
  const int chunks = (nx + 31) / 32;
  // Each word's columns are read while the word before is counted: a warp's words
  // are in turn, and waiting on each word's reads left the count bound by latency.
  unsigned ahead = lane < nx ? COLUMN(lane) : 0u;
  for (int x0 = 0, c = 0; x0 < nx; x0 += 32, ++c) {
    const int x = x0 + lane;
    const unsigned column = ahead;
    ahead = x + 32 < nx ? COLUMN(x + 32) : 0u;
    unsigned after = __shfl_down_sync(FULL, column, 1);
    const unsigned next_first = __shfl_sync(FULL, ahead, 0);  // x0 + 32, lane 31's x + 1
    if (lane == 31) after = next_first;
    if (x + 1 >= nx) after = column;  // the row's last point has no x edge
    // The row's kept points, a word of bits per 32 (the kept points' values are
    // copied by these words, no ids written).
    const unsigned kept = __ballot_sync(FULL, x < nx && (column & 1u));
    const unsigned flag = (column & 1u) | ((column ^ after) & 1u) << 1
                        | ((column ^ column >> 1) & 1u) << 2
                        | ((column ^ column >> 2) & 1u) << 3;
    // Each word's kept points and the kept points and cut edges of the row before
    // it: the emit numbers a word's points from these, without the words before.
    if (lane == 0) {
      words[(long long)r * chunks + c] = kept;
      prefix[(long long)r * chunks + c] = make_int2(total[0], total[1]);
    }
    total[0] += __popc(kept);
    total[1] += (int)__reduce_add_sync(FULL, x < nx ? (unsigned)clip_cuts(flag) : 0u);
    if (x < nx) {
      flags[first + x] = (unsigned char)flag;
      if (cells && x + 1 < nx) {
        // The case's cells, slots and centres, a byte each, in one read.
        const int code = count_codes[clip_spread(column) | clip_spread(after) << 1];
        total[2] += code & 255;
        total[3] += code >> 8 & 255;
        total[4] += code >> 16;
      }
    }
  }
#pragma unroll
  for (int q = 0; q < 5; ++q) {
    if (q > 1) total[q] = (int)__reduce_add_sync(FULL, (unsigned)total[q]);
    // Rows without cells (the last row and plane) count none: one scan per field
    // over the point rows serves the cell rows too.
    if (lane == 0) counts[(long long)q * rows + r] = total[q];
  }
}
"""

def source_for(dtype, plane: bool = False) -> tuple[tuple[str, str], str]:
    """``((count, emit), source)``: the kernels' names for a field of ``dtype``
    (float32 or float64), or (``plane``) for a plane's float64 signed distance made
    where it is read from the grid's axes' terms (no field of the grid's size), and
    their source.

    Examples
    --------
    >>> names, source = source_for("float64")
    >>> names[1], "#define T double" in source
    ('clip_cells__f64_emit', True)
    >>> source_for("float64", plane=True)[0][0]
    'clip_cells__plane_count'
    """
    name = "clip_cells__plane" if plane else f"clip_cells__{dtype_tag(dtype)}"
    sizes = {"WARPS": WARPS, "CASE_FIELDS": CASE_FIELDS, "CELL_FIELDS": CELL_FIELDS,
             "TERMS": CENTRE_TERMS, "PLANE": int(plane)}
    return (f"{name}_count", f"{name}_emit"), (
        f"#define T {'double' if plane else ctype(dtype)}\n"
        + "".join(f"#define {k} {v}\n" for k, v in sizes.items())
        + f"{DEVICE_FUNCTIONS}{_COUNT.replace('NAME', name)}{EMIT.replace('NAME', name)}"
        + "".join(f"#undef {k}\n" for k in sizes) + "#undef COLUMN\n#undef T\n")
