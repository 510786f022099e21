"""Host memory for what the CPU kernels make, kept for reuse by size: a fresh
array's pages are faulted in (and zeroed by the system) as they are first
written, and on many cores those faults are a large part of a geometry filter.

On the GPU machine's 16 cores, a 256³ contour's write pass took 10.7 ms into fresh
arrays and 6.0 ms into arrays written before, and the whole filter 32 ms against
21 (`.dc/s/cc16c.py`): freed arrays of tens of megabytes go back to the system
(NumPy allocates them with ``malloc``, which maps them anew), so every call
paid for its pages again. As the page-locked blocks of downloads
(:mod:`daxpy.stream.host_blocks`) do:

- requests are rounded up to a size class (four a power of two: at most 25% more),
  so that outputs of varying sizes reuse the same blocks;
- an array handed out keeps its block until the array and every view of it are
  gone; the block then serves the next request of its class;
- at most :data:`KEEP_BYTES` of blocks not in use are kept (an eighth of the
  memory the process could take, at most 8 GiB); :func:`release` frees them.

Small arrays (under :data:`POOLED_MIN_BYTES`) are NumPy's own: ``malloc`` keeps
those.

Examples
--------
>>> a = host_empty((1 << 18,), np.float64)
>>> a.shape, a.dtype.name
((262144,), 'float64')
>>> size_class(5_000_000)
5242880
"""

from __future__ import annotations

import math
import os
import sys
import threading
from typing import Any

import numpy as np

from .memory_budget import available_bytes

POOLED_MIN_BYTES = 1 << 20
"""Arrays this large (1 MiB) and larger come from the pool."""

_PAGE = 4096


KEEP_BYTES = min(8 << 30, available_bytes()[0] // 8)
"""The most bytes of blocks not in use that are kept: an eighth of what the process
could take when this module was loaded (the smallest of the host's available
memory, the room under a container's limit and under ``ulimit -v``), at most
8 GiB; a block given back beyond it is freed."""

_free: dict[int, list[np.ndarray]] = {}    # size class -> blocks not in use
_kept = [0]                                 # their bytes
_lock = threading.Lock()


def _new_lock_in_child() -> None:
    """A forked child's own lock: it has none of its parent's threads, so one that
    held the lock at the fork would hold it in the child forever."""
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_in_child)


def size_class(nbytes: int) -> int:
    """The size a request of ``nbytes`` is served from: the next of 1, 1.25, 1.5 and
    1.75 times a power of two (whole pages).

    Examples
    --------
    >>> [size_class(n) for n in (1, 4096, 5_000_000, 3 << 20)]
    [4096, 4096, 5242880, 3145728]
    """
    if nbytes <= _PAGE:
        return _PAGE
    power = 1 << (int(nbytes - 1).bit_length() - 1)
    for quarter in (4, 5, 6, 7, 8):
        size = power * quarter // 4
        if size >= nbytes:
            return -(-size // _PAGE) * _PAGE
    raise AssertionError("unreachable: 8 quarters is the next power of two")


def array_request(shape: Any, dtype: Any) -> tuple[tuple, np.dtype, int]:
    """``(shape, dtype, nbytes)`` of an array asked for as ``np.empty`` takes it
    (a shape or one length), for the pools that serve such requests.

    Examples
    --------
    >>> array_request(3, np.float32)
    ((3,), dtype('float32'), 12)
    """
    dtype = np.dtype(dtype)
    # Python's ints, not NumPy's reductions: a kernel's call asks for a dozen arrays
    # (np.ndim and np.prod took 4 of its 5 us a request of a tuple).
    if isinstance(shape, (tuple, list)):
        shape = tuple(int(s) for s in shape)
    else:   # one length, or an array of lengths
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    return shape, dtype, math.prod(shape) * dtype.itemsize


def host_empty(shape: Any, dtype: Any = np.float64) -> np.ndarray:
    """An uninitialized array (C order) over a block of the pool, as ``np.empty``.

    Examples
    --------
    >>> a = host_empty((3, 1 << 16), np.float32)
    >>> a.shape, a.flags.c_contiguous, a.flags.writeable
    ((3, 65536), True, True)
    """
    shape, dtype, nbytes = array_request(shape, dtype)
    if nbytes < POOLED_MIN_BYTES or dtype.hasobject:
        return np.empty(shape, dtype)
    size = size_class(nbytes)
    with _lock:
        blocks = _free.get(size)
        block = blocks.pop() if blocks else None
        if block is not None:
            _kept[0] -= size
    if block is None:
        block = np.empty(size, np.uint8)
    return np.asarray(_Lease(block, shape, dtype))


def release() -> None:
    """Free the blocks not in use.

    Examples
    --------
    >>> release(); kept_bytes()
    0
    """
    with _lock:
        _free.clear()
        _kept[0] = 0


def kept_bytes() -> int:
    """Bytes of blocks not in use, kept for the next requests.

    Examples
    --------
    >>> kept_bytes() >= 0
    True
    """
    return _kept[0]


def _give_back(block: np.ndarray) -> None:
    """``block`` back to its class, unless that would keep more than
    :data:`KEEP_BYTES`, or another thread (or this one, freeing an array while it
    takes a block) holds the pool: then it is freed."""
    if not _lock.acquire(blocking=False):
        return
    try:
        if _kept[0] + block.nbytes <= KEEP_BYTES:
            _free.setdefault(block.nbytes, []).append(block)
            _kept[0] += block.nbytes
    finally:
        _lock.release()


class _Lease:
    """One use of a block: what the handed-out array (and every view of it) has as
    its base, through NumPy's array interface; gives the block back when freed."""

    __slots__ = ("block", "__array_interface__")

    def __init__(self, block: np.ndarray, shape: tuple, dtype: np.dtype):
        self.block = block
        self.__array_interface__ = {"data": (block.ctypes.data, False), "shape": shape,
                                    "typestr": dtype.str, "descr": dtype.descr, "version": 3}

    def __del__(self, give_back=_give_back, finalizing=sys.is_finalizing):
        # At the interpreter's exit the module's globals (its lock among them) may be
        # gone before the last arrays are freed, and a block kept then has no use.
        if not finalizing():
            give_back(self.block)
