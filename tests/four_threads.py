"""Run a script in a child process whose Numba pool and daxpy setting have four
threads (a process's pool size is fixed when Numba starts, so a test that wants four
threads on a machine of fewer cores asks a child), and return the JSON it prints last.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys


def four_thread_report(script: str, *args: str) -> dict:
    """The JSON object ``script`` prints on its last line, run with ``args`` in a
    child with ``NUMBA_NUM_THREADS=4`` and ``DAXPY_CPU_THREADS=4``, from the tests'
    folder; the child's standard error if it fails."""
    env = dict(os.environ, NUMBA_NUM_THREADS="4", DAXPY_CPU_THREADS="4")
    child = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                           check=False, text=True, cwd=os.path.dirname(__file__), timeout=300)
    assert child.returncode == 0, child.stderr
    return json.loads(child.stdout.strip().splitlines()[-1])
