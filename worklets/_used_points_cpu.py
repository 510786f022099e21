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

from daxpy.data.host_pool import host_empty

from ._averaging import id_dtype
from ._blocks_cpu import block_kernel, over_blocks
from ._scan_cpu import exclusive

_CHUNK = 1 << 15
"""Points (or connectivity entries) per block dealt to a thread."""


# Serial kernels over ranges of chunks, which _blocks_cpu.over_blocks deals to the
# threads (a parallel loop costs several times more to compile).

@block_kernel()
def _count_used(used, counts, first, last):
    n = used.shape[0]
    for chunk in range(first, last):
        # A slice: a loop the compiler vectorizes.
        marks = used[chunk * _CHUNK:min(n, (chunk + 1) * _CHUNK)]
        total = 0
        for p in range(marks.shape[0]):
            total += marks[p]
        counts[chunk] = total


@block_kernel()
def _number(used, size, starts, point_ids, renumber, first, last):
    n = used.shape[0]
    found = np.empty(min(n, size), np.int64)
    for chunk in range(first, last):
        at, first_number = chunk * size, starts[chunk]
        marks = used[at:min(n, at + size)]
        numbers = renumber[at:at + marks.shape[0]]
        # Without a branch: every point gets the next number (read at used points
        # only), and the used ones are gathered in a buffer of the chunk's own,
        # indexed unsigned and written through a slice indexed from 0: indices
        # Numba cannot prove positive are checked for wrapping (25% slower on 1
        # thread).
        k = 0
        for p in range(marks.shape[0]):
            numbers[p] = first_number + k
            found[np.uint64(k)] = at + p
            k += marks[p]
        ids = point_ids[first_number:first_number + k]
        for x in range(k):
            ids[x] = found[x]


def number_points(used: np.ndarray, counts: np.ndarray | None = None,
                  size: int = _CHUNK) -> tuple[np.ndarray, np.ndarray]:
    """The points marked in ``used`` (uint8, one per point), ascending, and each
    one's number among them (``renumber``: meaningful at those points only; the
    others get the next used point's).

    ``counts``, where the caller has them, are the marks in each chunk of ``size``
    points (a kernel that marks rows counts them as it goes): they are not counted
    again.

    Examples
    --------
    >>> number_points(np.array([1, 0, 1], np.uint8))[0].tolist()
    [0, 2]
    >>> number_points(np.array([1, 0, 1, 1], np.uint8), np.array([1, 2]), 2)[0].tolist()
    [0, 2, 3]
    """
    if counts is None:
        counts, size = host_empty((used.shape[0] + _CHUNK - 1) // _CHUNK, np.int64), _CHUNK
        over_blocks(_count_used, counts.shape[0], used, counts)
    starts = exclusive(counts)
    point_ids = host_empty(starts[-1], np.int64)
    # Numbers are read once per output corner: int32 where they fit halves the bytes.
    renumber = host_empty(used.shape[0], id_dtype(used.shape[0]))
    over_blocks(_number, counts.shape[0], used, size, starts, point_ids, renumber)
    return point_ids, renumber
