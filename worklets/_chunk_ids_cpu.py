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
pages to fault in and half the bytes to upload), into blocks of the host pool
(:mod:`daxpy.data.host_pool`: pages a freed plan already faulted in).

A block's loop runs over views of its part of each array (``_*_run``), inlined:
with its bounds taken from the block number and the array's length in the loop
itself, LLVM did not vectorize the renumbering (40 ms against 9 ms for 20M ids
on one thread of the 2-core machine).

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

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, over_blocks
from ._numba import kernel

_BLOCK = 1 << 16
"""Cells (or ids) per block: a few hundred blocks at 10M cells, each long enough
that a call from Python (some microseconds) is small beside it."""

_MOST = np.iinfo(np.int64).max
_LEAST = np.iinfo(np.int64).min


@kernel(inline="always")
def _bounds_run(conn, offsets, lowest, highest):
    for c in range(lowest.shape[0]):
        # Unsigned: Numba checks an index it cannot prove non-negative for wrapping.
        low = conn[np.uint64(offsets[c])]
        high = low
        for q in range(offsets[c] + 1, offsets[c + 1]):
            low = min(low, conn[np.uint64(q)])
            high = max(high, conn[np.uint64(q)])
        lowest[c] = low
        highest[c] = high


@kernel(inline="always")
def _row_bounds_run(rows, lowest, highest):
    for c in range(lowest.shape[0]):
        low = rows[c, 0]
        high = low
        for j in range(1, rows.shape[1]):
            low = min(low, rows[c, j])
            high = max(high, rows[c, j])
        lowest[c] = low
        highest[c] = high


@block_kernel()
def _bounds(conn, offsets, lowest, highest, first, last):
    for block in range(first, last):
        a, b = block * _BLOCK, min((block + 1) * _BLOCK, lowest.shape[0])
        _bounds_run(conn, offsets[a:b + 1], lowest[a:b], highest[a:b])


@block_kernel()
def _row_bounds(rows, lowest, highest, first, last):
    for block in range(first, last):
        a, b = block * _BLOCK, min((block + 1) * _BLOCK, lowest.shape[0])
        _row_bounds_run(rows[a:b], lowest[a:b], highest[a:b])


@kernel(inline="always")
def _rises_run(lowest, highest):
    """The lowest ``lowest``, the highest ``highest``, and whether both never decrease."""
    low, high, rises = lowest[0], highest[0], True
    for c in range(1, lowest.shape[0]):
        low = min(low, lowest[c])
        high = max(high, highest[c])
        rises &= (lowest[c] >= lowest[c - 1]) & (highest[c] >= highest[c - 1])
    return low, high, rises


@block_kernel()
def _block_bounds(lowest, highest, block_low, block_high, ascending, first, last):
    """Each block's lowest ``lowest`` and highest ``highest``, and whether both
    never decrease from the cell before the block to its last."""
    for block in range(first, last):
        a, b = block * _BLOCK, min((block + 1) * _BLOCK, lowest.shape[0])
        before = max(a - 1, 0)   # the step into the block (none into the first)
        _, _, rises = _rises_run(lowest[before:a + 1], highest[before:a + 1])
        low, high, inside = _rises_run(lowest[a:b], highest[a:b])
        block_low[block], block_high[block], ascending[block] = low, high, rises and inside


@block_kernel()
def _running(lowest, highest, high_before, low_after, high_so_far, low_from_here, first, last):
    """The running bounds of each block, from the bounds of the blocks before (and after)."""
    for block in range(first, last):
        a, b = block * _BLOCK, min((block + 1) * _BLOCK, lowest.shape[0])
        # Slices indexed from 0: Numba checks an index it cannot prove non-negative
        # for wrapping.
        high, highs, so_far = high_before[block], highest[a:b], high_so_far[a:b]
        for c in range(b - a):
            high = max(high, highs[c])
            so_far[c] = high
        low, lows, from_here = low_after[block], lowest[a:b], low_from_here[a:b]
        for c in range(b - a - 1, -1, -1):
            low = min(low, lows[c])
            from_here[c] = low


@kernel(inline="always")
def _meet_run(lowest, highest, first_point, stop_point, keep):
    for q in range(keep.shape[0]):
        keep[q] |= (lowest[q] < stop_point) & (highest[q] >= first_point)


@kernel(inline="always")
def _span_run(lowest, highest, keep, start, found):
    """Count, first and last held cell (``start`` is ``keep[0]``'s), lowest and
    highest corner of the held cells, into ``found``."""
    count, low, high = 0, _MOST, _LEAST
    for q in range(keep.shape[0]):
        count += keep[q]
        low = min(low, lowest[q] if keep[q] else _MOST)
        high = max(high, highest[q] if keep[q] else _LEAST)
    first_held = last_held = -1
    if count:
        q = 0
        while not keep[q]:
            q += 1
        first_held = start + q
        q = keep.shape[0] - 1
        while not keep[q]:
            q -= 1
        last_held = start + q
    found[0], found[1], found[2], found[3], found[4] = count, first_held, last_held, low, high


@block_kernel()
def _mark_held(lowest, highest, ranges, lo, keep, found, first, last):
    """Cells ``lo + q`` held by any range ``(a, b, first point, stop point)`` into
    ``keep[q]``, a range at a time over the block (loops LLVM vectorizes: 2.4 ms
    against 5.8 for one test of all the ranges per cell, 2M cells on the 2-core
    machine); per block, :func:`_span_run` into ``found``."""
    for block in range(first, last):
        a, b = block * _BLOCK, min((block + 1) * _BLOCK, keep.shape[0])
        part = keep[a:b]
        part[:] = False
        for r in range(ranges.shape[0]):
            # The range's cells in the block: lo + a + q for q in [s, e).
            s, e = max(ranges[r, 0] - lo - a, 0), min(ranges[r, 1] - lo - a, b - a)
            if s < e:
                _meet_run(lowest[lo + a + s:lo + a + e], highest[lo + a + s:lo + a + e],
                          ranges[r, 2], ranges[r, 3], part[s:e])
        _span_run(lowest[lo + a:lo + b], highest[lo + a:lo + b], part, lo + a, found[block])


@kernel(inline="always")
def _shift_run(ids, start, out):
    for q in range(ids.shape[0]):
        out[q] = ids[q] - start


@block_kernel()
def _shift(ids, start, out, first, last):
    for block in range(first, last):
        a, b = block * _BLOCK, min((block + 1) * _BLOCK, ids.shape[0])
        _shift_run(ids[a:b], start, out[a:b])


def _blocks(n: int) -> int:
    return -(-n // _BLOCK)


def cell_corner_bounds(connectivity: np.ndarray, offsets: np.ndarray,
                       corners: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's lowest and highest point id (int64): NumPy's
    ``minimum.reduceat(connectivity, offsets[:-1])`` and its maximum, for cells
    of at least one corner (every cell type a grid holds has one).

    Parameters
    ----------
    connectivity : numpy.ndarray
        Signed integer point ids of all cells, one after the other.
    offsets : numpy.ndarray
        ``n_cells + 1`` entries: cell ``c`` uses ``connectivity[offsets[c]:offsets[c + 1]]``.
    corners : int, optional
        The corners of every cell, where all have as many (a grid of one shape):
        the ids are then read as a table of rows, the offsets not at all.

    Examples
    --------
    >>> import numpy as np
    >>> low, high = cell_corner_bounds(np.array([3, 0, 5, 9, 1], np.int32), np.array([0, 3, 5]))
    >>> low.tolist(), high.tolist()
    ([0, 1], [5, 9])
    >>> [b.tolist() for b in cell_corner_bounds(np.array([3, 0, 5, 9]), np.array([0, 2, 4]), 2)]
    [[0, 5], [3, 9]]
    """
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n_cells = offsets.shape[0] - 1
    lowest = host_empty(n_cells, np.int64)
    highest = host_empty(n_cells, np.int64)
    connectivity = np.ascontiguousarray(connectivity)
    if corners is None:
        over_blocks(_bounds, _blocks(n_cells), connectivity, offsets, lowest, highest)
    else:
        over_blocks(_row_bounds, _blocks(n_cells), connectivity.reshape(n_cells, int(corners)),
                    lowest, highest)
    return lowest, highest


def running_bounds(lowest: np.ndarray, highest: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The running maximum of ``highest`` and the running minimum of ``lowest``
    from the end: ``np.maximum.accumulate(highest)`` and
    ``np.minimum.accumulate(lowest[::-1])[::-1]``, each block on a thread from the
    bounds of the blocks before (after) it. Where both never decrease (cells
    numbered along their points, as a lattice's are) they are their own running
    bounds: ``highest`` and ``lowest`` themselves come back.

    Examples
    --------
    >>> import numpy as np
    >>> [a.tolist() for a in running_bounds(np.array([3, 1, 4]), np.array([5, 2, 6]))]
    [[5, 5, 6], [1, 1, 4]]
    >>> low, high = np.array([1, 2]), np.array([3, 4])
    >>> [a is b for a, b in zip(running_bounds(low, high), (high, low))]
    [True, True]
    """
    n_blocks = _blocks(highest.shape[0])
    block_low = np.empty(n_blocks, np.int64)
    block_high = np.empty(n_blocks, np.int64)
    ascending = np.empty(n_blocks, np.bool_)
    over_blocks(_block_bounds, n_blocks, lowest, highest, block_low, block_high, ascending)
    if ascending.all():
        return highest, lowest
    high_before = np.concatenate([[_LEAST], np.maximum.accumulate(block_high)[:-1]])
    low_after = np.concatenate([np.minimum.accumulate(block_low[::-1])[::-1][1:], [_MOST]])
    high_so_far = host_empty(highest.shape[0], np.int64)
    low_from_here = host_empty(lowest.shape[0], np.int64)
    over_blocks(_running, n_blocks, lowest, highest, high_before, low_after, high_so_far,
                low_from_here)
    return high_so_far, low_from_here


def held_cells(lowest: np.ndarray, highest: np.ndarray, ranges: list) -> tuple:
    """The cells held by any of ``ranges`` (a slice where they are one run, else
    their ids ascending, int64) and the point range their corners span (None
    where none is held).

    Each range is ``(a, b, points)``: the cells ``a .. b - 1`` whose corner range
    (``lowest .. highest``) meets ``points = (first, stop)``, or all of them where
    ``points`` is None.

    Examples
    --------
    >>> import numpy as np
    >>> low, high = np.array([0, 2, 5, 9]), np.array([3, 4, 8, 12])
    >>> held, span = held_cells(low, high, [(0, 1, None), (1, 4, (6, 7))])
    >>> held.tolist(), span
    ([0, 2], (0, 9))
    >>> held_cells(low, high, [(0, 2, None), (2, 4, (6, 7))])
    (slice(0, 3, None), (0, 9))
    """
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    table = np.array([(a, b) + ((_LEAST, _MOST) if points is None else tuple(points))
                      for a, b, points in ranges], np.int64).reshape(-1, 4)
    keep = np.empty(max(hi - lo, 0), np.bool_)
    n_blocks = _blocks(keep.shape[0])
    found = np.empty((n_blocks, 5), np.int64)
    over_blocks(_mark_held, n_blocks, lowest, highest, table, np.int64(lo), keep, found)
    found = found[found[:, 0] > 0]
    if found.shape[0] == 0:
        return slice(0, 0), None
    count, first, last = int(found[:, 0].sum()), int(found[0, 1]), int(found[-1, 2])
    # One run of cells (the common case) needs no search of the mask.
    held = slice(first, last + 1) if count == last - first + 1 else lo + np.flatnonzero(keep)
    return held, (int(found[:, 3].min()), int(found[:, 4].max()) + 1)


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
    out = host_empty(flat.shape[0], dtype)
    over_blocks(_shift, _blocks(flat.shape[0]), flat, np.int64(start), out)
    return out.reshape(np.shape(ids))
