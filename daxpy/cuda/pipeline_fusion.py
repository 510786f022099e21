"""Which stages of a pipeline run as one fused CUDA kernel (:mod:`daxpy.cuda.fusion`).

Stages are grouped into *units*. A stage joins the unit of the stage whose
output it reads when that output has no other reader and is not a requested
output, and when the stage can run in the unit's kernel: what it computes
is declared by its filter (:meth:`~daxpy.filters.Filter.fusion_steps`), and a
chain holds elementwise maps anywhere, at most one topological worklet (as
its CUDA declaration says), and maps after that one only where it completes
its output in one kernel. A stage whose fused output is not the one it is
named by (a gradient asked for one derived quantity) ends its unit. Every
other stage is a unit of its own and runs through its filter.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(4, 4, 4), point_data={"p": np.zeros(64)})
>>> pipe = daxpy.pipeline(g)
>>> out = pipe.gradient("p").magnitude().point_to_cell().map("x + 1")
>>> [[s.verb for s in unit] for unit in plan_units(pipe.stages, [out.name], g)]
[['gradient', 'magnitude'], ['point_to_cell', 'map']]
"""

from __future__ import annotations

from typing import Any

from .fusion import Step, accepts_post_maps, is_topological


def stage_steps(stage, dataset, association: str) -> tuple[list[Step], str, str] | None:
    """The worklet steps of ``stage``, the field they write and where, or None
    where the stage does not fuse (it then runs through its filter, which
    also raises its own errors).

    Parameters
    ----------
    stage : daxpy.engine.stage.Stage
        The stage.
    dataset : DataSet
        Holds the other fields a stage may read.
    association : {"points", "cells"}
        Where the stage's input field lives.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"p": np.zeros(3)})
    >>> pipe = daxpy.pipeline(g)
    >>> node = pipe.bias_add("p", [1.0])
    >>> steps, name, where = stage_steps(pipe.stages[0], g, "points")
    >>> [s.name for s in steps], name, where
    (['bias_add'], 'bias_add_1', 'points')
    """
    flt = stage.filter
    outputs = flt.outputs()
    if len(outputs) != 1 or next(iter(flt.reads())) != stage.inputs[0]:
        return None
    declared = flt.fusion_steps(association, dataset)
    if not declared:
        return None
    steps = [Step(name, params) for name, params in declared]
    return steps, outputs[0], flt.output_association(association)


def _readers(stages) -> dict[str, int]:
    counts: dict[str, int] = {}
    for stage in stages:
        for name in set(stage.inputs) | set(stage.filter.reads()):
            counts[name] = counts.get(name, 0) + 1
    return counts


def _core(steps) -> str | None:
    return next((s.name for s in steps if is_topological(s.name)), None)


def plan_units(stages, wanted, dataset, fuse: bool = True) -> list[list[Any]]:
    """Group ``stages`` into units run as one kernel each, in execution order.

    Parameters
    ----------
    stages : list of daxpy.engine.stage.Stage
        In build order.
    wanted : list of str
        Requested outputs (never fused away).
    dataset : DataSet
        The pipeline's source (field associations, the grid).
    fuse : bool
        False: every stage is its own unit.

    Returns
    -------
    list of list of Stage
        Each unit's stages in chain order; units ordered by their last stage
        (a unit's input is ready by then: its intermediates have no other reader).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> pipe = daxpy.pipeline(daxpy.UniformGrid(dims=(4, 4), point_data={"p": np.zeros(16)}))
    >>> grad = pipe.gradient("p")
    >>> a, b = grad.magnitude(), grad.point_to_cell()      # a branch: no fusion
    >>> [len(u) for u in plan_units(pipe.stages, [a.name, b.name], pipe.dataset)]
    [1, 1, 1]
    """
    if not fuse:
        return [[s] for s in stages]
    readers = _readers(stages)
    where: dict[str, str] = {}
    extendable: dict[str, list] = {}  # output name -> the unit it ends, still open
    units, cores = [], {}
    for stage in stages:
        source = stage.inputs[0]
        association = where.get(source) or dataset.field(source)[1]
        where[stage.output] = stage.filter.output_association(association)
        found = stage_steps(stage, dataset, association)
        steps = found[0] if found else []
        core = _core(steps)
        if len(steps) > 1 and core and not accepts_post_maps(core, dataset):
            found = None  # its derived map cannot run on store: the filter runs it
        unit = extendable.pop(source, None)
        if found is None or unit is None or readers.get(source) != 1 or source in wanted:
            unit = None
        elif core and cores[id(unit)]:
            unit = None  # one topological worklet per kernel
        elif not core and cores[id(unit)] and not accepts_post_maps(cores[id(unit)], dataset):
            unit = None
        if unit is None:
            unit = []
            units.append(unit)
            cores[id(unit)] = None
        unit.append(stage)
        cores[id(unit)] = cores[id(unit)] or core
        # A derived field (the gradient's divergence...) ends its unit.
        if found is not None and found[1] == stage.output:
            extendable[stage.output] = unit
    return sorted(units, key=lambda unit: stages.index(unit[-1]))


def unit_chain(unit, dataset, association: str) -> tuple[list[Step], str, str] | None:
    """Steps of a unit, the field they write and its association; None where
    a stage of it does not fuse (a unit of one such stage).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3), point_data={"p": np.zeros(9)})
    >>> pipe = daxpy.pipeline(g)
    >>> out = pipe.gradient("p").magnitude("m")
    >>> steps, name, where = unit_chain(pipe.stages, g, "points")
    >>> [s.name for s in steps], name, where
    (['point_gradient', 'magnitude'], 'm', 'points')
    """
    steps, output = [], None
    for stage in unit:
        found = stage_steps(stage, dataset, association)
        if found is None:
            return None
        more, output, association = found
        steps += more
    return steps, output, association
