"""The ``daxpy`` command line.

Each subcommand has one function ``add_<name>_parser(subparsers)`` that
registers its parser and sets ``run`` to the function that carries it out
(taking the parsed arguments, returning an exit status). To add a subcommand,
write such a function and list it in :data:`SUBCOMMANDS`.

Examples
--------
>>> from daxpy.cli import build_parser
>>> args = build_parser().parse_args(["demo", "--size", "16"])
>>> args.size, args.backend
(16, 'auto')
"""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .backend import BACKENDS
from .errors import DaxpyError

__all__ = ["SUBCOMMANDS", "add_demo_parser", "build_parser", "main"]


def _at_least_two(text: str) -> int:
    value = int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be an integer >= 2, got {value}")
    return value


def _run_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    result = run_demo(size=args.size, out_dir=args.out, backend=args.backend,
                      render=not args.no_render)
    grid = result.dataset
    print(f"daxpy demo: wavelet on a {args.size}^3 uniform grid "
          f"({grid.n_points:,} points, {grid.n_cells:,} cells), backend {result.backend}")
    print(result.table())
    print(f"wrote {result.vti_path}")
    if result.png_path is not None:
        print(f"wrote {result.png_path}")
    elif result.render_error is not None:
        print(f"no PNG: off-screen rendering is not possible here ({result.render_error})")
    return 0


def add_demo_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``daxpy demo``.

    Examples
    --------
    >>> from daxpy.cli import build_parser
    >>> build_parser().parse_args(["demo", "--backend", "cpu"]).out
    'daxpy-demo'
    """
    parser = subparsers.add_parser(
        "demo", help="wavelet -> gradient -> magnitude -> point-to-cell, with a .vti, "
        "a PNG and a timing table",
        description="Build vtkRTAnalyticSource's wavelet on a SIZE^3 uniform grid, run "
        "Gradient, Magnitude and PointToCell, write OUT/wavelet.vti, render "
        "OUT/wavelet.png off-screen and print each filter's time.")
    parser.add_argument("--size", type=_at_least_two, default=128,
                        help="points along each axis (default 128)")
    parser.add_argument("--out", default="daxpy-demo",
                        help="output folder, created if missing (default ./daxpy-demo)")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="where the filters run (default auto: CUDA if usable)")
    parser.add_argument("--no-render", action="store_true", help="skip the PNG")
    parser.set_defaults(run=_run_demo)
    return parser


from .bench_cli import add_bench_parser  # noqa: E402  (the study benchmarks)
from .cli_run import add_run_parser  # noqa: E402  (daxpy run, also on Dask)
from .cuda.cli import add_source_parser  # noqa: E402  (CUDA backend's subcommand)

SUBCOMMANDS = [add_demo_parser, add_source_parser, add_run_parser, add_bench_parser]
"""Functions that each register one subcommand on the ``subparsers`` object."""


def build_parser() -> argparse.ArgumentParser:
    """The ``daxpy`` argument parser with every subcommand of :data:`SUBCOMMANDS`.

    Examples
    --------
    >>> from daxpy.cli import build_parser
    >>> build_parser().prog
    'daxpy'
    """
    parser = argparse.ArgumentParser(
        prog="daxpy", description="Data-parallel visualization filters on NumPy and CUDA.")
    parser.add_argument("--version", action="version", version=f"daxpy {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add_parser in SUBCOMMANDS:
        add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``daxpy`` console script; returns the exit status.

    daxpy's own errors (bad arguments, no GPU for ``--backend cuda``...) are
    printed as one line and give status 2.

    Examples
    --------
    >>> from daxpy.cli import main
    >>> main(["demo", "--size", "1"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except DaxpyError as err:
        print(f"daxpy {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
