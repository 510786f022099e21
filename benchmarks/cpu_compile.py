"""Compile times of the compiled CPU kernels: first use, and first use from the disk cache.

Every worklet that declares a compiled CPU implementation is run per dtype in
a fresh process with an empty Numba cache (``cold``: the kernel is compiled),
``--cold-runs`` times (3; the median: on a shared 2-core machine one cold run in
a suite measured 2.2 s where four more measured 1.40-1.49 s), and once more in
another fresh process on the last run's cache (``cached``: the kernel is
loaded). Each process first imports Numba and compiles a
trivial function, reported apart as ``numba_init``, so that a row holds only
what its specialization costs: its first call minus its second. The contour is
measured once more on a field with values equal to the value and a NaN
(``contour_careful``): what its careful path adds, its fast path compiled first
by a call on the plain field. Writes
``benchmarks/results/cpu_compile-cpu-<n>core.json``; the issue's goals are
2 s cold and about 0 cached per specialization.

Run: ``daxpy bench cpu-compile`` (``--dtypes float32`` for fewer rows).

Examples
--------
>>> parse_args(["--dtypes", "float64"]).dtypes
['float64']
>>> parse_args(["--cases", "contour"]).cases
['contour']
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from .common import SuiteParser, add_output_options, make_row, output_dir, write_results
from .printout import format_table

GRIDS = {"unstructured": "unstructured_hex", "any": "uniform3d", "uniform": "uniform3d"}
"""The benchmark grid of each family a compiled implementation serves."""

FIELDS = {("contour", "uniform"): ("plain", "careful")}
"""The fields an implementation is measured on, where not only the plain one: the
structured contour compiles its careful path only for a field that needs it."""

_CHILD = """
import json, sys, time
t0 = time.perf_counter()
import numba
numba.njit(lambda x: x + 1)(1.0)
init = time.perf_counter() - t0
import numpy as np
from benchmarks import datasets
from daxpy.data.worklet import get_worklet
name, family, dtype, field = sys.argv[1:5]
worklet = get_worklet(name)
dims = (20, 20, 20)
grid = datasets.hex_grid(dims) if family == "unstructured" else datasets.uniform_grid(dims)
n = grid.n_cells if worklet.input_association == "cells" else grid.n_points
values = datasets.random_field(n, 3 if name == "bias_add" else 1, dtype=np.dtype(dtype))
params = {"bias": np.ones(3)} if name == "bias_add" else {}
if name in ("contour", "clip"):  # a cut through the middle of the field's range
    params = {"value": 1.0}
if name == "field_map":  # an expression of the one field
    params = {"expression": "t * 2 + 1"}
if name == "threshold":  # the cells of the field's upper half
    params = {"at": "points", "lower": float(np.median(values)), "upper": float("inf")}
impl = worklet.cpu_impl(family)
if field == "careful":  # the plain field first: only the careful path is left to compile
    impl(grid, values, **params)
    values = values.copy()
    values[::37] = params["value"]
    values[1000] = np.nan
times = []
for _ in range(2):
    start = time.perf_counter()
    impl(grid, values, **params)
    times.append(time.perf_counter() - start)
print(json.dumps({"init_ms": init * 1e3, "first_ms": times[0] * 1e3,
                  "run_ms": times[1] * 1e3}))
"""


def parse_args(argv=None):
    """Command-line options.

    Examples
    --------
    >>> parse_args([]).dtypes
    ['float32', 'float64']
    """
    p = SuiteParser(prog="daxpy bench cpu-compile", description=__doc__.split("\n")[0])
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--cases", default="",
                   help="worklets to measure, comma-separated (default: all)")
    p.add_argument("--cold-runs", type=int, default=3,
                   help="fresh-cache runs per specialization (their median is the row)")
    add_output_options(p)
    args = p.parse_args(argv)
    args.dtypes = args.dtypes.split(",")
    args.cases = [c for c in args.cases.split(",") if c]
    return args


def compiled_cases() -> list[tuple[str, str]]:
    """(worklet name, family) of every compiled CPU implementation, each once (one
    implementation may serve several families: its first).

    Examples
    --------
    >>> ("magnitude", "any") in compiled_cases()
    True
    """
    from daxpy.data.worklet import registered_worklets

    cases, seen = [], set()
    for name, w in sorted(registered_worklets().items()):
        for family, impl in w.cpu.items():
            if id(impl) not in seen:
                seen.add(id(impl))
                cases.append((name, family))
    return cases


def measure(name: str, family: str, dtype: str, cache_dir: str, field: str = "plain") -> dict:
    """Run one specialization in a fresh process on ``cache_dir``, on the plain field
    or another of :data:`FIELDS`; its timings in ms."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    child = subprocess.run([sys.executable, "-c", _CHILD, name, family, dtype, field],
                           env=env,
                           cwd=root, capture_output=True, text=True, check=True)
    return json.loads(child.stdout.strip().splitlines()[-1])


def _median_cold(name: str, family: str, dtype: str, field: str, cache_dir: str,
                 runs: int) -> dict:
    """The timings of the median of ``runs`` cold runs (by compile time), each in a
    fresh cache, the last in ``cache_dir`` (which the cached run then reads)."""
    found = []
    for _ in range(max(runs, 1) - 1):
        with tempfile.TemporaryDirectory(prefix="daxpy-numba-cache-") as fresh:
            found.append(measure(name, family, dtype, fresh, field))
    found.append(measure(name, family, dtype, cache_dir, field))
    found.sort(key=lambda t: t["first_ms"] - t["run_ms"])
    return found[len(found) // 2]


def _rows(name: str, family: str, field: str, dtype: str, case: str, runs: int) -> list:
    """The cold and cached rows of one specialization (``case``: its row's name)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="daxpy-numba-cache-") as cache:
        for phase in ("cold", "cached"):
            t = (measure(name, family, dtype, cache, field) if phase == "cached"
                 else _median_cold(name, family, dtype, field, cache, runs))
            compile_ms = max(t["first_ms"] - t["run_ms"], 0.0)
            rows.append(make_row(case, GRIDS[family], dtype, 8000, "daxpy-cpu", compile_ms,
                                 phase=phase, numba_init_ms=round(t["init_ms"], 1),
                                 run_ms=round(t["run_ms"], 3)))
            print(f"{case:15s} {family:12s} {dtype:8s} {phase:6s} "
                  f"{compile_ms:8.0f} ms (numba init {t['init_ms']:.0f} ms)", flush=True)
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    rows = []
    for name, family in compiled_cases():
        if args.cases and name not in args.cases:
            continue
        for field in FIELDS.get((name, family), ("plain",)):
            case = name if field == "plain" else f"{name}_{field}"
            for dtype in args.dtypes:
                rows += _rows(name, family, field, dtype, case, args.cold_runs)
    write_results("cpu_compile", rows, folder=output_dir(args), gpu=False)
    table = [{"case": r["case"], "grid": r["grid"], "dtype": r["dtype"], "phase": r["phase"],
              "compile_ms": r["time_ms"], "numba_init_ms": r["numba_init_ms"]} for r in rows]
    print(format_table(table, ["case", "grid", "dtype", "phase", "compile_ms",
                               "numba_init_ms"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
