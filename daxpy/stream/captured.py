"""A streamed run's chunks replayed as CUDA graphs.

Each chunk of a streamed run costs the host about 0.2 ms of Python (its
sub-grid's fields, the engine's dispatch, the plan lookup, allocations),
more than the bus takes for a chunk of a 10M-point run: the GPU waited on
the host, and small runs could not be cut finer to shorten the first copy
in and the last copy out. What a chunk's stages enqueue depends only on the
chunk, the stages and the input dtypes, so from the second run of a pipeline
over a grid (the same stages, or a new pipeline of the same ones, as repeated
filter calls make) each chunk's units
(:func:`~daxpy.cuda.pipeline_fusion.plan_units`) are captured once into CUDA
graphs, and later runs copy the chunk's inputs into the same device buffers,
launch the graphs and copy the owned rows of the same results out: a few CUDA
calls a chunk.

Safety, each for a reason:

- A pipeline's first run over a grid is never captured: it compiles and loads
  the kernels and fills the caches they read. A capture that adds an entry to
  the chunk grid's cache (a device object built lazily while capturing, which
  its graph then wrote) keeps the entry but not the graphs, which would build
  it again at every replay; the chunk is captured on a later run
  (:data:`CAPTURE_TRIES` times at most).
- Every allocation made while capturing is held by the entry, with the
  chunk grid's cached device objects, the parameter arrays
  (:func:`~daxpy.cuda.device.constants`) and the input buffers: the graphs'
  pointers stay valid, whatever the caches later drop.
- Captures run on a stream of their own: a stage that needs the host
  (a check that reads a value back) fails its capture, what it cached while
  capturing (never written) is dropped, the chunk is marked as never
  capturable, and the unit runs as before, so checks keep running.
- An entry is keyed by what the stages are (verbs, fields, filter types and a
  snapshot of their settings), the outputs kept, the inputs' dtypes, the device
  and whether maps fuse; it lives in the chunk grid's device cache, so
  :func:`~daxpy.cuda.device.forget` and a changed source drop it.
- One run at a time uses an entry (its buffers); another thread's run of the
  same chunk takes the path without graphs.

Examples
--------
>>> replayable(True, "cuda", budgeted=True, storage={}, run_bytes=1)
False
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cuda.device import _PREFIX, constants, drop_constants

CAPTURED_RUN_BYTES = 512 << 20
"""Field bytes of a run (inputs and outputs) above which it is not captured: its
entries would hold all its chunks' device buffers between runs, and chunks of a
run that large are big enough that the host's time per chunk hides behind the
bus."""

KEYS_KEPT = 2
"""Pipelines (keys) whose graphs a chunk keeps, the oldest dropped first: each holds
its chunk's device buffers between runs, as a whole-grid run keeps its device
copies on the grid."""

CAPTURE_TRIES = 2
"""Captures of a chunk dropped for building a cache before the chunk is run
without graphs for good."""

_KEY = _PREFIX + "stream:captured"
_RAN = _PREFIX + "stream:ran"
_TABLES = threading.Lock()
"""Held while a chunk's table of entries or a grid's runs are changed: threads
running pipelines over one grid change them at once (one thread's eviction of the
oldest key raced another's)."""
NEVER = "never"
"""A chunk's state once a capture failed: it runs without graphs."""


def replayable(asked: bool, backend: str, budgeted: bool, storage: dict,
               run_bytes: int) -> bool:
    """Whether a streamed run may be replayed from graphs: ``asked`` for, on
    CUDA, without a device budget (its chunks free their topology between runs,
    and an entry holds its chunk's buffers), without lower-precision storage (its
    conversion and error report run outside the graphs), and of at most
    :data:`CAPTURED_RUN_BYTES` of fields.

    Examples
    --------
    >>> replayable(True, "cuda", False, {}, 1 << 20), replayable(True, "cpu", False, {}, 1)
    (True, False)
    """
    return (asked and backend == "cuda" and not budgeted and not storage
            and run_bytes <= CAPTURED_RUN_BYTES)


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


def signature(stages, keep: dict, reads: dict, inputs: dict) -> tuple | None:
    """What a chunk's captured graphs depend on besides the chunk: the stages (verb,
    fields, filter type and settings), the outputs kept and the input arrays'
    dtypes and shapes; None where a filter holds a setting that cannot be
    compared (a large array).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"p": np.zeros(3)})
    >>> def key(values):
    ...     pipe = daxpy.pipeline(g); c = pipe.point_to_cell("p")
    ...     return signature(pipe.stages, {c.name: "cells"}, {"p": "points"}, {"p": values})
    >>> key(np.zeros(3)) == key(np.ones(3)), key(np.zeros(3)) == key(np.zeros(3, np.float32))
    (True, False)
    """
    try:
        described = tuple((s.verb, s.inputs, s.output, s.depends_on,
                           type(s.filter).__module__, type(s.filter).__qualname__,
                           _frozen(vars(s.filter))) for s in stages)
    except TypeError:
        return None
    arrays = tuple((name, np.dtype(inputs[name].dtype).str, tuple(inputs[name].shape[1:]))
                   for name in reads)
    return described, tuple(sorted(keep.items())), arrays


def ran_before(dataset, key) -> bool:
    """Whether a run of ``key`` over ``dataset`` (or a dataset sharing its grid's
    cache) finished before.

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.UniformGrid(dims=(2,))
    >>> ran_before(g, ("k",)), mark_ran(g, ("k",)), ran_before(g, ("k",))
    (False, None, True)
    """
    return key is not None and key in dataset._cache.get(_RAN, ())


def mark_ran(dataset, key) -> None:
    """Note that a run of ``key`` over ``dataset`` finished (the latest few kept).

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.UniformGrid(dims=(2,))
    >>> mark_ran(g, ("k",)); ran_before(g, ("k",)), ran_before(g, ("other",))
    (True, False)
    """
    if key is None:
        return
    with _TABLES:
        ran = dataset._cache.setdefault(_RAN, {})
        ran.pop(key, None)
        ran[key] = True
        while len(ran) > 4 * KEYS_KEPT:
            ran.pop(next(iter(ran)))


@dataclass
class Entry:
    """One chunk's captured units and the device memory they read and write.

    Attributes
    ----------
    inputs : dict of str to cupy.ndarray
        The device buffers the chunk's inputs are copied into.
    units : list of (int, cupy.cuda.Graph)
        Each unit's last stage index and its graph, in order.
    results : dict of str to cupy.ndarray
        The chunk's whole results (the graphs write them); the loop copies their
        owned rows out.
    held : list
        Allocations made while capturing, and the chunk grid's cached objects.
    owned : dict of str to cupy.ndarray, optional
        The owned rows of ``results``, once found to be contiguous views of them
        (the loop copies them out as they are at every replay).
    """

    inputs: dict
    units: list = field(default_factory=list)
    results: dict = field(default_factory=dict)
    held: list = field(default_factory=list)
    owned: dict | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class Recorder:
    """Runs a chunk's units through capture.

    Used as ``run_stages_on``'s ``unit_runner``: each unit is captured on a
    stream of its own, then its graph is launched on the slot's stream, so
    the run's results are the graphs' own. ``cache`` is the chunk grid's.

    Examples
    --------
    >>> callable(Recorder)  # needs a GPU: see tests/test_captured_runs.py
    True
    """

    def __init__(self, slot_stream, run_unit, cache: dict):
        import cupy

        self.cupy = cupy
        self.slot_stream = slot_stream
        self.run_unit = run_unit
        self.cache = cache
        self.cache_before = set(cache)
        self.units: list = []
        self.results: dict = {}
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
        keys, params = set(self.cache), set(constants())
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
            # The unit's capture failed (it reads values back, or synchronizes).
            # What it cached was never written: drop it, run the unit as always,
            # and never capture this chunk again.
            for key in [k for k in list(self.cache) if k not in keys]:
                self.cache.pop(key, None)
            drop_constants([k for k in constants() if k not in params])
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
    """The chunk's state for ``key``: an :class:`Entry`, :data:`NEVER`, or the
    number of captures dropped so far (0: none tried).

    Examples
    --------
    >>> import daxpy
    >>> from daxpy.data.decomposition import Piece
    >>> lookup(Piece(0, grid=daxpy.UniformGrid(dims=(2,))), ("k",))
    0
    """
    return (chunk.grid._cache.get(_KEY) or {}).get(key, 0)


def capturable(state) -> bool:
    """Whether a chunk in ``state`` is to be captured on a run that may capture.

    Examples
    --------
    >>> capturable(0), capturable(NEVER), capturable(CAPTURE_TRIES)
    (True, False, False)
    """
    return isinstance(state, int) and state < CAPTURE_TRIES


def store(chunk, key: tuple, state) -> None:
    """Set the chunk's state for ``key`` (:data:`KEYS_KEPT` keys are kept per chunk).

    Examples
    --------
    >>> import daxpy
    >>> from daxpy.data.decomposition import Piece
    >>> chunk = Piece(0, grid=daxpy.UniformGrid(dims=(2,)))
    >>> for key in ("a", "b", "c"):
    ...     store(chunk, (key,), NEVER)
    >>> lookup(chunk, ("a",)), lookup(chunk, ("c",))
    (0, 'never')
    """
    with _TABLES:
        table = chunk.grid._cache.setdefault(_KEY, {})
        table.pop(key, None)
        table[key] = state
        while len(table) > KEYS_KEPT:
            table.pop(next(iter(table)))


def finished_capture(chunk, key: tuple, recorder: Recorder, inputs: dict, state: int,
                     held: list) -> list:
    """Keep what ``recorder`` captured for ``chunk``, or mark it never capturable;
    return what the slot must hold until the chunk's copies out are done (the
    graphs already launched read it).

    A new entry is stored locked and appended to ``held``: the run that captured
    it still copies its results out, so another thread's run must not replay it
    into the same buffers until that run releases it.

    A capture that added entries to the chunk grid's cache (a device object
    built lazily while capturing, written when its graph ran) keeps them but
    not the graphs, which would build them again at every replay: the chunk is
    captured again on its next run, :data:`CAPTURE_TRIES` times at most.

    Examples
    --------
    >>> callable(finished_capture)  # needs a GPU: see tests/test_captured_runs.py
    True
    """
    added = [k for k in list(recorder.cache) if k not in recorder.cache_before
             and k not in (_KEY, _RAN)]
    if recorder.failed:
        store(chunk, key, NEVER)
    elif added:
        store(chunk, key, state + 1)
    else:
        entry = Entry(dict(inputs), list(recorder.units), dict(recorder.results))
        # Everything the graphs may read: what they allocated, the chunk grid's
        # cached device objects, the parameter arrays (their cache may drop them).
        entry.held = (recorder.allocations + list(constants().values())
                      + [v for k, v in list(recorder.cache.items()) if k not in (_KEY, _RAN)])
        entry.lock.acquire()
        held.append(entry)
        store(chunk, key, entry)
    return recorder.allocations
