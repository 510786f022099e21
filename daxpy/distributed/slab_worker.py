"""One worker's slab, held across runs: a Dask actor (see :mod:`daxpy.distributed.resident`).

A :class:`SlabWorker` lives on one worker (one GPU) and keeps, between runs,
its slab's input fields in buffers over the slab's read box, the sub-grid over
them, and the last run's owned results. A run is then one call: refresh the
ghost planes, run the pipeline on the buffers in place, keep the owned part.

Ghost planes come one of two ways (:func:`~daxpy.distributed.slabs.ghost_moves`
says which planes):

- ``"peer"``: device buffers are single ``cudaMalloc`` blocks whose CUDA IPC
  handles the neighbours open once (:meth:`SlabWorker.export`,
  :meth:`SlabWorker.connect`); each run copies the ghost planes straight from
  the neighbours' buffers, device to device, with no message at all;
- ``"client"``: each source hands its edge planes to the client
  (:meth:`SlabWorker.edges`), which passes them to the run of their target.

A run reads its neighbours' owned planes, which only :meth:`SlabWorker.load`
and :meth:`SlabWorker.fill` write, and both return once the data is in place;
so no run waits on another worker.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.distributed.slabs import slab_pieces
>>> from daxpy.distributed.runner import StagesRunner
>>> grid = daxpy.UniformGrid(dims=(3, 1, 4))
>>> pipe = daxpy.pipeline(grid.with_fields({"p": np.zeros(12)}))
>>> g = pipe.gradient("p")
>>> run = StagesRunner(pipe.stages, {g.name: "points"}, "cpu", "host")
>>> piece = slab_pieces(grid.dims, 1, 1)[0]
>>> worker = SlabWorker(grid, piece, run, {"p": ("points", "float64", ())}, "host", [])
>>> def make(box, out):
...     out[...] = np.arange(12.0).reshape(4, 1, 3)
>>> worker.fill("p", make)
>>> _ = worker.run()
>>> worker.owned()[g.name][:, 0, 0, 2].tolist()
[3.0, 3.0, 3.0, 3.0]
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from ..data.arrays import to_host
from ..data.decomposition import Piece
from ..data.partition import owned_results, window_dataset
from .slabs import slab_axis

PLACES = ("host", "device")
"""Where a worker's input buffers live."""


def _device_buffer(shape, dtype):
    """A CuPy array over a ``cudaMalloc`` block of its own (not the memory
    pool's), so that its CUDA IPC handle covers exactly this array."""
    import cupy

    nbytes = max(math.prod(shape) * np.dtype(dtype).itemsize, 1)
    return cupy.ndarray(shape, dtype, cupy.cuda.MemoryPointer(cupy.cuda.Memory(nbytes), 0))


class SlabWorker:
    """A slab's buffers, sub-grid and last results; created on a worker as a Dask actor.

    Parameters
    ----------
    grid : structured DataSet
        The whole grid's topology (fields are not read).
    piece : Piece
        The slab (:func:`~daxpy.distributed.slabs.slab_pieces`).
    program : daxpy.distributed.runner.StagesRunner
        The pipeline; ``program.outputs`` are kept.
    fields : dict of str to (str, str, tuple)
        Each input's association, dtype and component shape.
    place : {"host", "device"}
        Where the input buffers live (results live where ``program.to`` says).
    moves : list of (str, Move)
        Every ghost move of the run (all slabs'), with the association of the
        fields it moves; this slab keeps those it is part of.
    """

    def __init__(self, grid, piece: Piece, program, fields: dict, place: str, moves: list):
        self.piece, self.program, self.place = piece, program, place
        self.moves = [(a, m) for a, m in moves if piece.index in (m.source, m.target)]
        self.buffers, self.planes = {}, {}
        axis = 2 - slab_axis(piece.dims)  # the slab axis in C order
        blocks = {"points": {}, "cells": {}}
        for name, (association, dtype, comps) in fields.items():
            shape = tuple(hi - lo for lo, hi in piece.read_box(association)[::-1])
            shape += tuple(comps)
            buffer = (_device_buffer(shape, dtype) if place == "device"
                      else np.empty(shape, dtype=dtype))
            self.buffers[name] = (association, buffer)
            blocks[association][name] = buffer
            # Axes before the slab axis have one point: planes are contiguous.
            self.planes[name] = buffer.nbytes // max(shape[axis], 1)
        self.data = window_dataset(grid, piece, blocks["points"], blocks["cells"])
        self.results: dict = {}
        self.peers: list = []      # (target address, source address, bytes) per ghost copy
        self.opened: list = []     # IPC pointers to close

    # -- inputs ------------------------------------------------------------------

    def _owned_view(self, name: str):
        association, buffer = self.buffers[name]
        return buffer[self.piece.owned_slices(association)]

    def _settle(self) -> None:
        if self.place == "device":
            import cupy

            # Neighbours copy from this buffer without asking: it must be complete.
            cupy.cuda.Device().synchronize()

    def _put(self, view, values) -> None:
        if self.place == "device":
            import cupy

            view[...] = cupy.asarray(values)
        else:
            view[...] = to_host(values)

    def load(self, name: str, values) -> None:
        """Write ``values`` (C order, over the owned box) into input ``name``."""
        self._put(self._owned_view(name), values)
        self._settle()

    def fill(self, name: str, make: Callable) -> None:
        """Have ``make(box, out)`` write input ``name`` here, in place: ``box`` is
        the owned box in C order, ``((z0, z1), (y0, y1), (x0, x1))``, and ``out``
        the buffer's owned part (a NumPy or CuPy array, C-contiguous)."""
        association = self.buffers[name][0]
        make(self.piece.owned_box(association)[::-1], self._owned_view(name))
        self._settle()

    # -- ghost planes --------------------------------------------------------------

    def export(self) -> dict:
        """The CUDA IPC handle of every input buffer (device inputs only)."""
        import cupy

        return {name: cupy.cuda.runtime.ipcGetMemHandle(buffer.data.ptr)
                for name, (_, buffer) in self.buffers.items()}

    def connect(self, handles: dict) -> str | None:
        """Open the neighbours' buffers (``handles[slab][field]`` from
        :meth:`export`) and plan the device-to-device ghost copies.

        Returns None, or why the buffers cannot be opened here (then no copy
        is planned and the ghosts go through the client).
        """
        import cupy

        runtime = cupy.cuda.runtime
        opened: dict = {}
        peers = []
        try:
            for association, move in self.moves:
                if move.target != self.piece.index:
                    continue
                for name, (field_association, buffer) in self.buffers.items():
                    if field_association != association:
                        continue
                    key = (move.source, name)
                    if key not in opened:
                        opened[key] = runtime.ipcOpenMemHandle(handles[move.source][name])
                    size = self.planes[name]
                    peers.append((buffer.data.ptr + move.target_planes[0] * size,
                                  opened[key] + move.source_planes[0] * size,
                                  (move.source_planes[1] - move.source_planes[0]) * size))
        except runtime.CUDARuntimeError as err:
            for pointer in opened.values():
                runtime.ipcCloseMemHandle(pointer)
            return str(err)
        self.disconnect()
        self.peers, self.opened = peers, list(opened.values())
        return None

    def disconnect(self) -> None:
        """Close the neighbours' buffers; ghosts then come through the client."""
        if self.opened:
            import cupy

            for pointer in self.opened:
                cupy.cuda.runtime.ipcCloseMemHandle(pointer)
        self.peers, self.opened = [], []

    def _planes(self, name: str, planes: tuple[int, int]):
        association, buffer = self.buffers[name]
        axis = 2 - slab_axis(self.piece.dims)
        return buffer[(slice(None),) * axis + (slice(*planes),)]

    def edges(self) -> list:
        """The owned planes this slab's neighbours need, for client-side ghosts:
        ``(target slab, (move, field, planes))`` per move and field, planes on the host."""
        found = []
        for association, move in self.moves:
            if move.source != self.piece.index:
                continue
            for name, (field_association, _) in self.buffers.items():
                if field_association == association:
                    planes = to_host(self._planes(name, move.source_planes))
                    found.append((move.target, (move, name, planes)))
        return found

    # -- runs --------------------------------------------------------------------

    def run(self, ghosts: list | None = None) -> float:
        """Refresh the ghost planes, run the pipeline, keep the owned results.

        Parameters
        ----------
        ghosts : list, optional
            Client-side ghosts: the ``(move, field, planes)`` of the
            neighbours' :meth:`edges` whose target is this slab. Without
            them, the device-to-device copies of :meth:`connect` (if any)
            fill the ghost planes.

        Returns
        -------
        float
            Milliseconds the call took here.
        """
        start = time.perf_counter()
        self.results = {}  # the last run's results go back to the pool first
        for move, name, planes in ghosts or ():
            self._put(self._planes(name, move.target_planes), planes)
        if self.peers:
            import cupy

            stream = cupy.cuda.get_current_stream()
            for target, source, nbytes in self.peers:
                cupy.cuda.runtime.memcpyAsync(target, source, nbytes,
                                              cupy.cuda.runtime.memcpyDefault, stream.ptr)
            # The pipeline may run on streams of its own: the ghosts land first.
            stream.synchronize()
        self.results = owned_results(self.program(self.data), self.piece, self.program.outputs)
        if self.place == "device" or self.program.to == "device":
            import cupy

            cupy.cuda.Device().synchronize()  # a run ends with its results in place
        return (time.perf_counter() - start) * 1e3

    def owned(self) -> dict:
        """The last run's owned results, where they live (C order)."""
        return self.results

    def owned_on_host(self) -> dict:
        """The last run's owned results as NumPy arrays (C order)."""
        return {name: to_host(values) for name, values in self.results.items()}

    def apply(self, function: Callable, *args) -> Any:
        """``function(owned results, piece, *args)``, run here (a digest, a reduction)."""
        return function(self.results, self.piece, *args)

    def close(self) -> None:
        """Drop the results and buffers and close the neighbours' buffers."""
        self.disconnect()
        self.results, self.buffers, self.data = {}, {}, None
