"""Host-to-host implementations of the end-to-end and Dax-study cases.

Each implementation takes a :class:`Setup` (one case on one grid, with a host
float32 field) and returns a zero-argument ``run`` that computes the case from
the host field to a host result and returns ``(result, kernel_ms)``
(``kernel_ms`` None for CPU implementations and transfer floors). ``Absent``
says an implementation does not cover a case (the row is marked absent).

- CPU: ``vtk-seq``, ``vtk-stdthread`` (VTK's SMP backends), ``viskores`` (the
  ``vtkm*`` filters in the VTK wheel), ``daxpy-cpu`` (the filter call on the
  CPU backend, so that a machine without a GPU still has a daxpy row).
- GPU with naive transfers (a pageable copy in, the kernel, a pageable copy
  out, as seed 004's CUDA versions): ``hand-tuned``, ``daxpy-generic`` (the
  switch-based "unmodified Dax" kernels), ``daxpy-specialized`` (daxpy's
  generated kernels), ``cupy-naive`` (plain CuPy array code).
- ``daxpy``: the pipeline, host to host through :mod:`daxpy.stream.streaming`, with
  variants (staging policy, one stream, mapped memory, device-memory budgets).
- ``daxpy-filter``: the single filter call users meet first
  (``Gradient("f", backend="cuda")(grid)``), host array in, host array out.
- ``floor-pinned`` / ``floor-overlapped``: the case's input bytes host->device
  and output bytes device->host from pinned memory, one after the other or
  at the same time on two streams.

Examples
--------
>>> sorted(CPU_IMPLS)
['daxpy-cpu', 'viskores', 'vtk-seq', 'vtk-stdthread']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


class Absent(Exception):
    """This implementation does not cover this case (the reason is the message)."""


@dataclass
class Setup:
    """One case on one grid, with everything the implementations need."""

    case: str                 # pass_through, point_gradient, point_to_cell
    grid_label: str           # uniform3d, unstructured_hex
    grid: Any                 # daxpy grid, no fields
    field: np.ndarray         # host float32 point field
    vtk_data: Any = None      # VTK dataset holding the field as "f" (CPU rows)

    @property
    def n_points(self) -> int:
        return self.grid.n_points

    @property
    def out_shape(self) -> tuple:
        if self.case == "point_gradient":
            return (self.grid.n_points, 3)
        if self.case == "point_to_cell":
            return (self.grid.n_cells,)
        return (self.grid.n_points,)

    @property
    def out_dtype(self):
        return np.float64 if self.case == "pass_through" else np.float32

    @property
    def in_bytes(self) -> int:
        return int(self.field.nbytes)

    @property
    def out_bytes(self) -> int:
        return int(np.prod(self.out_shape)) * np.dtype(self.out_dtype).itemsize


# -- CPU ---------------------------------------------------------------------------
def _vtk(setup: Setup, smp: str, viskores: bool = False):
    from . import vtk_runs as vr

    if viskores and not vr.viskores_available():
        raise Absent("this VTK wheel has no Viskores filters")
    if setup.case == "pass_through":
        if viskores:
            raise Absent("Viskores has no pass-through filter")
        runner = vr.make_pass_through(setup.vtk_data)
    elif setup.case == "point_gradient":
        runner = vr.make_point_gradient(setup.vtk_data, viskores=viskores)
    else:
        runner = vr.make_point_to_cell(setup.vtk_data, viskores=viskores)

    def run():
        with vr.smp_backend(smp):
            return np.asarray(runner()), None

    return run


CPU_IMPLS: dict[str, Callable] = {
    "vtk-seq": lambda s, ctx: _vtk(s, "Sequential"),
    "vtk-stdthread": lambda s, ctx: _vtk(s, "STDThread"),
    "viskores": lambda s, ctx: _vtk(s, "Sequential", viskores=True),
}


# -- GPU kernels with naive (pageable) transfers --------------------------------------
def _naive(setup: Setup, build: Callable):
    """Pageable copy in, the kernel(s) that ``build(device_field)`` returns as
    ``(launch, out)``, pageable copy out; kernel time by CUDA events."""
    import cupy as cp

    def run():
        device = cp.asarray(setup.field)
        launch, out = build(device)
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        launch()
        stop.record()
        result = out.get()
        return result, cp.cuda.get_elapsed_time(start, stop)

    return run


def _hand_tuned(setup: Setup, ctx):
    hand, grid = ctx.hand_tuned(), setup.grid
    if setup.case == "pass_through":
        return _naive(setup, lambda f: hand.pass_through(f))
    if setup.grid_label == "uniform3d":
        method = (hand.gradient_uniform if setup.case == "point_gradient"
                  else hand.point_to_cell_uniform)
        args = (grid.dims, grid.spacing) if setup.case == "point_gradient" else (grid.dims,)

        def build(f):
            try:
                return method(f, *args)
            except ValueError:  # float4 rows need nx % 4 == 0: the one-point-per-thread kernel
                return method(f, *args, "naive")

        return _naive(setup, build)
    if setup.case == "point_to_cell":
        corners = ctx.device_corners(grid)
        return _naive(setup, lambda f: hand.point_to_cell_hex(f, corners))
    raise Absent("no hand-tuned unstructured gradient")


def _generic(setup: Setup, ctx):
    import cupy as cp

    generic = ctx.generic()
    if setup.case == "pass_through":
        return _naive(setup, lambda f: generic.pass_through(f, cp.float64))
    if setup.case == "point_gradient":
        if setup.grid.family == "unstructured":
            raise Absent("the generic gradient covers structured grids only")
        return _naive(setup, lambda f: generic.point_gradient(setup.grid, f))
    return _naive(setup, lambda f: generic.point_to_cell(setup.grid, f))


WORKLETS = {"pass_through": ("pass_through", {"dtype": "float64"}),
            "point_gradient": ("point_gradient", {}),
            "point_to_cell": ("point_to_cell", {})}


def _specialized(setup: Setup, ctx):
    from .kernels import daxpy_builder

    name, params = WORKLETS[setup.case]
    return _naive(setup, lambda f: daxpy_builder((name, setup.grid, f, "points", params)))


def _cupy_naive(setup: Setup, ctx):
    import cupy as cp

    grid = setup.grid
    if setup.case == "pass_through":
        return lambda: (cp.asarray(setup.field).astype(cp.float64).get(), None)
    if grid.family == "unstructured":
        if setup.case == "point_gradient":
            raise Absent("no plain-CuPy unstructured gradient")
        corners = grid.cell_blocks()["hex"].corners
        return lambda: (cp.asarray(setup.field)[cp.asarray(corners)].mean(axis=1).get(), None)
    nx, ny, nz = grid.dims
    hx, hy, hz = grid.spacing

    def gradient():
        dz, dy, dx = cp.gradient(cp.asarray(setup.field).reshape(nz, ny, nx), hz, hy, hx)
        return cp.stack([dx.ravel(), dy.ravel(), dz.ravel()], axis=1).get(), None

    def point_to_cell():
        f = cp.asarray(setup.field).reshape(nz, ny, nx)
        s = f[:-1] + f[1:]
        s = s[:, :-1] + s[:, 1:]
        return ((s[:, :, :-1] + s[:, :, 1:]) * np.float32(0.125)).ravel().get(), None

    return gradient if setup.case == "point_gradient" else point_to_cell


# -- daxpy's pipeline, host to host --------------------------------------------------
def pipeline_of(setup: Setup, field=None):
    """A daxpy pipeline computing the case (on ``field``, by default the
    setup's), and its output name."""
    import daxpy

    source = setup.grid.with_fields(point_data={"f": setup.field if field is None else field})
    pipe = daxpy.pipeline(source)
    node = pipe.field("f")
    out = {"pass_through": lambda: node.pass_through("float64"),
           "point_gradient": lambda: node.gradient(),
           "point_to_cell": lambda: node.point_to_cell()}[setup.case]()
    return pipe, out.name


def working_bytes(setup: Setup) -> int:
    """Device bytes the whole case holds at once: input, output, topology estimate."""
    from daxpy.stream.device_bytes import UNSTRUCTURED_BYTES_PER_CORNER

    topology = 0
    if setup.grid.family == "unstructured":
        topology = setup.grid.connectivity.size * UNSTRUCTURED_BYTES_PER_CORNER
    return setup.in_bytes + setup.out_bytes + topology


def daxpy_pipeline(rtol: float | None = None, budget: float | None = None,
                   first_run: bool = False, **settings):
    """The ``daxpy`` implementation under streaming ``settings`` (a variant).

    ``budget`` sets ``max_device_bytes`` to that fraction of the case's
    :func:`working_bytes`; ``rtol`` is the agreement tolerance of a variant
    whose results are rounded (lower-precision storage). The ``pageable``
    staging variant reads a copy of the field that no earlier row has
    page-locked (registration lasts as long as the array). ``first_run``
    drops what the grid derived before each run, so that every run plans its
    chunks, uploads its topology and builds its links again, as the first run
    of a new grid does (its kernels compiled and its field page-locked by the
    rows before it).
    """
    def build(setup: Setup, ctx):
        from daxpy.stream.streaming import configure

        fresh = setup.field.copy() if settings.get("staging") == "pageable" else None
        pipe, name = pipeline_of(setup, fresh)
        chosen = dict(settings)
        if budget is not None:
            chosen["max_device_bytes"] = int(working_bytes(setup) * budget)

        def run():
            if first_run:
                setup.grid._cache.clear()
            with configure(**chosen):
                out, profile = pipe.run(backend="cuda", profile=True)
            kernel = sum(r.time_ms for r in profile.stages)
            run.profile = profile
            return out.field(name)[0], kernel

        run.rtol = rtol
        return run

    return build


def filter_call(backend: str):
    """The case as one filter call on ``backend`` with the host field: a
    one-stage pipeline (streamed on CUDA), its result a NumPy array (host in,
    host out, like the pipeline's rows). ``to_host`` is a no-op on it; it stays
    so that a device result could never be timed without its copy back.
    """
    def build(setup: Setup, ctx):
        from daxpy.data.arrays import to_host
        from daxpy.filters import Gradient, PassThrough, PointToCell

        source = setup.grid.with_fields(point_data={"f": setup.field})
        flt, where, name = {
            "pass_through": (PassThrough("f", result="r", dtype="float64", backend=backend),
                             "points", "r"),
            "point_gradient": (Gradient("f", backend=backend), "points", "Gradient"),
            "point_to_cell": (PointToCell("f", result="r", backend=backend), "cells", "r"),
        }[setup.case]

        def run():
            out = flt(source)
            result = (out.point_data if where == "points" else out.cell_data)[name]
            return to_host(result), None

        return run

    return build


def _floor(overlapped: bool):
    def build(setup: Setup, ctx):
        import cupy as cp

        from daxpy.stream import transfer

        host_in = transfer.pinned_empty((setup.in_bytes // 4,), np.float32)
        host_in[:] = setup.field.ravel()
        host_out = transfer.pinned_empty((setup.out_bytes,), np.uint8)
        dev_in = cp.empty(host_in.shape, host_in.dtype)
        dev_out = cp.random.default_rng(0).random(setup.out_bytes // 4,
                                                  dtype=cp.float32).view(cp.uint8)
        streams = [cp.cuda.Stream(non_blocking=True) for _ in range(2)]

        def run():
            first, second = (streams[0], streams[1]) if overlapped else (streams[0],) * 2
            start = cp.cuda.Event()
            start.record(first)
            second.wait_event(start)
            transfer.copy_to_device(host_in, dev_in, first)
            transfer.copy_to_host(dev_out, host_out, second)
            stops = [s.record() for s in {first, second}]
            for stop in stops:
                stop.synchronize()
            # The floor moves bytes; it has no result to check.
            return None, None

        return run

    return build


GPU_IMPLS: dict[str, Callable] = {
    "hand-tuned": _hand_tuned,
    "daxpy": daxpy_pipeline(),
    "daxpy-filter": filter_call("cuda"),
    "daxpy-specialized": _specialized,
    "daxpy-generic": _generic,
    "cupy-naive": _cupy_naive,
    "floor-pinned": _floor(False),
    "floor-overlapped": _floor(True),
}
CPU_IMPLS["daxpy-cpu"] = filter_call("cpu")
