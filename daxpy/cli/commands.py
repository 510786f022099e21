"""The ``daxpy`` command line.

Each subcommand has one function ``add_<name>_parser(subparsers)`` that
registers its parser and sets ``run`` to the function that carries it out
(taking the parsed arguments, returning an exit status). To add a subcommand,
write such a function and list it in :data:`SUBCOMMANDS`.

No failure prints a Python traceback: :func:`main` reports every exception on
one line and exits 2 for a usage error, 1 for a runtime error
(:mod:`daxpy.cli.report`); ``--traceback`` or ``DAXPY_TRACEBACK=1`` shows the
trace as well.

Examples
--------
>>> from daxpy.cli.commands import build_parser
>>> args = build_parser().parse_args(["demo", "--size", "16"])
>>> args.size, args.backend
(16, 'auto')
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..engine.backend import BACKENDS
from .args import argparse_type, integer_at_least
from .report import report, traceback_wanted
from ..errors import ArgumentError

__all__ = ["SUBCOMMANDS", "add_demo_parser", "build_parser", "main"]


class _CommandLineError(ArgumentError):
    """A command line argparse refused; ``command`` is the subcommand, if known."""

    def __init__(self, message: str, command: str | None):
        super().__init__(message)
        self.command = command


class _Parser(argparse.ArgumentParser):
    """argparse, handing a usage error to :func:`main` to report on one line."""

    def error(self, message: str):
        raise _CommandLineError(f"{message}; see '{self.prog} --help'",
                                self.prog.partition(" ")[2] or None)


def _run_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    result = run_demo(size=args.size, out_dir=args.out, backend=args.backend,
                      render=not args.no_render)
    grid = result.dataset
    print(f"daxpy demo: wavelet on a {args.size}^3 uniform grid "
          f"({grid.n_points:,} points, {grid.n_cells:,} cells), backend {result.backend}")
    print(result.table())
    print(f"wrote {result.vti_path}")
    print(f"wrote {result.vtp_path}")
    if result.png_path is not None:
        print(f"wrote {result.png_path}")
    elif result.render_error is not None:
        print(f"no PNG: off-screen rendering is not possible here ({result.render_error})")
    return 0


def add_demo_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``daxpy demo``.

    Examples
    --------
    >>> from daxpy.cli.commands import build_parser
    >>> build_parser().parse_args(["demo", "--backend", "cpu"]).out
    'daxpy-demo'
    """
    parser = subparsers.add_parser(
        "demo", help="wavelet -> gradient -> magnitude -> point-to-cell, with a .vti, "
        "a PNG and a timing table",
        description="Build vtkRTAnalyticSource's wavelet on a SIZE^3 uniform grid, run "
        "Gradient, Magnitude and PointToCell, write OUT/wavelet.vti, render "
        "OUT/wavelet.png off-screen and print each filter's time.")
    parser.add_argument("--size", type=argparse_type(integer_at_least(2)), default=128,
                        help="points along each axis (default 128)")
    parser.add_argument("--out", default="daxpy-demo",
                        help="output folder, created if missing (default ./daxpy-demo)")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="where the filters run (default auto: CUDA if usable)")
    parser.add_argument("--no-render", action="store_true", help="skip the PNG")
    parser.set_defaults(run=_run_demo)
    return parser


from .bench import add_bench_parser  # noqa: E402  (the benchmark suites)
from .run import add_run_parser  # noqa: E402  (daxpy run, also on Dask)
from .source import add_source_parser  # noqa: E402  (CUDA backend's subcommand)
from .info import add_info_parser  # noqa: E402  (versions, backends, GPU, cache)

SUBCOMMANDS = [add_demo_parser, add_source_parser, add_run_parser, add_bench_parser,
               add_info_parser]
"""Functions that each register one subcommand on the ``subparsers`` object."""


_TRACEBACK_HELP = "on an error, print the Python traceback too (or set DAXPY_TRACEBACK=1)"


def build_parser() -> argparse.ArgumentParser:
    """The ``daxpy`` argument parser with every subcommand of :data:`SUBCOMMANDS`.

    Examples
    --------
    >>> from daxpy.cli.commands import build_parser
    >>> build_parser().prog
    'daxpy'
    """
    parser = _Parser(
        prog="daxpy", description="Data-parallel visualization filters on NumPy and CUDA.")
    parser.add_argument("--version", action="version", version=f"daxpy {__version__}")
    parser.add_argument("--traceback", action="store_true", help=_TRACEBACK_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add_parser in SUBCOMMANDS:
        sub = add_parser(subparsers)
        if "-" in sub.prefix_chars:  # not bench, whose arguments go to a suite
            # SUPPRESS: absent here, the flag keeps its value from before the command.
            sub.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                             help=_TRACEBACK_HELP)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``daxpy`` console script; returns the exit status.

    Every failure is reported on one line of stderr by
    :func:`daxpy.cli.report.report`: status 2 for a usage error (a malformed
    command line, a bad step, expression or field), 1 for a runtime error
    (file, memory, GPU, network, or a bug), 130 when interrupted, 141 when
    stdout was closed. ``--help`` and ``--version`` exit through
    ``SystemExit(0)``, as argparse does.

    Examples
    --------
    >>> import sys
    >>> from daxpy.cli import main
    >>> sys.stderr = sys.stdout  # (doctest shows stdout only)
    >>> main(["demo", "--size", "1"])
    daxpy demo: error: argument --size: must be an integer >= 2, got '1'; see 'daxpy demo --help'
    2
    >>> sys.stderr = sys.__stderr__
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    command = None
    try:
        args = build_parser().parse_args(argv)
        command = args.command
        status = args.run(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except SystemExit:  # --help, --version, or a suite run by daxpy bench
        raise
    except _CommandLineError as err:
        return report(err.command, err)
    except BaseException as err:  # noqa: BLE001  (the one place every failure is reported)
        return report(command, err, traceback_wanted(argv))


if __name__ == "__main__":
    sys.exit(main())
