"""Executing a pipeline's stages: residency, release, streams and profiling.

The CPU backend runs stages in build order (a fused chain when its last stage
comes), a chain of elementwise maps as one fused kernel
(:mod:`daxpy.engine.cpu_fusion`). The CUDA backend uploads each
input field once, gives every branch of the graph its own CUDA stream (a stage
that continues its only parent's chain stays on the parent's stream), orders
streams with events where a stage reads another stream's output, and frees each
intermediate after its last reader.

Examples
--------
>>> print(Profile(backend="cpu"))
stage  verb  output  time_ms  bytes
(no stages)
transfers: 0 host->device, 0 device->host; peak memory: 0 bytes
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

from ..data.arrays import is_device_array, to_host
from .backend import resolve_backend
from .stage import configured
from ..errors import ArgumentError


@dataclass
class StageRecord:
    """What one stage cost: its time, the bytes it read and wrote."""

    index: int
    verb: str
    output: str
    time_ms: float
    bytes_moved: int


@dataclass
class Profile:
    """Per-stage costs of one pipeline run, printable as a table.

    Attributes
    ----------
    backend : str
        ``"cpu"`` or ``"cuda"``.
    stages : list of StageRecord
        In execution order. CUDA times come from events on each stage's stream.
    uploads, downloads : int
        Host->device and device->host field transfers.
    peak_bytes : int
        Peak memory of the run: device memory-pool use at stage boundaries on
        CUDA; on the CPU, the most bytes of fields the run had made and not yet
        released at a stage boundary (counted from the run's own arrays, not
        with tracemalloc, which is process-global: starting and stopping it
        while other threads allocate crashed CPython).
    device_ms : float or None
        CUDA only: from the moment the inputs are on the device to the end of
        the last kernel, across all streams (the device-side makespan, which
        overlapping branches shorten). None on the CPU.
    """

    backend: str
    stages: list[StageRecord] = field(default_factory=list)
    uploads: int = 0
    downloads: int = 0
    peak_bytes: int = 0
    device_ms: float | None = None

    def __str__(self) -> str:
        rows = [f"{'stage':>5}  {'verb':<14}  {'output':<20}  {'time_ms':>9}  {'bytes':>13}"
                if self.stages else "stage  verb  output  time_ms  bytes"]
        rows += [f"{r.index:>5}  {r.verb:<14}  {r.output:<20}  {r.time_ms:>9.3f}  "
                 f"{r.bytes_moved:>13,}" for r in self.stages]
        if not self.stages:
            rows.append("(no stages)")
        rows.append(f"transfers: {self.uploads} host->device, {self.downloads} "
                    f"device->host; peak memory: {self.peak_bytes:,} bytes")
        if self.device_ms is not None:
            rows.append(f"device time (all streams): {self.device_ms:.3f} ms")
        return "\n".join(rows)


def _readers(stages, wanted) -> dict[str, int]:
    outputs = {s.output for s in stages}
    counts = {name: 0 for name in outputs if name not in wanted}
    for stage in stages:
        for name in stage.inputs:
            if name in counts:
                counts[name] += 1
    return counts


def _nbytes(dataset, names) -> int:
    # A gradient stage asked only for derived quantities never writes its own
    # output name: count the fields that exist.
    return sum(int(data[name].nbytes) for name in names
               for data in (dataset.point_data, dataset.cell_data) if name in data)


def _release(dataset, name: str) -> None:
    for data in (dataset.point_data, dataset.cell_data):
        if name in data:
            del data[name]


def _select(dataset, wanted, to: str, profile: Profile):
    result = dataset.with_fields()
    for data in (result.point_data, result.cell_data):
        for name in list(data):
            if name not in wanted:
                del data[name]
            elif to == "host" and is_device_array(data[name]):
                data[name] = to_host(data[name])
                profile.downloads += 1
    return result


def run_in_core(dataset, stages, wanted, backend: str, to: str,
                fuse: bool = True, concurrent: bool = True):
    """Run ``stages`` over the whole of ``dataset`` at once; return ``(outputs dataset, Profile)``.

    Host data on the CUDA backend is copied up whole; the runner that streams
    it in chunks where it can is :func:`daxpy.stream.streaming.run_stages`.
    ``fuse=False`` runs every stage as its own kernel(s); otherwise
    :mod:`daxpy.cuda.pipeline_fusion` groups them, and chains of elementwise
    maps run as one kernel on the CPU too (:mod:`daxpy.engine.cpu_fusion`).
    ``concurrent=False`` puts every CUDA kernel on one stream, in build order.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"p": np.ones(2)})
    >>> out, prof = run_in_core(g, [], ["p"], "cpu", "host")
    >>> list(out.point_data), prof.uploads
    (['p'], 0)
    """
    resolved = resolve_backend(backend)
    if resolved == "cpu" and to == "device":
        raise ArgumentError("to='device' needs the CUDA backend")
    if resolved == "cuda":
        from ..cuda.memory import guarded

        # Out of device memory anywhere in the run (its uploads included) is a
        # DeviceMemoryError that leaves nothing the run allocated or cached.
        what = "+".join(dict.fromkeys(s.verb for s in stages)) or "pipeline"
        return guarded(_run_cuda, dataset, what, dataset, stages, list(wanted), to, fuse,
                       concurrent)
    return _run_cpu(dataset, stages, list(wanted), to, fuse)


def _run_cpu(dataset, stages, wanted, to, fuse):
    from .cpu_fusion import cpu_units, run_piece

    profile = Profile(backend="cpu")
    readers = _readers(stages, wanted)
    working = dataset.with_fields()
    source = {id(v) for d in (dataset.point_data, dataset.cell_data) for v in d.values()}
    for unit in cpu_units(stages, wanted, dataset, fuse):
        while unit:
            # A piece is a chain of maps fused into one kernel, or a single stage.
            start = time.perf_counter()
            working, ran = run_piece(unit, working)
            elapsed = (time.perf_counter() - start) * 1e3
            unit = unit[len(ran):]
            last = ran[-1]
            # A fused chain's intermediates were never stored: only fields that exist count.
            moved = _nbytes(working, tuple(dict.fromkeys(n for s in ran for n in s.inputs))
                            + (last.output,))
            profile.stages.append(StageRecord(last.index, "+".join(s.verb for s in ran),
                                              last.output, elapsed, moved))
            # Fields the run made, at the moment they are most (before releases).
            held = sum(int(v.nbytes) for d in (working.point_data, working.cell_data)
                       for v in d.values() if id(v) not in source)
            profile.peak_bytes = max(profile.peak_bytes, held)
            for name in (n for stage in ran for n in stage.inputs):
                if name in readers:
                    readers[name] -= 1
                    if readers[name] == 0:
                        _release(working, name)
    return _select(working, wanted, to, profile), profile


def run_unit(unit, working):
    """Run one unit of :func:`daxpy.cuda.pipeline_fusion.plan_units`: a fused
    chain as one kernel, or a single stage through its filter. Returns the
    new working dataset and the name of the field written."""
    from ..cuda.fusion import run_chain
    from ..cuda.pipeline_fusion import unit_chain

    first = unit[0]
    source = first.inputs[0]
    values, association = working.field(source, first.filter.reads().get(source))
    chain = unit_chain(unit, working, association)
    if chain is None or len(chain[0]) == 1:
        (stage,) = unit
        return configured(stage, "cuda").apply(working), stage.output
    # A fused chain skips the filters' compute(): apply the first one's NaN policy.
    values = first.filter.checked(source, values)
    steps, output, where = chain
    result = run_chain(working, values, association, steps)
    new = {"point_data" if where == "points" else "cell_data": {output: result}}
    return working.with_fields(**new), output


BRANCH_STREAMS = 32
"""Streams a CUDA run spreads its branches over (reused across runs): enough to
overlap seed 000's 30 parallel BiasAdds; more branches share them in turn."""
_STREAMS: dict[int, list] = {}


def _branch_streams() -> list:
    # Creating a CUDA stream per branch per run costs more host time than a
    # small kernel runs, so each device keeps one pool for every run.
    import cupy

    device = cupy.cuda.Device().id
    if device not in _STREAMS:
        _STREAMS[device] = [cupy.cuda.Stream(non_blocking=True) for _ in range(BRANCH_STREAMS)]
    return _STREAMS[device]


def _run_cuda(dataset, stages, wanted, to, fuse=True, concurrent=True):
    import cupy

    from ..cuda.device import to_device
    from ..cuda.pipeline_fusion import plan_units

    profile = Profile(backend="cuda")
    readers = _readers(stages, wanted)
    working = dataset.with_fields()
    produced = {s.output for s in stages}
    pool = cupy.get_default_memory_pool()
    # Each input field crosses to the device once; every stage then reads the
    # device copy cached on the dataset.
    declared = {n: a for s in stages for n, a in s.filter.reads().items()}
    for name in dict.fromkeys(n for s in stages for n in s.inputs if n not in produced):
        values, association = working.field(name, declared.get(name))
        if not is_device_array(values):
            profile.uploads += 1
        working.fields(association)[name] = to_device(values, dataset)
    # Device inputs may still be being written on the caller's stream (and the
    # uploads above ran there): every stream of the run starts after them.
    inputs_ready = cupy.cuda.Event()
    inputs_ready.record()
    streams, events, timings = {}, {}, []
    home = {}  # field name -> stream that allocated it
    continued = set()
    branches = _branch_streams()
    opened = itertools.count(1)  # branch streams taken so far, round robin
    serial = None if concurrent else branches[0]
    if serial is not None:
        serial.wait_event(inputs_ready)
    # A unit is a chain of stages fused into one kernel, or a single stage.
    for unit in plan_units(stages, wanted, dataset, fuse):
        first, last = unit[0], unit[-1]
        parent = first.depends_on[0] if len(first.depends_on) == 1 else None
        if serial is not None:
            stream = serial
        elif parent is not None and parent not in continued:
            stream = streams[parent]
            continued.add(parent)
        else:
            stream = branches[next(opened) % len(branches)]
            stream.wait_event(inputs_ready)
        for stage in unit:
            streams[stage.index] = stream
        for dep in first.depends_on:
            if streams[dep] is not stream:
                stream.wait_event(events[dep])
        with stream:
            begin = cupy.cuda.Event()
            begin.record(stream)
            working, output = run_unit(unit, working)
            end = cupy.cuda.Event()
            end.record(stream)
        events[last.index] = end
        home[output] = stream
        timings.append((last.index, "+".join(s.verb for s in unit), output, begin, end,
                        _nbytes(working, first.inputs + (output,))))
        profile.peak_bytes = max(profile.peak_bytes, pool.used_bytes())
        for name in (n for stage in unit for n in stage.inputs):
            if name in readers:
                readers[name] -= 1
                if readers[name] == 0:
                    # The pool may hand the block to the allocating stream's next
                    # kernel: make that stream wait for this last reader first.
                    # (Fields fused away inside a unit were never allocated.)
                    if name in home and home[name] is not stream:
                        home[name].wait_event(end)
                    _release(working, name)
    # The one place the host waits for the device: timings and outputs need it.
    for stream in set(streams.values()):
        stream.synchronize()
    for index, verb, output, begin, end, moved in timings:
        profile.stages.append(StageRecord(index, verb, output,
                                          cupy.cuda.get_elapsed_time(begin, end), moved))
    if timings:
        profile.device_ms = max(cupy.cuda.get_elapsed_time(inputs_ready, t[4]) for t in timings)
    return _select(working, wanted, to, profile), profile
