"""Timing for the benchmarks: host clocks for CPU work, CUDA events for GPU work.

Both report medians after warm-up. GPU samples exclude host launch overhead
(a spin kernel keeps the GPU busy while the host enqueues the timed work), and
the device-to-device copy rate is the yardstick of every kernel figure.

Examples
--------
>>> ms, value = time_cpu(lambda: 6 * 7, repeat=3)
>>> value
42
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any, Callable

import numpy as np

from .common import AgreementError


def _settle_cpu_pool() -> None:
    """Wait for the CPU passes' loops that the warm-up asked for
    (:func:`daxpy.worklets._native_threads_cpu.settle`): until a loop is built its
    passes run on Python threads, and a timing would mix the two."""
    from daxpy.worklets._native_threads_cpu import settle

    settle()


def time_cpu(fn: Callable[[], Any], *, repeat: int = 5, warmup: int = 1,
             slow_s: float = 3.0) -> tuple[float, Any]:
    """Median wall time of ``fn()`` in ms after ``warmup`` calls, and the last result.

    A call longer than ``slow_s`` seconds ends the sampling (so a 20-second VTK
    run is timed once, after its warm-up, rather than five times).

    Examples
    --------
    >>> ms, value = time_cpu(lambda: sum(range(100)), repeat=3)
    >>> (ms >= 0, value)
    (True, 4950)
    """
    result = None
    for _ in range(warmup):
        result = fn()
    _settle_cpu_pool()
    samples = []
    for _ in range(max(repeat, 1)):
        start = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - start)
        if samples[-1] > slow_s:
            break
    return statistics.median(samples) * 1e3, result


def time_in_turns(runs: dict[str, tuple[Callable[[], Any], Callable[[], Any]]], *,
                  repeat: int = 5, slow_s: float = 3.0) -> dict[str, float]:
    """Median wall time in ms of each of ``runs`` (``name: (context, fn)``), timed in
    turns: a call of each per round, the rounds in shuffled orders, so that a slow
    spell of a shared host weighs on all of them alike. Timed one implementation
    after another, the ratio of two medians of one case (hexahedra point-to-cell
    against VTK, 16 cores) measured 1.6x to 2.5x over five runs.

    ``context()`` is entered around each call, outside its time (VTK's SMP
    backend); a call longer than ``slow_s`` seconds ends that one's sampling.
    No warm-up: the caller has called each ``fn`` (checking its result). The CPU
    passes' loops that those calls asked for are waited for first, as
    :func:`time_cpu` does after its warm-up: until a loop is built, its passes run on
    Python threads while a compiler thread takes the GIL.

    Examples
    --------
    >>> import contextlib
    >>> times = time_in_turns({"a": (contextlib.nullcontext, lambda: 1),
    ...                        "b": (contextlib.nullcontext, lambda: 2)}, repeat=3)
    >>> sorted(times), all(ms >= 0 for ms in times.values())
    (['a', 'b'], True)
    """
    _settle_cpu_pool()
    samples: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    order = random.Random(0)   # the same orders every run
    for round_ in range(max(repeat, 1)):
        # The first round in the order given, later ones shuffled: in one order every
        # round, a call would always follow the same one (a 16-thread run, or a long
        # one-thread run that left the other cores idle).
        for name in names:
            context, fn = runs[name]
            if samples[name] and samples[name][-1] > slow_s:
                continue
            with context():
                start = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - start)
        order.shuffle(names)
    return {name: statistics.median(times) * 1e3 for name, times in samples.items()}


_SPIN_SOURCE = r"""
extern "C" __global__ void spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""
_spin_kernel = None


def _spin(microseconds: float) -> None:
    """Keep the GPU busy for a while so that the host queues the timed work behind it."""
    global _spin_kernel
    import cupy

    if _spin_kernel is None:
        _spin_kernel = cupy.RawKernel(_SPIN_SOURCE, "spin")
    clock_khz = cupy.cuda.Device().attributes["ClockRate"]
    _spin_kernel((1,), (1,), (np.int64(microseconds * clock_khz / 1e3),))


def time_gpu(fn: Callable[[], Any], *, repeat: int = 20, warmup: int = 3,
             spin_us: float = 2000.0) -> float:
    """Median time of ``fn()`` on the current CUDA stream in ms, by CUDA events.

    ``fn`` must only enqueue work. Before each sample a one-thread kernel keeps
    the GPU busy for ``spin_us`` while the host enqueues the start event,
    ``fn``'s kernels and the stop event, so the time between the events is the
    kernels' alone and not the host's launch overhead (which for a 0.2 ms
    kernel would be a tenth of it).
    """
    import cupy

    for _ in range(warmup):
        fn()
    cupy.cuda.get_current_stream().synchronize()
    return time_events(fn, repeat=repeat, before=lambda: _spin(spin_us))


def time_events(fn: Callable[[], Any], *, repeat: int = 5,
                before: Callable[[], Any] | None = None) -> float:
    """Median time in ms between CUDA events recorded around ``fn()`` on the current
    stream (``before()`` runs first each time). Unlike :func:`time_gpu`, ``fn`` may
    wait on the device itself (an output size read back): its host work between
    kernels is part of the time.
    """
    import cupy

    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    samples = []
    for _ in range(repeat):
        if before is not None:
            before()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, stop))
    return statistics.median(samples)


def time_synced(fn: Callable[[], Any], *, repeat: int = 5, warmup: int = 1,
                spin_us: float = 2000.0) -> float:
    """Device time of ``fn()`` in ms where ``fn`` waits on the device itself (an
    output size read back): as :func:`time_gpu`, a spin kernel hides the host's
    launches before the first kernel (Python's dispatch, not the device's work),
    while the wait and the host's work after it, when the GPU idles, count.
    """
    import cupy

    for _ in range(warmup):
        fn()
    cupy.cuda.get_current_stream().synchronize()
    return time_events(fn, repeat=repeat, before=lambda: _spin(spin_us))


def copy_bandwidth_gbps(nbytes: int = 2 << 30, repeat: int = 20) -> float:
    """Device-to-device copy rate in GB/s, counting bytes read plus bytes written.

    A ``cudaMemcpyAsync`` of ``nbytes`` between two device buffers, filled with
    random bytes first (never time on zeros), median of ``repeat`` copies.
    """
    import cupy

    n_words = nbytes // 4
    src = cupy.random.default_rng(1).random(n_words, dtype=cupy.float32)
    dst = cupy.empty_like(src)

    def copy() -> None:
        dst.data.copy_from_device_async(src.data, src.nbytes)

    ms = time_gpu(copy, repeat=repeat)
    if not bool((dst == src).all()):
        raise AgreementError("the D2D copy did not reproduce its source")
    return 2 * src.nbytes / (ms / 1e3) / 1e9
