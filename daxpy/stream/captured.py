"""A streamed run's chunks replayed as CUDA graphs.

Each chunk of a streamed run costs the host about 0.2 ms of Python (its
sub-grid's fields, the engine's dispatch, the plan lookup, allocations),
more than the bus takes for a chunk of a 10M-point run: the GPU waited on
the host, and small runs could not be cut finer to shorten the first copy
in and the last copy out. What a chunk's stages enqueue depends only on the
chunk, the stages and the input dtypes, so from the second run of a
pipeline over a grid each chunk's units (:func:`~daxpy.cuda.pipeline_fusion.plan_units`)
are captured once into CUDA graphs, and later runs copy the chunk's inputs
into the same device buffers, launch the graphs and copy the same results
out: a few CUDA calls a chunk.

Safety, each for a reason:

- The first run of a chunk is never captured: it fills every cache the
  kernels read (device topology, plans, compiled modules), so a capture
  never leaves a cache holding memory no kernel wrote. A capture that adds
  an entry to the chunk grid's cache is dropped, entry included.
- Every allocation made while capturing is held by the entry, with the
  chunk grid's cached device objects and the input buffers: the graphs'
  pointers stay valid, whatever the caches later drop.
- Captures run on a stream of their own: a stage that needs the host
  (a check that reads a value back) fails its capture, the chunk is marked
  as never capturable, and the unit runs as before, so checks keep running.
- An entry is keyed by the stages (held, so their ids stay theirs), a
  snapshot of their filters' settings, the outputs kept and the inputs'
  dtypes; it lives in the chunk grid's device cache, so
  :func:`~daxpy.cuda.device.forget` and a changed source drop it.
- One run at a time uses an entry (its buffers); another thread's run of the
  same chunk takes the path without graphs.

Examples
--------
>>> eligible(None, chunks=[], storage={}, settings_graphs=True)
False
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cuda.device import _PREFIX

CAPTURED_RUN_BYTES = 512 << 20
"""Field bytes of a run (inputs and outputs) above which it is not captured: its
entries would hold all its chunks' device buffers between runs, and chunks of a
run that large are big enough that the host's time per chunk hides behind the
bus."""

KEYS_KEPT = 2
"""Pipelines (keys) whose graphs a chunk keeps, the oldest dropped first: each holds
its chunk's device buffers between runs, as a whole-grid run keeps its device
copies on the grid."""

_KEY = _PREFIX + "stream:captured"
SEEN, NEVER = "seen", "never"
"""A chunk's states before it has an :class:`Entry`: run once, or not capturable."""


def eligible(mover, chunks, storage: dict, settings_graphs: bool, run_bytes: int = 0) -> bool:
    """Whether a run's chunks may be replayed as graphs: the CUDA mover, every
    chunk's topology kept between runs, no lower-precision storage (its error
    report reads values back), and a run of at most :data:`CAPTURED_RUN_BYTES`.

    Examples
    --------
    >>> eligible(None, chunks=[], storage={}, settings_graphs=True)
    False
    """
    if not settings_graphs or storage or getattr(mover, "backend", None) != "cuda":
        return False
    if run_bytes > CAPTURED_RUN_BYTES:
        return False
    resident = mover.resident
    return resident is None or all(chunk.index in resident for chunk in chunks)


SNAPSHOT_ITEMS = 4096
"""Items of an array setting (a bias, a table) kept in a key; a larger one leaves
its pipeline's chunks uncaptured rather than compare it at every run."""


def _frozen(value: Any) -> Any:
    """A hashable, comparable image of a filter setting, or raise TypeError."""
    if isinstance(value, np.ndarray):
        if value.size > SNAPSHOT_ITEMS:
            raise TypeError("large array settings are not snapshotted")
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    hash(value)
    return value


def signature(stages, keep: dict, reads: dict, sources: dict) -> tuple | None:
    """What a chunk's captured graphs depend on besides the chunk, or None where
    a filter holds a setting that cannot be compared (an array).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"p": np.zeros(3)})
    >>> pipe = daxpy.pipeline(g); c = pipe.point_to_cell("p")
    >>> from daxpy.stream.movers import Source
    >>> s = signature(pipe.stages, {c.name: "cells"}, {"p": "points"},
    ...               {"p": Source(np.zeros(3), "host")})
    >>> s == signature(pipe.stages, {c.name: "cells"}, {"p": "points"},
    ...                {"p": Source(np.ones(3), "host")})
    True
    """
    try:
        filters = tuple((id(s), id(s.filter), type(s.filter).__name__,
                         _frozen(vars(s.filter))) for s in stages)
    except TypeError:
        return None
    inputs = tuple((name, np.dtype(sources[name].array.dtype).str,
                    tuple(sources[name].array.shape[1:])) for name in reads)
    return filters, tuple(sorted(keep.items())), inputs


@dataclass
class Entry:
    """One chunk's captured units and the device memory they read and write.

    Attributes
    ----------
    stages : list
        The stages captured (held, so the ids in the key stay theirs).
    inputs : dict of str to cupy.ndarray
        The device buffers the chunk's inputs are copied into.
    units : list of (int, cupy.cuda.Graph)
        Each unit's last stage index and its graph, in order.
    pieces : dict of str to cupy.ndarray
        The chunk's owned results, as the loop copies them out.
    held : list
        Allocations made while capturing, and the chunk grid's cached objects.
    """

    stages: list
    inputs: dict
    units: list = field(default_factory=list)
    pieces: dict = field(default_factory=dict)
    held: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Recorder:
    """Runs a chunk's units through capture, on the chunk's second run.

    Used as ``run_stages_on``'s ``unit_runner``: each unit is captured on a
    stream of its own, then its graph is launched on the slot's stream, so
    the run's results are the graphs' own.
    """

    def __init__(self, slot_stream, run_unit):
        import cupy

        self.cupy = cupy
        self.slot_stream = slot_stream
        self.run_unit = run_unit
        self.units: list = []
        self.allocations: list = []
        self.failed = False

    def _allocate(self, size: int):
        # From the slot stream's arena, not the capture stream's: the capture
        # stream is dropped, and the graphs run on the slot's stream.
        with self.slot_stream:
            memory = self.cupy.get_default_memory_pool().malloc(size)
        self.allocations.append(memory)
        return memory

    def __call__(self, unit, working):
        if self.failed:
            return self.run_unit(unit, working)
        stream = self.cupy.cuda.Stream(non_blocking=True)
        graph = None
        try:
            with self.cupy.cuda.using_allocator(self._allocate), stream:
                stream.begin_capture(self.cupy.cuda.runtime.streamCaptureModeRelaxed)
                try:
                    result = self.run_unit(unit, working)
                finally:
                    graph = _end_capture(self.cupy, stream)
        except Exception:  # noqa: BLE001 - a stage that needs the host: no graph
            graph = None
        if graph is None:
            # The unit's capture failed (it reads values back, or synchronizes):
            # run it as always, and never capture this chunk again.
            self.failed = True
            return self.run_unit(unit, working)
        graph.launch(self.slot_stream)
        self.units.append((unit[-1].index, graph))
        return result


def _end_capture(cupy, stream):
    """End ``stream``'s capture; its graph, or None if the capture was broken."""
    runtime = cupy.cuda.runtime
    try:
        return stream.end_capture()
    except Exception:  # noqa: BLE001 - invalidated: end it at the runtime's level
        try:
            handle = runtime.streamEndCapture(stream.ptr)
            if handle:
                runtime.graphDestroy(handle)
        except Exception:  # noqa: BLE001 - already ended
            pass
        return None


def lookup(chunk, key: tuple):
    """The chunk's state for ``key``: an :class:`Entry`, ``"seen"`` (one run
    done), ``"never"`` (not capturable) or None (first run).

    Examples
    --------
    >>> import daxpy
    >>> from daxpy.data.decomposition import Piece
    >>> lookup(Piece(0, grid=daxpy.UniformGrid(dims=(2,))), ("k",)) is None
    True
    """
    return (chunk.grid._cache.get(_KEY) or {}).get(key)


def store(chunk, key: tuple, state) -> None:
    """Set the chunk's state for ``key`` (:data:`KEYS_KEPT` keys are kept per chunk)."""
    table = chunk.grid._cache.setdefault(_KEY, {})
    table.pop(key, None)
    table[key] = state
    while len(table) > KEYS_KEPT:
        table.pop(next(iter(table)))


def finished_capture(chunk, key: tuple, recorder: Recorder, inputs: dict, pieces: dict,
                     stages, cache_before: set) -> list:
    """Keep what ``recorder`` captured for ``chunk``, or mark it never capturable;
    return what the slot must hold until the chunk's copies out are done (the
    graphs already launched read it).

    A capture that added entries to the chunk grid's cache (a device object
    built lazily while capturing) drops them, and the chunk is captured on a
    later run instead.
    """
    cache = chunk.grid._cache
    added = {k: cache.pop(k) for k in list(cache) if k not in cache_before and k != _KEY}
    in_flight = recorder.allocations + list(added.values())
    if recorder.failed:
        store(chunk, key, NEVER)
    elif added:
        store(chunk, key, SEEN)
    else:
        entry = Entry(list(stages), dict(inputs), list(recorder.units), dict(pieces))
        entry.held = recorder.allocations + [v for k, v in cache.items() if k != _KEY]
        store(chunk, key, entry)
    return in_flight
