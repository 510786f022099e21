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

_ON_EIGHT_THREADS = textwrap.dedent("""
    import threading
    def on_eight_threads(body):
        failures = []
        def work(i):
            try:
                body(i, failures)
            except Exception as err:  # reported to the parent, which fails the test
                failures.append(repr(err))
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return failures
""")

_CHILD = _ON_EIGHT_THREADS + textwrap.dedent("""
    import sys, numpy as np, daxpy
    from daxpy.filters import Gradient, PointToCell
    mode, rounds = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(0)
    grid = daxpy.UniformGrid(dims=(7, 6, 5), point_data={"t": rng.random(210)})
    def build():
        pipe = daxpy.pipeline(grid)
        pipe.gradient("t").magnitude().point_to_cell()
        return pipe
    expected = build().run(backend="cpu")
    def body(i, failures):
        for r in range(rounds):
            profiled = mode == "profile" or (mode == "mixed" and (i + r) % 2 == 0)
            out = build().run(backend="cpu", profile=profiled)
            out = out[0] if profiled else out
            for name, values in expected.cell_data.items():
                if not np.array_equal(out.cell_data[name], values):
                    failures.append((i, r, name))
            Gradient("t")(grid)
    failures = on_eight_threads(body)
    import tracemalloc
    print("tracing" if tracemalloc.is_tracing() else "not tracing", failures)
""")

_GEOMETRY_CHILD = _ON_EIGHT_THREADS + textwrap.dedent("""
    import sys, numpy as np, daxpy
    from daxpy.filters import Clip, Contour, Slice, Threshold
    rng = np.random.default_rng(0)
    nx, ny, nz = 24, 20, 18
    grid = daxpy.UniformGrid(dims=(nx, ny, nz))
    if sys.argv[1] == "unstructured":  # the same cells as hexahedra
        k, j, i = np.meshgrid(np.arange(nz - 1), np.arange(ny - 1), np.arange(nx - 1),
                              indexing="ij")
        corners = np.array([0, 1, 1 + nx, nx, nx * ny, 1 + nx * ny, 1 + nx + nx * ny,
                            nx + nx * ny])
        ids = (i + nx * (j + ny * k)).reshape(-1, 1) + corners
        grid = daxpy.UnstructuredGrid.from_blocks(
            grid.points(), {daxpy.data.celltypes.HEXAHEDRON: ids})
    grid = grid.with_fields(point_data={"t": rng.random(grid.n_points)})
    def filters():
        return [Threshold("t", 0.3, 0.7, backend="cpu"), Clip("t", 0.5, backend="cpu"),
                Clip(plane=((9.0, 8.0, 7.0), (1.0, 0.5, 0.2)), backend="cpu"),
                Slice((1.0, 0.5, 0.2), (9.0, 8.0, 7.0), backend="cpu"),
                Contour("t", values=[0.5], backend="cpu")]
    def bits(out):
        arrays = [out.points()] + [v for a in ("points", "cells")
                                   for _, v in sorted(out.fields(a).items())]
        return b"".join(np.ascontiguousarray(v).tobytes() for v in arrays)
    expected = [bits(f(grid)) for f in filters()]
    def body(i, failures):
        for r in range(int(sys.argv[2])):
            for k, f in enumerate(filters()):
                if bits(f(grid)) != expected[k]:
                    failures.append((i, r, k))
    print(on_eight_threads(body))
""")


@pytest.mark.parametrize("family", ["uniform", "unstructured"])
def test_geometry_filters_from_eight_threads(family):
    """Threshold, clips, slice and contour on the CPU from 8 threads at once: each
    gets the serial call's bits, and the process lives."""
    done = subprocess.run([sys.executable, "-c", _GEOMETRY_CHILD, family, "3"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "[]", done.stdout


@pytest.mark.parametrize("mode", ["plain", "profile", "mixed"])
def test_pipelines_from_eight_threads(mode):
    done = subprocess.run([sys.executable, "-c", _CHILD, mode, "60"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    # Every thread got the serial run's answer, and tracemalloc is off afterwards.
    assert done.stdout.strip() == "not tracing []", done.stdout


@pytest.mark.parametrize("profile", [False, True])
def test_runs_leave_tracemalloc_alone(profile):
    grid = daxpy.UniformGrid(dims=(4, 4), point_data={"t": np.arange(16.0)})
    pipe = daxpy.pipeline(grid)
    pipe.gradient("t")
    assert not tracemalloc.is_tracing()
    pipe.run(backend="cpu", profile=profile)
    Gradient("t", backend="cpu")(grid)
    assert not tracemalloc.is_tracing()
    tracemalloc.start()
    try:
        pipe.run(backend="cpu", profile=profile)
        assert tracemalloc.is_tracing()
    finally:
        tracemalloc.stop()


def test_profiled_peak_counts_the_fields_the_run_holds():
    grid = daxpy.UniformGrid(dims=(32, 32), point_data={"t": np.arange(1024.0)})
    pipe = daxpy.pipeline(grid)
    cells = pipe.gradient("t").magnitude().point_to_cell()
    _, profile = pipe.run(backend="cpu", profile=True, outputs=[cells])
    # Most at once: the gradient (1024 x 3 doubles) and its magnitude (1024).
    assert profile.peak_bytes == 1024 * 4 * 8
