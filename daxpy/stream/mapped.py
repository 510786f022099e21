"""Mapped-memory runs: one elementwise kernel reading and writing host memory.

For a pipeline of one map (a stage of depth 0, such as a pass-through or a
field map), the kernel can read the page-locked input and write a pinned
output directly across the bus, with no device buffers, no chunks and no
copies: the bus carries each byte once, in both directions at the same time.
Streaming settings select it with ``mapped=True``; ``benchmarks/end_to_end.py``
measures it against the chunked copies, and NOTES-streaming.md records which wins.

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


def run_mapped(dataset, stages, program) -> LoopResult:
    """Run one map stage with its kernel on mapped host memory.

    Raises
    ------
    ArgumentError
        If the pipeline is not one stage of depth 0, or an input cannot be
        page-locked in place.
    """
    import cupy

    from ..cuda import dispatch

    if program.depth != 0 or len(stages) != 1:
        raise ArgumentError(
            f"mapped=True runs one elementwise stage; this pipeline has {len(stages)} "
            f"stage(s) and depth {program.depth}")
    sources, fields = {}, {"points": {}, "cells": {}}
    for name, association in program.reads.items():
        array = np.asarray(dataset.fields(association)[name])
        if not array.dtype.isnative:  # the kernel would read it in place, misread
            raise ArgumentError(f"mapped=True needs field {name!r} in native byte order; "
                                f"it is {array.dtype.str}")
        if not transfer.page_lock(array):
            raise ArgumentError(
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

    keep = {name: program.fields[name][0] for name in program.outputs}
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
            raise ArgumentError(f"mapped=True: stage output {name!r} did not land in the "
                                "mapped output (the stage is not a single map kernel)")
        outputs[name] = host
    stage_ms = {index: cupy.cuda.get_elapsed_time(begin, end) for index, begin, end in marks}
    return LoopResult(outputs, sources, stage_ms, {})
