"""The ``daxpy bench`` subcommand: the study benchmarks of a source checkout.

``daxpy bench [ARGS]`` runs ``benchmarks/dax_study.py`` (seed 004's Dax study:
VTK, Viskores, generic, specialized and hand-tuned kernels and daxpy's
pipeline, host to host) and ``daxpy bench bias [ARGS]`` runs
``benchmarks/bias_study.py`` (seed 000's BiasAdd kernels and daxpy's). ARGS go
to the script (``daxpy bench --help``). The benchmarks live in the checkout, not
in the installed package: they are found through ``$DAXPY_CHECKOUT``, next to
the package (an editable install), or in the working directory.

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
import os
import sys
from pathlib import Path

from ..errors import ArgumentError

STUDIES = {"dax": "dax_study", "bias": "bias_study"}
"""First argument of ``daxpy bench`` -> script in ``benchmarks/`` (default ``dax``)."""


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
    candidates += [Path(__file__).resolve().parent.parent, Path.cwd()]
    for root in candidates:
        if (root / "benchmarks" / "dax_study.py").is_file():
            return root / "benchmarks"
    raise ArgumentError("daxpy bench runs the benchmarks of a source checkout; none found "
                        "next to the package or in the working directory (set DAXPY_CHECKOUT "
                        "to the repository root)")


def _run_bench(args: argparse.Namespace) -> int:
    rest = list(args.args)
    study = "dax"
    if rest and rest[0] in STUDIES:
        study = rest.pop(0)
    folder = str(benchmarks_dir())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return int(importlib.import_module(STUDIES[study]).main(rest) or 0)


def add_bench_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``daxpy bench`` (its arguments go to the study script as they are).

    Examples
    --------
    >>> from daxpy.cli.commands import build_parser
    >>> build_parser().parse_args(["bench", "--sizes", "1e6"]).args
    ['--sizes', '1e6']
    """
    parser = subparsers.add_parser(
        "bench", prefix_chars="+", add_help=False,
        help="seed 004's Dax study (or 'bench bias': seed 000's BiasAdd study) on this "
        "machine: tables, JSON and a plot under benchmarks/results/<device>/",
        description="Run benchmarks/dax_study.py, or benchmarks/bias_study.py with 'bias' "
        "first; every other argument goes to the script (daxpy bench --help).")
    # '+' prefixes: arguments such as --sizes reach the script untouched.
    parser.add_argument("args", nargs=argparse.REMAINDER)
    parser.set_defaults(run=_run_bench)
    return parser
