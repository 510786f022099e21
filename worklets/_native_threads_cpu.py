"""Block kernels run on Numba's own thread pool: a generated parallel loop (``prange``)
calls the kernel, so a pass starts and ends its threads without the GIL.

:mod:`daxpy.worklets._blocks_cpu` runs a serial kernel (``nogil``) from Python threads.
Each of those threads takes the GIL to start its kernel and again to return, one
after another: on the GPU machine's 16-core host a pass of no work took 1.0-1.1 ms that
way, against 0.01 ms for a Numba parallel loop over the same kernel, and a 40 MB copy
in blocks 2.0 ms against 0.54 (``benchmarks/NOTES.md``, twenty-first session). A
geometry filter runs 5 to 19 such passes.

For each kernel and kind of call a module is generated (:func:`load_generated`) whose
parallel loop calls the kernel, imported from its own module by name, on ranges of
blocks (:func:`blocks_on_pool`) or once per thread (:func:`threads_on_pool`). Its
Numba disk cache serves the next process; its name carries a hash of the worklets'
sources, so a changed kernel never meets a stale loop compiled around the old one.
Ranges are claimed from an atomic counter as threads free up, and which block writes
what does not depend on the threads, so neither do the results.

A kernel's loop is built on a thread of its own the first time the kernel is run,
where it was built before on this machine (Numba's disk cache has it), else at its
second run (a loop compiles in about 0.7 s, the first time on a machine, which a
one-off call would not win back) or at :func:`settle`: until it is ready the
kernel runs on Python threads. The pool is used only where it is safe: with a
thread-safe threading layer (OpenMP or TBB: Numba's ``workqueue`` aborts when two
threads enter it at once), not in a child forked from a process that has run an
OpenMP loop (GNU OpenMP terminates it), and not where ``DAXPY_CPU_POOL=python`` asks
for Python threads. :func:`pool_loop` then returns None and the caller runs its
Python threads. GNU OpenMP's threads spin a while
after each loop before they sleep; :func:`daxpy.worklets._numba.kernel` asks for a
short spin, so that they leave the cores to a pass on Python threads that follows.

Examples
--------
>>> import numpy as np
>>> from daxpy.worklets._chunk_ids_cpu import _bounds  # a block kernel
>>> conn, offsets = np.arange(8), np.array([0, 4, 8])
>>> lowest, highest = np.zeros(2, np.int64), np.zeros(2, np.int64)
>>> args = (conn, offsets, lowest, highest)
>>> _ = pool_loop(_bounds, "blocks", args)  # at first None: the loop is being built
>>> settle()
>>> loop = pool_loop(_bounds, "blocks", args)  # None where the pool may not run
>>> if loop is not None:
...     blocks_on_pool(_bounds, loop, 1, 1, args)
...     print(lowest.tolist(), highest.tolist())
... else:
...     print([0, 4], [3, 7])
[0, 4] [3, 7]
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from ._fork_safe_cpu import openmp_forbidden, threads_starting
from ._generated_cpu import generated_path, load_generated
from ._kernel_cache import package_fingerprint

_KINDS = {
    # kind: (the loop's extra parameters, the body of its parallel loop over the
    # threads, ``{args}`` where the kernel's arguments go). "blocks": each thread
    # takes ranges of blocks from the shared counter ``taken`` until none is left
    # (OpenMP deals a parallel loop's iterations to the threads in equal shares
    # before it starts, and the rows of a clip near its surface take longer than the
    # rest); "threads": once per thread number.
    "blocks": ("n_ranges, n_blocks, taken", """
        range_ = claim(taken)
        while range_ < n_ranges:
            first = range_ * n_blocks // n_ranges
            if guarded({args}first, (range_ + 1) * n_blocks // n_ranges):
                failed[range_] = 1
            range_ = claim(taken)"""),
    "threads": ("", """
        if guarded({args}thread, n_threads):
            failed[thread] = 1"""),
}

_STATE: dict[str, Any] = {}
"""``usable``: whether the pool may run in this process (None while the probe that
decides it runs; with the pid it was decided in); ``digest``: the worklets' sources'
hash."""
_LOCK = threading.Lock()
_LOOPS: dict[tuple, Callable | None] = {}
"""Per kernel, kind and argument count: its loop, or None (Python threads: the loop is
being built, or cannot be)."""
_BUILDS: list[tuple[int, Any]] = []
"""The pid and the queue of the one thread that builds the loops, one after another,
while the passes run on Python threads: a loop takes about 0.7 s to compile, the first
time on a machine, and a geometry filter has up to 14 of them. The thread is a daemon:
a process that ends leaves its builds unfinished rather than waiting for them."""
_BUILT: list[Any] = []
"""What the builds were asked for (futures), for :func:`settle`."""
_DEFERRED: dict[tuple, tuple] = {}
"""Builds not asked for yet, of loops never built on this machine whose kernel has
run once: a loop costs its first compile about 0.7 s (on a 2-core machine, with the
GIL held for much of it), and a one-off call (``daxpy demo``, a script's single
filter) gained nothing from it. The second run, or :func:`settle`, asks for them."""


def _build_loops(jobs: Any) -> None:
    while True:
        future, work, args = jobs.get()
        try:
            future.set_result(work(*args))
        except BaseException as err:  # raised by settle()
            future.set_exception(err)


def _submit(work: Callable, *args: Any) -> None:
    """Queue ``work(*args)`` on the builder's thread (started in each process)."""
    import queue
    from concurrent.futures import Future

    if not _BUILDS or _BUILDS[0][0] != os.getpid():
        jobs: Any = queue.SimpleQueue()
        threading.Thread(target=_build_loops, args=(jobs,), name="daxpy-pool-build",
                         daemon=True).start()
        _BUILDS[:] = [(os.getpid(), jobs)]
        _BUILT.clear()
    future: Any = Future()
    _BUILT.append(future)
    _BUILDS[0][1].put((future, work, args))


def settle() -> None:
    """Build every loop of a kernel that has run, and wait until each is built (or has
    failed to build: a build's error is raised here). Benchmarks call it after their
    warm-up, so that they time the passes on the pool.

    Examples
    --------
    >>> settle()
    """
    with _LOCK:
        for build in list(_DEFERRED.values()):
            _ask(build)
        _DEFERRED.clear()
        pending = list(_BUILT)
    for future in pending:
        future.result()


def _sources_digest() -> str:
    """A hash of every worklet module's source: part of each loop's module name."""
    return package_fingerprint(os.path.dirname(__file__))[:16]


def _layer_is_threadsafe() -> bool:
    """Run a first parallel loop (which makes Numba choose its threading layer) and
    say whether the layer takes calls from several threads at once."""
    import numba
    import numpy as np

    first = load_generated(_PROBE, "pool_probe", "probe")
    first(np.zeros(2))
    return numba.threading_layer() in ("omp", "tbb")


_PROBE = '''"""Generated by daxpy: Numba's first parallel loop, to choose its threading layer."""
from numba import njit, prange


@njit(parallel=True, cache=True)
def probe(out):
    for i in prange(out.shape[0]):
        out[i] = i
'''


def _decide() -> None:
    """Run the probe and record whether the pool may run in this process."""
    # Recorded before the probe's parallel loop starts the threads, not after: a fork
    # between the two left a child that took its parent for one that had run no
    # OpenMP loop, and its own first loop was terminated by GNU OpenMP (a forked
    # contour's test, in a cold cache).
    threads_starting()
    _STATE["usable"] = _layer_is_threadsafe()


def _allowed() -> bool:
    """Whether the pool may be tried here (see the module's text); at the first call
    of a process, resets what the probe decided (a fork's parent decided its own)."""
    if os.environ.get("DAXPY_CPU_POOL", "").strip().lower() == "python":
        return False
    if openmp_forbidden():
        return False  # a forked child of a process that started GNU OpenMP
    with _LOCK:
        if _STATE.get("pid") != os.getpid():
            _STATE.update(pid=os.getpid(), digest=_sources_digest(), usable=None,
                          probed=False)
    return True


def _ask(build: tuple) -> None:
    """Queue a loop's build (``_LOCK`` held), after the probe where this process has
    not queued it yet: the probe's own first compile (about a second, once a machine)
    waits for a loop worth building, as the loops do."""
    if not _STATE["probed"]:
        _STATE["probed"] = True
        _submit(_decide)
    _submit(_build, *build)


_PART = 16
"""Arguments a tuple of ``guarded``'s: CPython builds a call or a tuple of more than 30
items through a list, which Numba does not compile."""


def _loop_source(module: str, name: str, kind: str, n_args: int, digest: str) -> str:
    extra, body = _KINDS[kind]
    names = [f"a{i}" for i in range(n_args)]
    parts = [names[i:i + _PART] for i in range(0, n_args, _PART)]
    params = "".join(f"p{i}, " for i in range(len(parts)))
    joined = "".join(f"p{i} + " for i in range(len(parts)))
    given = "".join("(" + "".join(f"{a}, " for a in part) + "), " for part in parts)
    # The arguments are unpacked before the parallel loop: a parallel loop cannot pass
    # on a tuple that holds a tuple (as count_type's unrolled widths). It drops its
    # body's exceptions: the body calls ``guarded``, which catches them and says so,
    # and the caller runs a failed iteration again on its own thread to raise the
    # kernel's error there.
    unpack = f"    {', '.join(names)}, = args\n" if names else ""
    return (f'"""Generated by daxpy: {module}.{name} on Numba\'s threads ({kind}; '
            f'worklets {digest})."""\n'
            "from numba import njit, prange\n\n"
            "from daxpy.worklets._claim_cpu import claim\n"
            f"from {module} import {name} as task\n\n\n"
            "@njit(nogil=True, cache=True)\n"
            f"def guarded({params}first, last):\n"
            "    try:\n"
            f"        task(*({joined}(first, last)))\n"
            "    except Exception:\n"
            "        return True\n"
            "    return False\n\n\n"
            "@njit(parallel=True, nogil=True, cache=True)\n"
            f"def loop(args, n_threads, {extra + ', ' if extra else ''}failed):\n"
            f"{unpack}"
            "    for thread in prange(n_threads):"
            f"{body.format(args=given)}\n")


def pool_loop(task: Callable, kind: str, args: tuple) -> Callable | None:
    """The generated parallel loop that calls ``task`` (``kind`` "blocks" or
    "threads") with ``args``, or None where the pool may not run or ``task`` cannot
    be imported by its module and name.

    Examples
    --------
    >>> pool_loop(len, "blocks", ()) is None  # not a kernel of a module
    True
    """
    if not _allowed():
        return None
    key = (task, kind, len(args))
    if key not in _LOOPS:
        _LOOPS[key] = None  # Python threads until the loop is built
        function = getattr(task, "py_func", None)
        module, name = getattr(function, "__module__", None), getattr(function, "__name__", "")
        if module is not None and getattr(sys.modules.get(module), name, None) is task:
            # A kernel outside the worklets (a test's) brings its own file's hash.
            path = getattr(sys.modules[module], "__file__", None) or ""
            own = "" if Path(path).parent == Path(__file__).parent or not path else \
                hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
            source = _loop_source(module, name, kind, len(args), _STATE["digest"] + own)
            build = (key, source, kind, _signature(kind, args))
            with _LOCK:
                if generated_path(source, f"pool_{kind}").exists():
                    _ask(build)  # built before: from Numba's disk cache
                else:
                    _DEFERRED[key] = build
    elif key in _DEFERRED:
        with _LOCK:
            if key in _DEFERRED:  # the kernel's second run: its loop is worth building
                _ask(_DEFERRED.pop(key))
    return _LOOPS[key] if _STATE["usable"] else None


def _signature(kind: str, args: tuple) -> tuple:
    """The loop's argument types for ``args`` (types only: the build keeps no array)."""
    import numba
    import numpy as np

    from ._claim_cpu import claim_counter

    count, flags = numba.int64, numba.typeof(np.zeros(1, np.uint8))
    extra = (count, count, numba.typeof(claim_counter())) if kind == "blocks" else ()
    return (numba.typeof(args), count, *extra, flags)


def _build(key: tuple, source: str, kind: str, signature: tuple) -> None:
    """Write, load and compile one loop (on the builder's thread), then let the
    passes use it (not where the probe, built before it, found the pool unsafe)."""
    if not _STATE["usable"]:
        return
    loop = load_generated(source, f"pool_{kind}", "loop")
    loop.compile(signature)
    _LOOPS[key] = loop


def _raise_failed(task: Callable, failed: Any, bounds: Callable, args: tuple) -> None:
    """Run the first failed iteration again on this thread, so that its error is
    raised here with its own type and message."""
    import numpy as np

    if failed.any():
        first, last = bounds(int(np.flatnonzero(failed)[0]))
        task(*args, first, last)
        raise RuntimeError(f"{getattr(task, '__name__', task)} failed on a pool thread "
                           "and not when run again")


def blocks_on_pool(task: Callable, loop: Callable, n_blocks: int, n_ranges: int,
                   args: tuple) -> None:
    """Run ``task`` through ``loop`` (:func:`pool_loop` of kind "blocks") over
    ``n_ranges`` ranges of blocks ``0 .. n_blocks``, each taken by the next free
    thread; a range's error is raised here.

    Examples
    --------
    >>> callable(blocks_on_pool)
    True
    """
    import numba
    import numpy as np

    from ._claim_cpu import claim_counter

    failed = np.zeros(n_ranges, np.uint8)
    loop(args, min(numba.get_num_threads(), n_ranges), n_ranges, n_blocks, claim_counter(),
         failed)
    _raise_failed(task, failed, lambda r: (r * n_blocks // n_ranges,
                                           (r + 1) * n_blocks // n_ranges), args)


def threads_on_pool(task: Callable, loop: Callable, n_threads: int, args: tuple) -> None:
    """Run ``task`` through ``loop`` (:func:`pool_loop` of kind "threads") once for
    each thread number ``0 .. n_threads``; an error is raised here.

    Examples
    --------
    >>> callable(threads_on_pool)
    True
    """
    import numpy as np

    failed = np.zeros(n_threads, np.uint8)
    loop(args, n_threads, failed)
    _raise_failed(task, failed, lambda r: (r, n_threads), args)
