"""Numba's error messages and sys.stdout (worklets/_numba.py): Numba colours a
message by wrapping and unwrapping sys.stdout through colorama, process-wide, and
formats messages as control flow while it types a function. A compile on another
thread (the CPU pool's builder) then put back a sys.stdout the main thread had
replaced since: doctest lost examples' output that way. daxpy turns the colours off,
before Numba is imported or after. Each case runs in a process of its own."""

import subprocess
import sys

import pytest

pytest.importorskip("numba")

_SWAPS = """
import io, sys, threading, time
{first}
import numba.core.errors as errors
done = threading.Event()
def messages():
    while not done.is_set():
        errors.termcolor().errmsg("a message")   # as a compile's typing makes them
worker = threading.Thread(target=messages)
worker.start()
lost = 0
for _ in range(300):
    mine = io.StringIO()
    sys.stdout = mine
    time.sleep(0.0005)
    lost += sys.stdout is not mine
sys.stdout = sys.__stdout__
done.set(); worker.join()
print(type(errors.termcolor()).__name__, lost)
"""


def _lost(first: str) -> tuple[str, int]:
    run = subprocess.run([sys.executable, "-c", _SWAPS.format(first=first)],
                         capture_output=True, text=True, check=True, timeout=300)
    scheme, lost = run.stdout.split()
    return scheme, int(lost)


@pytest.mark.parametrize("first", ["import daxpy",
                                   "import numba\nimport daxpy"])
def test_messages_on_another_thread_leave_stdout_alone(first):
    scheme, lost = _lost(first)
    assert scheme != "HighlightColorScheme"
    assert lost == 0
