"""Which stages of a pipeline run as one fused CUDA kernel (:mod:`daxpy.cuda.fusion`).

Stages are grouped into *units*. A stage joins the unit of the stage whose
output it reads when that output has no other reader (FieldMap expressions
count as readers) and is not a requested output, and when the stage can run
in the unit's kernel: a map (bias add, pass-through, FieldMap of the field it
maps, magnitude) anywhere, a topological worklet (point-to-cell,
cell-to-point, gradient) only where the unit has none yet, and maps after it
only where it completes its output in one kernel. A gradient asked for
exactly one of divergence, vorticity and Q-criterion, without the gradient
itself, is the gradient with that map on store, and ends its unit. Every
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

from .fusion import Step, accepts_post_maps

_CORES = {"point_to_cell": ("points", "cells"), "cell_to_point": ("cells", "points")}


def _gradient_steps(flt) -> tuple[list[Step], str | None]:
    kind = "point_gradient" if flt.kind == "point" else "cell_gradient"
    if not flt.derived:
        return ([Step(kind)], None) if flt.compute_gradient else ([], None)
    if flt.compute_gradient or len(flt.derived) != 1:
        return [], None
    (derived, name), = flt.derived.items()
    return [Step(kind), Step(derived)], name


def stage_steps(stage, dataset, association: str) -> tuple[list[Step], str, str] | None:
    """The worklet steps of ``stage``, the field they write and where, or None
    where the stage does not fuse (it then runs through its filter, which
    also raises its own errors).

    Parameters
    ----------
    stage : daxpy.engine.stage.Stage
        The stage.
    dataset : DataSet
        Holds the other fields a FieldMap reads.
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
    flt, verb = stage.filter, stage.verb
    if verb in ("bias_add", "pass_through", "magnitude"):
        params = {"bias_add": lambda: {"bias": flt.bias},
                  "pass_through": lambda: {"dtype": flt.dtype},
                  "magnitude": dict}[verb]()
        return [Step(verb, params)], stage.output, association
    if verb == "map":
        fields = flt.expression.fields
        if fields[0] != stage.inputs[0] or flt.association != association:
            return None
        others = {}
        for name in fields[1:]:
            data = dataset.fields(association)
            if name not in data:
                return None
            others[name] = data[name]
        return ([Step("field_map", {"expression": flt.expression, "fields": others})],
                stage.output, association)
    if verb in _CORES:
        reads, writes = _CORES[verb]
        return ([Step(verb)], stage.output, writes) if association == reads else None
    if verb == "gradient" and association == "points":
        steps, derived = _gradient_steps(flt)
        if not steps:
            return None
        return steps, derived or stage.output, "points" if flt.kind == "point" else "cells"
    return None


def _readers(stages) -> dict[str, int]:
    counts: dict[str, int] = {}
    for stage in stages:
        names = set(stage.inputs)
        if stage.verb == "map":
            names |= set(stage.filter.expression.fields)
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _output_association(stage, association: str) -> str:
    if stage.verb in _CORES:
        return _CORES[stage.verb][1]
    if stage.verb == "gradient":
        return "points" if stage.filter.kind == "point" else "cells"
    return association


def _core(steps) -> str | None:
    return next((s.name for s in steps if s.name in _TOPOLOGICAL), None)


_TOPOLOGICAL = ("point_to_cell", "cell_to_point", "point_gradient", "cell_gradient")


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
    >>> g = daxpy.UniformGrid(dims=(4, 4), point_data={"p": np.zeros(16)})
    >>> pipe = daxpy.pipeline(g)
    >>> grad = pipe.gradient("p")
    >>> a, b = grad.magnitude(), grad.point_to_cell()      # a branch: no fusion
    >>> [len(u) for u in plan_units(pipe.stages, [a.name, b.name], g)]
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
        where[stage.output] = _output_association(stage, association)
        found = stage_steps(stage, dataset, association)
        steps = found[0] if found else []
        core = _core(steps)
        if len(steps) > 1 and not accepts_post_maps(core, dataset):
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
