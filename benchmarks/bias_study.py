"""``daxpy bench bias``: seed 000's BiasAdd study on this GPU, plus daxpy's kernel.

Seed 000 timed TensorFlow's BiasAdd kernel and three variants on a GTX 1050 Ti
with an input 2^14 times larger than the bias: batched float4 fetches (0.91 of
the baseline's time), the bias cached in shared memory with streaming loads
and stores (0.96), and both (0.89). This runs the same four kernels
(``reference/bias_study.cu``) and daxpy's generated ``bias_add`` on the same
shape of input (2^26 floats and 2^12 biases by default), checks every output
against ``input + bias`` exactly (NaN-poisoned outputs), and times the kernels
alone with CUDA events (median of ``--repeat``). Each row gives its time
relative to the baseline, its bandwidth and its share of a device-to-device
copy measured in the same run. A NumPy row runs everywhere; without a GPU the
kernel rows are marked absent. Writes ``bias_study.md``, ``.json`` and ``.png``
under ``benchmarks/results/<device>/`` and ``results/bias_study-<device>.json``.

Run: ``daxpy bench bias`` or ``python -m benchmarks.bias_study``.

Examples
--------
>>> args = parse_args(["--log2-size", "20"])
>>> (1 << args.log2_size) >> args.ratio_log2
64
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

from . import study_report
from .common import (AgreementError, SuiteParser, add_output_options, agree, device_slug, make_row,
                     output_dir, rng, write_results)
from .printout import exit_status
from .timing import copy_bandwidth_gbps, time_cpu, time_gpu

HERE = Path(__file__).resolve().parent

KERNELS = [
    # (seed's name, variant, kernel, shared bias, floats per item)
    ("Baseline", "baseline", "bias_baseline", False, 1),
    ("Batched fetch", "batched-float4", "bias_float4", False, 4),
    ("Explicit bias cache", "shared-bias-streaming", "bias_shared_stream", True, 1),
    ("Batched fetch and explicit bias cache", "both", "bias_float4_shared_stream", True, 4),
]

SEED_000 = {"Baseline": (47_416_329, 1.0), "Batched fetch": (43_151_414, 0.91),
            "Explicit bias cache": (45_615_811, 0.96),
            "Batched fetch and explicit bias cache": (42_238_542, 0.89)}
"""Seed 000's figures (GTX 1050 Ti, TensorFlow profiler): ns and relative time."""

BLOCK = 256


def parse_args(argv=None) -> argparse.Namespace:
    """Command-line options.

    Examples
    --------
    >>> parse_args(["--tiny"]).log2_size
    14
    """
    p = SuiteParser(prog="daxpy bench bias", description=__doc__.split("\n")[0])
    p.add_argument("--log2-size", type=int, default=26, help="input of 2^K floats (26)")
    p.add_argument("--ratio-log2", type=int, default=14,
                   help="the input is 2^R times larger than the bias (14, as the seed)")
    p.add_argument("--repeat", type=int, default=50)
    add_output_options(p)
    p.add_argument("--tiny", action="store_true", help="2^14 floats, 16 biases (CI)")
    args = p.parse_args(argv)
    if args.tiny:
        args.log2_size, args.ratio_log2, args.repeat = 14, 10, 3
    if args.log2_size - args.ratio_log2 < 2:
        p.error("the bias needs at least 4 entries (float4 kernels): raise --log2-size")
    return args


def _absent(label: str, variant: str | None, impl: str, n: int, why: str) -> dict:
    return {"case": "bias_add", "grid": "uniform1d", "dtype": "float32", "n_points": n,
            "impl": impl, "variant": variant, "algorithm": label, "time_ms": None,
            "agrees": None, "absent": why}


def gpu_rows(x: np.ndarray, bias: np.ndarray, repeat: int, failures: list) -> tuple:
    """The seed's four kernels and daxpy's, checked then timed; and the copy rate."""
    import cupy as cp

    import daxpy
    from .kernels import daxpy_builder

    n, nb = x.size, bias.size
    copy_gbps = copy_bandwidth_gbps(nbytes=min(2 << 30, 8 * x.nbytes))
    dx, db = cp.asarray(x), cp.asarray(bias)
    expected = (dx.reshape(-1, nb) + db).ravel()
    module = cp.RawModule(code=(HERE / "reference" / "bias_study.cu").read_text())
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    launches = []
    for label, variant, name, shared, width in KERNELS:
        kernel = module.get_function(name)
        smem = 4 * nb if shared else 0
        if smem > 48 * 1024:
            kernel.max_dynamic_shared_size_bytes = smem
        blocks = min(math.ceil(n // width / BLOCK), 8 * sms)
        out = cp.full(n, cp.nan, dtype=cp.float32)
        args = (dx, db, out, np.int32(n), np.int32(nb))
        launches.append((label, "hand-tuned", variant, out, lambda k=kernel, b=blocks, a=args,
                         s=smem: k((b,), (BLOCK,), a, shared_mem=s)))
    launch, out = daxpy_builder(("bias_add", daxpy.UniformGrid(dims=(n,)), dx, "points",
                                 {"bias": bias}))
    launches.append(("daxpy (generated bias_add)", "daxpy", None, out, launch))
    rows = []
    for label, impl, variant, out, run in launches:
        run()
        cp.cuda.Device().synchronize()
        try:
            agree(f"{impl} {variant or ''}".strip(), out, expected, rtol=0.0,
                  what=f"bias_add of {n} floats and {nb} biases")
        except AgreementError as err:
            failures.append(str(err))
            rows.append(_absent(label, variant, impl, n, f"disagrees: {err}"))
            continue
        ms = time_gpu(run, repeat=repeat)
        rows.append(make_row("bias_add", "uniform1d", "float32", n, impl, ms, kernel_ms=ms,
                             min_bytes=8 * n + 4 * nb, copy_gbps=copy_gbps, variant=variant,
                             algorithm=label, bias_size=nb))
    return rows, copy_gbps


def markdown(rows: list[dict], header: dict, command: str) -> str:
    """The seed's table shape (ns, relative to the baseline), ours then the seed's."""
    lines = ["| algorithm | impl | execution time, ns | relative execution time | GB/s | "
             "share of D2D copy | agrees |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if r.get("time_ms") is None:
            lines.append(f"| {r['algorithm']} | {r['impl']} | absent ({r['absent']}) | | | | |")
            continue
        rel = r.get("relative")
        lines.append(f"| {r['algorithm']} | {r['impl']} | {r['time_ms'] * 1e6:,.0f} | "
                     f"{'' if rel is None else f'{rel:.2f}'} | {r.get('gbps', '')} | "
                     f"{r.get('ratio_to_copy', '')} | {'yes' if r['agrees'] else 'NO'} |")
    seed = ["| algorithm | execution time, ns | relative execution time |", "| --- | --- | --- |"]
    seed += [f"| {k} | {ns:,} | {rel} |" for k, (ns, rel) in SEED_000.items()]
    size = rows[0]["n_points"] if rows else 0
    return "\n".join([
        f"# BiasAdd study on {header.get('device') or 'CPU only'}, {header.get('date')}", "",
        study_report.header_table(header, command), "",
        f"Input: {size:,} float32 values; the bias is 2^{header['ratio_log2']} times smaller "
        f"({size >> header['ratio_log2']:,} floats). Kernel times (CUDA events, median).", "",
        *lines, "", "Seed 000 (GTX 1050 Ti, TensorFlow profiler), for comparison:", "", *seed,
        ""])


def main(argv=None) -> int:
    from .study_options import environment
    from .host_bench import gpu_available

    args = parse_args(argv)
    gpu = gpu_available()
    n, nb = 1 << args.log2_size, (1 << args.log2_size) >> args.ratio_log2
    x = rng(21).random(n, dtype=np.float32) + np.float32(0.5)
    bias = rng(22).random(nb, dtype=np.float32) - np.float32(0.5)
    out = np.empty_like(x)
    ms, _ = time_cpu(lambda: np.add(x.reshape(-1, nb), bias, out=out.reshape(-1, nb)),
                     repeat=args.repeat)
    failures: list[str] = []
    agree("numpy", out, (x.reshape(-1, nb) + bias).ravel(), rtol=0.0, what="bias_add")
    numpy_row = make_row("bias_add", "uniform1d", "float32", n, "numpy", ms,
                         min_bytes=8 * n + 4 * nb, algorithm="NumPy (CPU)", bias_size=nb)
    copy_gbps = None
    if gpu:
        rows, copy_gbps = gpu_rows(x, bias, args.repeat, failures)
    else:
        rows = [_absent(label, variant, "hand-tuned", n, "no GPU on this machine")
                for label, variant, *_ in KERNELS]
        rows.append(_absent("daxpy (generated bias_add)", None, "daxpy", n,
                            "no GPU on this machine"))
    rows.append(numpy_row)
    base = rows[0].get("time_ms")
    for r in rows:
        if base and r.get("time_ms"):
            r["relative"] = round(r["time_ms"] / base, 3)
    header = dict(environment(gpu), ratio_log2=args.ratio_log2)
    command = "daxpy bench bias " + " ".join(argv if argv is not None else sys.argv[1:])
    out_dir = output_dir(args) / device_slug(gpu)
    study_report.write_json(out_dir, "bias_study", rows, header, command)
    study_report.plot([dict(r, impl=r["algorithm"]) for r in rows],
                      [r["algorithm"] for r in rows], out_dir / "bias_study.png",
                      f"BiasAdd study: {header.get('device') or 'CPU only'}")
    text = markdown(rows, header, command)
    (out_dir / "bias_study.md").write_text(text)
    write_results("bias_study", rows, folder=output_dir(args), gpu=gpu, copy_gbps=copy_gbps,
                  environment=header)
    print(text)
    return exit_status(failures)


if __name__ == "__main__":
    sys.exit(main())
