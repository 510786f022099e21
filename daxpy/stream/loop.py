"""The chunk loop of a streamed pipeline run.

For each chunk, in order: take a free slot from the mover (the host waits
there only when every slot still has a chunk in flight), enqueue the copies of
the chunk's inputs, run the stages on its sub-grid, convert owned results to
their storage type if asked, and enqueue their copies into the whole outputs.
Everything of one chunk goes to its slot's stream, so chunks on different
slots overlap. See :mod:`daxpy.stream.streaming` for the user-facing side.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.stream.movers import NumpyMover
>>> from daxpy.stream.program import program_of
>>> from daxpy.stream.sizing import plan
>>> g = daxpy.UniformGrid(dims=(6,), point_data={"p": np.arange(6.0) ** 2})
>>> pipe = daxpy.pipeline(g); grad = pipe.gradient("p")
>>> prog = program_of(g, pipe.stages, [grad.name])
>>> run = stream_chunks(NumpyMover(2, "auto"), g, pipe.stages, prog, plan(g, prog, 2), {})
>>> run.outputs[grad.name][:, 0].tolist()
[1.0, 2.0, 4.0, 6.0, 8.0, 9.0]
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from ..data.decomposition import read_count
from ..engine.run import run_unit
from . import captured
from .transfer import storage_dtype, storage_error, to_storage


@dataclass
class LoopResult:
    """What :func:`stream_chunks` gives back.

    Attributes
    ----------
    outputs : dict of str to numpy.ndarray
        The whole outputs (pinned on the GPU path), in their storage dtype.
    sources : dict of str to daxpy.stream.movers.Source
        How each input was read.
    stage_ms : dict of int to float
        Per stage index, its time summed over the chunks.
    errors : dict of str to list
        Per lower-precision output, ``(max abs error, max abs value)`` per chunk.
    """

    outputs: dict
    sources: dict
    stage_ms: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)


def _units(stages, keep: dict, dataset, backend: str, fuse: bool) -> list:
    """Groups of stages run together: CUDA fuses chains of maps into one kernel
    (:func:`daxpy.cuda.pipeline_fusion.plan_units`); NumPy runs stages one by one."""
    if backend != "cuda":
        return [[stage] for stage in stages]
    from ..cuda.pipeline_fusion import plan_units

    return plan_units(stages, list(keep), dataset, fuse)


def run_stages_on(stages, dataset, keep: dict, backend: str, mark,
                  fuse: bool = True, unit_runner=None) -> tuple[dict, list]:
    """Run ``stages`` on one chunk; return its ``keep`` fields and per-unit time marks
    (a fused unit's time goes to its last stage).

    Intermediates that no later stage reads are dropped as soon as possible. On
    CUDA, ``unit_runner`` (default :func:`daxpy.engine.run.run_unit`) runs each
    unit (:class:`daxpy.stream.captured.Recorder` captures them).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"p": np.arange(3.0)})
    >>> pipe = daxpy.pipeline(g); m = pipe.gradient("p").magnitude()
    >>> out, marks = run_stages_on(pipe.stages, g, {m.name: "points"}, "cpu", lambda: 0)
    >>> out[m.name].tolist(), len(marks)
    ([1.0, 1.0, 1.0], 2)
    """
    remaining: dict[str, int] = {}
    for stage in stages:
        for name in stage.inputs:
            remaining[name] = remaining.get(name, 0) + 1
    working, marks = dataset, []
    for unit in _units(stages, keep, dataset, backend, fuse):
        begin = mark()
        if backend == "cuda":
            working, _ = (unit_runner or run_unit)(unit, working)
        else:
            configured = copy.copy(unit[0].filter)
            configured.backend = backend
            working = configured.apply(working)
        marks.append((unit[-1].index, begin, mark()))
        for name in (n for stage in unit for n in stage.inputs):
            remaining[name] -= 1
            if remaining[name] == 0 and name not in keep:
                for data in (working.point_data, working.cell_data):
                    data.pop(name, None)
    return {name: working.field(name, association)[0]
            for name, association in keep.items()}, marks


def _allocate(mover, dataset, program, storage: dict) -> dict:
    """Whole outputs; lower-precision ones as their 2-byte raw bits."""
    outputs = {}
    for name in program.outputs:
        association, dtype, comps = program.fields[name]
        rows = dataset.n_points if association == "points" else dataset.n_cells
        target = np.uint16 if storage.get(name) else dtype
        outputs[name] = mover.host_empty((rows,) + tuple(comps), target)
    return outputs


def stream_chunks(mover, dataset, stages, program, chunks, storage: dict,
                  fuse: bool = True, key=None, capture: bool = False,
                  timed: bool = True) -> LoopResult:
    """Run every chunk through ``mover``.

    Parameters
    ----------
    mover : daxpy.stream.movers.NumpyMover or CudaMover
    dataset : DataSet
        The whole source, with host fields.
    stages : list of daxpy.engine.stage.Stage
    program : daxpy.stream.program.Program
    chunks : list of daxpy.data.decomposition.Piece
        Built with their sub-grids (:mod:`daxpy.stream.chunks`).
    storage : dict of str to str
        Outputs to store in lower precision (``"float16"``/``"bfloat16"``).
    fuse : bool
        Fuse chains of maps into one kernel on the GPU (as whole-grid runs do).
    key : tuple, optional
        The run's key for CUDA graphs, given only to a run that
        :func:`daxpy.stream.captured.replayable` allows: chunks captured under it
        are replayed from their graphs (:mod:`daxpy.stream.captured`); None runs
        every chunk without graphs.
    capture : bool
        Capture the chunks not captured yet (the pipeline ran over the grid before).
    timed : bool
        Time each stage (two CUDA events a unit and chunk); False leaves
        ``stage_ms`` empty, for runs whose profile nobody reads.

    Returns
    -------
    LoopResult
    """
    raw = _allocate(mover, dataset, program, storage)
    sources = {name: mover.prepare(dataset.fields(association)[name])
               for name, association in program.reads.items()}
    keep = program.kept
    errors = {name: [] for name in storage}
    timeline: list = []
    held_entries: list = []
    mark = mover.mark if timed else _no_mark
    try:
        for chunk in chunks:
            slot = mover.slot(chunk.index)
            state = captured.lookup(chunk, key) if key is not None else captured.NEVER
            if isinstance(state, captured.Entry) and state.lock.acquire(blocking=False):
                held_entries.append(state)
                _replay(mover, state, chunk, slot, sources, program.reads, raw, keep,
                        timeline, mark)
                continue
            recorder = None
            if capture and captured.capturable(state):
                recorder = captured.Recorder(slot.stream, run_unit, chunk.grid._cache)
            fields = {"points": {}, "cells": {}}
            for name, association in program.reads.items():
                fields[association][name] = mover.upload(sources[name], name,
                                                         chunk.read(association), slot)
            data = chunk.grid.with_fields(fields["points"], fields["cells"])

            def run(data=data, chunk=chunk, slot=slot, recorder=recorder):
                results, marks = run_stages_on(stages, data, keep, mover.backend,
                                               lambda: mark(slot), fuse, recorder)
                timeline.extend(marks)
                if recorder is not None:
                    recorder.results = dict(results)
                pieces = {}
                for name, association in keep.items():
                    owned = chunk.keep(results[name], association)
                    if storage.get(name):
                        stored = to_storage(mover.xp, owned, storage[name])
                        errors[name].append(storage_error(mover.xp, owned, stored,
                                                          storage[name]))
                        owned = stored.view(mover.xp.uint16)
                    pieces[name] = owned
                return pieces

            pieces = mover.compute(slot, run)
            _copy_out(mover, chunk, slot, pieces, raw, keep)
            in_flight: list = []
            if recorder is not None:
                inputs = {n: fields[a][n] for n, a in program.reads.items()}
                in_flight = captured.finished_capture(chunk, key, recorder, inputs, state,
                                                      held_entries)
            mover.retire(slot, [data, pieces, in_flight], [chunk.grid])
        mover.finish()
    finally:
        if held_entries:
            # The entries (replayed, or captured by this run) are free for other
            # runs once every copy out is done.
            mover.finish()
            for entry in held_entries:
                entry.lock.release()
    stage_ms: dict[int, float] = {}
    for index, begin, end in timeline:
        if begin is not None:
            stage_ms[index] = stage_ms.get(index, 0.0) + mover.elapsed_ms(begin, end)
    outputs = {name: values.view(storage_dtype(storage[name])) if storage.get(name)
               else values for name, values in raw.items()}
    return LoopResult(outputs, sources, stage_ms, errors)


def _no_mark(_slot) -> None:
    return None


def _replay(mover, entry, chunk, slot, sources: dict, reads: dict, raw: dict, keep: dict,
            timeline: list, mark) -> None:
    """One chunk from its captured graphs: its inputs into the entry's buffers,
    each unit's graph between two time marks, its owned results out."""
    for name, association in reads.items():
        mover.upload(sources[name], name, chunk.read(association), slot,
                     into=entry.inputs[name])
    for index, graph in entry.units:
        begin = mark(slot)
        graph.launch(slot.stream)
        timeline.append((index, begin, mark(slot)))
    pieces = entry.owned
    if pieces is None:
        # Owned rows as the plain path takes them (a view, or a gather on the
        # slot's stream), from the results the graphs just wrote.
        with slot.stream:
            pieces = {name: chunk.keep(entry.results[name], association)
                      for name, association in keep.items()}
        if all(piece.base is not None and piece.flags.c_contiguous
               for piece in pieces.values()):
            # Contiguous views of the results: the same memory every replay.
            entry.owned = pieces
    _copy_out(mover, chunk, slot, pieces, raw, keep)
    mover.retire(slot, [pieces], [])


def _copy_out(mover, chunk, slot, pieces: dict, raw: dict, keep: dict) -> None:
    """Enqueue the copies of a chunk's owned results into their place in the outputs."""
    for name, piece in pieces.items():
        written = chunk.written(keep[name])
        if read_count(written):
            mover.download(piece, raw[name][written], slot)
