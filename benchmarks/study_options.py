"""Options and header facts shared by the study benchmarks (dax_study, end_to_end, bias_study).

Examples
--------
>>> parse_args(["--sizes", "1e6"]).sizes
[1000000]
"""

from __future__ import annotations

import argparse
import os
import time

from .common import SuiteParser, add_output_options

DESCRIPTION = "daxpy bench dax-study: seed 004's Dax study on this machine, tables and a plot."
"""The ``--help`` line (dax_study's first docstring line, as before)."""


def _sizes(text: str) -> list[int]:
    return [int(float(s)) for s in text.split(",") if s]


def parse_args(argv=None) -> argparse.Namespace:
    """Command-line options.

    Examples
    --------
    >>> args = parse_args(["--tiny"])
    >>> args.sizes, args.hex_sizes, args.repeat
    ([4096], [4096], 1)
    """
    p = SuiteParser(prog="daxpy bench dax-study", description=DESCRIPTION)
    p.add_argument("--sizes", type=_sizes, default=[10_000_000, 100_000_000],
                   help="points of the uniform cubes (default 1e7,1e8)")
    p.add_argument("--hex-sizes", type=_sizes, default=[10_000_000],
                   help="points of the hexahedral grids (default 1e7; empty: none)")
    p.add_argument("--cases", default="pass_through,point_gradient,point_to_cell")
    p.add_argument("--repeat", type=int, default=5, help="timed runs after the first")
    p.add_argument("--slow", type=float, default=2.0,
                   help="a first run longer than this many seconds is the only one")
    p.add_argument("--time-budget", type=float, default=0.0,
                   help="seconds after which what is left is skipped (0: no limit)")
    p.add_argument("--end-to-end", action="store_true",
                   help="also measure and write benchmarks/end_to_end.py's rows")
    p.add_argument("--no-cpu", action="store_true", help="skip the VTK and Viskores rows")
    add_output_options(p)
    p.add_argument("--tiny", action="store_true", help="4096 points, one run (CI)")
    args = p.parse_args(argv)
    if args.tiny:
        args.sizes, args.hex_sizes, args.repeat = [4096], [4096], 1
    args.cases = [c for c in args.cases.split(",") if c]
    return args


def sizes_of(args) -> list:
    """``(kind, n_points)`` of every grid to measure, uniform first."""
    return [("uniform", n) for n in args.sizes] + [("hex", n) for n in args.hex_sizes]


def environment(gpu: bool) -> dict:
    """Header facts: device, driver, CUDA, CuPy, VTK, NumPy, CPU and its cores."""
    from .common import cpu_name, gpu_name, versions

    found = {"device": gpu_name() if gpu else None, "cpu": cpu_name(),
             "host_cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d"),
             "driver": None, **versions()}
    if gpu:
        import subprocess

        try:
            found["driver"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            import cupy

            found["driver"] = f"CUDA driver API {cupy.cuda.runtime.driverGetVersion()}"
    return found
