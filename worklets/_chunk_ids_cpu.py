"""Chunk planning's passes over an unstructured grid's corner ids, on threads
(for large grids: :mod:`daxpy.stream.chunk_ids` chooses).

Cutting 10M hexahedra into chunks (:mod:`daxpy.stream.chunks`) reads their 80M
corner ids twice: once for each cell's lowest and highest point id (NumPy's
``minimum.reduceat`` and ``maximum.reduceat``: two serial passes, 0.5 s of a
first run's 2.5 s on the GPU machine's host), and once per chunk to renumber
its corners from its first point (``corners - first``: a fresh array of
hundreds of MB, its pages faulted in by one thread). Here each pass runs on the
compiled kernels' threads, one block of cells or ids per call, with the same
results; a chunk's ids are written as int32 where its points allow (half the
pages to fault in and half the bytes to upload).

Examples
--------
>>> import numpy as np
>>> [a.tolist() for a in cell_corner_bounds(np.array([4, 2, 7, 1]), np.array([0, 3, 4]))]
[[2, 1], [7, 1]]
>>> shifted_ids(np.array([5, 7]), 5).tolist()
[0, 2]
"""

from __future__ import annotations

import numpy as np

from ._blocks_cpu import block_kernel, over_blocks
from ._numba import kernel

_BLOCK = 1 << 16
"""Cells (or ids) per block: a few hundred blocks at 10M cells, each long enough
that a call from Python (some microseconds) is small beside it."""


@block_kernel()
def _bounds(conn, offsets, lowest, highest, first, last):
    for block in range(first, last):
        for c in range(block * _BLOCK, min((block + 1) * _BLOCK, lowest.shape[0])):
            low = conn[offsets[c]]
            high = low
            for q in range(offsets[c] + 1, offsets[c + 1]):
                low = min(low, conn[q])
                high = max(high, conn[q])
            lowest[c] = low
            highest[c] = high


@block_kernel()
def _meet(lowest, highest, start, first_point, stop_point, keep, first, last):
    for block in range(first, last):
        for q in range(block * _BLOCK, min((block + 1) * _BLOCK, keep.shape[0])):
            c = start + q
            if lowest[c] < stop_point and highest[c] >= first_point:
                keep[q] = True


@kernel(no_cfunc_wrapper=True)   # called from Python only
def _running(lowest, highest, high_so_far, low_from_here):
    high = highest[0]
    for c in range(highest.shape[0]):
        high = max(high, highest[c])
        high_so_far[c] = high
    low = lowest[lowest.shape[0] - 1]
    for c in range(lowest.shape[0] - 1, -1, -1):
        low = min(low, lowest[c])
        low_from_here[c] = low


@block_kernel()
def _shift(ids, start, out, first, last):
    for block in range(first, last):
        for q in range(block * _BLOCK, min((block + 1) * _BLOCK, ids.shape[0])):
            out[q] = ids[q] - start


def _blocks(n: int) -> int:
    return -(-n // _BLOCK)


def cell_corner_bounds(connectivity: np.ndarray, offsets: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's lowest and highest point id (int64): NumPy's
    ``minimum.reduceat(connectivity, offsets[:-1])`` and its maximum, for cells
    of at least one corner (every cell type a grid holds has one).

    Parameters
    ----------
    connectivity : numpy.ndarray
        Signed integer point ids of all cells, one after the other.
    offsets : numpy.ndarray
        ``n_cells + 1`` entries: cell ``c`` uses ``connectivity[offsets[c]:offsets[c + 1]]``.

    Examples
    --------
    >>> import numpy as np
    >>> low, high = cell_corner_bounds(np.array([3, 0, 5, 9, 1], np.int32), np.array([0, 3, 5]))
    >>> low.tolist(), high.tolist()
    ([0, 1], [5, 9])
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n_cells = offsets.shape[0] - 1
    lowest = np.empty(n_cells, np.int64)
    highest = np.empty(n_cells, np.int64)
    over_blocks(_bounds, _blocks(n_cells), np.ascontiguousarray(connectivity), offsets,
                lowest, highest)
    return lowest, highest


def running_bounds(lowest: np.ndarray, highest: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The running maximum of ``highest`` and the running minimum of ``lowest``
    from the end: ``np.maximum.accumulate(highest)`` and
    ``np.minimum.accumulate(lowest[::-1])[::-1]``, in one serial pass each.

    Examples
    --------
    >>> import numpy as np
    >>> [a.tolist() for a in running_bounds(np.array([3, 1, 4]), np.array([5, 2, 6]))]
    [[5, 5, 6], [1, 1, 4]]
    """
    high_so_far = np.empty_like(highest)
    low_from_here = np.empty_like(lowest)
    if highest.shape[0]:
        _running(lowest, highest, high_so_far, low_from_here)
    return high_so_far, low_from_here


def mark_meeting(lowest: np.ndarray, highest: np.ndarray, start: int, points: tuple,
                 keep: np.ndarray) -> None:
    """Set ``keep[q]`` where cell ``start + q``'s corner range meets the point
    range ``[points[0], points[1])``: NumPy's ``keep |= (lowest[start:stop] <
    points[1]) & (highest[start:stop] >= points[0])``, with no temporaries.

    Examples
    --------
    >>> import numpy as np
    >>> keep = np.zeros(2, bool)
    >>> mark_meeting(np.array([0, 5, 9]), np.array([4, 8, 12]), 1, (9, 10), keep)
    >>> keep.tolist()
    [False, True]
    """
    over_blocks(_meet, _blocks(keep.shape[0]), lowest, highest, np.int64(start),
                np.int64(points[0]), np.int64(points[1]), keep)


def shifted_ids(ids: np.ndarray, start: int, dtype=np.int64) -> np.ndarray:
    """``ids - start`` in ``dtype`` (int32 or int64), written by the kernels'
    threads: NumPy's ``(ids - start).astype(dtype)`` for differences ``dtype`` holds.

    Examples
    --------
    >>> import numpy as np
    >>> shifted_ids(np.array([[7, 9], [8, 7]], np.int64), 7, np.int32).tolist()
    [[0, 2], [1, 0]]
    """
    flat = np.ascontiguousarray(ids).reshape(-1)
    out = np.empty(flat.shape[0], dtype)
    over_blocks(_shift, _blocks(flat.shape[0]), flat, np.int64(start), out)
    return out.reshape(np.shape(ids))
