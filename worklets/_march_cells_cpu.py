"""Compiled, threaded marching of one block of unstructured cells on the host:
:func:`daxpy.worklets._marching.march`'s output cells, bit for bit, from the
corners and the field, with no array of the block's size but one byte a cell.

1. *classify and count* (chunks of cells on every core): each cell's case, bit
   ``i`` set where corner ``i`` is at or above the value (compared as in float64,
   :func:`~daxpy.worklets._marching.at_least_bound`), 0 for a cell with a NaN or
   Inf corner; kept as one byte a cell, and each chunk's output cells counted;
2. *scan* the chunks' counts (a few thousand numbers: NumPy);
3. *emit* (chunks again, those that make output only): each output cell's edges
   as ``lo * n_points + hi`` keys, and its input cell.

The array program gathers an ``(n_cells, corners)`` table of values, one of
booleans and one of shifted bits, then counts, searches and gathers over every
cell on one thread: most of a slice's time on a hexahedral grid, where few
cells are cut.

Examples
--------
>>> import numpy as np
>>> corners = np.array([[0, 1, 2, 3]] * MIN_CELLS)        # tetrahedra
>>> keys, source = march_cells(corners, np.arange(MIN_CELLS), np.array([1.0, 0, 0, 0]),
...                            0.5, "tetra")
>>> keys[:1].tolist(), source[:2].tolist()
([[3, 1, 2]], [0, 1])
"""

from __future__ import annotations

import numpy as np

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, over_blocks
from ._marching import TABLES, at_least_bound
from ._numba import CompiledUnavailable, KERNEL_DTYPES, count_type, refuse_bad_ids

MIN_CELLS = 1 << 12
"""Fewer cells than this are marched by NumPy: threads would not pay off."""

_CHUNK = 1 << 12
"""Cells per chunk dealt to a thread (below 2**16: offsets in a chunk are 16-bit)."""


@block_kernel()
def _classify(corners, scalars, bound, made, corner_count, cases, active, chunk_counts, first,
              last):
    """Chunks ``first`` to ``last``: each cell's case into ``cases``; each chunk's
    cells that make output, listed from its first cell's place in ``active`` (as
    offsets from that cell); into ``chunk_counts``, each chunk's output cells, how
    many cells make them, and how many have a corner out of range (written into
    since the grid was checked: case 0, and refused after). ``corner_count``:
    :func:`~daxpy.worklets._numba.count_type` of the corners, so that the corner
    loop is unrolled (a hexahedron's: 9.2 ms for 1M cells on one thread, 10.6
    rolled)."""
    n, m, k = scalars.shape[0], corners.shape[0], len(corner_count)
    for chunk in range(first, last):
        total, listed, bad = 0, 0, 0
        # The chunk's rows through slices indexed from 0, point ids read unsigned once
        # in range: Numba checks indices it cannot prove non-negative for wrapping.
        lo, hi = chunk * _CHUNK, min(m, (chunk + 1) * _CHUNK)
        rows, found, listing = corners[lo:hi], cases[lo:hi], active[lo:hi]
        for x in range(hi - lo):
            case, ok, finite = 0, True, True
            for j in range(k):
                p = rows[x, j]
                if np.uint64(p) < np.uint64(n):   # one compare: below 0 wraps around
                    s = scalars[np.uint64(p)]
                    finite &= np.isfinite(s)
                    case |= np.int64(s >= bound) << j
                else:
                    ok = False
            bad += not ok
            if not (ok and finite):
                case = 0
            found[x] = case
            cells_made = made[np.uint64(case)]
            if cells_made:
                listing[listed] = x
                total += cells_made
                listed += 1
        chunk_counts[chunk, 0], chunk_counts[chunk, 1], chunk_counts[chunk, 2] = \
            total, listed, bad


@block_kernel()
def _emit(corners, cell_ids, cases, active, chunk_counts, made, table, edges, n_points,
          chunk_start, keys, source, first, last):
    """Chunks ``first`` to ``last``'s output cells, from their chunks' starts: the
    edges of each in the table's order, as ``min * n_points + max`` of their ends.
    Only the listed cells are visited (a slice cuts few)."""
    per = table.shape[2]
    for chunk in range(first, last):
        q = chunk_start[chunk]
        for i in range(chunk_counts[chunk, 1]):
            x = chunk * _CHUNK + np.int64(active[chunk * _CHUNK + i])
            case = cases[x]
            for o in range(made[case]):
                for j in range(per):
                    e = table[case, o, j]
                    a, b = corners[x, edges[e, 0]], corners[x, edges[e, 1]]
                    keys[q, j] = np.int64(min(a, b)) * n_points + max(a, b)
                source[q] = cell_ids[x]
                q += 1


def march_cells(corners: np.ndarray, cell_ids: np.ndarray, scalars: np.ndarray, value: float,
                kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The compiled form of :func:`daxpy.worklets._marching.march` (cases not
    given) for host cells: ``(keys, source)``, int64.

    Raises
    ------
    CompiledUnavailable
        For device arrays, fewer than :data:`MIN_CELLS` cells, or a field that is
        not float32 or float64.
    IndexError
        For a corner id out of range.

    Examples
    --------
    >>> import numpy as np
    >>> corners = np.array([[0, 1]] * MIN_CELLS)                # segments
    >>> keys, _ = march_cells(corners, np.arange(MIN_CELLS), np.array([np.nan, 2.0]),
    ...                       1.0, "line")
    >>> keys.shape
    (0, 1)
    """
    if not all(isinstance(a, np.ndarray) for a in (corners, cell_ids, scalars)):
        raise CompiledUnavailable("device arrays: the array program serves them")
    if corners.shape[0] < MIN_CELLS or scalars.dtype not in KERNEL_DTYPES:
        raise CompiledUnavailable("few cells, or no kernel for the dtype")
    made, table, edges = TABLES[kind]
    corners, scalars = np.ascontiguousarray(corners), np.ascontiguousarray(scalars)
    n_chunks = -(-corners.shape[0] // _CHUNK)
    cases = host_empty(corners.shape[0], np.uint8)   # at most 8 corners: 256 cases
    # Written only where cells make output: pages of it that no cut reaches are
    # never touched.
    active = host_empty(corners.shape[0], np.uint16)
    chunk_counts = host_empty((n_chunks, 3), np.int64)
    over_blocks(_classify, n_chunks, corners, scalars, at_least_bound(scalars.dtype, value),
                made, count_type(corners.shape[1]), cases, active, chunk_counts)
    refuse_bad_ids(int(chunk_counts[:, 2].sum()))
    chunk_start = np.zeros(n_chunks + 1, np.int64)
    np.cumsum(chunk_counts[:, 0], out=chunk_start[1:])
    total = int(chunk_start[-1])   # the output's size
    keys, source = host_empty((total, table.shape[2]), np.int64), host_empty(total, np.int64)
    over_blocks(_emit, n_chunks, corners, np.ascontiguousarray(cell_ids), cases, active,
                chunk_counts, made, table, edges, scalars.shape[0], chunk_start, keys, source)
    return keys, source
