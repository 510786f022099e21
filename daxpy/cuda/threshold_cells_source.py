"""The CUDA source of the kernels of :mod:`daxpy.cuda.threshold_cells`: classify,
specialized per field dtype and test (:func:`classify_source`), and the two
passes that do not read the field, mark and emit (:func:`index_source`).

Examples
--------
>>> classify_source("float32", "all")[0]
'threshold_cells__f32__all_classify'
"""

from __future__ import annotations

from .codegen import ctype, dtype_tag

MODES = ("cells", "all", "any", "range")
"""The tests a cell can pass: its own value in range (cell scalars); all, any of
its corners in range; the range of its corners' values meets the range."""

WARPS = 8
"""Warps per block."""

SPAN = 4
"""Words of 32 cells a warp classifies: its loads are all in flight at once. With
one, classify ran at 0.12 ms at 256³ (H200), a tenth of the copy rate; with 4, at
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

# Bit x of word w of a row of cells (j, k) says cell 32 w + x of the row is kept; a
# warp classifies SPAN words of a row. A point's test runs on the lane of its x, the
# one at x + 1 comes from the next lane (lane 31's from lane 0 of the next word).
_CLASSIFY = r"""
#ifndef DAXPY_THRESHOLD_CORNERS  // both dtypes' helpers, once per source
#define DAXPY_THRESHOLD_CORNERS
// The point at x of the four point rows (row q at base + q's offset) as the test
// needs it: ALL and ANY a bit per row, in range; RANGE the lowest and highest value
// and whether one is NaN (a NaN corner keeps no cell, as in the array program).
template <typename V> struct Corners { unsigned in; V low, high; bool nan; };

template <typename V>
__device__ __forceinline__ Corners<V> corners_at(const V* __restrict__ s, long long base,
                                                 int x, int nx, long long dy, long long dz,
                                                 V lower, V upper) {
  Corners<V> c = {0u, (V)0, (V)0, false};
  if (x >= nx) return c;
  const V v[4] = {s[base + x], s[base + dy + x], s[base + dz + x], s[base + dy + dz + x]};
  c.low = c.high = v[0];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    // In range as compared in float64: the bounds are the dtype's numbers at or
    // inside the range (the caller's), so the comparison is exact in V.
    c.in |= (unsigned)(v[q] >= lower && v[q] <= upper) << q;
    c.nan |= v[q] != v[q];
    c.low = v[q] < c.low ? v[q] : c.low;
    c.high = v[q] > c.high ? v[q] : c.high;
  }
  return c;
}

#endif

extern "C" __global__ void __launch_bounds__(32 * WARPS)
NAME(const T* __restrict__ s, T lower, T upper, int invert, int nx, int ny, int nz,
     unsigned* __restrict__ cell_words, int* __restrict__ counts) {
  const int cx = nx - 1, cy = ny - 1, cz = nz - 1, words = (cx + 31) / 32;
  const int spans = (words + SPAN - 1) / SPAN;
  const int g = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
  if (g >= spans * cy * cz) return;  // whole warps only: the shuffles below need them
  const int row = g / spans, w0 = (g - row * spans) * SPAN, x0 = 32 * w0 + lane;
  // Every load of the warp's span is issued before the first is used: a warp of one
  // word waited for its loads twice (its lane 31's x + 1 after the others), and
  // the kernel ran at a seventh of the copy rate.
#if MODE_CELLS
  T v[SPAN];
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    const int x = x0 + 32 * u;
    v[u] = x < cx ? s[(long long)row * cx + x] : (T)0;
  }
#else
  // The four point rows of the cells' corners.
  const int j = row % cy, k = row / cy;
  const long long base = ((long long)k * ny + j) * nx, dy = nx, dz = (long long)nx * ny;
  // The span's points, and (lane 0) the first point after it: the last cell's x + 1.
  Corners<T> here[SPAN + 1];
#pragma unroll
  for (int u = 0; u <= SPAN; ++u)
    here[u] = corners_at(s, base, u < SPAN || lane == 0 ? x0 + 32 * u : nx, nx, dy, dz,
                         lower, upper);
#endif
  unsigned mine = 0u;  // lane u: word u of the span
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    const int x = x0 + 32 * u;
#if MODE_CELLS
    bool keep = v[u] >= lower && v[u] <= upper;
#else
    // The point at x + 1: the next lane's, lane 31's from lane 0 of the next word.
    // Only what the test reads crosses lanes: each shuffle is an instruction a cell.
    // Fields picked one by one, not a reference to one of two structs: that would
    // put the array in local memory.
    const int from = (lane + 1) & 31;
    Corners<T> next;
#if MODE_RANGE
    next.low = __shfl_sync(FULL, lane == 0 ? here[u + 1].low : here[u].low, from);
    next.high = __shfl_sync(FULL, lane == 0 ? here[u + 1].high : here[u].high, from);
    next.nan = __shfl_sync(FULL, (int)(lane == 0 ? here[u + 1].nan : here[u].nan), from);
#else
    next.in = __shfl_sync(FULL, lane == 0 ? here[u + 1].in : here[u].in, from);
#endif
#if MODE_ALL
    bool keep = (here[u].in & next.in) == 15u;
#elif MODE_ANY
    bool keep = (here[u].in | next.in) != 0u;
#else  // RANGE: the corners' range meets [lower, upper]
    const T low = next.low < here[u].low ? next.low : here[u].low;
    const T high = next.high > here[u].high ? next.high : here[u].high;
    bool keep = !(here[u].nan || next.nan) && high >= lower && low <= upper;
#endif
#endif
    keep = x < cx && (keep != (invert != 0));
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

// emit: a warp per word. Of the point words, it writes the used points' ids; of the
// cell words, the kept cells: id, corners renumbered, offset and type. starts is the
// exclusive scan of the cell words' counts, then the point words' (offset by n_kept).
// A kept cell's corners are used points, so the corner at x + 1 of a point row is
// numbered one after the corner at x, whose number is its word's start and the used
// points of the lanes below: no renumbering table.
extern "C" __global__ void __launch_bounds__(32 * WARPS)
threshold_cells_emit(const unsigned* __restrict__ cell_words,
                     const unsigned* __restrict__ point_words,
                     const long long* __restrict__ starts, long long n_kept, int nx, int ny,
                     int nz, unsigned char cell_type, long long* __restrict__ cell_ids,
                     long long* __restrict__ point_ids, long long* __restrict__ connectivity,
                     long long* __restrict__ offsets, unsigned char* __restrict__ types) {
  __shared__ int number[WARPS][4][32];  // per kept cell (in order), its rows' corner x
  const int cx = nx - 1, cy = ny - 1, cz = nz - 1;
  const int cell_words_n = (cx + 31) / 32, point_words_n = (nx + 31) / 32;
  const int all_cell_words = cell_words_n * cy * cz;
  const int g = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
  const unsigned below = lanes_below();
  // Both words loaded first: the cell word's loads need not wait for the points'.
  const unsigned word = g < all_cell_words ? cell_words[g] : 0u;
  if (g < point_words_n * ny * nz) {
    const unsigned used = point_words[g];
    if (used >> lane & 1u) {
      const int row = g / point_words_n, x = 32 * (g - row * point_words_n) + lane;
      point_ids[starts[all_cell_words + g] - n_kept + __popc(used & below)] =
          (long long)row * nx + x;
    }
  }
  if (!word) return;
  const int row = g / cell_words_n, w = g - row * cell_words_n;
  const int j = row % cy, k = row / cy, slot = __popc(word & below), n = __popc(word);
  const long long out = starts[g];
  if (word >> lane & 1u) {
    const long long c = out + slot;
    cell_ids[c] = (long long)row * cx + 32 * w + lane;
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


def classify_source(dtype, mode: str) -> tuple[str, str]:
    """``(name, source)`` of the classify kernel for a field of ``dtype`` (float32 or
    float64) and the test ``mode`` (one of :data:`MODES`).

    Examples
    --------
    >>> name, source = classify_source("float64", "range")
    >>> name, "#define MODE_RANGE 1" in source
    ('threshold_cells__f64__range_classify', True)
    """
    name = f"threshold_cells__{dtype_tag(dtype)}__{mode}_classify"
    flags = "".join(f"#define MODE_{m.upper()} {int(m == mode)}\n" for m in MODES)
    return name, (f"#define T {ctype(dtype)}\n#define WARPS {WARPS}\n#define SPAN {SPAN}\n"
                  f"{flags}{_COMMON}"
                  f"{_CLASSIFY.replace('NAME', name)}"
                  + "".join(f"#undef MODE_{m.upper()}\n" for m in MODES)
                  + "#undef SPAN\n#undef WARPS\n#undef T\n")


def index_source() -> tuple[tuple[str, str], str]:
    """``((mark, emit), source)``: the names of the kernels that do not read the
    field, and their source.

    Examples
    --------
    >>> index_source()[0]
    ('threshold_cells_mark', 'threshold_cells_emit')
    """
    return ("threshold_cells_mark", "threshold_cells_emit"), \
        f"#define WARPS {WARPS}\n{_COMMON}{_INDEX}#undef WARPS\n"
