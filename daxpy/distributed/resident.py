"""Resident runs: one slab per worker, kept across runs, one call per worker per run.

Running a pipeline through a Dask task graph costs a few scheduler round trips
and a task per block and halo for every run: tens of milliseconds, against
about 10 ms of GPU work for a gradient of 2^31 points. A
:class:`ResidentPipeline` pays that once. It cuts a structured grid into one
slab per worker (:mod:`daxpy.distributed.slabs`) and starts a
:class:`~daxpy.distributed.slab_worker.SlabWorker` actor on each, which keeps
its slab's inputs, the sub-grid over them and its results between runs. A run
is one actor call per worker, straight from the client (no scheduler). Ghost
planes go device to device through CUDA IPC where the inputs live on GPUs and
the workers can open each other's memory (``ghosts="peer"``), else through
the client (``"client"``: one more call per worker per run). Host inputs on
the CUDA backend stream through the GPU in overlapped chunks, as any host run
does, so each worker streams its own slab over its own bus.

Results equal the single-domain run bitwise, as for :func:`daxpy.dask.pipeline`.

Examples
--------
>>> import numpy as np, daxpy
>>> from distributed import Client, LocalCluster
>>> grid = daxpy.UniformGrid(dims=(4, 3, 10))
>>> values = np.arange(grid.n_points, dtype=np.float64) ** 2
>>> pipe = daxpy.pipeline(grid.with_fields(point_data={"p": values}))
>>> g = pipe.gradient("p")
>>> with LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster, \\
...         Client(cluster):
...     with ResidentPipeline(pipe, backend="cpu") as slabs:
...         slabs.load("p", values)
...         _ = slabs.run()
...         result = slabs.gather()
>>> bool((result.point_data[g.name] == pipe.run(backend="cpu").point_data[g.name]).all())
True
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..data.arrays import to_host
from ..data.structured import StructuredGrid
from ..errors import ArgumentError
from .runner import checked_runner
from .slab_worker import PLACES, SlabWorker
from .slabs import ghost_moves, slab_axis, slab_pieces

if TYPE_CHECKING:  # annotations only: the pipeline module imports the engine
    from ..data.dataset import DataSet
    from ..pipeline import Pipeline

GHOSTS = ("auto", "peer", "client")
"""How ghost planes travel: ``peer`` (CUDA IPC, device inputs), ``client``, or ``auto``
(``peer`` where it works, else ``client``)."""


def _workers(client) -> list[str]:
    info = client.scheduler_info(n_workers=-1)["workers"]
    return sorted(info, key=lambda address: str(info[address]["name"]))


def _field_specs(dataset) -> dict:
    specs = {}
    for association in ("points", "cells"):
        for name, values in dataset.fields(association).items():
            specs[name] = (association, np.dtype(values.dtype).str, tuple(values.shape[1:]))
    return specs


class ResidentPipeline:
    """A pipeline over a structured grid, one slab per worker, kept across runs.

    Parameters
    ----------
    pipe : daxpy.Pipeline
        The pipeline, built over the grid (its fields give only the inputs'
        names, dtypes and components: a :meth:`daxpy.dask.DaskGrid.standin` will do).
    workers : sequence of str, optional
        Worker addresses, one slab each, in slab order; by default every
        worker of the client, by name.
    client : distributed.Client, optional
        By default the current one.
    backend : {"auto", "cpu", "cuda"}
        Where each slab runs.
    inputs : {"host", "device"}
        Where the workers keep the inputs.
    to : {"host", "device"}
        Where the workers keep the results.
    outputs : list of Node or str, optional
        By default the outputs no other stage reads.
    ghosts : {"auto", "peer", "client"}
        See :data:`GHOSTS`; :attr:`ghosts` says what was chosen (``"none"``
        where no slab has a neighbour to read), and :attr:`peer_error` why
        ``"auto"`` fell back to the client.

    Examples
    --------
    >>> ResidentPipeline.__module__
    'daxpy.distributed.resident'
    """

    def __init__(self, pipe: Pipeline, workers: Sequence[str] | None = None,
                 client: Any = None,
                 backend: str = "auto", inputs: str = "host", to: str = "host",
                 outputs: Sequence[Any] | None = None, ghosts: str = "auto"):
        from distributed import default_client

        grid = pipe.dataset
        if not isinstance(grid, StructuredGrid):
            raise ArgumentError(f"resident runs cut structured grids into slabs; "
                                f"{type(grid).__name__} is not one")
        if inputs not in PLACES:
            raise ArgumentError(f"inputs must be one of {PLACES}, got {inputs!r}")
        if ghosts not in GHOSTS:
            raise ArgumentError(f"ghosts must be one of {GHOSTS}, got {ghosts!r}")
        if ghosts == "peer" and inputs != "device":
            raise ArgumentError("ghosts='peer' copies between GPUs: it needs inputs='device'")
        found, program = checked_runner(grid, pipe.stages, pipe._output_names(outputs),
                                        backend, to)
        self.client = client or default_client()
        addresses = list(workers or _workers(self.client))
        self.specs = _field_specs(grid)
        self.grid = grid.with_fields()
        for data in (self.grid.point_data, self.grid.cell_data):
            data.clear()
        self.depth = found.depth
        self.pieces = slab_pieces(grid.dims, len(addresses), self.depth)
        self.outputs = program.outputs
        moves = [(association, move) for association in ("points", "cells")
                 for move in ghost_moves(self.pieces, self.depth, association)]
        futures = [self.client.submit(SlabWorker, self.grid, piece, program,
                                      self.specs, inputs, moves, actor=True,
                                      workers=[address], pure=False)
                   for piece, address in zip(self.pieces, addresses)]
        self.actors = [future.result() for future in futures]
        self._futures = futures
        self.peer_error: str | None = None
        self.ghosts = "client" if moves else "none"
        if ghosts != "client" and inputs == "device" and moves:
            self._connect(ghosts == "peer")

    def _connect(self, required: bool) -> None:
        handles = self._each("export")
        errors = self._each("connect", dict(enumerate(handles)))
        failed = [e for e in errors if e is not None]
        if not failed:
            self.ghosts = "peer"
            return
        self._each("disconnect")
        self.peer_error = failed[0]
        if required:
            raise ArgumentError(f"the workers cannot open each other's GPU memory: "
                                f"{self.peer_error}")

    def _each(self, method: str, *args) -> list:
        """Call ``method`` on every slab at once; wait for all; their results in slab order."""
        calls = [getattr(actor, method)(*args) for actor in self.actors]
        return [call.result() for call in calls]

    def load(self, name: str, values: Any) -> None:
        """Give each slab its owned part of input ``name`` (C order ``(nz, ny, nx[, c])``,
        or flat ``(n[, c])``), sent from here."""
        association, _, comps = self.specs[name]
        shape = (self.grid.point_shape() if association == "points"
                 else self.grid.cell_shape())
        values = values.reshape(shape + comps)
        calls = []
        for piece, actor in zip(self.pieces, self.actors):
            box = piece.owned_box(association)[::-1]
            calls.append(actor.load(name, to_host(values[tuple(slice(*b) for b in box)])))
        for call in calls:
            call.result()

    def fill(self, name: str, make: Callable) -> None:
        """Have each slab write its owned part of input ``name`` where it lives,
        through ``make(box, out)`` (see
        :meth:`SlabWorker.fill <daxpy.distributed.slab_worker.SlabWorker.fill>`)."""
        self._each("fill", name, make)

    def run(self) -> list[float]:
        """One run: ghost planes, then the pipeline on every slab at once.

        Returns
        -------
        list of float
            Milliseconds each slab's run took on its worker.
        """
        if self.ghosts != "client":
            return self._each("run")
        inbox: list[list] = [[] for _ in self.actors]
        for edges in self._each("edges"):
            for target, ghost in edges:
                inbox[target].append(ghost)
        calls = [actor.run(ghosts) for actor, ghosts in zip(self.actors, inbox)]
        return [call.result() for call in calls]

    def apply(self, function: Callable, *args) -> list:
        """``function(owned results, piece, *args)`` on every slab; the results in slab order."""
        return self._each("apply", function, *args)

    def gather(self) -> DataSet:
        """The last run's results on the host: the grid with the outputs, flat."""
        axis = 2 - slab_axis(self.grid.dims)
        parts = self._each("owned_on_host")
        data: dict = {"points": {}, "cells": {}}
        for name, association in self.outputs.items():
            whole = np.concatenate([part[name] for part in parts], axis=axis)
            rows = math.prod(whole.shape[:3])
            data[association][name] = whole.reshape((rows,) + whole.shape[3:])
        return self.grid.with_fields(data["points"], data["cells"])

    def close(self) -> None:
        """Close the neighbours' buffers, free every slab and release the actors."""
        self._each("disconnect")  # every importer closes before any owner frees
        self._each("close")
        self.actors, self._futures = [], []

    def __enter__(self) -> "ResidentPipeline":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
