"""Threads for the compiled kernels that are not Numba parallel loops (threshold,
clip, contour, the hexahedra point gradient): a serial kernel (``nogil``) called
from Python threads, on ranges of blocks (:func:`over_blocks`), once per thread
(:func:`on_threads`), or once per thread taking blocks itself (:func:`on_claimed`,
for kernels whose blocks are too short to be dealt from Python).

A parallel loop costs far more to compile than the serial function it calls: on
a 2-core machine a loop that only calls one costs about 0.5 s (the first in a
process about 0.8 s, more with arrays in tuples), its serial body about 0.1 s.
Blocks are dealt to the threads a range at a time as they free up, so a thread
slowed by another process does not hold up the rest; which block writes what
does not depend on the threads, so neither do the results.

Examples
--------
>>> import numba, numpy as np
>>> @numba.njit(nogil=True)   # a kernel of the package: @block_kernel()
... def twice(values, out, first, last):
...     for b in range(first, last):
...         out[b] = 2 * values[b]
>>> out = np.empty(5)
>>> over_blocks(twice, 5, np.arange(5.0), out)
>>> out.tolist()
[0.0, 2.0, 4.0, 6.0, 8.0]
"""

from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from ._native_threads_cpu import blocks_on_pool, pool_loop, threads_on_pool
from ._numba import kernel


def block_kernel(**options):
    """:func:`~daxpy.worklets._numba.kernel` for a kernel :func:`over_blocks` calls:
    without the GIL, and without the C function wrapper (no kernel is passed as a
    first-class function) that a first use would compile too.

    Examples
    --------
    >>> callable(block_kernel())
    True
    """
    return kernel(nogil=True, no_cfunc_wrapper=True, **options)


def inner_kernel(**options):
    """:func:`~daxpy.worklets._numba.kernel` for a function only kernels call: without
    the wrappers that call it from Python or C, which cost a first use about 0.1 s
    (more the more arrays it takes).

    Examples
    --------
    >>> callable(inner_kernel())
    True
    """
    return kernel(no_cpython_wrapper=True, no_cfunc_wrapper=True, **options)


_RANGES_PER_THREAD = 4
"""Ranges of blocks dealt to each thread, at most: enough for the threads to even
out, few enough that the calls from Python stay small. Each range is a call under
the GIL, one thread's after another's (about 17 us on the GPU machine's 16 cores):
16 a thread held the 16 threads back. With 4, in turns with 16 and 2 in one process
on that host (H100 machine, 10M hexahedra and the 256³ wavelet, medians of 5, two
rounds): the wavelet's threshold 62.9 / 53.9 -> 39.5 / 39.4 ms, the hexahedra's
clip by scalar 129.9 / 128.2 -> 99.1 / 105.4 and by plane 114.1 / 110.6 -> 96.4 /
95.2; 2 a thread was slower than 4 in most cases."""

_POOL_RANGES_PER_THREAD = 16
"""Ranges of blocks a thread, at most, on Numba's threads
(:mod:`~daxpy.worklets._native_threads_cpu`): there a range is taken by an atomic
add, not a call under the GIL, so more of them even out rows of unequal work."""

_POOL: list[tuple[int, ThreadPoolExecutor]] = []
"""The helper threads with the process they were started in: started at the first
call that runs on more than one thread, and again in a forked child, which has none
of its parent's threads (a child handing work to them would wait forever)."""


def _workers(count: int) -> ThreadPoolExecutor:
    """A pool of at least ``count`` helper threads of this process."""
    if not _POOL or _POOL[0][0] != os.getpid() or _POOL[0][1]._max_workers < count:
        if _POOL and _POOL[0][0] == os.getpid():
            _POOL[0][1].shutdown(wait=False)
        _POOL[:] = [(os.getpid(), ThreadPoolExecutor(count, thread_name_prefix="daxpy-cpu"))]
    return _POOL[0][1]


def on_threads(task: Callable[..., Any], n_threads: int, *args: Any) -> None:
    """``task(*args, thread, n_threads)`` for each ``thread`` in ``range(n_threads)``,
    all at once (thread 0 on the caller), returning when all are done; a thread's
    error is raised here. For kernels that give each thread its own buffers.

    Examples
    --------
    >>> import numba, numpy as np
    >>> @numba.njit(nogil=True)
    ... def mine(out, thread, n_threads):
    ...     out[thread] = n_threads
    >>> out = np.zeros(2, np.int64)
    >>> on_threads(mine, 2, out)
    >>> out.tolist()
    [2, 2]
    """
    if n_threads <= 1:
        task(*args, 0, 1)
        return
    loop = pool_loop(task, "threads", args)
    if loop is not None:
        threads_on_pool(task, loop, n_threads, args)
        return
    helpers = [_workers(n_threads - 1).submit(task, *args, thread, n_threads)
               for thread in range(1, n_threads)]
    task(*args, 0, n_threads)
    for helper in helpers:
        helper.result()


def on_claimed(task: Callable[..., Any], n_blocks: int, *args: Any) -> None:
    """``task(*args, taken, thread, n_threads)`` once on each thread the compiled
    kernels run on (at most ``n_blocks``), where ``task`` takes blocks ``0 ..
    n_blocks`` itself, each by :func:`~daxpy.worklets._claim_cpu.claim` from
    ``taken`` (zero here): one call from Python a thread, however many blocks.

    Examples
    --------
    >>> import numba, numpy as np
    >>> from daxpy.worklets._claim_cpu import claim
    >>> @numba.njit(nogil=True)
    ... def ones(out, taken, thread, n_threads):
    ...     block = claim(taken)
    ...     while block < out.shape[0]:
    ...         out[block] = 1
    ...         block = claim(taken)
    >>> out = np.zeros(5, np.int64)
    >>> on_claimed(ones, 5, out)
    >>> out.tolist()
    [1, 1, 1, 1, 1]
    """
    from numba import get_num_threads

    from ._claim_cpu import claim_counter

    if n_blocks > 0:
        on_threads(task, min(get_num_threads(), n_blocks), *args, claim_counter())


def over_blocks(task: Callable[..., Any], n_blocks: int, *args: Any) -> None:
    """``task(*args, first, last)`` over ranges of blocks ``0 .. n_blocks``, on the
    threads the compiled kernels run on (:func:`numba.get_num_threads`).

    ``task`` is a kernel compiled without the GIL (:func:`block_kernel`) that handles
    blocks ``first`` to ``last``; ranges are dealt to the threads as they free up.

    Examples
    --------
    >>> import numba, numpy as np
    >>> @numba.njit(nogil=True)
    ... def ones(out, first, last):
    ...     out[first:last] = 1
    >>> out = np.zeros(3, np.int64)
    >>> over_blocks(ones, 3, out)
    >>> out.tolist()
    [1, 1, 1]
    """
    from numba import get_num_threads

    threads = min(get_num_threads(), n_blocks)
    if threads <= 1:
        if n_blocks > 0:
            task(*args, 0, n_blocks)
        return
    loop = pool_loop(task, "blocks", args)
    if loop is not None:
        blocks_on_pool(task, loop, n_blocks, min(n_blocks, threads * _POOL_RANGES_PER_THREAD),
                       args)
        return
    n_ranges = min(n_blocks, threads * _RANGES_PER_THREAD)
    # Range r holds blocks r * n_blocks // n_ranges .. (r + 1) * n_blocks // n_ranges;
    # next() on a count is atomic under the GIL: each range is taken once.
    taken = itertools.count()
    finished = threading.Condition()
    done, errors = [0], []

    def work() -> None:
        for r in iter(taken.__next__, None):
            if r >= n_ranges:
                return
            try:
                task(*args, r * n_blocks // n_ranges, (r + 1) * n_blocks // n_ranges)
            except BaseException as err:  # raised by the caller, below
                errors.append(err)
            with finished:
                done[0] += 1
                finished.notify_all()

    # Compiled before the threads start: one compiles, the others would wait.
    task(*args, 0, 0)
    for _ in range(threads - 1):
        _workers(threads).submit(work)
    work()
    # The caller waits for the ranges, not for the helpers: a helper that another
    # process kept off the cores until every range was taken finds none left, and
    # waiting for it to wake cost a kernel of 0.6 ms up to 2 ms on 2 busy cores.
    with finished:
        finished.wait_for(lambda: done[0] == n_ranges)
    if errors:
        raise errors[0]
