"""Mapped-memory runs: one kernel reading and writing host memory.

For a pipeline of one stage (a map such as a pass-through or a field map, or a
stencil such as a gradient or an average), its kernel can read the page-locked
input and write a pinned output directly across the bus, with no device
buffers, no chunks and no copies: the bus carries each byte once, in both
directions at the same time (a stencil's neighbours come from the GPU's cache).
Streaming settings select it with ``mapped=True``; ``benchmarks/end_to_end.py``
measures it against the chunked copies, and NOTES-streaming.md records which wins.

A run that a device-memory budget would cut into many chunks is mapped without
being asked (:func:`maps_instead`): it needs no device memory for its fields, and
none of the host work that each chunk costs.

Examples
--------
>>> callable(run_mapped)
True
"""

from __future__ import annotations

import numpy as np

from . import transfer
from ..errors import ArgumentError
from .loop import LoopResult, run_stages_on
from .movers import Source


MAPPED_AFTER_CHUNKS = 64
"""Chunks beyond which a budget-bound run is mapped instead (:func:`maps_instead`).
Each chunk costs the host about 0.15 ms (its views, copies, events and launch),
what the bus takes for about 4 MB: 100M points under a budget of 1/30 of their
working set ran in 155 chunks at 0.2-0.4 of the in-core speed (H200,
``end_to_end-nvidia-h200.json``), where one mapped kernel ran the pass-through at
1.135x the overlapped copies' floor. A run in core takes 2 to 30 chunks."""


class NotMapped(ArgumentError):
    """A pipeline that a mapped run cannot serve (more than one stage, an input
    that cannot be page-locked in place, a stage that makes more than one kernel's
    output)."""


def maps_instead(dataset, stages, n_chunks: int) -> bool:
    """Whether a run that its plan cuts into ``n_chunks`` chunks should be one
    mapped kernel instead: more than :data:`MAPPED_AFTER_CHUNKS` chunks, one stage,
    and a uniform grid (its kernels read no device array but the fields: other
    grids' coordinates or topology would sit on the device, outside the budget).
    Inputs that cannot be mapped are found by :func:`run_mapped`.

    Examples
    --------
    >>> maps_instead(None, [], 2)
    False
    """
    return n_chunks > MAPPED_AFTER_CHUNKS and len(stages) == 1 and dataset.family == "uniform"


def run_mapped(dataset, stages, program) -> LoopResult:
    """Run one stage with its kernel on mapped host memory.

    Raises
    ------
    NotMapped
        If the pipeline is not one stage, an input cannot be page-locked in
        place, or the stage's output is not one kernel's.
    """
    import cupy

    from ..cuda import dispatch

    if len(stages) != 1:
        raise NotMapped(f"mapped=True runs one stage; this pipeline has {len(stages)}")
    sources, fields = {}, {"points": {}, "cells": {}}
    for name, association in program.reads.items():
        array = np.asarray(dataset.fields(association)[name])
        if not array.dtype.isnative:  # the kernel would read it in place, misread
            raise NotMapped(f"mapped=True needs field {name!r} in native byte order; "
                                f"it is {array.dtype.str}")
        if not transfer.page_lock(array):
            raise NotMapped(
                f"mapped=True needs field {name!r} page-locked in place; it is smaller than "
                f"{transfer.REGISTER_MIN_BYTES} bytes, strided, or was refused")
        sources[name] = Source(array, "mapped")
        fields[association][name] = transfer.device_view(array)
    made = {}
    allocate = dispatch.empty_output

    def pinned_output(shape, dtype):
        if not int(np.prod(shape)):
            return allocate(shape, dtype)
        host = transfer.pinned_empty(shape, dtype)
        view = transfer.device_view(host)
        made[view.data.ptr] = host
        return view

    keep = program.kept
    stream = cupy.cuda.Stream(non_blocking=True)
    dispatch.empty_output = pinned_output
    try:
        with stream:
            results, marks = run_stages_on(stages, dataset.with_fields(fields["points"],
                                                                       fields["cells"]),
                                           keep, "cuda", stream.record)
    finally:
        dispatch.empty_output = allocate
    # The one wait: the kernel wrote host memory, which the caller reads next.
    stream.synchronize()
    outputs = {}
    for name, values in results.items():
        host = made.get(values.data.ptr)
        if host is None or host.shape != values.shape:
            raise NotMapped(f"mapped=True: stage output {name!r} did not land in the "
                            "mapped output (the stage is not one kernel's)")
        outputs[name] = host
    stage_ms = {index: cupy.cuda.get_elapsed_time(begin, end) for index, begin, end in marks}
    return LoopResult(outputs, sources, stage_ms, {})
