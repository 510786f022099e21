"""Peak host memory of a profiled CPU run, without racing other threads.

:mod:`tracemalloc` is process-global: starting or stopping it while another
thread allocates has crashed CPython, and resetting its peak in one run spoils
another run's figure. So daxpy touches it only for a run that asked for a
profile, and every profiled run shares one tracing session: the first to enter
starts tracemalloc (unless the user already traces), the last to leave stops
it, both under one lock. While several profiled runs overlap, each one's peak
is the process's peak over its run (the runs' allocations together), which the
profile says by reporting it as such.

Examples
--------
>>> import numpy as np
>>> with traced_peak() as peak:
...     block = np.ones(1 << 20)
>>> peak() >= block.nbytes
True
"""

from __future__ import annotations

import threading
import tracemalloc
from contextlib import contextmanager

__all__ = ["traced_peak"]

_LOCK = threading.Lock()
_runs = 0            # profiled runs inside traced_peak() now
_started_here = False  # whether daxpy (not the user) started tracemalloc


@contextmanager
def traced_peak():
    """Trace host allocations for the ``with`` block; yield a function that
    returns the traced peak in bytes since the block began.

    Safe to enter from many threads at once; tracemalloc is started by the first
    block to enter and stopped by the last to leave, and left alone when the
    user was already tracing.

    Examples
    --------
    >>> with traced_peak() as peak:
    ...     _ = bytearray(4096)
    >>> peak() > 0
    True
    """
    global _runs, _started_here
    with _LOCK:
        if _runs == 0 and not tracemalloc.is_tracing():
            tracemalloc.start()
            _started_here = True
        _runs += 1
        if _runs == 1:
            # Only a lone run may reset the peak; with others running it would
            # erase their high-water marks.
            tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
    measured = [0]

    def peak() -> int:
        return measured[0]

    try:
        yield peak
    finally:
        with _LOCK:
            measured[0] = max(0, tracemalloc.get_traced_memory()[1] - base)
            _runs -= 1
            if _runs == 0 and _started_here:
                tracemalloc.stop()
                _started_here = False
