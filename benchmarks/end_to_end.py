"""Issue 5's benchmark: host to host, against the transfer floor and VTK.

Pass-through (float32 in, float64 out, as the Dax test), point gradient and
point-to-cell at 10M and 100M points on uniform grids, and on unstructured
hexahedra (10M points by default), each from a NumPy array to a NumPy array:

- ``daxpy-filter``: the single filter call (``Gradient("f", backend="cuda")(grid)``
  and its peers), host array in, host array out;
- ``daxpy``: ``pipe.run(backend="cuda")``, which streams (daxpy.stream.streaming);
  at the largest size also its variants: staging through a pinned pool or
  from pageable memory instead of registering in place, one stream
  (``daxpy-serial``), one chunk, device-memory budgets of 1/3 and 1/30 of the
  working set (out of core), mapped memory (pass-through) and float16 /
  bfloat16 storage (gradient, with the error);
- ``floor-pinned`` and ``floor-overlapped``: the case's bytes host->device and
  device->host from pinned memory, one after the other and at once;
- ``cupy-naive``: plain CuPy with pageable copies;
- ``vtk-seq``, ``vtk-stdthread`` and ``viskores`` on the CPU.

All results are compared with each other before any time is printed. Writes
``benchmarks/results/end_to_end-<device>.json`` (with the cost of registering,
of allocating pinned memory and of staging copies, measured in the same run)
and ``benchmarks/results/<device>/end_to_end.md``, and prints the issue's goals
with their verdicts. ``daxpy bench dax-study --end-to-end`` measures
these rows and the Dax study's in one run.

Run: ``daxpy bench end-to-end`` (``--sizes``, ``--hex-sizes``,
``--time-budget``, ``--no-cpu``).

Examples
--------
>>> [i for i, _, _ in e2e_impls("pass_through", "uniform", 10, 100)][:3]
['daxpy', 'daxpy-filter', 'floor-pinned']
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .common import device_slug, output_dir, write_results
from .printout import exit_status, format_table
from .host_bench import Context, gpu_available, implementation_list, run_study
from .host_impls import CPU_IMPLS, daxpy_pipeline
from .study_options import environment, parse_args, sizes_of

E2E = ["daxpy", "daxpy-filter", "floor-pinned", "floor-overlapped", "cupy-naive", "daxpy-cpu",
       "vtk-stdthread", "viskores", "vtk-seq"]
COLUMNS = ["case", "grid", "n_points", "impl", "variant", "time_ms", "kernel_ms", "first_ms",
           "vs_floor_overlapped", "chunks", "agrees"]


def e2e_impls(case: str, kind: str, n: int, largest: int) -> list:
    """Issue 5's implementations; daxpy's variants at the largest uniform size
    (and the main two on hexahedra)."""
    impls = implementation_list(E2E)
    if kind == "hex":
        return impls + [("daxpy", "staging-pool", daxpy_pipeline(staging="pool")),
                        ("daxpy", "budget-1/3", daxpy_pipeline(budget=1 / 3)),
                        ("daxpy", "first-run", daxpy_pipeline(first_run=True))]
    if n != largest:
        return impls
    impls += [("daxpy", "staging-pool", daxpy_pipeline(staging="pool")),
              ("daxpy", "staging-pageable", daxpy_pipeline(staging="pageable")),
              ("daxpy-serial", None, daxpy_pipeline(streams=1)),
              ("daxpy", "one-chunk", daxpy_pipeline(chunk_bytes=1 << 42)),
              ("daxpy", "budget-1/3", daxpy_pipeline(budget=1 / 3)),
              ("daxpy", "budget-1/30", daxpy_pipeline(budget=1 / 30))]
    if case == "pass_through":
        impls.append(("daxpy", "mapped", daxpy_pipeline(mapped=True)))
    if case == "point_gradient":
        impls += [("daxpy", "float16", daxpy_pipeline(storage="float16", rtol=2.0 ** -11)),
                  ("daxpy", "bfloat16", daxpy_pipeline(storage="bfloat16", rtol=2.0 ** -8))]
    return impls


def transfer_costs(nbytes: int) -> dict:
    """Costs behind the staging choice, for ``nbytes`` of fresh host data:
    page-locking it in place, allocating that much pinned memory cold, and
    copying it into pinned memory (the pool's per-run cost)."""
    import gc

    import numpy as np

    from daxpy.stream import transfer

    data = np.random.default_rng(0).random(nbytes // 8)       # pages touched, not pinned
    start = time.perf_counter()
    locked = transfer.page_lock(data)
    register_ms = (time.perf_counter() - start) * 1e3
    del data
    gc.collect()
    transfer.release_pool()
    start = time.perf_counter()
    pinned = transfer.pinned_empty((nbytes,), np.uint8)
    alloc_ms = (time.perf_counter() - start) * 1e3
    source = np.random.default_rng(1).integers(0, 255, nbytes, dtype=np.uint8)
    np.copyto(pinned, source)
    start = time.perf_counter()
    np.copyto(pinned, source)
    copy_ms = (time.perf_counter() - start) * 1e3
    del pinned, source
    gc.collect()
    transfer.release_pool()
    gb = nbytes / 1e9
    return {"bytes": nbytes, "registered": locked, "register_ms_per_gb": register_ms / gb,
            "pinned_alloc_ms_per_gb": alloc_ms / gb, "pinned_copy_gbps": gb / (copy_ms / 1e3)}


def _time(rows, case, grid, n, impl, variant=None):
    return next((r["time_ms"] for r in rows if r["case"] == case and r["grid"] == grid
                 and r["n_points"] == n and r["impl"] == impl and r.get("variant") == variant
                 and r.get("time_ms") and r.get("agrees") is not False), None)


def goals(rows: list[dict]) -> list[dict]:
    """The issues' goals at the largest uniform size, with figures and verdicts."""
    sizes = [r["n_points"] for r in rows if r["grid"] == "uniform3d"]
    if not sizes:
        return []
    n, out = max(sizes), []

    def add(goal, value, target, ok, detail):
        out.append({"goal": goal, "value": None if value is None else round(value, 3),
                    "target": target, "met": None if value is None else bool(ok(value)),
                    "detail": detail})

    for case, what in (("point_gradient", "gradient"), ("pass_through", "pass-through")):
        ours = _time(rows, case, "uniform3d", n, "daxpy")
        floor = _time(rows, case, "uniform3d", n, "floor-overlapped")
        add(f"{what} {n:,} pts host->host / overlapped floor",
            ours / floor if ours and floor else None, "<= 1.3", lambda v: v <= 1.3,
            f"daxpy {ours} ms, floor {floor} ms")
    call = _time(rows, "point_gradient", "uniform3d", n, "daxpy-filter")
    floor = _time(rows, "point_gradient", "uniform3d", n, "floor-overlapped")
    add(f"gradient filter call {n:,} pts host->host / overlapped floor",
        call / floor if call and floor else None, "<= 1.3", lambda v: v <= 1.3,
        f"daxpy-filter {call} ms, floor {floor} ms")
    ours = _time(rows, "point_gradient", "uniform3d", n, "daxpy")
    vtk = _time(rows, "point_gradient", "uniform3d", n, "vtk-stdthread")
    add(f"gradient {n:,} pts: vtkGradientFilter STDThread / daxpy",
        vtk / ours if ours and vtk else None, ">= 20", lambda v: v >= 20,
        f"VTK STDThread {vtk} ms, daxpy {ours} ms")
    for variant in ("budget-1/3", "budget-1/30"):
        small = _time(rows, "point_gradient", "uniform3d", n, "daxpy", variant)
        add(f"gradient {n:,} pts, device budget {variant[7:]} of the working set: "
            "throughput / in-core", ours / small if ours and small else None, ">= 0.7",
            lambda v: v >= 0.7, f"in-core {ours} ms, budget {small} ms")
    hexes = [r["n_points"] for r in rows if r["grid"] == "unstructured_hex"]
    if hexes:
        m = max(hexes)
        warm = _time(rows, "point_gradient", "unstructured_hex", m, "daxpy")
        first = _time(rows, "point_gradient", "unstructured_hex", m, "daxpy", "first-run")
        add(f"gradient {m:,} pts of hexahedra: first host->host run (kernels compiled) / "
            "warm run", first / warm if first and warm else None, "<= 3", lambda v: v <= 3,
            f"first run {first} ms, warm {warm} ms")
    return out


def report(rows: list[dict], header: dict, gpu: bool, out_root: Path) -> None:
    """Write end_to_end's JSON and Markdown; print its table and goals."""
    from .study_report import header_table

    wanted = set(E2E) | {"daxpy-serial"}
    e2e_rows = [r for r in rows if r["impl"] in wanted]
    found = goals(e2e_rows)
    costs = transfer_costs(400_000_000) if gpu else {}
    write_results("end_to_end", e2e_rows, folder=out_root, gpu=gpu, environment=header,
                  goals=found, transfer_costs=costs)
    table = format_table(e2e_rows, COLUMNS)
    goal_table = format_table(found, ["goal", "value", "target", "met", "detail"])
    out_dir = out_root / device_slug(gpu)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "end_to_end.md").write_text(
        f"# end to end on {header.get('device') or 'CPU only'}, {header.get('date')}\n\n"
        f"{header_table(header, 'daxpy bench dax-study --end-to-end')}\n\n"
        f"## Goals\n\n{goal_table}\n\n## Transfer costs\n\n{costs}\n\n## Rows\n\n{table}\n")
    print(table)
    print(goal_table)
    print("transfer costs:", costs)


def main(argv=None) -> int:
    args = parse_args(argv)
    gpu = gpu_available()
    ctx = Context(gpu=gpu, deadline=time.monotonic() + (args.time_budget or float("inf")))
    largest = max(args.sizes)

    def plan(case, kind, n):
        impls = e2e_impls(case, kind, n, largest)
        return [t for t in impls if not (args.no_cpu and t[0] in CPU_IMPLS)]

    rows, failures = run_study(sizes_of(args), args.cases, plan, ctx, args.repeat, args.slow,
                               cpu_rows=not args.no_cpu)
    report(rows, environment(gpu), gpu, output_dir(args))
    return exit_status(failures)


if __name__ == "__main__":
    sys.exit(main())
