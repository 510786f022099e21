"""Gathers by the bit words of kept cells and used points that the GPU's threshold of
a 3-D structured grid leaves (:mod:`daxpy.cuda.threshold_cells`), reading no ids.

The threshold's emit wrote the kept cells' and used points' int64 ids (125 MB at
256³, a fifth of its bytes), and each point array of the output (coordinates, every
field) was a gather by them, reading 8 bytes of ids again per point and per array.
Here the ids are made only where asked for, and a gather reads the words: a warp
takes words of 32 items of rows (a row of points ``(y, z)`` or of cells ``(j, k)``),
a kept item's output row is its word's start plus the kept items of the lanes below
(as the emit numbers them), its id is its place in the grid, and it copies its
value (any dtype: its bytes), writes its id, or makes its coordinates from the
grid's axes.

The same bits as the gathers by ids: a value is copied, and a coordinate is its
axis's value rounded to float32 (``__double2float_rn``, as
:func:`daxpy.cuda.edge_points.grid_points`).

Examples
--------
>>> take_source(4, 3)[0]
'bit_words_take__b4_c3'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .codegen import ctype, dtype_tag
from .compile import kernel_from

_WARPS = 8
"""Warps per block."""

_SPAN = 4
"""Words a warp takes, every load of them in flight before the first store: with one
word a warp, each waited for its word, its start and its value in turn (0.09 ms a
gather of the wavelet's 8M points at 256³ on an H100, against 0.05 for CuPy's
gather by ids)."""

_LOOP = r"""
  const int w0 = (blockIdx.x * WARPS + threadIdx.y) * SPAN, lane = threadIdx.x;
  const int per_row = (nx + 31) / 32;
  unsigned word[SPAN];
  long long start[SPAN];
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    word[u] = w0 + u < n_words ? words[w0 + u] : 0u;
    start[u] = w0 + u < n_words ? starts[w0 + u] : 0;
  }
  // Each kept item's output row (its word's start, plus the kept items of the lanes
  // below: as the emit numbers them), its row of the grid and its x. One division a
  // warp, the words after it stepped: the kernels were bound by their instructions,
  // most of them divisions.
  long long row[SPAN];
  int line[SPAN], x[SPAN];
  int at_line = w0 / per_row, at_word = w0 - at_line * per_row;
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    const bool kept = word[u] >> lane & 1u;
    row[u] = kept ? start[u] - base + __popc(word[u] & ((1u << lane) - 1u)) : -1;
    line[u] = at_line;
    x[u] = 32 * at_word + lane;
    const bool wraps = ++at_word == per_row;
    at_word = wraps ? 0 : at_word;
    at_line += wraps;
  }
"""

# A row of C items of values (IDS: the item's id) to each kept item's output row.
_TAKE = r"""
extern "C" __global__ void __launch_bounds__(32 * WARPS)
NAME(const unsigned* __restrict__ words, const long long* __restrict__ starts,
     long long base, int nx, int n_words, const T* __restrict__ values,
     T* __restrict__ out) {
LOOP
  T v[SPAN][C];
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    const long long id = (long long)line[u] * nx + x[u];
#pragma unroll
    for (int c = 0; c < C; ++c)
      v[u][c] = row[u] < 0 ? (T)0 : IDS ? (T)id : values[id * C + c];
  }
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    if (row[u] < 0) continue;
#pragma unroll
    for (int c = 0; c < C; ++c) out[row[u] * C + c] = v[u][c];
  }
}
"""

# The kept points' coordinates (O: float, or double for the axes' values as they
# are), staged in shared memory so that the warp writes its words' (consecutive)
# output rows as consecutive values: three stores a point 12 bytes apart left the
# kernel at 0.072 ms at 256³ (H100), against 0.059 for a gather by ids of a thread
# a point.
_AXIS_POINTS = r"""
extern "C" __global__ void __launch_bounds__(32 * WARPS)
NAME(const unsigned* __restrict__ words, const long long* __restrict__ starts,
     long long base, int nx, int ny, int n_words, const A* __restrict__ ax,
     const A* __restrict__ ay, const A* __restrict__ az, O* __restrict__ out) {
  __shared__ O staged[WARPS][3 * 32 * SPAN];
LOOP
  O* mine = staged[threadIdx.y];
  const long long first = start[0] - base;  // the span's first output row
  int y = line[0] % ny, z = line[0] / ny;  // stepped with the lines, as above
#pragma unroll
  for (int u = 0; u < SPAN; ++u) {
    if (u > 0 && line[u] != line[u - 1]) {
      const bool wraps = ++y == ny;
      y = wraps ? 0 : y;
      z += wraps;
    }
    if (row[u] < 0) continue;
    const int at = 3 * (int)(row[u] - first);
    mine[at] = ROUND((double)ax[x[u]]);
    mine[at + 1] = ROUND((double)ay[y]);
    mine[at + 2] = ROUND((double)az[z]);
  }
  __syncwarp();
  int n = 0;
#pragma unroll
  for (int u = 0; u < SPAN; ++u) n += __popc(word[u]);
  for (int t = lane; t < 3 * n; t += 32) out[3 * first + t] = mine[t];
}
"""

_ITEMS = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
"""The type a value is copied as, by its size in bytes."""


def _body(kernel: str, name: str) -> str:
    return kernel.replace("NAME", name).replace("LOOP", _LOOP)


def take_source(itemsize: int, components: int, ids: bool = False) -> tuple[str, str]:
    """``(name, source)`` of the gather of rows of ``components`` items of
    ``itemsize`` bytes, or (``ids``) of the kept items' int64 ids.

    Examples
    --------
    >>> name, source = take_source(8, 1)
    >>> name, "#define T unsigned long long" in source
    ('bit_words_take__b8_c1', True)
    >>> take_source(8, 1, ids=True)[0]
    'bit_words_ids'
    """
    name = "bit_words_ids" if ids else f"bit_words_take__b{itemsize}_c{components}"
    item = "long long" if ids else _ITEMS[itemsize]
    return name, (f"#define T {item}\n#define C {components}\n#define IDS {int(ids)}\n"
                  f"#define WARPS {_WARPS}\n#define SPAN {_SPAN}\n{_body(_TAKE, name)}"
                  "#undef SPAN\n#undef WARPS\n#undef IDS\n#undef C\n#undef T\n")


def axis_points_source(axis_dtype, out_dtype="float32") -> tuple[str, str]:
    """``(name, source)`` of the points made from axes of ``axis_dtype`` (float32 or
    float64) as ``out_dtype`` (float32 or float64) values.

    Examples
    --------
    >>> axis_points_source("float64")[0]
    'bit_words_axis_points__f64'
    >>> axis_points_source("float32", "float64")[0]
    'bit_words_axis_points__f32__f64'
    """
    wide = np.dtype(out_dtype) == np.float64
    name = f"bit_words_axis_points__{dtype_tag(axis_dtype)}" + ("__f64" if wide else "")
    rounding = "(V)" if wide else "__double2float_rn(V)"
    return name, (f"#define A {ctype(axis_dtype)}\n#define O {ctype(out_dtype)}\n"
                  f"#define ROUND(V) {rounding}\n#define WARPS {_WARPS}\n"
                  f"#define SPAN {_SPAN}\n{_body(_AXIS_POINTS, name)}"
                  "#undef SPAN\n#undef WARPS\n#undef ROUND\n#undef O\n#undef A\n")


@dataclass(frozen=True, eq=False)
class BitWords:
    """The kept items of a grid's rows of ``row_length`` items (a 3-D structured
    grid's points, rows ``(y, z)`` of x; or its cells; or one row of all an
    unstructured grid's points or cells) as bit words.

    Attributes
    ----------
    words : cupy.ndarray of uint32
        A bit an item: each row ``(row_length + 31) // 32`` words.
    starts : cupy.ndarray of int64
        Each word's first output row, plus ``base``.
    base : int
    row_length : int
    count : int
        The kept items.
    ids : cupy.ndarray of int64 or None
        The kept items' ids, where they were made: a gather by these words gives
        ``values[ids]``.

    Examples
    --------
    >>> BitWords.__dataclass_fields__.keys() >= {"words", "starts", "count"}
    True
    """

    words: Any
    starts: Any
    base: int
    row_length: int
    count: int
    ids: Any = None

    def _launch(self, kernel: Any, *args: Any) -> None:
        n_words = int(self.words.shape[0])
        if self.count:
            per_block = _WARPS * _SPAN
            kernel(((n_words + per_block - 1) // per_block,), (32, _WARPS),
                   (self.words, self.starts, np.int64(self.base), np.int32(self.row_length),
                    *args))

    def item_ids(self) -> Any:
        """The kept items' int64 ids, ascending (made here where not already).

        Examples
        --------
        >>> callable(BitWords.item_ids)
        True
        """
        import cupy

        if self.ids is not None:
            return self.ids
        out = cupy.empty(self.count, cupy.int64)
        # The values argument is not read by the ids' kernel: out stands in for it.
        self._launch(kernel_from(take_source, 8, 1, True), np.int32(self.words.shape[0]),
                     out, out)
        return out

    def with_ids(self) -> "BitWords":
        """These words with their items' ids made.

        Examples
        --------
        >>> callable(BitWords.with_ids)
        True
        """
        return self if self.ids is not None else replace(self, ids=self.item_ids())

    def take(self, values: Any, out: Any = None) -> Any:
        """``values[ids]`` on the device, for an array of one row per grid item, into
        ``out`` (a C-contiguous array of its shape and dtype) where given.

        Examples
        --------
        >>> callable(BitWords.take)
        True
        """
        import cupy

        values = cupy.ascontiguousarray(values)
        if out is None:
            out = cupy.empty((self.count, *values.shape[1:]), values.dtype)
        if values.dtype.itemsize not in _ITEMS:
            out[...] = values[self.item_ids()]
            return out
        components = int(np.prod(values.shape[1:], dtype=np.int64))
        if components:
            self._launch(kernel_from(take_source, values.dtype.itemsize, components),
                         np.int32(self.words.shape[0]), values, out)
        return out

    def axis_points(self, axes: list, ny: int, dtype: Any = np.float32, out: Any = None) -> Any:
        """The kept points' coordinates from the grid's axes (device arrays of one
        float dtype; ``ny`` points along y), shape ``(n, 3)``: float32, or (``dtype``
        float64) the axes' values as they are, into ``out`` (C-contiguous) where
        given; None for axes of other or mixed dtypes.

        Examples
        --------
        >>> callable(BitWords.axis_points)
        True
        """
        import cupy

        if len({a.dtype for a in axes}) != 1 or axes[0].dtype not in (np.float32, np.float64):
            return None
        if out is None:
            out = cupy.empty((self.count, 3), dtype)
        kernel = kernel_from(axis_points_source, axes[0].dtype.char, np.dtype(dtype).char)
        self._launch(kernel, np.int32(ny), np.int32(self.words.shape[0]), *axes, out)
        return out


def topology_arrays(n_cells: int, corners: int) -> tuple:
    """Device arrays for ``n_cells`` cells of ``corners`` corners each: connectivity
    (int64), offsets (int64, ``n_cells + 1``) and types (uint8), in one allocation
    (the GPU waits for each of the host's), connectivity first: an emit stores it in
    pairs (16-byte aligned).

    Examples
    --------
    >>> callable(topology_arrays)
    True
    """
    import cupy

    topology = cupy.empty((corners + 1) * n_cells + 1 + (n_cells + 7) // 8, cupy.int64)
    return (topology[:corners * n_cells],
            topology[corners * n_cells:(corners + 1) * n_cells + 1],
            topology[(corners + 1) * n_cells + 1:].view(cupy.uint8)[:n_cells])


def kept_by_words(cell_words: Any, point_words: Any, starts: Any, counts: tuple, rows: tuple,
                  ids: bool) -> tuple:
    """A threshold's kept cells and used points as :class:`BitWords`: ``(cell ids, point
    ids, point words, cell words)``, the ids made only where ``ids`` asks (else None).

    Parameters
    ----------
    cell_words, point_words : cupy.ndarray of uint32
    starts : cupy.ndarray of int64
        The exclusive scan of the cell words' counts, then of the point words' (the
        kept cells' count added: the used points are numbered after them), and the total.
    counts : (int, int)
        The kept cells and the used points.
    rows : (int, int)
        The row lengths of the cells and of the points.
    ids : bool

    Examples
    --------
    >>> callable(kept_by_words)
    True
    """
    split = int(cell_words.shape[0])
    n_cells, n_points = counts
    by_points = BitWords(point_words, starts[split:-1], n_cells, rows[1], n_points)
    by_cells = BitWords(cell_words, starts[:split], 0, rows[0], n_cells)
    if ids:
        by_points, by_cells = by_points.with_ids(), by_cells.with_ids()
    return by_cells.ids, by_points.ids, by_points, by_cells
