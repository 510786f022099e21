"""Chunked, overlapped host->device->host runs of pipelines, in and out of core.

When a pipeline runs on the CUDA backend with host inputs and host outputs
(``pipe.run(backend="cuda")``, the default ``to="host"``), its grid is cut
into chunks (:mod:`daxpy.stream.chunks`): slabs with the pipeline's halo on
structured grids, cell ranges with their points on unstructured ones. Each
chunk's inputs are copied from page-locked host memory, its stages run, and
its owned results are copied straight into pinned output arrays, which are
returned as the NumPy fields of the result (no further copy). Chunks cycle
through a few CUDA streams, so the copies in, the kernels and the copies out
of neighbouring chunks overlap (:mod:`daxpy.stream.movers`).

The same chunking runs grids larger than the GPU: with ``max_device_bytes``
the chunks in flight, and the device topology kept between runs, together
stay under that many bytes of device memory (:mod:`daxpy.stream.sizing`): what
the budget leaves beside the chunks in flight keeps as many chunks' topology
as fit, the others' is freed after each chunk (without a budget every chunk's
stays cached for the next run, as the whole-grid runner keeps a grid's).
Results are bitwise those of the whole-grid run.

Settings (:func:`configure`, or keyword arguments of :func:`run_streamed`):

- ``chunk_bytes``: device working set of one chunk (default None: 64 MiB, or, on a
  uniform grid whose run's fields hold less than four times that, a quarter of them
  and at least 32 MiB; a structured run replayed from graphs, an eighth of its
  fields, at least 8 MiB: :func:`~daxpy.stream.sizing.chunk_target`);
- ``max_device_bytes``: device memory the run may use (default: no limit;
  environment variable ``DAXPY_MAX_DEVICE_BYTES``);
- ``streams``: chunks in flight (default 3);
- ``staging``: how inputs reach the device (:data:`daxpy.stream.transfer.STAGING_POLICIES`);
- ``storage``: ``"float16"`` or ``"bfloat16"`` (or ``{field: kind}``) to store
  floating outputs in 2 bytes, on request only; the profile reports the error;
- ``mapped``: one stage reading and writing host memory directly from its kernel
  (:mod:`daxpy.stream.mapped`), no chunks and no copies; a run of one stage on a
  uniform grid that ``max_device_bytes`` would cut into many small chunks is
  mapped without being asked;
- ``enabled``: False keeps pipelines on the whole-grid runner;
- ``graphs``: replay each chunk's kernels as CUDA graphs from a pipeline's second
  run over a grid, where the run is cut finer (:mod:`daxpy.stream.captured`;
  default True);
- ``geometry_cells``: input cells per chunk of a geometry filter (contour, slice,
  threshold, clip; :mod:`daxpy.stream.geometry_run`): by default whole grids, or,
  for a host-to-host GPU run under ``max_device_bytes``, as many as fit it.

Examples
--------
>>> import numpy as np, daxpy
>>> pipe = daxpy.pipeline(daxpy.UniformGrid(dims=(4, 4, 9),
...                                         point_data={"p": np.arange(144.0)}))
>>> grad = pipe.gradient("p")
>>> out, prof = run_streamed(pipe.dataset, pipe.stages, [grad.name], backend="cpu",
...                          chunk_bytes=2500)
>>> prof.chunks, out.point_data[grad.name][100].tolist()
(5, [1.0, 4.0, 16.0])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..data.arrays import is_device_array
from ..data.fingerprint import one_check_per_run
from ..errors import ArgumentError, DeviceMemoryError
from ..engine.backend import backend_for, resolve_backend
from ..engine.run import Profile, StageRecord, run_in_core
from . import captured
from .geometry_run import run_to_new_dataset
from .loop import stream_chunks
from .movers import make_mover
from .program import NotStreamable, position_dependent, program_of
# configure is documented here, with the settings it changes.
from .settings import Settings, configure, current_settings, replaced_settings  # noqa: F401
from .sizing import chunk_target, field_bytes, plan_within
from .transfer import STORAGE_KINDS, storage_dtype


@dataclass
class StreamProfile(Profile):
    """A pipeline :class:`~daxpy.engine.run.Profile` plus what streaming did.

    Attributes
    ----------
    chunks : int
        Chunks the grid was cut into.
    streams : int
        Chunks in flight: the settings' ``streams``, or fewer where the device
        budget cannot hold that many.
    depth : int
        Halo layers (structured) or neighbour rings + 1 (unstructured).
    inputs : dict of str to str
        How each input reached the device (``registered``, ``staged``...).
    storage_error : dict of str to dict
        Per lower-precision output: ``max_abs_error``, ``max_abs`` and their ratio.
    """

    chunks: int = 0
    streams: int = 0
    depth: int = 0
    inputs: dict = field(default_factory=dict)
    storage_error: dict = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [super().__str__(), f"streamed in {self.chunks} chunk(s) on {self.streams} "
                 f"stream(s), depth {self.depth}; "
                 f"inputs: {self.inputs}"]
        for name, err in self.storage_error.items():
            lines.append(f"{name} stored as {err['storage']}: max |error| "
                         f"{err['max_abs_error']:.3g} (relative {err['relative']:.3g})")
        return "\n".join(lines)




def _plan_in_flight(dataset, program, settings: Settings, replayed: bool = False) -> tuple:
    """The chunk plan and the chunks in flight it runs with: the settings' ``streams``,
    or fewer where ``max_device_bytes`` cannot hold that many of the smallest chunks
    (one stream runs slower, with no copy beside a kernel, but runs). A run to be
    ``replayed`` from CUDA graphs may be cut finer (:func:`chunk_target`)."""
    streams = max(int(settings.streams), 1)
    target = chunk_target(dataset, program, settings.chunk_bytes, replayed)
    while True:
        try:
            return plan_within(dataset, program, target,
                               settings.max_device_bytes, streams), streams
        except DeviceMemoryError:
            if streams == 1:
                raise
            streams -= 1


def _mapped_instead(dataset, stages, program, storage: dict, backend: str, n_chunks: int):
    """The run as one mapped kernel where its chunks would cost more host work than
    the bus takes (:func:`~daxpy.stream.mapped.maps_instead`), else None."""
    if storage or backend != "cuda":
        return None
    from .mapped import NotMapped, maps_instead, run_mapped

    if not maps_instead(dataset, stages, n_chunks):
        return None
    try:
        return run_mapped(dataset, stages, program)
    except NotMapped:  # an input not mappable in place, a stage of several kernels
        return None


def _graph_key(dataset, stages, program, settings: Settings, backend: str, fuse: bool,
               storage: dict):
    """The run's key for CUDA graphs (the device, whether maps fuse, and
    :func:`daxpy.stream.captured.signature`), or None where it is not
    :func:`~daxpy.stream.captured.replayable`."""
    if not captured.replayable(settings.graphs, backend, settings.max_device_bytes is not None,
                               storage, field_bytes(dataset, program)):
        return None
    import cupy

    inputs = {name: dataset.fields(association)[name]
              for name, association in program.reads.items()}
    key = captured.signature(stages, program.kept, program.reads, inputs)
    # Graphs and their buffers belong to the device they were captured on; a run
    # without fusion launches other kernels (and times each stage on its own).
    return None if key is None else (cupy.cuda.Device().id, bool(fuse)) + key


def _storage(settings: Settings, program) -> dict:
    """Outputs to store in lower precision: floating outputs the settings name."""
    kinds = {}
    for name in program.outputs:
        kind = settings.storage
        if isinstance(kind, dict):
            kind = kind.get(name)
        if kind is None:
            continue
        if kind not in STORAGE_KINDS:
            raise ArgumentError(f"storage must be one of {STORAGE_KINDS}, got {kind!r}")
        storage_dtype(kind)  # bfloat16 needs ml_dtypes: say so before any work
        if program.fields[name][1].kind == "f":
            kinds[name] = kind
    return kinds


def _error_report(errors: dict, storage: dict) -> dict:
    report = {}
    for name, found in errors.items():
        worst = max((float(e) for e, _ in found), default=0.0)
        top = max((float(t) for _, t in found), default=0.0)
        report[name] = {"storage": storage[name], "max_abs_error": worst, "max_abs": top,
                        "relative": worst / top if top else 0.0}
    return report


def _stage_bytes(dataset, program, stage) -> int:
    """Bytes of a stage's inputs and output over the whole grid."""
    total = 0
    for name in stage.inputs + (stage.output,):
        if name in program.fields:
            association, dtype, comps = program.fields[name]
            rows = dataset.n_points if association == "points" else dataset.n_cells
            total += rows * dtype.itemsize * math.prod(comps)
        elif name in program.reads:
            total += int(dataset.fields(program.reads[name])[name].nbytes)
    return total


def run_streamed(dataset, stages, wanted, backend: str = "cuda", fuse: bool = True,
                 **overrides):
    """Run ``stages`` over ``dataset`` chunk by chunk; return ``(dataset, StreamProfile)``.

    Parameters
    ----------
    dataset : DataSet
        The source, with host (NumPy) fields.
    stages : list of daxpy.engine.stage.Stage
    wanted : list of str
        Fields to return: stage outputs (in pinned memory on the GPU) or
        source fields (returned as they are).
    backend : {"cuda", "cpu"}
        Where the chunks run (``"cpu"`` runs the same loop with NumPy).
    fuse : bool
        Fuse chains of maps into one kernel per chunk (CUDA), as whole-grid runs do.
    **overrides
        Settings for this run (see the module docstring).

    Raises
    ------
    NotStreamable
        For a pipeline with a map whose values depend on their position in
        the field (it must run on the whole grid).
    DeviceMemoryError
        If ``max_device_bytes`` cannot hold the smallest chunks, even one in flight.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(5, 5), point_data={"p": np.arange(25.0)})
    >>> pipe = daxpy.pipeline(g); c = pipe.point_to_cell("p")
    >>> out, _ = run_streamed(g, pipe.stages, [c.name], backend="cpu", chunk_bytes=64)
    >>> out.cell_data[c.name].tolist()[:3]
    [3.0, 4.0, 5.0]
    """
    settings = replaced_settings(current_settings(), overrides)
    if backend not in ("cpu", "cuda"):
        raise ArgumentError(f"backend must be 'cpu' or 'cuda', got {backend!r}")
    program = program_of(dataset, stages, wanted)
    if not program.position_free:
        raise NotStreamable(position_dependent("in chunks"))
    return _run_program(dataset, stages, program, settings, backend, fuse)


def _run_program(dataset, stages, program, settings: Settings, backend: str, fuse: bool,
                 timed: bool = True):
    """:func:`run_streamed` of a streamable ``program`` (``timed``: time its stages)."""
    storage = _storage(settings, program)
    profile = StreamProfile(backend=backend, depth=program.depth)
    if settings.mapped:
        from .mapped import run_mapped

        if storage or backend != "cuda":
            raise ArgumentError("mapped=True runs on the CUDA backend, without storage")

        run = run_mapped(dataset, stages, program)
        profile.chunks = 1
    else:
        key = _graph_key(dataset, stages, program, settings, backend, fuse, storage)
        ran = captured.ran_before(dataset, key)
        found, streams = _plan_in_flight(dataset, program, settings, replayed=ran)
        run = _mapped_instead(dataset, stages, program, storage, backend, len(found.chunks))
        if run is not None:
            profile.chunks = 1
        else:
            mover = make_mover(backend, streams, settings.staging, found.resident)
            run = stream_chunks(mover, dataset, stages, program, found.chunks, storage, fuse,
                                key, capture=ran, timed=timed)
            captured.mark_ran(dataset, key)
            profile.chunks, profile.peak_bytes = len(found.chunks), mover.peak_bytes
            profile.streams = streams
    profile.uploads, profile.downloads = len(run.sources), len(run.outputs)
    profile.inputs = {name: source.mode for name, source in run.sources.items()}
    profile.storage_error = _error_report(run.errors, storage)
    for stage in stages:
        profile.stages.append(StageRecord(stage.index, stage.verb, stage.output,
                                          run.stage_ms.get(stage.index, 0.0),
                                          _stage_bytes(dataset, program, stage)))
    result = dataset.with_fields()
    for data in (result.point_data, result.cell_data):
        for name in list(data):
            if name not in program.passed:
                del data[name]
    for name, values in run.outputs.items():
        result.fields(program.fields[name][0])[name] = values
    return result, profile


def wants_streaming(dataset, stages) -> bool:
    """Whether a CUDA run to the host should stream: streaming is enabled, there
    are stages, and every field they read is a host array.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"p": np.zeros(2)})
    >>> pipe = daxpy.pipeline(g); _ = pipe.gradient("p")
    >>> wants_streaming(g, pipe.stages), wants_streaming(g, [])
    (True, False)
    """
    if not stages or not current_settings().enabled:
        return False
    produced = {s.output for s in stages}
    for stage in stages:
        for name in stage.inputs:
            if name not in produced and is_device_array(dataset.field(name)[0]):
                return False
    return True


def stream_or_none(dataset, stages, wanted, fuse: bool = True, timed: bool = True):
    """:func:`run_streamed` on the GPU, or None where the pipeline cannot stream
    (the caller then runs it on the whole grid, which reports any error);
    ``timed=False`` leaves the stages' times out of its profile.

    Examples
    --------
    >>> callable(stream_or_none)
    True
    """
    if not wants_streaming(dataset, stages):
        return None
    try:
        program = program_of(dataset, stages, wanted)
    except NotStreamable:  # the whole-grid run reports any real error itself
        return None
    if not program.position_free:
        return None
    return _run_program(dataset, stages, program, current_settings(), "cuda", fuse, timed)


def run_stages(dataset, stages, wanted, backend: str, to: str,
               fuse: bool = True, concurrent: bool = True, timed: bool = True):
    """Run ``stages`` over ``dataset``; return ``(outputs dataset, Profile)``.

    Host inputs to host outputs on the CUDA backend stream in chunks where the
    pipeline can (:func:`stream_or_none`); every other run, and a pipeline that
    cannot stream, runs on the whole grid (:func:`daxpy.engine.run.run_in_core`,
    which also says what ``fuse`` and ``concurrent`` do). ``timed=False`` lets a
    streamed run skip its stages' timing events (the caller drops the profile).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"p": np.arange(3.0) ** 2})
    >>> pipe = daxpy.pipeline(g); grad = pipe.gradient("p")
    >>> out, _ = run_stages(g, pipe.stages, [grad.name], "cpu", "host")
    >>> out.point_data[grad.name][:, 0].tolist()
    [1.0, 2.0, 3.0]
    """
    # The grid's arrays are fingerprinted once a run, not at each cache lookup.
    with one_check_per_run():
        backend = backend_for(dataset, backend)
        if stages and getattr(stages[-1].filter, "makes_dataset", False):
            return run_to_new_dataset(dataset, stages, backend, to, fuse, concurrent)
        if to == "host" and resolve_backend(backend) == "cuda":
            # Host inputs to host outputs: chunked, overlapped copies.
            streamed = stream_or_none(dataset, stages, list(wanted), fuse, timed)
            if streamed is not None:
                return streamed
        return run_in_core(dataset, stages, wanted, backend, to, fuse, concurrent)
