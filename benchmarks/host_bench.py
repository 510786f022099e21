"""The measuring loop shared by ``end_to_end.py`` and ``dax_study.py``.

For each case on each grid and size, every implementation (``host_impls``)
runs once (its result is kept for the check, its time is ``first_ms``), then
is timed (median of ``repeat`` runs, or the first run alone when that took
over ``slow_s``). Only when every result has been compared with every other
(:func:`check_all`) are rows made and times printed. A time budget skips what
is left (marked absent) rather than overrunning a lease.

Examples
--------
>>> seed_dims(10_000_000), seed_dims(100_000_000)
((215, 215, 215), (464, 464, 464))
"""

from __future__ import annotations

import gc
import math
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import datasets
from .common import AgreementError, agree, make_row
from .host_impls import CPU_IMPLS, GPU_IMPLS, Absent, Setup

TOLERANCE = {("point_gradient", "unstructured_hex"): 1e-4, ("pass_through", None): 0.0}
"""Relative tolerance of the agreement check (default 1e-5, as cpu_vs_vtk.py)."""


def seed_dims(n_points: int) -> tuple[int, int, int]:
    """Seed 004's cube: side floor(N^(1/3)) (guarded against float rounding)."""
    side = int(math.floor(n_points ** (1 / 3) + 1e-9))
    while (side + 1) ** 3 <= n_points:
        side += 1
    return (max(side, 2),) * 3


def build_grid(kind: str, n_points: int):
    """The uniform or hexahedral benchmark grid of about ``n_points`` points."""
    dims = seed_dims(n_points)
    return datasets.uniform_grid(dims) if kind == "uniform" else datasets.hex_grid(dims)


def make_setups(kind: str, n_points: int, cases, cpu_rows: bool) -> list[Setup]:
    """One :class:`Setup` per case, sharing the grid, the field and the VTK dataset."""
    grid = build_grid(kind, n_points)
    label = "uniform3d" if kind == "uniform" else "unstructured_hex"
    field = datasets.random_field(grid.n_points, seed=11)
    vtk_data = None
    if cpu_rows:
        from . import vtk_runs as vr
        from daxpy.io.interop import to_vtk

        vtk_data = vr.attach(to_vtk(grid.with_fields()), {"f": field})
    return [Setup(case, label, grid, field, vtk_data) for case in cases]


@dataclass
class Context:
    """What the implementations share: GPU helpers (built once), the time budget."""

    gpu: bool
    deadline: float
    _cache: dict = field(default_factory=dict)

    def hand_tuned(self):
        from .reference import HandTuned

        if "hand" not in self._cache:
            self._cache["hand"] = HandTuned()
        return self._cache["hand"]

    def generic(self):
        from .reference import Generic

        if "generic" not in self._cache:
            self._cache["generic"] = Generic()
        return self._cache["generic"]

    def device_corners(self, grid):
        """The hexahedra's corners as int32 on the device (kept, as a resident mesh)."""
        import cupy as cp

        key = ("corners", id(grid))
        if key not in self._cache:
            self._cache[key] = cp.asarray(grid.cell_blocks()["hex"].corners, dtype=cp.int32)
        return self._cache[key]


@dataclass
class Measured:
    """One implementation on one setup."""

    impl: str
    variant: str | None
    time_ms: float | None = None
    kernel_ms: float | None = None
    first_ms: float | None = None
    samples: int = 0
    result: Any = None
    absent: str | None = None
    extra: dict = field(default_factory=dict)


def progress(done: int, total: int, what: str) -> None:
    """One line of a text progress bar on stderr."""
    width = 30
    filled = int(width * done / max(total, 1))
    print(f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {what}", file=sys.stderr,
          flush=True)


def _comparable(result, gpu: bool):
    """The result where comparing is cheap: on the GPU when there is one."""
    if result is None:
        return None
    result = np.asarray(result) if not hasattr(result, "__cuda_array_interface__") else result
    if result.dtype.kind == "V" or result.dtype == np.float16:
        result = result.astype(np.float32)      # lower-precision storage (bfloat16...)
    if gpu:
        import cupy as cp

        return cp.asarray(result)
    return np.asarray(result)


def time_host(run, repeat: int, slow_s: float, keep=lambda result: result,
              warm_runs: int = 0):
    """``(keep(first result), first ms, median ms, samples, median kernel ms)``.

    The first run's result is handed to ``keep`` and dropped before the timed
    runs, and each timed run's result before the next, so pinned output
    buffers go back to their pool as a caller's would. A first run over
    ``slow_s`` is the only sample unless ``warm_runs`` asks for warm-up runs
    (GPU implementations, whose first run builds plans and compiles kernels):
    those run untimed, and when the last of them is under ``slow_s`` the
    ``repeat`` timed runs follow as for a fast first run (a median over two
    runs just after a compile would be half a warm-up).
    """
    start = time.perf_counter()
    result, kernel = run()
    first = (time.perf_counter() - start) * 1e3
    kept = keep(result)
    del result
    gc.collect()
    runs = repeat
    if first > slow_s * 1e3:
        runs, warm = 0, first
        for _ in range(warm_runs):
            start = time.perf_counter()
            value, _ = run()
            warm = (time.perf_counter() - start) * 1e3
            del value
        if warm_runs and warm <= slow_s * 1e3:
            runs = repeat
    samples, kernels = [], []
    for _ in range(runs):
        start = time.perf_counter()
        value, kernel_ms = run()
        samples.append((time.perf_counter() - start) * 1e3)
        kernels.append(kernel_ms)
        del value
    if not samples:
        return kept, first, first, 1, kernel
    kernel = statistics.median(kernels) if kernels[0] is not None else None
    return kept, first, statistics.median(samples), len(samples), kernel


def measure(setup: Setup, impls, ctx: Context, repeat: int, slow_s: float,
            counter: list) -> list[Measured]:
    """Run and time every ``(impl, variant, builder)`` on ``setup``."""
    found = []
    for impl, variant, builder in impls:
        counter[0] += 1
        label = f"{setup.case} {setup.grid_label} {setup.n_points:,}: {impl}" + (
            f" ({variant})" if variant else "")
        progress(counter[0], counter[1], label)
        entry = Measured(impl, variant)
        found.append(entry)
        if time.monotonic() > ctx.deadline:
            entry.absent = "skipped: the run's time budget was spent"
            continue
        # GPU rows warm up twice; daxpy's CPU kernels compile on their first call
        # (Numba), VTK's have nothing to warm.
        gpu_impl = impl not in CPU_IMPLS
        if gpu_impl and not ctx.gpu:
            entry.absent = "no GPU on this machine"
            continue
        try:
            run = builder(setup, ctx)
            entry.result, entry.first_ms, entry.time_ms, entry.samples, entry.kernel_ms = \
                time_host(run, repeat, slow_s, lambda r: _comparable(r, ctx.gpu),
                          warm_runs=2 if gpu_impl else int(impl == "daxpy-cpu"))
        except Absent as why:
            entry.absent = str(why)
            continue
        except Exception as err:  # a broken implementation is reported, the rest still run
            traceback.print_exc()
            entry.absent = f"error: {type(err).__name__}: {err}"
            entry.extra["error"] = f"{label}: {entry.absent}"
            continue
        profile = getattr(run, "profile", None)
        if profile is not None:
            entry.extra.update(chunks=getattr(profile, "chunks", None),
                               inputs=getattr(profile, "inputs", None))
            if getattr(profile, "storage_error", None):
                entry.extra["storage_error"] = profile.storage_error
        if getattr(run, "rtol", None) is not None:
            entry.extra["rtol"] = run.rtol
    return found


def check_all(setup: Setup, found: list[Measured]) -> list[str]:
    """Compare every result with every other; return the mismatches (naming both)."""
    rtol = TOLERANCE.get((setup.case, setup.grid_label),
                         TOLERANCE.get((setup.case, None), 1e-5))
    with_results = [m for m in found if m.result is not None]
    failures = [m.extra["error"] for m in found if "error" in m.extra]
    what = f"{setup.case} on {setup.grid_label} ({setup.n_points} points)"
    for i, a in enumerate(with_results):
        for b in with_results[i + 1:]:
            # Lower-precision outputs carry their own (looser) tolerance.
            pair = max(rtol, a.extra.get("rtol", 0.0), b.extra.get("rtol", 0.0))
            try:
                agree(f"{b.impl}{'/' + b.variant if b.variant else ''}", b.result, a.result,
                      rtol=2 * pair, what=f"{what}, against {a.impl}"
                      + (f"/{a.variant}" if a.variant else ""))
            except AgreementError as err:
                failures.append(str(err))
                b.extra["agrees"] = a.extra["agrees"] = False
    return failures


def rows_of(setup: Setup, found: list[Measured]) -> list[dict]:
    """Result rows (DESIGN.md format); absent implementations keep a row saying why."""
    rows = []
    floors = {m.impl: m.time_ms for m in found if m.impl.startswith("floor") and m.time_ms}
    for m in found:
        base = {"variant": m.variant} if m.variant else {}
        if m.absent:
            rows.append({"case": setup.case, "grid": setup.grid_label, "dtype": "float32",
                         "n_points": setup.n_points, "impl": m.impl, "time_ms": None,
                         "agrees": None, "absent": m.absent, **base})
            continue
        extra = dict(base, first_ms=round(m.first_ms, 3), samples=m.samples,
                     in_bytes=setup.in_bytes, out_bytes=setup.out_bytes,
                     **{k: v for k, v in m.extra.items()
                        if k not in ("agrees", "rtol", "error")})
        if "floor-overlapped" in floors and not m.impl.startswith("floor"):
            extra["vs_floor_overlapped"] = round(m.time_ms / floors["floor-overlapped"], 3)
        row = make_row(setup.case, setup.grid_label, "float32", setup.n_points, m.impl,
                       m.time_ms, kernel_ms=m.kernel_ms,
                       min_bytes=setup.in_bytes + setup.out_bytes, **extra)
        # Floors move bytes and make no result: there is nothing to check.
        row["agrees"] = None if m.result is None else m.extra.get("agrees", True)
        rows.append(row)
    return rows


def release_memory(found: list[Measured]) -> None:
    """Drop kept results and cached device and pinned blocks between setups."""
    for m in found:
        m.result = None
    gc.collect()
    try:
        import cupy as cp

        from daxpy.stream import transfer

        cp.get_default_memory_pool().free_all_blocks()
        transfer.release_pool()
    except ImportError:
        pass


def implementation_list(names, variants=()):
    """``(impl, variant, builder)`` for impl names (CPU and GPU) and daxpy variants."""
    table = {**GPU_IMPLS, **CPU_IMPLS}
    return [(n, None, table[n]) for n in names] + list(variants)


def gpu_available() -> bool:
    """Whether CuPy sees a GPU."""
    from daxpy.engine.backend import cuda_available

    return cuda_available()


def run_study(sizes: list, cases, impl_plan, ctx: Context, repeat: int, slow_s: float,
              cpu_rows: bool) -> tuple[list, list]:
    """Measure ``impl_plan(case, kind, n)`` on every case, grid kind and size.

    Parameters
    ----------
    sizes : list of (kind, n_points)
        ``kind`` is ``"uniform"`` or ``"hex"``.
    cases : list of str
    impl_plan : callable
        ``(case, kind, n_points) -> [(impl, variant, builder), ...]``.

    Returns
    -------
    (rows, failures)
    """
    todo = [(kind, n, case) for kind, n in sizes for case in cases]
    counter = [0, sum(len(impl_plan(case, kind, n)) for kind, n, case in todo)]
    rows, failures = [], []
    for kind, n in sizes:
        start = time.perf_counter()
        setups = make_setups(kind, n, cases, cpu_rows)
        print(f"{setups[0].grid_label}, {setups[0].n_points:,} points "
              f"({time.perf_counter() - start:.1f} s to build)", file=sys.stderr, flush=True)
        for setup in setups:
            found = measure(setup, impl_plan(setup.case, kind, n), ctx, repeat, slow_s,
                            counter)
            failures += check_all(setup, found)
            rows += rows_of(setup, found)
            release_memory(found)
        del setups
        release_memory([])
    return rows, failures
