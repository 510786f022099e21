"""The points a compiled topology-generating kernel's output uses, numbered in
ascending id order: a mask marked by the kernel, counted per chunk, scanned, and
numbered per chunk in parallel (no sort), as
:func:`daxpy.worklets._marching.used_points` does on arrays.

Each chunk of points is counted and numbered by one thread, from the scan's
start, so the numbers do not depend on the thread count.

Examples
--------
>>> import numpy as np
>>> point_ids, renumber = number_points(np.array([0, 1, 0, 1, 1], np.uint8))
>>> point_ids.tolist(), renumber[[1, 3, 4]].tolist()
([1, 3, 4], [0, 1, 2])
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._averaging import id_dtype
from ._numba import kernel

_CHUNK = 1 << 15
"""Points (or connectivity entries) per iteration of the parallel loops."""


@kernel(parallel=True)
def _count_used(used, counts):
    n = used.shape[0]
    for chunk in prange(counts.shape[0]):
        # A slice: a loop the compiler vectorizes.
        marks = used[chunk * _CHUNK:min(n, (chunk + 1) * _CHUNK)]
        total = 0
        for p in range(marks.shape[0]):
            total += marks[p]
        counts[chunk] = total


@kernel(parallel=True)
def _number(used, starts, point_ids, renumber):
    n = used.shape[0]
    for chunk in prange(starts.shape[0] - 1):
        first = chunk * _CHUNK
        marks = used[first:min(n, first + _CHUNK)]
        numbers = renumber[first:first + marks.shape[0]]
        # Without a branch: every point gets the next number (read at used points
        # only), and the used ones are gathered in a buffer of the chunk's own.
        found = np.empty(marks.shape[0], np.int64)
        q = starts[chunk]
        for p in range(marks.shape[0]):
            numbers[p] = q
            found[q - starts[chunk]] = first + p
            q += marks[p]
        point_ids[starts[chunk]:q] = found[:q - starts[chunk]]


@kernel(parallel=True)
def _renumber_in_place(connectivity, renumber):
    n = connectivity.shape[0]
    for chunk in prange((n + _CHUNK - 1) // _CHUNK):
        for q in range(chunk * _CHUNK, min(n, (chunk + 1) * _CHUNK)):
            connectivity[q] = renumber[connectivity[q]]


def exclusive(counts: np.ndarray) -> np.ndarray:
    """The exclusive scan of per-block counts, with the total last (int64): block
    ``b`` writes from ``starts[b]``.

    Examples
    --------
    >>> exclusive(np.array([2, 0, 3])).tolist()
    [0, 2, 2, 5]
    """
    starts = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=starts[1:])
    return starts


def number_points(used: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points marked in ``used`` (uint8, one per point), ascending, and each
    one's number among them (``renumber``: meaningful at those points only; the
    others get the next used point's).

    Examples
    --------
    >>> number_points(np.array([1, 0, 1], np.uint8))[0].tolist()
    [0, 2]
    """
    counts = np.empty((used.shape[0] + _CHUNK - 1) // _CHUNK, np.int64)
    _count_used(used, counts)
    starts = exclusive(counts)
    point_ids = np.empty(starts[-1], np.int64)
    # Numbers are read once per output corner: int32 where they fit halves the bytes.
    renumber = np.empty(used.shape[0], id_dtype(used.shape[0]))
    _number(used, starts, point_ids, renumber)
    return point_ids, renumber


def renumbered(connectivity: np.ndarray, renumber: np.ndarray) -> np.ndarray:
    """``connectivity`` (int64, input point ids of used points) overwritten with
    the points' numbers, and returned.

    Examples
    --------
    >>> renumbered(np.array([4, 2, 4]), np.array([0, 0, 0, 0, 1], np.int32)).tolist()
    [1, 0, 1]
    """
    _renumber_in_place(connectivity, renumber)
    return connectivity
