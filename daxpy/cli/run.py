"""``daxpy run``: a chain of filters over a dataset file, here or on a Dask cluster.

Each ``--step`` is a pipeline verb, with its argument after ``=``; the verbs
are the declared ones (:mod:`daxpy.data.verbs`), listed by ``daxpy run
--help``. With no ``--step`` the field
passes through as it is (its range is printed, and it is written). With
``--dask ADDRESS`` the chain runs through :mod:`daxpy.dask` on the cluster
whose scheduler listens there, and the results are gathered before they are
written.

Before reading the input, the output target is checked (a new or regular file
in a writable folder); before computing, the field, the steps, the output's
format against the grid, and the memory the run needs: the source (see :func:`daxpy.cli.demo.wavelet_bytes` for ``wavelet:SIZE``), plus
every field of the run at once, per point or cell as one tiny run of the
chain shows (:func:`daxpy.engine.probe.probe`), twice when writing (the
writer encodes a copy).

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

from ..engine.backend import BACKENDS
from .args import (argparse_type, dask_address, integer_at_least, parse_step,
                       positive_seconds, source_spec, step_help, step_spec,
                   wavelet_size)
from ..errors import ArgumentError
from ..data.memory_budget import require_bytes


def chain_steps(node, steps: list[str]):
    """Apply ``VERB[=ARG]`` steps to a pipeline node; return the last node.

    With no steps, that is ``node`` itself.

    Raises
    ------
    ArgumentError
        For an unknown verb, or a missing, unexpected or malformed argument
        (:func:`daxpy.cli.args.parse_step`).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> pipe = daxpy.pipeline(daxpy.UniformGrid(dims=(3,), point_data={"p": np.zeros(3)}))
    >>> chain_steps(pipe.field("p"), ["gradient=cell", "bias_add=1,2,3"]).name
    'bias_add_2'
    """
    for step in steps:
        verb, options = parse_step(step)
        node = getattr(node, verb)(**options)
    return node


def _check_run(sample, args: argparse.Namespace, n_elements: int, source_bytes: int) -> None:
    """Refuse, before computing, a run that could not finish: the field, a step or
    the output format does not suit ``sample`` (the input, or a tiny stand-in for
    it), or the run's fields cannot fit in memory (see the module docstring)."""
    from ..io.files import check_family_format, check_format
    from ..pipeline import pipeline
    from ..engine.probe import probe

    pipe = pipeline(sample)
    chain_steps(pipe.field(args.field), args.step)  # also checks field and steps
    made = _made_family(pipe)
    if args.output and made is None:
        check_format(sample, args.output)
    elif args.output:
        check_family_format(made, args.output)
    copies = 2 if args.output else 1
    per_element = probe(sample, pipe.stages).bytes_per_point() * copies
    require_bytes(source_bytes + n_elements * per_element,
                  f"{args.input} with {len(args.step)} step(s)")


def _load(args: argparse.Namespace):
    """The input dataset, once the run is known to fit in memory."""
    from ..io.progress import progress
    from .demo import wavelet, wavelet_bytes

    size = wavelet_size(args.input)
    if size is None:
        from ..io.files import read

        with progress(f"reading {args.input}") as report:
            dataset = read(args.input, progress=report)
        _check_run(dataset, args, max(dataset.n_points, dataset.n_cells), 0)
        return dataset
    _check_run(wavelet(2), args, size ** 3, wavelet_bytes(size))
    return wavelet(size)


def _checked_address(address: str) -> None:
    """Refuse a scheduler address Dask could not parse, before any Client exists
    (a failed Client leaves global state behind that later Clients trip over)."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port
    from distributed.comm.registry import backends

    try:
        scheme, location = parse_address(address)
        if scheme not in backends:
            raise ValueError(f"unknown scheme {scheme!r}; Dask knows {sorted(backends)}")
        if scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(location)
    except ValueError as err:
        raise ArgumentError(f"--dask {address!r} is not a scheduler address ({err}); "
                            "give one such as tcp://HOST:8786") from None


def _dask_client(address: str, timeout: float):
    import dask
    from distributed import Client

    _checked_address(address)
    scheduler = dask.config.get("scheduler", None)
    try:
        return Client(address, timeout=timeout)
    except BaseException as err:
        # A Client that fails to connect has already made itself dask's scheduler
        # (dask.config "scheduler") and never undoes that: put back what was there.
        dask.config.set(scheduler=scheduler)
        if isinstance(err, ValueError):  # Dask's parser of addresses
            raise ArgumentError(f"--dask {address!r} is not a scheduler address ({err}); "
                                "give one such as tcp://HOST:8786") from None
        if isinstance(err, OSError):  # refused, unreachable or timed out
            raise ConnectionError(f"could not reach the Dask scheduler at {address!r} "
                                  f"within {timeout:g} s ({err}); check the address and "
                                  "that the scheduler runs (--dask-timeout to wait longer)"
                                  ) from None
        raise


def _made_family(pipe) -> str | None:
    """The grid family of the dataset the run's last stage makes (a geometry
    filter's), or None when the run writes fields into its input."""
    last = pipe.stages[-1].filter if pipe.stages else None
    if not getattr(last, "makes_dataset", False):
        return None
    return last.made_family(pipe.dataset)


def _outputs(pipe) -> list[str]:
    """Every field the run's stages write (derived outputs included), in order."""
    return [name for stage in pipe.stages for name in stage.filter.outputs()]


def _describe(result, name: str) -> str:
    values, association = result.field(name)
    span = (f"min {values.min():.6g}, max {values.max():.6g}" if values.size
            else "no values")
    return f"{name}: {association}, {values.dtype}, shape {tuple(values.shape)}, {span}"


def _report_made(made, args: argparse.Namespace) -> int:
    """Describe (and write) the new dataset a geometry step made."""
    print(f"{type(made).__name__}: {made.n_points:,} points, {made.n_cells:,} cells")
    for data in (made.point_data, made.cell_data):
        for name in data:
            print(_describe(made, name))
    if args.output:
        from ..io.files import write
        from ..io.progress import progress

        with progress(f"writing {args.output}") as report:
            write(made, args.output, progress=report)
        print(f"wrote {args.output}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from ..io.progress import progress

    if args.output:
        from ..io.files import check_output_target

        check_output_target(args.output)
    dataset = _load(args)
    start = time.perf_counter()
    with progress(f"daxpy run: {len(args.step)} step(s)", fractions=False):
        if args.dask:
            from ..distributed import grid as daxpy_dask

            with _dask_client(args.dask, args.dask_timeout):
                pipe = daxpy_dask.pipeline(dataset)
                last = chain_steps(pipe.field(args.field), args.step)
                result = pipe.run(backend=args.backend, outputs=_outputs(pipe) or [last],
                                  chunks=args.pieces or "auto").compute()
            where = f"Dask cluster at {args.dask}"
        else:
            from ..pipeline import pipeline

            pipe = pipeline(dataset)
            last = chain_steps(pipe.field(args.field), args.step)
            result = pipe.run(backend=args.backend,
                              outputs=[last] if _made_family(pipe) else _outputs(pipe) or [last])
            where = "this process"
    made = _made_family(pipe) is not None
    elapsed = time.perf_counter() - start
    print(f"daxpy run: {len(args.step)} step(s) on {dataset.n_points:,} points in {where}: "
          f"{elapsed:.3f} s")
    if made:
        return _report_made(result, args)
    names = [name for name in _outputs(pipe) if name != last.name] + [last.name]
    for name in names:  # the chain's last result last
        print(_describe(result, name))
    if args.output:
        from ..io.files import write

        with progress(f"writing {args.output}") as report:
            write(dataset.with_fields(result.point_data, result.cell_data), args.output,
                  progress=report)
        print(f"wrote {args.output}")
    return 0


def add_run_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``daxpy run``.

    Examples
    --------
    >>> import argparse
    >>> parser = add_run_parser(argparse.ArgumentParser().add_subparsers())
    >>> parser.parse_args(["in.vti", "--field", "p", "--dask", "tcp://10.0.0.1:8786"]).dask
    'tcp://10.0.0.1:8786'
    """
    parser = subparsers.add_parser(
        "run", help="run a chain of filters over a dataset, here or on a Dask cluster",
        description="Read INPUT (a .vti/.vtr/.vts/.vtu/.vtk file, or wavelet:SIZE), run "
        "the --step chain over --field (none: the field as it is), print the result's "
        "range and write OUTPUT.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="steps (--step VERB[=ARG][:NAME]):\n" + "\n".join(
            f"  {line.rstrip(';')}" for line in step_help().splitlines())
        + "\n\nexample (the Laplacian as the divergence of the gradient):\n"
        "  daxpy run wavelet:64 out.vti --field RTData --step gradient:grad "
        "--step gradient=divergence=laplacian:hessian")
    parser.add_argument("input", type=argparse_type(source_spec),
                        help="dataset file, or wavelet:SIZE for the demo's wavelet")
    parser.add_argument("output", nargs="?", help="file to write (input fields + results)")
    parser.add_argument("--field", required=True, help="the field the chain starts from")
    parser.add_argument("--step", action="append", default=[], metavar="VERB[=ARG][:NAME]",
                        type=argparse_type(step_spec),
                        help="a verb (listed below), repeated in order; :NAME names "
                        "its result")
    parser.add_argument("--dask", metavar="SCHEDULER_ADDRESS", type=argparse_type(dask_address),
                        help="run on the Dask cluster whose scheduler listens here")
    parser.add_argument("--dask-timeout", metavar="SECONDS", default=5.0,
                        type=argparse_type(positive_seconds),
                        help="with --dask: give up connecting after this long (default 5)")
    parser.add_argument("--pieces", type=argparse_type(integer_at_least(0)), default=0,
                        help="with --dask: number of slabs or pieces (default: planned "
                        "from the workers' memory)")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="where the filters run (default auto: CUDA if usable)")
    parser.set_defaults(run=_run)
    return parser
