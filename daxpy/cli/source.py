"""``daxpy source``: print the generated CUDA source of a worklet's kernels.

Examples
--------
>>> example_grid("curvilinear2d").topology_name
'curvilinear2d'
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from ..data.celltypes import SHAPES_BY_NAME
from .args import argparse_type, dtype_name, integer_at_least
from ..errors import ArgumentError

_FAMILIES = ("uniform", "rectilinear", "curvilinear")
GRID_NAMES = tuple(f"{f}{d}d" for f in _FAMILIES for d in (1, 2, 3)) + tuple(
    f"unstructured_{s}" for s in ("vertex", "line", "tri", "quad", "tet", "hex", "wedge",
                                  "pyramid", "mixed"))
"""Grid types ``daxpy source --grid`` accepts."""


def example_grid(name: str):
    """A small grid of the named topology (its kernels are those of any such grid).

    Examples
    --------
    >>> [example_grid(name).topology_name for name in ("uniform2d", "unstructured_mixed")]
    ['uniform2d', 'unstructured_mixed']
    """
    import daxpy

    if name not in GRID_NAMES:
        raise ArgumentError(f"--grid must be one of {list(GRID_NAMES)}, got {name!r}")
    if name.startswith("unstructured"):
        shapes = list(SHAPES_BY_NAME[s] for s in ("vertex", "line", "tri", "quad", "tet",
                                                   "hex", "wedge", "pyramid"))
        wanted = name.split("_", 1)[1]
        chosen = shapes if wanted == "mixed" else [SHAPES_BY_NAME[wanted]]
        points = np.random.default_rng(0).random((8, 3))
        return daxpy.UnstructuredGrid.from_blocks(
            points, {s.vtk_id: [list(range(s.n_corners))] for s in chosen})
    family, dimension = name[:-2], int(name[-2])
    dims = (3,) * dimension
    if family == "uniform":
        return daxpy.UniformGrid(dims=dims)
    if family == "rectilinear":
        return daxpy.RectilinearGrid(*(np.arange(3.0) for _ in range(dimension)))
    points = np.zeros((3 ** dimension, 3))
    points[:, :dimension] = np.indices(dims).reshape(dimension, -1).T[:, ::-1]
    return daxpy.CurvilinearGrid(dims, points)


def worklet_name(text: str) -> str:
    """Worklet name from a worklet or filter name (``Gradient`` -> ``point_gradient``).

    Examples
    --------
    >>> worklet_name("PointToCell")
    'point_to_cell'
    """
    from ..data.worklet import registered_worklets

    key = text.replace("-", "_").lower()
    compact = key.replace("_", "")
    for name, worklet in registered_worklets().items():
        if compact == name.replace("_", "") or compact in worklet.aliases:
            return name
    return key


def _parse_params(items) -> dict:
    params = {}
    for item in items or ():
        key, _, value = item.partition("=")
        try:  # numbers and lists (bias=[1,2]) as JSON, anything else as text
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def _run_source(args: argparse.Namespace) -> int:
    from ..data.worklet import get_worklet
    from ..cuda.dispatch import kernel_source
    from ..cuda.fusion import Step, chain_source

    params = _parse_params(args.param)
    grid = example_grid(args.grid)
    names = [worklet_name(part.strip()) for part in args.filter.split(">")]
    if len(names) == 1:
        print(kernel_source(names[0], grid, args.dtype, args.components, **params))
        return 0
    # A chain: each step takes the parameters it accepts.
    steps = []
    for name in names:
        accepted = get_worklet(name).cuda.accepted_params
        steps.append(Step(name, {k: v for k, v in params.items() if k in accepted}))
    print(chain_source(steps, grid, args.dtype, args.components))
    return 0


def add_source_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``daxpy source``.

    Examples
    --------
    >>> from daxpy.cli.commands import build_parser
    >>> build_parser().parse_args(["source", "gradient", "--grid", "uniform2d"]).dtype
    'float32'
    """
    parser = subparsers.add_parser(
        "source", help="print the generated CUDA source of a filter's kernels",
        description="Print the specialized CUDA kernels that FILTER runs on a grid of "
        "the given type for a field of the given dtype and components; a chain "
        "'a>b>c' prints its fused kernel (each --param goes to the steps that take it).")
    parser.add_argument("filter", help="worklet or filter name (point_gradient, Gradient, ...), "
                        "or a fused chain such as 'map>point_to_cell>magnitude'")
    parser.add_argument("--grid", default="uniform3d", choices=GRID_NAMES,
                        help="grid type (default uniform3d)")
    parser.add_argument("--dtype", default="float32", type=argparse_type(dtype_name),
                        help="field dtype (default float32)")
    parser.add_argument("--components", type=argparse_type(integer_at_least(1)), default=1,
                        help="field components (default 1)")
    parser.add_argument("--param", action="append", metavar="KEY=VALUE",
                        help="static worklet parameter, e.g. --param dtype=float64 or bias=[1,2]")
    parser.set_defaults(run=_run_source)
    return parser
