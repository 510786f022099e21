"""The marching of one block of unstructured cells on the GPU, from their cases: each
output cell's edges as ``lo * n_points + hi`` keys and its input cell, as
:func:`daxpy.worklets._marching.march` gives them, bit for bit.

The array program lists the cells that make output (``flatnonzero``), scans their
counts, finds each output cell's owner by a binary search and gathers its corners
and table row: six passes over the output and one over the cells (10M hexahedra
cut by a slice: about 1 ms on an H100). Here two kernels over chunks of 256 cells:

1. *count*: each chunk's output cells (from the case table's counts);
2. a scan over the chunks, the one host sync for the output's size;
3. *emit*: each cell's output cells from its chunk's start and a block scan, each
   edge's ends looked up in the case table in its order.

Specialization: the corner ids' dtype (int32, int64) and the kind of cell (its
corners, edges and the corners of its output cells: 1 for lines, 2 for 2-D cells, 3
for 3-D).

Examples
--------
>>> source_for("int64", "hexahedron", 8, 3, ((0, 1),))[0]
('march_block__i64_hexahedron_count', 'march_block__i64_hexahedron_emit')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .block_scan import BLOCK_SCAN, CHUNK
from .case_tables import on_device
from .cell_edges import edge_defines
from .codegen import ctype, dtype_tag
from .compile import kernels_from
from .sizes import totals_at

_BODY = r"""
// Each chunk's output cells.
extern "C" __global__ void __launch_bounds__(CHUNK) NAME_count(
    const unsigned char* __restrict__ cases, const long long n_cells,
    const int* __restrict__ made, long long* __restrict__ chunk_made)
{
  __shared__ long long shared[8];
  const long long x = (long long)blockIdx.x * CHUNK + threadIdx.x;
  long long total;
  block_scan<long long>(x < n_cells ? made[cases[x]] : 0, shared, total);
  if (threadIdx.x == 0) chunk_made[blockIdx.x] = total;
}

// Each cell's output cells from its chunk's first: per cell of the table, its PER
// edges' ends as keys, and the cell's input id.
extern "C" __global__ void __launch_bounds__(CHUNK) NAME_emit(
    const unsigned char* __restrict__ cases, const I* __restrict__ corners,
    const long long* __restrict__ cell_ids, const long long n_cells,
    const long long n_points, const int* __restrict__ made, const int* __restrict__ table,
    const int width, const long long* __restrict__ chunk_start, long long* __restrict__ keys,
    long long* __restrict__ source)
{
  __shared__ int shared[8];
  const long long x = (long long)blockIdx.x * CHUNK + threadIdx.x;
  const int c = x < n_cells ? cases[x] : 0;
  const int m = x < n_cells ? made[c] : 0;
  int total;
  long long q = chunk_start[blockIdx.x] + block_scan<int>(m, shared, total);
  for (int o = 0; o < m; ++o, ++q) {
#pragma unroll
    for (int j = 0; j < PER; ++j) {
      const int e = table[(c * width + o) * PER + j];
      const long long a = (long long)corners[x * K + EDGE_A[e]];
      const long long b = (long long)corners[x * K + EDGE_B[e]];
      keys[q * PER + j] = (a < b ? a : b) * n_points + (a < b ? b : a);
    }
    source[q] = cell_ids[x];
  }
}
"""

def source_for(id_dtype, kind: str, corners: int, per: int,
               edges) -> tuple[tuple[str, str], str]:
    """``(names, source)`` of the count and emit kernels for corner ids of
    ``id_dtype`` and cells of ``kind``: ``corners`` corners whose edges join
    ``edges``, output cells of ``per`` corners.

    Examples
    --------
    >>> names, source = source_for("int32", "tetra", 4, 3, ((0, 1), (1, 2)))
    >>> names[1], "#define PER 3" in source
    ('march_block__i32_tetra_emit', True)
    """
    name = f"march_block__{dtype_tag(id_dtype)}_{kind}"
    edge_head, edge_tail = edge_defines(name, edges)
    head = f"#define I {ctype(id_dtype)}\n#define K {corners}\n#define PER {per}\n" + edge_head
    tail = "#undef I\n#undef K\n#undef PER\n" + edge_tail
    return ((f"{name}_count", f"{name}_emit"),
            BLOCK_SCAN + head + _BODY.replace("NAME", name) + tail)


def _device_tables(tables: tuple) -> tuple:
    """The case counts and the table (int32) on the device, uploaded once per tables."""

    def upload() -> tuple:
        import cupy

        counts, table, _ = tables
        return (cupy.asarray(counts.astype(np.int32)),
                cupy.asarray(np.ascontiguousarray(table, np.int32).ravel()))

    return on_device(("march_block", id(tables)), (tables,), upload)


def march_block(cases: Any, corners: Any, cell_ids: Any, n_points: int, kind: str,
                tables: tuple) -> tuple[Any, Any] | None:
    """``(keys, source)`` of the cells ``corners`` (ids ``cell_ids``) of ``kind`` by
    their ``cases``, with the kind's case ``tables`` ``(counts, table, edges)``
    (:data:`daxpy.worklets._marching.TABLES`); None where the kernels do not serve
    (corner ids neither int32 nor int64, more than 8 corners).

    Examples
    --------
    >>> callable(march_block)
    True
    """
    import cupy

    n_cells, corner_count = (int(d) for d in corners.shape)
    counts, table, edges = tables
    if corners.dtype not in (np.int32, np.int64) or corner_count > 8:
        return None
    per = int(table.shape[2])
    if n_cells == 0:
        return cupy.zeros((0, per), cupy.int64), cupy.zeros(0, cupy.int64)
    count, emit = kernels_from(source_for, corners.dtype, kind, corner_count, per,
                               tuple(map(tuple, edges.tolist())))
    made, flat_table = _device_tables(tables)
    chunks = (n_cells + CHUNK - 1) // CHUNK
    cases = cupy.ascontiguousarray(cases, dtype=cupy.uint8)
    corners = cupy.ascontiguousarray(corners)
    chunk_made = cupy.empty(chunks, cupy.int64)
    count((chunks,), (CHUNK,), (cases, np.int64(n_cells), made, chunk_made))
    chunk_start = cupy.zeros(chunks + 1, cupy.int64)
    cupy.cumsum(chunk_made, out=chunk_start[1:])
    (total,) = totals_at(chunk_start, [chunks])  # the one host sync: the output's size
    keys = cupy.empty((total, per), cupy.int64)
    source = cupy.empty(total, cupy.int64)
    if total:
        emit((chunks,), (CHUNK,),
             (cases, corners, cupy.ascontiguousarray(cell_ids, dtype=cupy.int64),
              np.int64(n_cells), np.int64(n_points), made, flat_table,
              np.int32(table.shape[1]), chunk_start, keys, source))
    return keys, source
