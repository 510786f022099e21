"""Kernel benchmark on the GPU: daxpy's generated kernels vs hand-tuned and generic ones.

For every worklet on a uniform 100M-point float32 grid and on rectilinear,
curvilinear and unstructured-hexahedra grids of 10M+ points, it checks each
implementation against an independent reference (NaN-poisoned outputs), then
times its kernels alone with CUDA events (median after warm-up) and reports
the fewest bytes the case must move, the achieved GB/s and the ratio to a
device-to-device copy measured in the same run. Writes
``benchmarks/results/kernels-<device>.json`` (and a copy to ``$OUT`` if set).

Run: ``daxpy bench kernels`` (``--quick`` for small grids,
``--variants`` to time every hand-tuned variant as well, as NOTES.md records).

Examples
--------
>>> parse_args(["--quick"]).uniform_points
1000000
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback

from .common import (AgreementError, SuiteParser, add_output_options, agree, make_row, output_dir,
                     write_results)
from .printout import exit_status, format_table
from .timing import copy_bandwidth_gbps, time_gpu

COLUMNS = ["case", "grid", "impl", "variant", "n_points", "kernel_ms", "gbps",
           "ratio_to_copy", "vs_hand_tuned", "agrees"]


def parse_args(argv=None) -> argparse.Namespace:
    """Command-line options.

    Examples
    --------
    >>> parse_args([]).other_points
    10077696
    """
    p = SuiteParser(prog="daxpy bench kernels", description=__doc__.split("\n")[0])
    p.add_argument("--uniform-points", type=int, default=464**3,
                   help="points of the uniform grid (default 464^3 = 99,897,344)")
    p.add_argument("--other-points", type=int, default=216**3,
                   help="points of the rectilinear, curvilinear and hex grids "
                        "(default 216^3 = 10,077,696)")
    p.add_argument("--quick", action="store_true", help="1M and 200k points, few repeats")
    p.add_argument("--variants", action="store_true",
                   help="also time every hand-tuned variant (benchmarks/NOTES.md)")
    p.add_argument("--cases", default="", help="comma-separated case names to run")
    p.add_argument("--impls", default="", help="comma-separated implementations to run "
                   "(daxpy, hand-tuned, daxpy-generic)")
    p.add_argument("--repeat", type=int, default=20)
    add_output_options(p)
    args = p.parse_args(argv)
    if args.quick:
        args.uniform_points, args.other_points, args.repeat = 100**3, 60**3, 5
    return args


def daxpy_builder(spec):
    """``(launch, out)`` for daxpy's generated kernels of one worklet call.

    The plan (kernels, launch sizes, device topology) is made once; ``launch``
    runs its kernels into a preallocated NaN-poisoned output, as the hand-tuned
    builders do, so that both are timed alone.
    """
    import cupy as cp
    import numpy as np
    from daxpy.cuda.dispatch import launch
    from daxpy.cuda.plan import make_plan
    from daxpy.data.worklet import get_worklet

    name, dataset, values, association, params = spec
    plan = make_plan(get_worklet(name), dataset, association, np.dtype(values.dtype),
                     tuple(values.shape[1:]), params, aligned=True)
    out = cp.full(plan.out_shape, cp.nan, dtype=plan.out_dtype)
    return (lambda: launch(plan, values, out)), out


def daxpy_call_ms(spec, repeat: int = 5) -> float:
    """Host-to-host time of a whole ``daxpy`` CUDA call (allocation and launch overhead)."""
    import statistics

    import cupy as cp
    from daxpy.cuda.dispatch import run

    name, dataset, values, association, params = spec
    samples = []
    for _ in range(repeat + 1):
        cp.cuda.Device().synchronize()
        start = time.perf_counter()
        run(name, dataset, values, association, **params)
        cp.cuda.Device().synchronize()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples[1:])


def gpu_state() -> dict:
    """SM clock (MHz), power (W) and temperature (C) now, from nvidia-smi ({} without it).

    Recorded beside each timing: memory-bound kernels barely move with the SM
    clock, stencils with more arithmetic do, and the card's clocks are not ours
    to fix.
    """
    import subprocess

    query = "clocks.sm,power.draw,temperature.gpu"
    try:
        line = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,"
                               "nounits", "-i", "0"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
        clock, power, temp = (float(x) for x in line.split(","))
    except (OSError, ValueError, subprocess.SubprocessError):
        return {}
    return {"sm_clock_mhz": clock, "power_w": power, "temp_c": temp}


def implementations(case, variants: bool, impls: set):
    """``(impl, variant, builder)`` of every implementation of a case.

    With ``variants``, every hand-tuned variant is listed; the one in
    ``HAND_TUNED_BEST`` is the ``hand-tuned`` row, the others go to
    ``kernel_variants-<device>.json`` as ``hand-tuned-variant`` rows.
    """
    from .reference import HAND_TUNED_BEST, HAND_TUNED_VARIANTS

    found = []
    if case.daxpy is not None:
        found.append(("daxpy", None, lambda: daxpy_builder(case.daxpy)))
    if case.hand is not None:
        best = HAND_TUNED_BEST[case.hand_key]
        names = HAND_TUNED_VARIANTS[case.hand_key] if variants else (best,)
        found += [("hand-tuned" if v == best else "hand-tuned-variant", v,
                   lambda v=v: case.hand(v)) for v in names]
    if case.generic is not None:
        found.append(("daxpy-generic", None, case.generic))
    return [f for f in found if not impls or f[0] in impls]


def measure_case(case, copy_gbps: float, args, failures: list) -> list[dict]:
    """Check every implementation of ``case`` against its reference, then time it."""
    import cupy as cp

    impls = set(filter(None, args.impls.split(",")))
    todo = implementations(case, args.variants, impls)
    if not todo:
        return []
    expected = case.reference()
    rows = []
    for impl, variant, build in todo:
        what = f"{case.case} on {case.grid}" + (f" ({variant})" if variant else "")
        try:
            launch, out = build()
            launch()
            cp.cuda.Device().synchronize()
            agree(impl, out, expected, rtol=case.rtol, what=what)
        except AgreementError as err:
            failures.append(str(err))
            rows.append(make_row(case.case, case.grid, case.dtype, case.n_points, impl,
                                 None, agrees=False, variant=variant,
                                 error=str(err)))
            continue
        except Exception as err:  # an implementation that cannot run this case
            failures.append(f"{impl} on {what}: {type(err).__name__}: {err}")
            if not type(err).__name__ == "BackendError":
                traceback.print_exc()
            continue
        del out
        ms = time_gpu(launch, repeat=args.repeat)
        extra = {"variant": variant, **case.notes, **gpu_state()}
        if impl == "daxpy":
            extra["call_ms"] = round(daxpy_call_ms(case.daxpy), 4)
        rows.append(make_row(case.case, case.grid, case.dtype, case.n_points, impl, ms,
                             kernel_ms=ms, min_bytes=case.min_bytes, copy_gbps=copy_gbps,
                             **extra))
        cp.get_default_memory_pool().free_all_blocks()
    hand = next((r["kernel_ms"] for r in rows if r["impl"] == "hand-tuned"), None)
    for r in rows:
        if hand and r.get("kernel_ms"):
            r["vs_hand_tuned"] = round(r["kernel_ms"] / hand, 3)
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    from .kernel_cases import CaseBuilder

    copy_gbps = copy_bandwidth_gbps()
    print(f"D2D copy: {copy_gbps:.0f} GB/s (read + write)", flush=True)
    builder = CaseBuilder(args.uniform_points, args.other_points)
    wanted = set(filter(None, args.cases.split(",")))
    rows, failures = [], []
    for case in builder.all_cases():
        if wanted and case.case not in wanted:
            continue
        start = time.perf_counter()
        rows += measure_case(case, copy_gbps, args, failures)
        print(f"  {case.case} on {case.grid}: {time.perf_counter() - start:.1f} s",
              flush=True)
    hand_rows = [r for r in rows if r["impl"].startswith("hand-tuned")]
    main_rows = [r for r in rows if r["impl"] != "hand-tuned-variant"]
    if args.variants:
        write_results("kernel_variants", hand_rows, folder=output_dir(args), gpu=True,
                      copy_gbps=copy_gbps)
        print(format_table(hand_rows, COLUMNS), end="\n\n")
    write_results("kernels", main_rows, folder=output_dir(args), gpu=True, copy_gbps=copy_gbps)
    print(format_table(main_rows, COLUMNS))
    print(f"D2D copy {copy_gbps:.0f} GB/s")
    return exit_status(failures, "FAILED")


if __name__ == "__main__":
    sys.exit(main())
