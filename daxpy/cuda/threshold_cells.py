"""The threshold of a 3-D structured grid on the GPU: three kernels and a scan.

The array program (:mod:`daxpy.worklets.threshold`) classifies every cell from
shifted views of the field, then builds the kept cells' corners and renumbers
them through a point mask and its scan: a dozen CuPy passes and temporaries of
a number a cell and a point. Here a grid's cells are implicit hexahedra, and
what lives between the kernels is a bit a cell and a bit a point:

1. *bits* (point scalars): a warp per span of
   :data:`~daxpy.cuda.threshold_cells_source.SPAN` words of 32 points reads each
   value once and ballots its tests into words of bits (a plane for all and any
   corners, three for the corners' range); *classify*: a thread per word of 32
   cells of a row ``(j, k)`` tests them from its four point rows' words (cell
   scalars: a warp per span of words of cells reads them and ballots), with the
   word's count;
2. *mark*: a thread per word of 32 points: a point is used where one of its up
   to eight cells is kept (shifts and ors of four cell rows' words), and the
   word's count;
3. one exclusive scan over both kinds of words' counts, then the one host
   sync: the output's sizes;
4. *emit*: a warp per word of cells: its kept cells' offsets, types and
   corners. A corner's output number is its point word's start plus the used
   points of the lanes below, and the corner at x + 1 is numbered one after the
   one at x (both used): no renumbering table. The ids, where asked for, and the
   output's point and cell arrays come from the words
   (:class:`~daxpy.cuda.bit_words.BitWords`).

On an H100 (copy 3,026 GB/s), wavelet 256³ float32, the upper half of the
range, all corners (7.68M cells and 7.96M points kept, 688 MB of output, 0.227 ms
at the copy rate): bits 0.033 ms, classify 0.007, mark 0.008, scan 0.025, emit
0.208, the field and the points gathered by the words 0.039 and 0.063: the call
0.41-0.43 ms (1.8-1.9x the write floor), against 0.50-0.55 ms when classify read
each point four times, the emit wrote every id and the gathers read them
(``benchmarks/NOTES.md``, ninth session).

Output is the array program's, bit for bit: cells ascending, VTK's hexahedron
corner order (rows ``(j, k)`` and ``(j, k + 1)`` up x, the other two down),
points ascending, int64 ids and offsets, uint8 types. Values compare with the
range as in float64: the caller passes the dtype's numbers at or inside it.

Specialization: the field's dtype and the test (the kernel that reads the
field); classify, mark and emit do not read it
(:mod:`daxpy.cuda.threshold_cells_source`).

Examples
--------
>>> callable(threshold_cells)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compile import kernel_from, kernels_from
from .bit_words import kept_by_words, topology_arrays
from .scan import scan_counts
from .threshold_cells_source import (MODES, POINT_MODES, SPAN, WARPS, classify_source,
                                     index_source)


def _warps(n: int) -> tuple[tuple[int], tuple[int, int]]:
    """Grid and block of a launch of ``n`` warps."""
    return ((n + WARPS - 1) // WARPS,), (32, WARPS)


def threshold_cells(values: Any, dims: tuple, mode: str, lower: Any, upper: Any,
                    invert: bool, cell_type: int, ids: bool = True) -> tuple | None:
    """Keep the cells of a 3-D structured grid that pass a threshold, on the GPU.

    Parameters
    ----------
    values : cupy.ndarray of float32 or float64, shape (n,)
        The scalars at the points, or at the cells where ``mode`` is "cells".
    dims : tuple of int
        The grid's points along x, y and z, each at least 2.
    mode : str
        The test, one of :data:`~daxpy.cuda.threshold_cells_source.MODES`.
    lower, upper : NumPy scalars of the values' dtype
        The smallest and largest of the dtype's numbers in the range (so the
        comparisons are the float64 ones).
    invert : bool
        Keep the cells that fail the test.
    cell_type : int
        The VTK type of the output cells.
    ids : bool
        Make the kept cells' and used points' ids (False: None for both, which
        the words give where needed).

    Returns
    -------
    (cell_ids, point_ids, connectivity, offsets, cell_types, point_words, cell_words) or None
        As :class:`daxpy.worklets.threshold.Kept` holds them (the words:
        :class:`~daxpy.cuda.bit_words.BitWords`); None for grids of 2^31 points or
        more (the kernels number points in 32 bits).

    Examples
    --------
    >>> callable(threshold_cells)
    True
    """
    import cupy

    nx, ny, nz = (int(d) for d in dims)
    if nx * ny * nz >= 2**31 or mode not in MODES:
        return None
    values = cupy.ascontiguousarray(values)
    read = kernel_from(classify_source, values.dtype, mode)
    classify, mark, emit = kernels_from(index_source)
    args = (np.int32(nx), np.int32(ny), np.int32(nz))
    cell_words_n = (nx + 30) // 32 * (ny - 1) * (nz - 1)
    point_words_n = (nx + 31) // 32 * ny * nz
    planes = 0 if mode == "cells" else 3 if mode == "range" else 1
    # The words, both kinds of words' counts and the points' bits in one allocation
    # (each costs the host microseconds while the GPU waits); the counts together,
    # so that one scan serves both.
    both = cupy.empty(2 * (cell_words_n + point_words_n) + planes * point_words_n,
                      cupy.int32)
    words = both[:cell_words_n + point_words_n].view(cupy.uint32)
    cell_words, point_words = words[:cell_words_n], words[cell_words_n:]
    counts = both[cell_words_n + point_words_n:2 * (cell_words_n + point_words_n)]
    if planes:
        bits = both[2 * (cell_words_n + point_words_n):].view(cupy.uint32)
        read(*_warps((point_words_n + SPAN - 1) // SPAN),
             (values, lower, upper, np.int32(nx), np.int32(point_words_n), bits))
        classify(((cell_words_n + 32 * WARPS - 1) // (32 * WARPS),), (32, WARPS),
                 (bits, np.int32(POINT_MODES[mode]), np.int32(invert), *args, cell_words,
                  counts))
    else:
        spans = ((nx + 30) // 32 + SPAN - 1) // SPAN * (ny - 1) * (nz - 1)
        read(*_warps(spans), (values, lower, upper, np.int32(invert), *args, cell_words,
                              counts))
    mark(*_warps((point_words_n + 31) // 32), (cell_words, *args, point_words,
                                               counts[cell_words_n:]))
    starts = cupy.empty(cell_words_n + point_words_n + 1, cupy.int64)
    # The one host sync: the kept cells (the scan at the first point word) and the
    # kept cells plus the used points (at its end), written into pinned memory.
    n_cells, n_used = scan_counts(counts, starts, (cell_words_n, cell_words_n + point_words_n))
    n_points = n_used - n_cells
    connectivity, offsets, types = topology_arrays(n_cells, 8)
    if n_cells:
        emit(*_warps(cell_words_n), (cell_words, point_words, starts, np.int64(n_cells),
                                     *args, np.uint8(cell_type), connectivity, offsets, types))
    else:
        offsets[0] = 0  # emit writes every offset, the last by the last cell's thread
    cell_ids, point_ids, *words = kept_by_words(cell_words, point_words, starts,
                                                (n_cells, n_points), (nx - 1, nx), ids)
    return (cell_ids, point_ids, connectivity, offsets, types, *words)
