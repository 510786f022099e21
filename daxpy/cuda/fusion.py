"""Fused kernels: a chain of worklet calls as one generated kernel.

A chain is elementwise maps (worklets whose CUDA spec names a ``map`` struct:
pass-through, bias add, field map, magnitude, divergence, vorticity,
Q-criterion) around at most one topological worklet (point-to-cell,
cell-to-point, point or cell gradient). The maps before the topological
worklet run where it loads its input (map on load), those after it where it
stores its output (map on store); maps alone run a few tuples per thread.
Intermediate fields never reach device memory, and each map boundary rounds
as a stored field would (``settle`` in :file:`_fields.cuh`), so a fused chain
gives the bits of the same worklets run one by one.

Fused kernels are specializations like the others: named after their parts
(``fused__field_map_1c2f1e9a4b_s_o1__point_to_cell__magnitude__uniform3d__f32__c1__march4``),
compiled once and cached, printable (:func:`chain_source`, ``daxpy source
"map>point_to_cell>magnitude"``).

Examples
--------
>>> import daxpy
>>> plan = make_fused_plan(daxpy.UniformGrid(dims=(4, 4, 4)), "points", "float32", (3,),
...                        [Step("magnitude"), Step("point_to_cell")])
>>> plan.launches[0].kernel.name
'fused__magnitude__point_to_cell__uniform3d__f32__c3__march4'
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from ..errors import ArgumentError, BackendError, FieldError
from ..data.worklet import get_worklet
from .codegen import Plan, dtype_tag, index_ctype, kernel_name
from .dispatch import device_field, run_plan
from .march import topological_launch
from .plan import _coordinate_dtype, _topologies
from .plan_cache import frozen_params, reused_plan
from .spec import spec_of
from .stages import Step, chain_io, map_chain_launch, map_stages

__all__ = ["Step", "accepts_post_maps", "chain_source", "make_fused_plan", "run_chain"]

TOPOLOGICAL = ("cells", "points")
NAME_LIMIT = 180
"""Longest kernel name kept whole (cache files carry it); longer ones end in a digest."""


def is_topological(name: str) -> bool:
    """Whether worklet ``name`` runs over a topology (not an elementwise map).

    Examples
    --------
    >>> is_topological("point_to_cell"), is_topological("magnitude")
    (True, False)
    """
    return spec_of(get_worklet(name)).domain in TOPOLOGICAL


def accepts_post_maps(name: str, dataset) -> bool:
    """Whether maps can run where worklet ``name`` stores its output on ``dataset``.

    Point results on unstructured grids that sum over several cell shapes
    (one launch each, adding to the output) are complete only after the last
    launch, so they take no map on store; nor does a grid with no cells to
    sum over (its output is filled with zeros, no kernel runs).

    Examples
    --------
    >>> import daxpy
    >>> accepts_post_maps("point_gradient", daxpy.UniformGrid(dims=(3, 3)))
    True
    """
    spec = spec_of(get_worklet(name))
    if dataset.family != "unstructured" or spec.domain != "points":
        return True
    if spec.point_links != "corners":
        return True
    shapes = [b for b in dataset.cell_blocks().values() if b.shape.dimension > 0]
    return len(shapes) == 1


def _short(name: str) -> str:
    if len(name) <= NAME_LIMIT:
        return name
    return f"{name[:NAME_LIMIT - 14]}__{hashlib.sha256(name.encode()).hexdigest()[:12]}"


def _split(steps) -> tuple[list, Step | None, list]:
    cores = [i for i, s in enumerate(steps) if is_topological(s.name)]
    if len(cores) > 1:
        raise ArgumentError("a fused chain holds at most one topological worklet, got "
                            f"{[steps[i].name for i in cores]}")
    if not cores:
        return list(steps), None, []
    k = cores[0]
    return list(steps[:k]), steps[k], list(steps[k + 1:])


def make_fused_plan(dataset, association: str, in_dtype, tail: tuple, steps,
                    aligned: bool = True, index: str | None = None) -> Plan:
    """Plan the one kernel (per cell shape) that runs ``steps`` as a chain.

    Parameters
    ----------
    dataset : DataSet
        The grid.
    association : {"points", "cells"}
        Where the chain's input field lives.
    in_dtype : dtype-like
        Input dtype.
    tail : tuple
        Input shape past the first axis.
    steps : list of Step
        Maps, with at most one topological worklet among them.
    aligned : bool
        Whether input and output are 16-byte aligned (vector access).
    index : {"int", "long long"}, optional
        Index type (default: 32-bit unless the sizes need 64).

    Returns
    -------
    Plan

    Raises
    ------
    ArgumentError
        For an empty chain, two topological worklets, or a map that is not one.
    FieldError
        Where the topological worklet reads the other association.
    BackendError
        For maps after a point result that no single kernel completes
        (:func:`accepts_post_maps`).

    Examples
    --------
    >>> import daxpy
    >>> plan = make_fused_plan(daxpy.UniformGrid(dims=(3, 3)), "points", "float32", (),
    ...                        [Step("bias_add", {"bias": [1.0]}), Step("magnitude")])
    >>> plan.launches[0].kernel.name, plan.out_shape
    ('fused__bias_add__magnitude__f32__c1__v4', (9,))
    """
    if not steps:
        raise ArgumentError("a fused chain needs at least one step")
    in_dtype, tail = np.dtype(in_dtype), tuple(tail)
    in_c = math.prod(tail) or 1
    pre_steps, core, post_steps = _split(steps)
    n_in = dataset.n_points if association == "points" else dataset.n_cells
    pre, dtype, mid_tail = map_stages(pre_steps, in_dtype, tail, n_in)
    if core is None:
        widest = max([in_c] + [math.prod(s.out_tail) or 1 for s in pre])
        index = index or index_ctype(n_in * widest)
        name = _short(kernel_name("fused", *(s.part for s in pre), dtype_tag(in_dtype)))
        launch = map_chain_launch(pre, in_dtype, in_c, n_in, aligned, index, (name, f"c{in_c}"))
        return Plan(dtype, (n_in,) + mid_tail, [launch])
    worklet = get_worklet(core.name)
    spec = spec_of(worklet)
    if worklet.input_association not in ("any", association):
        raise FieldError(f"{core.name} reads {worklet.input_association[:-1]} fields; the "
                         f"chain's field is at the {association}")
    spec.check_params(core.name, core.params)
    core_dtype, core_tail = spec.output(dtype, mid_tail, core.params)
    out_assoc = worklet.output_association or association
    n_out = dataset.n_points if out_assoc == "points" else dataset.n_cells
    post, final_dtype, final_tail = map_stages(post_steps, core_dtype, core_tail, n_out,
                                               len(pre))
    if post and not accepts_post_maps(core.name, dataset):
        raise BackendError(f"{core.name} on this grid completes its output over several "
                           "kernels; maps after it cannot be fused into it")
    c, out_c = math.prod(mid_tail) or 1, math.prod(final_tail) or 1
    index = index or index_ctype(max(n_in * max(in_c, c), n_out * max(out_c, math.prod(core_tail)),
                                     3 * dataset.n_points))
    wide = "i64" if index != "int" else None
    options = spec.options(core.params, dtype, core_dtype, c, n_in * c)
    coord = _coordinate_dtype(spec, dataset, core_dtype)
    coord_tag = f"x{dtype_tag(coord)}" if coord != core_dtype else None
    io = chain_io(pre, post, in_dtype, in_c, final_dtype, out_c, aligned)
    parts = [s.part for s in pre] + [core.name] + [s.part for s in post]
    launches = []
    for topo, n_items, count in _topologies(spec, dataset, index, coord):
        name = _short(kernel_name("fused", *parts, topo.name, dtype_tag(in_dtype), f"c{in_c}",
                                  coord_tag, *options.tags))
        launches.append(topological_launch(spec, dataset, topo, n_items, count, io, (name,),
                                           index, wide, aligned, options))
    zero_fill = spec.domain == "points" and dataset.family == "unstructured" and not launches
    return Plan(final_dtype, (n_out,) + final_tail, launches, zero_fill)


def run_chain(dataset, values, association: str, steps):
    """Run ``steps`` over ``values`` as one fused kernel; return a CuPy array.

    Parameters
    ----------
    dataset : DataSet
        The grid.
    values : array-like
        The chain's input field (host or device, as for any worklet).
    association : {"points", "cells"}
        Where ``values`` lives.
    steps : list of Step
        The chain (see :func:`make_fused_plan`).

    Returns
    -------
    cupy.ndarray
        What the last step would return run on its own.

    Examples
    --------
    >>> callable(run_chain)
    True
    """
    field, aligned = device_field(">".join(s.name for s in steps), dataset, values, association)
    worklets = tuple(get_worklet(s.name) for s in steps)
    what = (tuple((id(w), frozen_params(s.params)) for w, s in zip(worklets, steps)),
            association, np.dtype(field.dtype).str, tuple(field.shape[1:]), bool(aligned))
    plan = reused_plan(dataset, what, worklets,
                       lambda: make_fused_plan(dataset, association, field.dtype,
                                               tuple(field.shape[1:]), steps, aligned=aligned))
    return run_plan(plan, field)


def chain_source(steps, dataset, field_dtype="float32", components: int = 1,
                 association: str | None = None) -> str:
    """Generated CUDA source of the fused kernel(s) of ``steps`` on ``dataset``.

    ``association`` defaults to where the chain's topological worklet reads
    (points for a chain of maps alone).

    Examples
    --------
    >>> import daxpy
    >>> src = chain_source([Step("point_gradient"), Step("magnitude")],
    ...                    daxpy.UniformGrid(dims=(4, 4, 4)))
    >>> "fused__point_gradient__magnitude__uniform3d__f32__c1__march4" in src
    True
    """
    if association is None:
        _, core, _ = _split(steps)
        wanted = get_worklet(core.name).input_association if core else "points"
        association = wanted if wanted != "any" else "points"
    tail = () if components == 1 else (int(components),)
    plan = make_fused_plan(dataset, association, np.dtype(field_dtype), tail, steps)
    return "\n".join(step.source() for step in plan.launches)
