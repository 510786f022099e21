"""Run a script that forks: a fresh process runs it, its child's exit code printed last.

Used by the tests of what a forked child may run (the CPU pool's loops, Numba's parallel
kernels): GNU OpenMP terminates such a child, so each case needs a process of its own.
"""

import os
import subprocess
import sys

import numba
import pytest


def forked_lines(script: str) -> list[str]:
    """The output of ``script`` run in a new process, which forks a child and prints the
    child's exit code last; the child must have exited 0 (skipped on one thread)."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread: no pool and no parallel loop")
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=False, timeout=600, cwd=os.path.dirname(__file__))
    assert child.returncode == 0, child.stderr
    lines = child.stdout.strip().splitlines()
    assert lines[-1] == "0", child.stdout + child.stderr
    return lines
