"""Fused CPU map chains: chains of 1, 3 and 6 maps, unfused and fused, on 1 and 2 threads.

A float32 3-component point field (10M points by default) runs through a
pipeline of elementwise maps on the CPU backend, each map its own kernel
writing its own field (``daxpy-serial``) and the chain as one fused kernel
(``daxpy-cpu``); both results are checked bitwise equal before any time is
printed. Times are medians of whole ``Pipeline.run`` calls, host to host.
``min_bytes`` is the input field read once plus the output written once.
The fused 6-map kernel's compile time is measured in fresh processes: with
empty daxpy and Numba caches (``cold``) and on the caches the first made
(``cached``), each as its first run minus its second. Writes
``benchmarks/results/cpu_fusion-cpu-<n>core.json``.

Run: ``daxpy bench cpu-fusion`` (``--points 1000000`` for a quick run).

Examples
--------
>>> parse_args(["--points", "1000"]).points
1000
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from .common import (AgreementError, SuiteParser, add_output_options, make_row, output_dir,
                     write_results)
from .printout import format_table
from .timing import time_cpu

CHAINS = {
    1: [("bias_add", [1.0, 2.0, 3.0])],
    3: [("bias_add", [1.0, 2.0, 3.0]), ("map", "x * 0.5 + 1"), ("magnitude", None)],
    6: [("bias_add", [1.0, 2.0, 3.0]), ("map", "x * 0.5 + 1"), ("normalize", None),
        ("map", "where(x > 0, x, -x)"), ("magnitude", None), ("map", "sqrt(x) + 1")],
}
"""Maps per chain -> (verb, argument) of each stage, over a 3-component field."""


def build(n: int, length: int):
    """A pipeline over ``n`` points of a float32 3-component field running the
    chain of ``length`` maps; returns ``(pipeline, output name)``.

    Examples
    --------
    >>> pipe, name = build(10, 3)
    >>> [s.verb for s in pipe.stages], name
    (['bias_add', 'map', 'magnitude'], 'magnitude_3')
    """
    import daxpy

    rng = np.random.default_rng(3)
    field = rng.random((n, 3), dtype=np.float32) - 0.5
    pipe = daxpy.pipeline(daxpy.UniformGrid(dims=(n,), point_data={"v": field}))
    node = pipe.field("v")
    for verb, argument in CHAINS[length]:
        node = getattr(node, verb)(*([] if argument is None else [argument]))
    return pipe, node.name


_COMPILE_CHILD = """
import json, sys, time
from benchmarks.cpu_fusion import build
warm, _ = build(1000, 1)
warm.run(backend="cpu")  # imports, and the planning code's first call
pipe, name = build(1000, 6)
times = []
for _ in range(2):
    start = time.perf_counter()
    pipe.run(backend="cpu", fuse=True)
    times.append(time.perf_counter() - start)
print(json.dumps({"first_ms": times[0] * 1e3, "run_ms": times[1] * 1e3}))
"""


def compile_ms(cache: str) -> dict:
    """First and second run of the fused 6-map chain in a fresh process whose
    daxpy and Numba caches are in ``cache``; times in ms."""
    env = dict(os.environ, DAXPY_CACHE_DIR=cache, NUMBA_CACHE_DIR=os.path.join(cache, "numba"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    child = subprocess.run([sys.executable, "-c", _COMPILE_CHILD], env=env, cwd=root,
                           capture_output=True, text=True, check=True)
    return json.loads(child.stdout.strip().splitlines()[-1])


def parse_args(argv=None):
    """Command-line options.

    Examples
    --------
    >>> parse_args([]).threads
    [1, 2]
    """
    p = SuiteParser(prog="daxpy bench cpu-fusion", description=__doc__.split("\n")[0])
    p.add_argument("--points", type=int, default=10_000_000)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeat", type=int, default=5)
    add_output_options(p)
    args = p.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(",")]
    return args


def main(argv=None) -> int:
    import daxpy

    args = parse_args(argv)
    rows = []
    for length in CHAINS:
        pipe, name = build(args.points, length)
        results = {fuse: pipe.run(backend="cpu", fuse=fuse).point_data[name]
                   for fuse in (False, True)}
        if results[True].tobytes() != results[False].tobytes():
            raise AgreementError(f"the fused chain of {length} maps differs from the unfused")
        moved = pipe.dataset.point_data["v"].nbytes + results[True].nbytes
        for threads in args.threads:
            daxpy.configure_cpu(threads=threads)
            try:
                for fuse, impl in ((False, "daxpy-serial"), (True, "daxpy-cpu")):
                    ms, _ = time_cpu(lambda: pipe.run(backend="cpu", fuse=fuse),
                                     repeat=args.repeat)
                    rows.append(make_row(f"map_chain_{length}", "uniform1d", "float32",
                                         args.points, impl, ms, min_bytes=moved,
                                         maps=length, threads=threads))
                    print(f"{length} maps  {threads} thread(s)  {impl:12s} {ms:9.1f} ms",
                          flush=True)
            finally:
                daxpy.configure_cpu(threads=None)
    with tempfile.TemporaryDirectory(prefix="daxpy-fusion-cache-") as cache:
        for phase in ("cold", "cached"):
            t = compile_ms(cache)
            ms = max(t["first_ms"] - t["run_ms"], 0.0)
            rows.append(make_row("map_chain_6_compile", "uniform1d", "float32", 1000,
                                 "daxpy-cpu", ms, phase=phase, run_ms=round(t["run_ms"], 3)))
            print(f"fused 6-map kernel, {phase:6s} compile {ms:8.0f} ms", flush=True)
    write_results("cpu_fusion", rows, folder=output_dir(args), gpu=False)
    table = [{"case": r["case"], "impl": r["impl"], "threads": r.get("threads", ""),
              "phase": r.get("phase", ""), "time_ms": r["time_ms"], "gbps": r.get("gbps", "")}
             for r in rows]
    print(format_table(table, ["case", "impl", "threads", "phase", "time_ms", "gbps"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
