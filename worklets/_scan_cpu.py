"""Parallel scans and sorts of the compiled topology-generating kernels: the exclusive
sums of per-element counts (each element's first output), and the sorted distinct
values of a key array, on every core instead of NumPy's one.

Both are exact (integers), so their results do not depend on the thread count.

Examples
--------
>>> import numpy as np
>>> exclusive_rows(np.array([[1, 0], [2, 3], [0, 1]])).tolist()
[[0, 0], [1, 0], [3, 3], [3, 4]]
>>> sorted_unique(np.array([5, 3, 5, 0]), 6).tolist()
[0, 3, 5]
>>> shift, first = ranks(np.array([0, 3, 5]), 6)
>>> int(rank(np.array([0, 3, 5]), shift, first, 5))
2
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._numba import kernel

_ROWS = 1 << 16
"""Rows per iteration of the scan's parallel loops."""

_PER_BUCKET = 256
"""Keys per bucket, on average, of the sort: few enough to sort in a core's cache."""

_SMALL = 1 << 16
"""Fewer keys are sorted by NumPy: the buckets' passes cost more than they save."""


@kernel()
def _sum_rows(counts, first, last, into):
    for c in range(counts.shape[1]):
        into[c] = 0
    for r in range(first, last):
        for c in range(counts.shape[1]):
            into[c] += counts[r, c]


@kernel()
def _scan_rows(counts, first, last, starts):
    """Rows ``first`` to ``last`` of the scan, from ``starts[first]``."""
    for r in range(first, last):
        for c in range(counts.shape[1]):
            starts[r + 1, c] = starts[r, c] + counts[r, c]


@kernel(parallel=True)
def _exclusive(counts, starts):
    n = counts.shape[0]
    blocks = (n + _ROWS - 1) // _ROWS
    sums = np.zeros((blocks + 1, counts.shape[1]), np.int64)
    # Each block's sums, then (serially, over blocks) where each block starts,
    # then each block's rows from there. Each loop's body is a function of its
    # own: loops in a parallel loop's body run several times slower.
    for block in prange(blocks):
        _sum_rows(counts, block * _ROWS, min(n, (block + 1) * _ROWS), sums[block + 1])
    for block in range(blocks):
        sums[block + 1] += sums[block]
    for block in prange(blocks):
        starts[block * _ROWS] = sums[block]
        _scan_rows(counts, block * _ROWS, min(n, (block + 1) * _ROWS), starts)


def exclusive_rows(counts: np.ndarray) -> np.ndarray:
    """The exclusive sums down the rows of an integer count table, with the
    total last: ``starts[0] = 0``, ``starts[r + 1] = starts[r] + counts[r]``.

    Parameters
    ----------
    counts : int array, shape (n, k)

    Returns
    -------
    int64 array, shape (n + 1, k)

    Examples
    --------
    >>> import numpy as np
    >>> exclusive_rows(np.zeros((0, 3), np.int64)).tolist()
    [[0, 0, 0]]
    """
    starts = np.empty((counts.shape[0] + 1, counts.shape[1]), np.int64)
    starts[0] = 0
    _exclusive(np.ascontiguousarray(counts, np.int64), starts)
    return starts


@kernel()
def _histogram(keys, first, last, shift, into):
    for x in range(first, last):
        into[keys[x] >> shift] += 1


@kernel()
def _scatter(keys, first, last, shift, at, out):
    for x in range(first, last):
        b = keys[x] >> shift
        out[at[b]] = keys[x]
        at[b] += 1


@kernel()
def _sort_bucket(bucket):
    """Sort a bucket in place; how many distinct keys it holds."""
    bucket.sort()
    distinct = 1 if bucket.shape[0] else 0
    for x in range(1, bucket.shape[0]):
        distinct += bucket[x] != bucket[x - 1]
    return distinct


@kernel()
def _copy_distinct(bucket, out):
    if bucket.shape[0]:
        out[0] = bucket[0]
    at = 1
    for x in range(1, bucket.shape[0]):
        if bucket[x] != bucket[x - 1]:
            out[at] = bucket[x]
            at += 1


@kernel(parallel=True)
def _bucket_unique(keys, shift, n_buckets, n_chunks):
    n = keys.shape[0]
    size = (n + n_chunks - 1) // n_chunks
    counts = np.zeros((n_chunks, n_buckets), np.int64)
    for chunk in prange(n_chunks):
        _histogram(keys, chunk * size, min(n, (chunk + 1) * size), shift, counts[chunk])
    # Buckets in key order, each filled by the chunks in order: one pass places
    # every key in its bucket, then the buckets are sorted side by side.
    at = np.empty((n_chunks, n_buckets), np.int64)
    bounds = np.empty(n_buckets + 1, np.int64)
    total = 0
    for b in range(n_buckets):
        bounds[b] = total
        for chunk in range(n_chunks):
            at[chunk, b] = total
            total += counts[chunk, b]
    bounds[n_buckets] = total
    placed = np.empty(n, np.int64)
    for chunk in prange(n_chunks):
        _scatter(keys, chunk * size, min(n, (chunk + 1) * size), shift, at[chunk], placed)
    distinct = np.zeros(n_buckets + 1, np.int64)
    for b in prange(n_buckets):
        distinct[b + 1] = _sort_bucket(placed[bounds[b]:bounds[b + 1]])
    for b in range(n_buckets):
        distinct[b + 1] += distinct[b]
    out = np.empty(distinct[n_buckets], np.int64)
    for b in prange(n_buckets):
        _copy_distinct(placed[bounds[b]:bounds[b + 1]], out[distinct[b]:distinct[b + 1]])
    return out


def sorted_unique(keys: np.ndarray, top: int) -> np.ndarray:
    """The distinct values of non-negative int64 ``keys`` (all below ``top``),
    ascending: ``np.unique(keys)``, sorted in buckets of their high bits on every
    core.

    Examples
    --------
    >>> import numpy as np
    >>> keys = np.random.default_rng(0).integers(0, 10**9, 200_000)
    >>> bool((sorted_unique(keys, 10**9) == np.unique(keys)).all())
    True
    """
    if keys.shape[0] < _SMALL:
        return np.unique(keys)
    # At most 2**14 buckets: the per-chunk bucket tables stay small.
    levels = min(14, max(1, (keys.shape[0] // _PER_BUCKET).bit_length() - 1))
    shift = max(0, int(top - 1).bit_length() - levels)
    n_buckets = (int(top - 1) >> shift) + 1
    return _bucket_unique(np.ascontiguousarray(keys, np.int64), shift, n_buckets, 64)


def ranks(unique: np.ndarray, top: int) -> tuple:
    """An index into ascending distinct ``unique`` keys (all below ``top``), so that
    :func:`rank` finds a key among the few that share its high bits, not by a
    search of the whole array: ``(shift, first)``, where the keys whose ``key >>
    shift`` is ``b`` are ``unique[first[b]:first[b + 1]]``.

    Examples
    --------
    >>> import numpy as np
    >>> shift, first = ranks(np.array([1, 2, 9]), 10)
    >>> first.shape[0] >= 2
    True
    """
    # About four keys per bucket, if they were spread evenly.
    levels = max(0, (unique.shape[0] // 4).bit_length() - 1)
    shift = max(0, int(top - 1).bit_length() - levels)
    buckets = np.arange((int(top - 1) >> shift) + 2, dtype=np.int64) << shift
    return shift, np.searchsorted(unique, buckets).astype(np.int64)


@kernel(inline="always")
def rank(unique, shift, first, key):
    """Where ``key`` is in ``unique`` (:func:`ranks`' index): a binary search of its
    bucket."""
    lo, hi = first[key >> shift], first[(key >> shift) + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if unique[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo
