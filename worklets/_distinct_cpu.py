"""Compiled distinct keys of a host array and each key's place among them:
``np.unique(keys, return_inverse=True)``, without sorting every key.
(:mod:`daxpy.worklets._merge_cuts_cpu` reads them.)

A marching cut names each edge once per output cell that uses it (a hexahedral
slice: 130k keys for 22k edges); NumPy sorts them all, on one thread, and that
sort was a third of a 1M-hexahedra slice. Here one pass over the keys finds the
distinct ones through a hash table (in the order first seen: one thread, so it
does not depend on the thread count), NumPy sorts those few, and each key's
place is read back through its first sighting.

Examples
--------
>>> import numpy as np
>>> unique, place, seen = unique_places(np.array([7, 3, 7, 5] * MIN_KEYS))
>>> unique.tolist(), place[seen[:4]].tolist()
([3, 5, 7], [2, 0, 2, 1])
"""

from __future__ import annotations

import numpy as np

from ._numba import kernel

MIN_KEYS = 1 << 12
"""Fewer keys than this are sorted by NumPy: as fast, and no compile."""

_SPREAD = np.uint64(0x9E3779B97F4A7C15)
"""Fibonacci hashing's multiplier (2^64 over the golden ratio): nearby keys (the
edges of one cell) land far apart in the table."""


@kernel()
def _first_seen(keys, table, bits, distinct, seen):
    """Each key's number in the order distinct keys first appear (``seen``), the
    distinct keys in that order (``distinct``); their count. ``table``: ``2**bits``
    slots of -1, more than the keys."""
    shift, mask = np.uint64(64 - bits), table.shape[0] - 1
    count = 0
    for x in range(keys.shape[0]):
        key = keys[x]
        slot = np.int64((np.uint64(key) * _SPREAD) >> shift)
        while True:
            at = table[slot]
            if at < 0:
                table[slot] = count
                distinct[count] = key
                seen[x] = count
                count += 1
                break
            if distinct[at] == key:
                seen[x] = at
                break
            slot = (slot + 1) & mask
    return count


def unique_places(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(unique, place, seen)`` of integer ``keys`` on the host, all int64: the
    distinct keys ascending, and each key's place among them as ``place[seen]``
    (``np.unique(keys, return_inverse=True)``'s inverse, not gathered: a caller that
    reads each key's place once reads it through the two). NumPy's own below
    :data:`MIN_KEYS` keys.

    Examples
    --------
    >>> import numpy as np
    >>> keys = np.random.default_rng(1).integers(0, 10**6, 100_000)
    >>> unique, place, seen = unique_places(keys)
    >>> want = np.unique(keys, return_inverse=True)
    >>> bool((unique == want[0]).all() and (place[seen] == want[1]).all())
    True
    """
    if keys.shape[0] < MIN_KEYS:
        unique, inverse = np.unique(keys, return_inverse=True)
        return (unique.astype(np.int64, copy=False), np.arange(unique.shape[0], dtype=np.int64),
                inverse.astype(np.int64, copy=False))
    keys = np.ascontiguousarray(keys, np.int64)
    # At least twice the keys: short probes, and always a free slot.
    bits = (2 * keys.shape[0]).bit_length()
    table = np.full(1 << bits, -1, np.int64)
    distinct, seen = np.empty(keys.shape[0], np.int64), np.empty(keys.shape[0], np.int64)
    count = _first_seen(keys, table, bits, distinct, seen)
    order = np.argsort(distinct[:count])
    place = np.empty(count, np.int64)
    place[order] = np.arange(count, dtype=np.int64)
    return distinct[:count][order], place, seen
