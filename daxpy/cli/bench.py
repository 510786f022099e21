"""The ``daxpy bench`` subcommand: one runner for the benchmark suites of a checkout.

``daxpy bench SUITE [OPTIONS]`` runs one suite of ``benchmarks/`` (``daxpy
bench --list`` names them); OPTIONS go to the suite as they are (``daxpy bench
kernels --quick``, ``daxpy bench kernels --help``). Every suite writes
``<suite>-<device-slug>.json`` into ``$DAXPY_BENCH_DIR`` (default
``./daxpy-bench-results``), or into the checkout's ``benchmarks/results/`` with
``--save``, so that a checkout never goes dirty by accident.

The suites live in the checkout, not in the installed package: ``benchmarks/``
is found through ``$DAXPY_CHECKOUT``, next to the package (an editable install)
or in the working directory, and imported as the package ``benchmarks`` from
there (``python -m benchmarks.kernels`` from the repository root runs the same
code).

Examples
--------
>>> from daxpy.cli.commands import build_parser
>>> args = build_parser().parse_args(["bench", "bias", "--tiny"])
>>> args.args
['bias', '--tiny']
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from pathlib import Path

from ..errors import ArgumentError, BackendError

SUITES = {
    "kernels": ("kernels", "every worklet's kernel vs hand-tuned and generic ones (GPU)"),
    "end-to-end": ("end_to_end", "host to host: filter call, pipeline, floors, VTK (GPU; "
                   "on a CPU: daxpy-cpu vs VTK)"),
    "pipelines": ("pipelines", "FY11 chains and seed 000's graph, fused vs serial (GPU)"),
    "cpu": ("cpu_vs_vtk", "every filter on the CPU vs VTK, Viskores and NumPy"),
    "cpu-compile": ("cpu_compile", "first-use and cached compile times of the CPU kernels"),
    "cpu-fusion": ("cpu_fusion", "chains of elementwise maps on the CPU, unfused vs fused"),
    "bias": ("bias_study", "seed 000's BiasAdd study"),
    "dax-study": ("dax_study", "seed 004's Dax study: tables, JSON and a plot (on a CPU: "
                  "daxpy-cpu vs VTK and Viskores)"),
    "scale-out": ("scale_out", "Dask strong and weak scaling over GPUs (or --cpu)"),
    "dask-overhead": ("dask_overhead", "Dask's cost per slab on a CPU LocalCluster"),
    "cuda-quick": ("cuda_quick", "compile times and a few kernel bandwidths (GPU)"),
    "contour": ("contour", "isosurfaces vs VTK, scikit-image and Warp; the Q-criterion "
                "isosurface vs PyVista (GPU rows on a GPU)"),
    "geometry": ("geometry", "threshold, clip and slice vs VTK Sequential and STDThread "
                 "(GPU rows on a GPU)"),
}
"""Suite name -> (module of ``benchmarks/``, one line on what it measures)."""


def benchmarks_dir() -> Path:
    """The checkout's ``benchmarks/`` folder.

    Raises
    ------
    ArgumentError
        When no checkout is found.

    Examples
    --------
    >>> (benchmarks_dir() / "dax_study.py").is_file()
    True
    """
    candidates = []
    if os.environ.get("DAXPY_CHECKOUT"):
        candidates.append(Path(os.environ["DAXPY_CHECKOUT"]))
    candidates += [Path(__file__).resolve().parents[2], Path.cwd()]
    for root in candidates:
        if (root / "benchmarks" / "__init__.py").is_file():
            return root / "benchmarks"
    raise ArgumentError("daxpy bench runs the benchmarks of a source checkout; none found "
                        "next to the package or in the working directory (set DAXPY_CHECKOUT "
                        "to the repository root)")


def suite_module(name: str):
    """Import the module of suite ``name`` from the checkout's ``benchmarks`` package.

    The package is loaded from its folder (no ``sys.path`` edit) unless it is
    already imported.

    Raises
    ------
    ArgumentError
        When ``name`` is not a suite, or no checkout is found.

    Examples
    --------
    >>> suite_module("bias").__name__
    'benchmarks.bias_study'
    """
    if name not in SUITES:
        raise ArgumentError(f"unknown suite {name!r}; suites: {', '.join(SUITES)}")
    if "benchmarks" not in sys.modules:
        folder = benchmarks_dir()
        spec = importlib.util.spec_from_file_location(
            "benchmarks", folder / "__init__.py", submodule_search_locations=[str(folder)])
        package = importlib.util.module_from_spec(spec)
        sys.modules["benchmarks"] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"benchmarks.{SUITES[name][0]}")


def suite_list() -> str:
    """One line per suite: its name and what it measures.

    Examples
    --------
    >>> suite_list().splitlines()[0].split()[0]
    'kernels'
    """
    width = max(map(len, SUITES))
    return "\n".join(f"{name:<{width}}  {line}" for name, (_, line) in SUITES.items())


def _run_bench(args: argparse.Namespace) -> int:
    rest = list(args.args)
    if not rest or rest[0] in ("-h", "--help", "--list"):
        if rest[:1] != ["--list"]:
            print("usage: daxpy bench SUITE [OPTIONS]  (daxpy bench SUITE --help: its options)"
                  "\n\nsuites:")
        print(suite_list())
        return 0
    try:
        return int(suite_module(rest[0]).main(rest[1:]) or 0)
    except ModuleNotFoundError as err:
        if err.name != "cupy":
            raise
        raise BackendError(f"suite {rest[0]!r} needs CuPy and a CUDA GPU; none here "
                           "(daxpy bench --list says which suites run on a CPU)") from None


def add_bench_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``daxpy bench`` (the suite's arguments go to it as they are).

    Examples
    --------
    >>> from daxpy.cli.commands import build_parser
    >>> build_parser().parse_args(["bench", "kernels", "--quick"]).args
    ['kernels', '--quick']
    """
    parser = subparsers.add_parser(
        "bench", prefix_chars="+", add_help=False,
        help="run a benchmark suite of the checkout (daxpy bench --list): results under "
        "$DAXPY_BENCH_DIR or ./daxpy-bench-results, or benchmarks/results/ with --save",
        description="Run the benchmark suite SUITE of benchmarks/; every other argument "
        "goes to the suite (daxpy bench SUITE --help).")
    # '+' prefixes: arguments such as --sizes reach the suite untouched.
    parser.add_argument("args", nargs=argparse.REMAINDER)
    parser.set_defaults(run=_run_bench)
    return parser
