"""``daxpy run``: a chain of filters over a dataset file, here or on a Dask cluster.

Each ``--step`` is a pipeline verb, with its argument after ``=``:
``gradient`` (``gradient=cell`` for the cell gradient), ``magnitude``,
``point_to_cell``, ``cell_to_point``, ``map=EXPRESSION`` (``x`` is the field),
``bias_add=1,2,3`` and ``pass_through=DTYPE``. With ``--dask ADDRESS`` the
chain runs through :mod:`daxpy.dask` on the cluster whose scheduler listens
there, and the results are gathered before they are written.

Examples
--------
>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> args = add_run_parser(sub).parse_args(
...     ["wavelet:8", "--field", "RTData", "--step", "gradient", "--step", "map=sin(x)"])
>>> args.dask is None, args.step
(True, ['gradient', 'map=sin(x)'])
"""

from __future__ import annotations

import argparse
import time

from .backend import BACKENDS
from .errors import ArgumentError

_VERBS = ("gradient", "magnitude", "point_to_cell", "cell_to_point", "map", "bias_add",
          "pass_through")


def chain_steps(node, steps: list[str]):
    """Apply ``VERB[=ARG]`` steps to a pipeline node; return the last node.

    Raises
    ------
    ArgumentError
        For an unknown verb, or a missing or unexpected argument.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> pipe = daxpy.pipeline(daxpy.UniformGrid(dims=(3,), point_data={"p": np.zeros(3)}))
    >>> chain_steps(pipe.field("p"), ["gradient=cell", "bias_add=1,2,3"]).name
    'bias_add_2'
    """
    for step in steps:
        verb, _, argument = step.partition("=")
        if verb not in _VERBS:
            raise ArgumentError(f"--step {step!r}: the verb must be one of {list(_VERBS)}")
        if verb in ("map", "bias_add") and not argument:
            raise ArgumentError(f"--step {step!r}: {verb} needs an argument ({verb}=...)")
        if verb in ("magnitude", "point_to_cell", "cell_to_point") and argument:
            raise ArgumentError(f"--step {step!r}: {verb} takes no argument")
        if verb == "gradient":
            node = node.gradient(kind=argument or "point")
        elif verb == "bias_add":
            node = node.bias_add([float(v) for v in argument.split(",")])
        elif verb == "pass_through":
            node = node.pass_through(dtype=argument or None)
        elif verb == "map":
            node = node.map(argument)
        else:
            node = getattr(node, verb)()
    return node


def _source(text: str):
    if text.startswith("wavelet:"):
        from .demo import wavelet

        return wavelet(int(text.split(":", 1)[1]))
    from .io import read

    return read(text)


def _run(args: argparse.Namespace) -> int:
    dataset = _source(args.input)
    start = time.perf_counter()
    if args.dask:
        from distributed import Client

        from . import dask as daxpy_dask

        with Client(args.dask):
            pipe = daxpy_dask.pipeline(dataset)
            last = chain_steps(pipe.field(args.field), args.step)
            result = pipe.run(backend=args.backend, chunks=args.pieces or "auto").compute()
        where = f"Dask cluster at {args.dask}"
    else:
        from .pipeline import pipeline

        pipe = pipeline(dataset)
        last = chain_steps(pipe.field(args.field), args.step)
        result = pipe.run(backend=args.backend)
        where = "this process"
    elapsed = time.perf_counter() - start
    values, association = result.field(last.name)
    print(f"daxpy run: {len(args.step)} step(s) on {dataset.n_points:,} points in {where}: "
          f"{elapsed:.3f} s")
    print(f"{last.name}: {association}, {values.dtype}, shape {tuple(values.shape)}, "
          f"min {values.min():.6g}, max {values.max():.6g}")
    if args.output:
        from .io import write

        write(dataset.with_fields(result.point_data, result.cell_data), args.output)
        print(f"wrote {args.output}")
    return 0


def add_run_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``daxpy run``.

    Examples
    --------
    >>> from daxpy.cli import build_parser
    >>> build_parser().parse_args(["run", "in.vti", "--field", "p", "--dask",
    ...                            "tcp://10.0.0.1:8786"]).dask
    'tcp://10.0.0.1:8786'
    """
    parser = subparsers.add_parser(
        "run", help="run a chain of filters over a dataset, here or on a Dask cluster",
        description="Read INPUT (a .vti/.vtr/.vts/.vtu/.vtk file, or wavelet:SIZE), run "
        "the --step chain over --field, print the result's range and write OUTPUT.")
    parser.add_argument("input", help="dataset file, or wavelet:SIZE for the demo's wavelet")
    parser.add_argument("output", nargs="?", help="file to write (input fields + results)")
    parser.add_argument("--field", required=True, help="the field the chain starts from")
    parser.add_argument("--step", action="append", default=[], metavar="VERB[=ARG]",
                        help=f"a verb of {', '.join(_VERBS)} (repeat, in order)")
    parser.add_argument("--dask", metavar="SCHEDULER_ADDRESS",
                        help="run on the Dask cluster whose scheduler listens here")
    parser.add_argument("--pieces", type=int, default=0,
                        help="with --dask: number of slabs or pieces (default: planned "
                        "from the workers' memory)")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="where the filters run (default auto: CUDA if usable)")
    parser.set_defaults(run=_run)
    return parser
