"""Progress bars (tqdm) for work that may last: reads, writes, runs.

A bar appears only once its work has lasted :data:`DELAY` seconds, so quick
steps print nothing, and by default only when stderr is a terminal, so logs and
pipes stay clean. Work that reports how far it got (VTK readers and writers)
shows a percentage; work that does not shows its elapsed time, refreshed by a
thread, as a sign of life.

Examples
--------
>>> with progress("reading grid.vti", enabled=False) as report:
...     report(0.5)
...     report(1.0)
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

__all__ = ["DELAY", "progress"]

DELAY = 1.0
"""Seconds of work before a bar appears."""

_TICK = 0.25  # seconds between refreshes of a bar without fractions

_FORMATS = {True: "{desc}: {percentage:3.0f}%|{bar}| {elapsed}", False: "{desc}: {elapsed}"}


@contextmanager
def progress(label: str, enabled: bool | None = None, fractions: bool = True,
             delay: float = DELAY) -> Iterator[Callable[[float], None]]:
    """A progress bar for the work done in the ``with`` block.

    Parameters
    ----------
    label : str
        What is being done (``"reading grid.vti"``).
    enabled : bool, optional
        True: show the bar; False: never; None (default): show it only when
        stderr is a terminal.
    fractions : bool
        True: the block reports its progress by calling the yielded function
        with the fraction done (0 to 1). False: it reports nothing, and the
        bar shows the elapsed time.
    delay : float
        Seconds before the bar appears (default :data:`DELAY`).

    Yields
    ------
    callable
        ``report(fraction)``; calls after the bar closed are ignored.

    Examples
    --------
    >>> import time
    >>> with progress("computing", enabled=False, fractions=False):
    ...     time.sleep(0.01)
    """
    try:
        from tqdm import tqdm
    except ImportError:  # an install without dependencies (--no-deps): no bar, the work runs
        yield lambda fraction: None
        return
    show = sys.stderr.isatty() if enabled is None else enabled
    bar = tqdm(total=100 if fractions else None, desc=label, delay=delay, disable=not show,
               file=sys.stderr, leave=False, bar_format=_FORMATS[fractions])
    done = threading.Event()
    lock = threading.Lock()

    def report(fraction: float) -> None:
        with lock:
            if not done.is_set():
                bar.update(min(100.0, max(0.0, 100.0 * fraction)) - bar.n)

    ticker = None
    if show and not fractions:
        ticker = threading.Thread(target=_tick, args=(bar, done, lock), daemon=True)
        ticker.start()
    try:
        yield report
    finally:
        with lock:
            done.set()
            bar.close()
        if ticker is not None:
            ticker.join()


def _tick(bar, done: threading.Event, lock: threading.Lock) -> None:
    """Refresh ``bar`` until ``done``, so that its elapsed time moves."""
    while not done.wait(_TICK):
        with lock:
            if not done.is_set():
                bar.update(0)
