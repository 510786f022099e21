"""Fused CPU runs: consecutive elementwise maps of a pipeline as one kernel.

Stages are grouped as on the GPU (:func:`daxpy.cuda.pipeline_fusion.plan_units`:
a stage continues the chain of the stage whose output it reads when that
output has no other reader and is not requested). The CPU runs a unit piece by
piece (:func:`run_piece`): a leading run of two or more elementwise maps whose
worklets have per-tuple code for the field's dtype and shape runs as one
generated kernel (:mod:`daxpy.worklets._fused_cpu`), which gives the bits of
the maps run one by one; any other stage runs through its filter. A map that
cannot be expressed (no template, an integer dtype, a check its filter makes
first) ends the fused piece, so the chain runs unfused from there.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(4,), point_data={"v": np.ones((4, 3), np.float32)})
>>> pipe = daxpy.pipeline(g)
>>> out = pipe.field("v").bias_add([1.0, 2.0, 3.0]).magnitude("m")
>>> working, ran = run_piece(pipe.stages, g.with_fields())
>>> [s.verb for s in ran], working.point_data["m"].tolist()
(['bias_add', 'magnitude'], [5.385164737701416, 5.385164737701416, 5.385164737701416, 5.385164737701416])
"""

from __future__ import annotations

from ..cuda.pipeline_fusion import plan_units, stage_steps
from ..data.arrays import native_order, to_host
from ..errors import DaxpyError
from .stage import configured


def cpu_units(stages, wanted, dataset, fuse: bool = True) -> list[list]:
    """:func:`~daxpy.cuda.pipeline_fusion.plan_units` for a CPU run; every stage
    its own unit where planning meets an error (a field missing, a grid
    refused): each stage then runs through its filter, which reports it at its
    turn, as an unfused run does.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.engine.stage import Stage
    >>> from daxpy.filters import Magnitude, Normalize
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"p": np.zeros(2)})
    >>> stages = [Stage(1, "normalize", Normalize("p", result="n"), ("p",), "n"),
    ...           Stage(2, "magnitude", Magnitude("n", result="m"), ("n",), "m", (1,))]
    >>> [len(unit) for unit in cpu_units(stages, ["m"], g)]
    [2]
    >>> stages[0] = Stage(1, "normalize", Normalize("nope", result="n"), ("nope",), "n")
    >>> [len(unit) for unit in cpu_units(stages, ["m"], g)]
    [1, 1]
    """
    try:
        return plan_units(stages, wanted, dataset, fuse)
    except DaxpyError:
        return [[stage] for stage in stages]


def _fused_head(unit, working):
    """The stages a fused kernel runs from the start of ``unit`` with their
    tuple codes, the chain's input and association; None for fewer than two."""
    from ..worklets._fused_cpu import chain_codes, input_kind

    first = unit[0]
    if len(unit) < 2:
        return None
    source = first.inputs[0]
    values, association = working.field(source, first.filter.reads().get(source))
    kind = input_kind(values)
    if kind is None:
        return None
    codes, taken = [], 0
    for stage in unit:
        # A filter that checks its inputs first (nan_policy="raise") runs itself.
        found = stage_steps(stage, working, association) \
            if stage.filter.nan_policy == "propagate" else None
        more = found and chain_codes([(s.name, s.params) for s in found[0]], kind, codes)
        if not more:
            break
        codes, taken = more, taken + 1
    if taken < 2:
        return None
    # Converted only now: a stage that runs through its filter converts for itself.
    return unit[:taken], codes, native_order(to_host(values)), association


def run_piece(unit, working):
    """Run the first piece of ``unit`` (stages in chain order) on ``working``:
    its leading maps as one fused kernel, else its first stage through its
    filter. Return the new working dataset and the stages that ran.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"p": np.array([1.0, -2.0])})
    >>> pipe = daxpy.pipeline(g)
    >>> out = pipe.field("p").magnitude()
    >>> working, ran = run_piece(pipe.stages, g.with_fields())
    >>> len(ran), working.point_data[out.name].tolist()
    (1, [1.0, 2.0])
    """
    from ..worklets._fused_cpu import run_fused

    head = _fused_head(unit, working)
    if head is None:
        return configured(unit[0], "cpu").apply(working), unit[:1]
    stages, codes, values, association = head
    result = run_fused(values, codes)
    new = {"point_data" if association == "points" else "cell_data":
           {stages[-1].output: result}}
    return working.with_fields(**new), stages
