"""Reliability, class 1 (the process never dies): pipelines and filters run from
many threads at once, profiled or not, in a child process so that a crash
fails the test instead of killing pytest."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

import daxpy
from daxpy.filters import Gradient
from daxpy.peak_memory import traced_peak

_CHILD = textwrap.dedent("""
    import sys, threading, numpy as np, daxpy
    from daxpy.filters import Gradient, PointToCell
    mode, rounds = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(0)
    grid = daxpy.UniformGrid(dims=(7, 6, 5), point_data={"t": rng.random(210)})
    def build():
        pipe = daxpy.pipeline(grid)
        pipe.gradient("t").magnitude().point_to_cell()
        return pipe
    expected = build().run(backend="cpu")
    failures = []
    def work(i):
        try:
            for r in range(rounds):
                profiled = mode == "profile" or (mode == "mixed" and (i + r) % 2 == 0)
                out = build().run(backend="cpu", profile=profiled)
                out = out[0] if profiled else out
                for name, values in expected.cell_data.items():
                    if not np.array_equal(out.cell_data[name], values):
                        failures.append((i, r, name))
                Gradient("t")(grid)
        except Exception as err:  # reported to the parent, which fails the test
            failures.append(repr(err))
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    import tracemalloc
    print("tracing" if tracemalloc.is_tracing() else "not tracing", failures)
""")


@pytest.mark.parametrize("mode", ["plain", "profile", "mixed"])
def test_pipelines_from_eight_threads(mode):
    done = subprocess.run([sys.executable, "-c", _CHILD, mode, "60"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    # Every thread got the serial run's answer, and tracemalloc is off afterwards.
    assert done.stdout.strip() == "not tracing []", done.stdout


def test_unprofiled_run_leaves_tracemalloc_alone():
    grid = daxpy.UniformGrid(dims=(4, 4), point_data={"t": np.arange(16.0)})
    pipe = daxpy.pipeline(grid)
    pipe.gradient("t")
    assert not tracemalloc.is_tracing()
    pipe.run(backend="cpu")
    Gradient("t", backend="cpu")(grid)
    assert not tracemalloc.is_tracing()


def test_profiled_run_keeps_the_users_tracing():
    grid = daxpy.UniformGrid(dims=(32, 32), point_data={"t": np.arange(1024.0)})
    pipe = daxpy.pipeline(grid)
    pipe.gradient("t")
    tracemalloc.start()
    try:
        _, profile = pipe.run(backend="cpu", profile=True)
        assert tracemalloc.is_tracing()
    finally:
        tracemalloc.stop()
    # The gradient's result (1024 x 2 doubles) is at least part of the peak.
    assert profile.peak_bytes >= 1024 * 2 * 8


def test_nested_traced_peaks_stop_tracing_once():
    with traced_peak() as outer:
        with traced_peak() as inner:
            block = np.ones(1 << 16)
        assert tracemalloc.is_tracing()
    assert not tracemalloc.is_tracing()
    assert outer() >= inner() >= block.nbytes
