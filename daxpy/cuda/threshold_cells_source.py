"""The CUDA source of the kernels of :mod:`daxpy.cuda.threshold_cells`: the one that
reads the field, specialized per dtype and test (:func:`classify_source`: the points'
bits, or the cells' words of cell scalars), and the three that do not (classify from
the points' bits, mark and emit: :func:`index_source`).

Examples
--------
>>> classify_source("float32", "all")[0]
'threshold_cells__f32__all_bits'
"""

from __future__ import annotations

from .codegen import ctype, dtype_tag

MODES = ("cells", "all", "any", "range")
"""The tests a cell can pass: its own value in range (cell scalars); all, any of
its corners in range; the range of its corners' values meets the range."""

WARPS = 8
"""Warps per block."""

SPAN = 4
"""Words of 32 values a warp reads: its loads are all in flight at once. With one,
classify ran at 0.12 ms at 256³ (H200), a tenth of the copy rate; with 4, at
0.055 ms."""

_COMMON = r"""
#ifndef DAXPY_THRESHOLD_CELLS  // what every kernel shares, once per source
#define DAXPY_THRESHOLD_CELLS
#define FULL 0xffffffffu
__device__ __forceinline__ unsigned lanes_below() {
  return (1u << (threadIdx.x & 31)) - 1u;
}
#endif
"""

# Point scalars: first a bit a point of each test's plane (*bits*: a warp reads SPAN
# words of 32 points, every load in flight before the first ballot), then a cell's
# test from its four point rows' words (*classify* in the index source): each point
# value is read once, where a cell's corners read it four times (its four rows) and
# ran at half the copy rate. NaN compares false: in no range, and (its plane) in no
# corners' range, as in the array program.
_POINT_BITS = r"""
extern "C" __global__ void __launch_bounds__(32 * WARPS)
NAME(const T* __restrict__ s, T lower, T upper, int nx, int n_words,
     unsigned* __restrict__ bits) {
  const int words = (nx + 31) / 32, lane = threadIdx.x;
  const int g0 = (blockIdx.x * WARPS + threadIdx.y) * SPAN;
  if (g0 >= n_words) return;  // whole warps only: the ballots below need them
  T v[SPAN];
  bool valid[SPAN];
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    const int g = g0 + u, row = g / words, x = 32 * (g - row * words) + lane;
    valid[u] = g < n_words && x < nx;
    v[u] = valid[u] ? s[row * nx + x] : (T)0;
  }
  unsigned mine[PLANES];  // lane u: word u of the span, of each plane
#pragma unroll
  for (int p = 0; p < PLANES; ++p) mine[p] = 0u;
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    // In range as compared in float64: the bounds are the dtype's numbers at or
    // inside the range (the caller's), so the comparison is exact in T.
#if PLANES == 1
    const unsigned in = __ballot_sync(FULL, valid[u] && v[u] >= lower && v[u] <= upper);
    mine[0] = lane == u ? in : mine[0];
#else  // the corners' range: at or above lower, at or below upper, NaN
    const unsigned above = __ballot_sync(FULL, valid[u] && v[u] >= lower);
    const unsigned below = __ballot_sync(FULL, valid[u] && v[u] <= upper);
    const unsigned nan = __ballot_sync(FULL, valid[u] && v[u] != v[u]);
    mine[0] = lane == u ? above : mine[0];
    mine[1] = lane == u ? below : mine[1];
    mine[2] = lane == u ? nan : mine[2];
#endif
  }
  if (lane < SPAN && g0 + lane < n_words) {
#pragma unroll
    for (int p = 0; p < PLANES; ++p) bits[(long long)p * n_words + g0 + lane] = mine[p];
  }
}
"""

# Cell scalars: bit x of word w of a row of cells says cell 32 w + x of the row is
# kept; a warp classifies SPAN words of a row, every load in flight before the first
# is used (a warp of one word ran at a seventh of the copy rate).
_CELL_VALUES = r"""
extern "C" __global__ void __launch_bounds__(32 * WARPS)
NAME(const T* __restrict__ s, T lower, T upper, int invert, int nx, int ny, int nz,
     unsigned* __restrict__ cell_words, int* __restrict__ counts) {
  const int cx = nx - 1, cy = ny - 1, cz = nz - 1, words = (cx + 31) / 32;
  const int spans = (words + SPAN - 1) / SPAN;
  const int g = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
  if (g >= spans * cy * cz) return;  // whole warps only: the ballots below need them
  const int row = g / spans, w0 = (g - row * spans) * SPAN, x0 = 32 * w0 + lane;
  T v[SPAN];
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    const int x = x0 + 32 * u;
    v[u] = x < cx ? s[(long long)row * cx + x] : (T)0;
  }
  unsigned mine = 0u;  // lane u: word u of the span
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    const bool keep = x0 + 32 * u < cx && ((v[u] >= lower && v[u] <= upper) != (invert != 0));
    const unsigned word = __ballot_sync(FULL, keep);
    mine = lane == u ? word : mine;
  }
  if (lane < SPAN && w0 + lane < words) {
    cell_words[(long long)row * words + w0 + lane] = mine;
    counts[(long long)row * words + w0 + lane] = __popc(mine);
  }
}
"""

_INDEX = r"""
// classify: a thread per word of a row of cells (j, k), from the point words of its
// four point rows (bits: POINT_MODES' planes). Cell x's corners are points x and
// x + 1 of each row: bit x of a point word and the bit above it (the next word's
// first for the last).
extern "C" __global__ void __launch_bounds__(32 * WARPS)
threshold_cells_classify(const unsigned* __restrict__ bits, int mode, int invert, int nx,
                         int ny, int nz, unsigned* __restrict__ cell_words,
                         int* __restrict__ counts) {
  const int cx = nx - 1, cy = ny - 1, cz = nz - 1;
  const int cell_words_n = (cx + 31) / 32, point_words_n = (nx + 31) / 32;
  const int g = (blockIdx.x * WARPS + threadIdx.y) * 32 + threadIdx.x;
  if (g >= cell_words_n * cy * cz) return;
  const int row = g / cell_words_n, w = g - row * cell_words_n;
  const int j = row % cy, k = row / cy;
  const long long n_words = (long long)point_words_n * ny * nz;
  const int planes = mode == MODE_RANGE ? 3 : 1;
  // all: the and of every corner's bit; any, range: each plane's or.
  unsigned acc[3] = {mode == MODE_ALL ? FULL : 0u, 0u, 0u};
#pragma unroll
  for (int q = 0; q < 4; ++q) {  // point rows (j, k), (j + 1, k), (j, k + 1), (j + 1, k + 1)
    const long long at = ((long long)(k + (q >> 1)) * ny + j + (q & 1)) * point_words_n + w;
#pragma unroll
    for (int p = 0; p < 3; ++p) {
      if (p >= planes) break;
      const unsigned here = bits[p * n_words + at];
      const unsigned next = w + 1 < point_words_n ? bits[p * n_words + at + 1] : 0u;
      const unsigned up = here >> 1 | next << 31;  // the corners at x + 1
      acc[p] = mode == MODE_ALL ? acc[p] & here & up : acc[p] | here | up;
    }
  }
  // range: a corner at or above lower and one at or below upper, and no NaN.
  unsigned keep = mode == MODE_RANGE ? acc[0] & acc[1] & ~acc[2] : acc[0];
  const int left = cx - 32 * w;  // the word's cells
  keep = (invert ? ~keep : keep) & (left >= 32 ? FULL : (1u << left) - 1u);
  cell_words[g] = keep;
  counts[g] = __popc(keep);
}

// mark: a thread per word of a point row (y, z): a point is used where one of the
// cells beside it is kept (cells x - 1 and x of cell rows y - 1, y and z - 1, z).
extern "C" __global__ void __launch_bounds__(32 * WARPS)
threshold_cells_mark(const unsigned* __restrict__ cell_words, int nx, int ny, int nz,
                     unsigned* __restrict__ point_words, int* __restrict__ counts) {
  const int cy = ny - 1, cz = nz - 1;
  const int cell_words_n = (nx - 1 + 31) / 32, point_words_n = (nx + 31) / 32;
  const int g = (blockIdx.x * WARPS + threadIdx.y) * 32 + threadIdx.x;
  if (g >= point_words_n * ny * nz) return;
  const int row = g / point_words_n, w = g - row * point_words_n;
  const int y = row % ny, z = row / ny;
  unsigned bits = 0u;
  for (int k = z - 1; k <= z; ++k) {
    for (int j = y - 1; j <= y; ++j) {
      if (j < 0 || j >= cy || k < 0 || k >= cz) continue;
      const unsigned* cells = cell_words + ((long long)k * cy + j) * cell_words_n;
      const unsigned here = w < cell_words_n ? cells[w] : 0u;
      const unsigned before = w > 0 ? cells[w - 1] : 0u;
      bits |= here | here << 1 | before >> 31;  // cells x and x - 1
    }
  }
  point_words[g] = bits;
  counts[g] = __popc(bits);
}

// emit: a warp per word of cells: its kept cells' corners renumbered, offsets and
// types (their ids, where asked for, come from the words: daxpy.cuda.bit_words).
// starts is the exclusive scan of the cell words' counts, then the point words'
// (offset by n_kept). A kept cell's corners are used points, so the corner at x + 1
// of a point row is numbered one after the corner at x, whose number is its word's
// start and the used points of the lanes below: no renumbering table.
extern "C" __global__ void __launch_bounds__(32 * WARPS)
threshold_cells_emit(const unsigned* __restrict__ cell_words,
                     const unsigned* __restrict__ point_words,
                     const long long* __restrict__ starts, long long n_kept, int nx, int ny,
                     int nz, unsigned char cell_type, long long* __restrict__ connectivity,
                     long long* __restrict__ offsets, unsigned char* __restrict__ types) {
  __shared__ int number[WARPS][4][32];  // per kept cell (in order), its rows' corner x
  const int cx = nx - 1, cy = ny - 1, cz = nz - 1;
  const int cell_words_n = (cx + 31) / 32, point_words_n = (nx + 31) / 32;
  const int all_cell_words = cell_words_n * cy * cz;
  const int g = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
  const unsigned below = lanes_below();
  const unsigned word = g < all_cell_words ? cell_words[g] : 0u;
  if (!word) return;
  const int row = g / cell_words_n, w = g - row * cell_words_n;
  const int j = row % cy, k = row / cy, slot = __popc(word & below), n = __popc(word);
  const long long out = starts[g];
  if (word >> lane & 1u) {
    const long long c = out + slot;
    offsets[c] = 8 * c;
    types[c] = cell_type;
    if (c == n_kept - 1) offsets[n_kept] = 8 * n_kept;
#pragma unroll
    for (int q = 0; q < 4; ++q) {  // point rows (j, k), (j + 1, k), (j, k + 1), (j + 1, k + 1)
      const int at = ((k + (q >> 1)) * ny + j + (q & 1)) * point_words_n + w;
      number[threadIdx.y][q][slot] =
          (int)(starts[all_cell_words + at] - n_kept + __popc(point_words[at] & below));
    }
  }
  __syncwarp();
  // The corners in pairs of one point row (16 bytes a lane, the warp's stores
  // contiguous): VTK's hexahedron order walks rows 0 and 2 up x, rows 1 and 3 down.
  longlong2* pairs = reinterpret_cast<longlong2*>(connectivity + 8 * out);
  for (int t = lane; t < 4 * n; t += 32) {
    const int q = t & 3;
    const long long a = number[threadIdx.y][q][t >> 2];
    pairs[t] = (q & 1) ? make_longlong2(a + 1, a) : make_longlong2(a, a + 1);
  }
}
"""


POINT_MODES = {"all": 1, "any": 2, "range": 3}
"""The point scalars' tests as the classify kernel numbers them (``mode``)."""


def classify_source(dtype, mode: str) -> tuple[str, str]:
    """``(name, source)`` of the first kernel to read a field of ``dtype`` (float32 or
    float64) for the test ``mode`` (one of :data:`MODES`): for cell scalars, the cells'
    words; for point scalars, the points' bits (a plane for all and any, three for
    the corners' range) that the classify kernel of :func:`index_source` reads.

    Examples
    --------
    >>> name, source = classify_source("float64", "range")
    >>> name, "#define PLANES 3" in source
    ('threshold_cells__f64__range_bits', True)
    >>> classify_source("float32", "cells")[0]
    'threshold_cells__f32__cells_classify'
    """
    cells = mode == "cells"
    name = f"threshold_cells__{dtype_tag(dtype)}__{mode}_{'classify' if cells else 'bits'}"
    body = (_CELL_VALUES if cells else _POINT_BITS).replace("NAME", name)
    planes = 3 if mode == "range" else 1
    return name, (f"#define T {ctype(dtype)}\n#define WARPS {WARPS}\n#define SPAN {SPAN}\n"
                  f"#define PLANES {planes}\n{_COMMON}{body}"
                  "#undef PLANES\n#undef SPAN\n#undef WARPS\n#undef T\n")


def index_source() -> tuple[tuple[str, str, str], str]:
    """``((classify, mark, emit), source)``: the names of the kernels that do not read
    the field, and their source.

    Examples
    --------
    >>> index_source()[0]
    ('threshold_cells_classify', 'threshold_cells_mark', 'threshold_cells_emit')
    """
    modes = "".join(f"#define MODE_{m.upper()} {n}\n" for m, n in POINT_MODES.items())
    return ("threshold_cells_classify", "threshold_cells_mark", "threshold_cells_emit"), \
        (f"#define WARPS {WARPS}\n{modes}{_COMMON}{_INDEX}"
         + "".join(f"#undef MODE_{m.upper()}\n" for m in POINT_MODES) + "#undef WARPS\n")
