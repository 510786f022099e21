"""Page-locked host memory for what comes back from the GPU: blocks kept for reuse by
size, the large ones made from ordinary memory and registered.

A download at the bus's rate needs page-locked memory, and a fresh NumPy array
returned to the user is the cheapest home only once its pages exist. CUDA's own
page-locked allocation (``cudaHostAlloc``, CuPy's pinned pool) costs 450-530 ms a
GB cold on the H100 machine, 20 times the copy itself (19 ms a GB), and CuPy's
pool reuses a block only for a request of exactly its size. So:

- requests are rounded up to a size class (four a power of two: at most 25% more),
  so that surfaces of varying sizes reuse the same blocks;
- a block of 4 MiB or more is ordinary memory whose pages the host's threads touch
  at once, then registered (``cudaHostRegister``): 69-96 ms a GB cold, against
  450-530 (``benchmarks/results/download-cold-nvidia-h100.log``);
- smaller blocks come from CuPy's pinned pool.

An array handed out keeps its block leased; when the array and every view of it
are gone, the block goes back to its size class for the next request.
:func:`release_pool` frees the blocks not in use.

Examples
--------
>>> size_class(5_000_000)   # (the classes of daxpy.data.host_pool)
5242880
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from daxpy.data.host_pool import array_request, size_class

REGISTERED_MIN_BYTES = 1 << 22
"""Blocks this large (4 MiB) and larger are registered ordinary memory."""

_PAGE = 4096   # (touched a byte a page)
HOST_REGISTER_PORTABLE_MAPPED = 1 | 2       # cudaHostRegisterPortable | Mapped
"""The flags memory is registered with, here and for inputs locked in place
(:func:`daxpy.stream.transfer.page_lock`)."""

_free: dict[int, list] = {}                 # size class -> registered blocks not in use
_pool = None
_touching: ThreadPoolExecutor | None = None
_touching_made = threading.Lock()
_TOUCHING_THREADS = min(16, os.cpu_count() or 1)
_LEASE = None   # the lease class, made on first use (:func:`_new_lease`)


def _pinned_pool():
    """CuPy's pool of pinned host memory that the small blocks come from."""
    global _pool
    if _pool is None:
        import cupy

        _pool = cupy.cuda.PinnedMemoryPool()
    return _pool


def pinned_empty(shape, dtype) -> np.ndarray:
    """A NumPy array over page-locked memory (uninitialized), its block leased from
    its size class until the array and its views are freed.

    Examples
    --------
    >>> callable(pinned_empty)
    True
    """
    shape, dtype, nbytes = array_request(shape, dtype)
    if nbytes == 0:
        return np.empty(shape, dtype=dtype)
    size = size_class(nbytes)
    memory = _lease(size) if size >= REGISTERED_MIN_BYTES else _pinned_pool().malloc(size)
    return np.frombuffer(memory, dtype=np.uint8, count=nbytes).view(dtype).reshape(shape)


def release_pool() -> None:
    """Free the blocks kept for reuse (not those in use).

    Examples
    --------
    >>> callable(release_pool)
    True
    """
    for blocks in _free.values():
        blocks.clear()   # each block unregisters as it is freed
    if _pool is not None:
        _pool.free_all_blocks()


def _lease(size: int) -> Any:
    """A pointer-like object over a registered block of ``size`` bytes (a NumPy
    array's base): the block returns to its class when the object is freed."""
    import cupy

    blocks = _free.setdefault(size, [])
    try:
        block = blocks.pop()
    except IndexError:
        block = _registered_block(size)
    return cupy.cuda.PinnedMemoryPointer(_new_lease(block), 0)


def _registered_block(size: int) -> "_Block":
    """Ordinary memory of ``size`` bytes, its pages touched by the host's threads at
    once (each fault zeroes a page: one thread is the slow part), then registered."""
    global _touching
    memory = np.empty(size, np.uint8)
    with _touching_made:   # one pool, whichever thread downloads first
        if _touching is None:
            _touching = ThreadPoolExecutor(_TOUCHING_THREADS, thread_name_prefix="daxpy-touch")
    part = -(-size // (_TOUCHING_THREADS * _PAGE)) * _PAGE
    list(_touching.map(lambda i: memory[i * part:(i + 1) * part:_PAGE].fill(0),
                       range(_TOUCHING_THREADS)))
    return _Block(memory)


class _Block:
    """A registered block: unregistered when freed."""

    def __init__(self, memory: np.ndarray):
        from cupy.cuda import runtime

        self.memory = memory
        self.ptr = int(memory.ctypes.data)
        runtime.hostRegister(self.ptr, memory.nbytes, HOST_REGISTER_PORTABLE_MAPPED)

    def __del__(self):
        try:
            from cupy.cuda import runtime

            runtime.hostUnregister(self.ptr)
        except Exception:  # the CUDA context may already be gone at interpreter exit
            pass


def _lease_type():
    """The lease class: a CuPy ``PinnedMemory`` over a block (made on first use, so
    that importing this module needs no CuPy)."""
    import cupy

    class Lease(cupy.cuda.pinned_memory.PinnedMemory):
        """One use of a block; gives it back to its class when freed."""

        def __init__(self, block: _Block):  # not PinnedMemory's: nothing is allocated
            self.block, self.ptr, self.size = block, block.ptr, block.memory.nbytes

        def __del__(self):
            blocks = _free.get(self.size)
            if blocks is not None:
                blocks.append(self.block)
            self.ptr = 0   # PinnedMemory frees a pointer it holds: this one is not its

    return Lease


def _new_lease(block: _Block) -> Any:
    """A lease of ``block``."""
    global _LEASE
    if _LEASE is None:
        _LEASE = _lease_type()
    return _LEASE(block)
