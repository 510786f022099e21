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

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, inner_kernel, over_blocks
from ._numba import count_type, kernel

_ROWS = 1 << 16
"""Rows per block of the scan dealt to a thread."""

_PER_BUCKET = 256
"""Keys per bucket, on average, of the sort: few enough to sort in a core's cache."""

_SMALL = 1 << 16
"""Fewer keys are sorted by NumPy: the buckets' passes cost more than they save."""

_GROUP = 64
"""Buckets per group dealt to a thread."""

_TABLE = 1 << 12
"""Slots of each group's hash table (:func:`_sort_buckets`)."""

_SPREAD = np.uint64(0x9E3779B97F4A7C15)
"""Fibonacci hashing's multiplier (2^64 over the golden ratio): nearby keys (the edges
of one cell) land far apart in a table."""


# Serial kernels over ranges of blocks, which _blocks_cpu.over_blocks deals to the
# threads (a parallel loop costs several times more to compile).

@block_kernel()
def _scan(counts, columns, sums_only, block_starts, starts, first, last):
    """Blocks ``first`` to ``last``: their column sums into ``block_starts``
    (``sums_only``), else their rows of the scan from their starts there (one
    kernel for both passes: each kernel costs a first use a compile).

    ``columns`` is :func:`~daxpy.worklets._numba.count_type` of the column count:
    the column loops unrolled (with the count read from the table's shape, a
    4-column scan of 970k rows took 7.8 ms on one thread, against 3.3)."""
    n, k = counts.shape[0], len(columns)
    for block in range(first, last):
        # The block's rows as slices indexed from 0: Numba checks indices it cannot
        # prove non-negative for wrapping around, on every read and write.
        lo, hi = block * _ROWS, min(n, (block + 1) * _ROWS)
        rows, out = counts[lo:hi], starts[lo:hi + 1]
        if sums_only:
            for c in range(k):
                block_starts[block, c] = 0
            for r in range(hi - lo):
                for c in range(k):
                    block_starts[block, c] += rows[r, c]
            continue
        for c in range(k):
            out[0, c] = block_starts[block, c]
        for r in range(hi - lo):
            for c in range(k):
                out[r + 1, c] = out[r, c] + rows[r, c]


def exclusive_rows(counts: np.ndarray) -> np.ndarray:
    """The exclusive sums down the rows of an integer count table, with the
    total last: ``starts[0] = 0``, ``starts[r + 1] = starts[r] + counts[r]``.

    Parameters
    ----------
    counts : int array, shape (n, k)
        Any integer dtype (a mask of uint8 is scanned as it is, not widened first).

    Returns
    -------
    int64 array, shape (n + 1, k)

    Examples
    --------
    >>> import numpy as np
    >>> exclusive_rows(np.zeros((0, 3), np.int64)).tolist()
    [[0, 0, 0]]
    >>> exclusive_rows(np.ones((_ROWS + 3, 2), np.int64))[-2:].tolist()
    [[65538, 65538], [65539, 65539]]
    """
    counts = np.ascontiguousarray(counts)
    # From the host pool: a clip's point numbers are 80 MB at 10M points, and fresh
    # pages are faulted in as they are first written.
    starts = host_empty((counts.shape[0] + 1, counts.shape[1]), np.int64)
    starts[0] = 0
    if counts.shape[0] <= _ROWS:
        # One block: one thread would scan it, so NumPy does, and a first use on
        # few rows compiles no kernel.
        np.cumsum(counts, axis=0, dtype=np.int64, out=starts[1:])
        return starts
    # Each block's sums, where each block starts (NumPy, over blocks), then each
    # block's rows from there.
    sums = np.empty(((counts.shape[0] + _ROWS - 1) // _ROWS, counts.shape[1]), np.int64)
    columns = count_type(counts.shape[1])
    over_blocks(_scan, sums.shape[0], counts, columns, True, sums, starts)
    block_starts = np.cumsum(sums, axis=0) - sums
    over_blocks(_scan, sums.shape[0], counts, columns, False, block_starts, starts)
    return starts


def exclusive(counts: np.ndarray) -> np.ndarray:
    """The exclusive scan of a 1-D integer count array, with the total last (int64):
    block ``b`` of a kernel's output writes from ``starts[b]``
    (:func:`exclusive_rows` of one column: on every core past one block of rows).

    Examples
    --------
    >>> import numpy as np
    >>> exclusive(np.array([2, 0, 3])).tolist()
    [0, 2, 2, 5]
    """
    return exclusive_rows(np.reshape(counts, (-1, 1))).reshape(-1)


@inner_kernel()
def _histogram(keys, first, last, shift, counts, chunk):
    for b in range(counts.shape[1]):
        counts[chunk, b] = 0
    for x in range(first, last):
        counts[chunk, keys[x] >> shift] += 1


@block_kernel()
def _histograms(keys, shift, size, counts, first, last):
    n = keys.shape[0]
    for chunk in range(first, last):
        _histogram(keys, chunk * size, min(n, (chunk + 1) * size), shift, counts, chunk)


@kernel()
def _places(counts, at, bounds):
    """Where each chunk's keys of each bucket go: buckets in key order, each filled
    by the chunks in order (``at``); each bucket's bounds."""
    total = 0
    for b in range(counts.shape[1]):
        bounds[b] = total
        for chunk in range(counts.shape[0]):
            at[chunk, b] = total
            total += counts[chunk, b]
    bounds[counts.shape[1]] = total


@inner_kernel()
def _scatter(keys, first, last, shift, at, chunk, out):
    for x in range(first, last):
        b = keys[x] >> shift
        out[at[chunk, b]] = keys[x]
        at[chunk, b] += 1


@block_kernel()
def _scatters(keys, shift, size, at, out, first, last):
    n = keys.shape[0]
    for chunk in range(first, last):
        _scatter(keys, chunk * size, min(n, (chunk + 1) * size), shift, at, chunk, out)


@inner_kernel()
def _sort_buckets(placed, bounds, first, last, distinct, table):
    """Buckets ``first`` to ``last``: each one's distinct keys, ascending, at its start
    (``distinct``: how many). A bucket of up to half ``table``'s slots is made
    distinct through it first, then sorted: a cut's keys repeat (an edge is named by
    every cell that cuts it), and on one thread of a 2-core machine, buckets of 512 keys
    each named four times took 21 ms for 2M keys this way, 62 sorted whole (named once,
    74 against 62).
    A larger bucket is sorted whole."""
    for b in range(first, last):
        lo, n = bounds[b], bounds[b + 1] - bounds[b]
        size, bits = 1, 0
        while size < 2 * n:
            size, bits = size << 1, bits + 1
        count = 0
        if size <= table.shape[0]:
            for slot in range(size):
                table[slot] = -1   # (keys are not negative)
            shift, mask = np.uint64(64 - bits), size - 1
            for x in range(lo, lo + n):
                key = placed[x]
                slot = np.int64((np.uint64(key) * _SPREAD) >> shift)
                while table[slot] >= 0 and table[slot] != key:
                    slot = (slot + 1) & mask
                if table[slot] < 0:
                    table[slot] = key
                    placed[lo + count] = key
                    count += 1
            placed[lo:lo + count].sort()
        else:
            bucket = placed[lo:lo + n]
            bucket.sort()
            for x in range(n):
                if x == 0 or bucket[x] != bucket[x - 1]:
                    bucket[count] = bucket[x]
                    count += 1
        distinct[b] = count


@inner_kernel()
def _copy_distinct(placed, bounds, distinct, first, last, starts, out):
    """Buckets ``first`` to ``last``'s distinct keys (at their starts), from the
    output's starts."""
    for b in range(first, last):
        out[starts[b]:starts[b] + distinct[b]] = placed[bounds[b]:bounds[b] + distinct[b]]


@block_kernel()
def _sorts(placed, bounds, distinct, tables, first, last):
    n = distinct.shape[0]
    for group in range(first, last):
        _sort_buckets(placed, bounds, group * _GROUP, min(n, (group + 1) * _GROUP), distinct,
                      tables[group])


@block_kernel()
def _copies(placed, bounds, distinct, starts, out, first, last):
    n = starts.shape[0]
    for group in range(first, last):
        _copy_distinct(placed, bounds, distinct, group * _GROUP,
                       min(n, (group + 1) * _GROUP), starts, out)


def _bucket_unique(keys: np.ndarray, shift: int, n_buckets: int, n_chunks: int) -> np.ndarray:
    """Count each chunk's keys per bucket, place every key in its bucket, make each
    bucket's keys distinct and sorted side by side, and copy them out."""
    size = (keys.shape[0] + n_chunks - 1) // n_chunks
    counts = np.empty((n_chunks, n_buckets), np.int64)
    over_blocks(_histograms, n_chunks, keys, shift, size, counts)
    at, bounds = np.empty((n_chunks, n_buckets), np.int64), np.empty(n_buckets + 1, np.int64)
    _places(counts, at, bounds)
    placed = host_empty(keys.shape[0], np.int64)
    over_blocks(_scatters, n_chunks, keys, shift, size, at, placed)
    distinct = np.empty(n_buckets, np.int64)
    n_groups = (n_buckets + _GROUP - 1) // _GROUP
    tables = host_empty((n_groups, _TABLE), np.int64)   # each group's: set per bucket
    over_blocks(_sorts, n_groups, placed, bounds, distinct, tables)
    starts = np.cumsum(distinct) - distinct
    out = host_empty(int(distinct.sum()), np.int64)
    over_blocks(_copies, n_groups, placed, bounds, distinct, starts, out)
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
    n_buckets = (int(top - 1) >> shift) + 2
    if unique.shape[0] < _SMALL:
        buckets = np.arange(n_buckets, dtype=np.int64) << shift
        return shift, np.searchsorted(unique, buckets).astype(np.int64)
    # Each bucket's first key is found where the keys' buckets change, on every core:
    # NumPy's search of every bucket took 3 ms of a 10M-hexahedra clip on one thread
    # of the GPU machine's host.
    first = host_empty(n_buckets, np.int64)
    over_blocks(_bucket_starts, (unique.shape[0] + _ROWS - 1) // _ROWS,
                np.ascontiguousarray(unique, np.int64), shift, first)
    return shift, first


@block_kernel()
def _bucket_starts(unique, shift, first, start, stop):
    """``first[b]``: the index of the first of ``unique``'s keys whose bucket
    (``key >> shift``) is ``b`` or more, written by that key, for the blocks of
    :data:`_ROWS` keys ``start .. stop - 1``; the last key also writes the buckets
    after its own (no key there: the keys' count)."""
    n = unique.shape[0]
    for u in range(start * _ROWS, min(n, stop * _ROWS)):
        below = (unique[u - 1] >> shift) if u > 0 else -1
        for b in range(below + 1, (unique[u] >> shift) + 1):
            first[b] = u
    if stop * _ROWS >= n:
        for b in range((unique[n - 1] >> shift) + 1, first.shape[0]):
            first[b] = n


@kernel(inline="always")
def rank(unique, shift, first, key):
    """Where ``key`` is in ``unique`` (:func:`ranks`' index): a binary search of its
    bucket.

    Examples
    --------
    >>> import numpy as np
    >>> unique = np.array([1, 2, 9])
    >>> int(rank(unique, *ranks(unique, 10), 9))
    2
    """
    lo, hi = first[key >> shift], first[(key >> shift) + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if unique[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo
