"""How big a streamed pipeline's chunks are, and which keep their device topology.

:func:`plan_within` turns the settings into a :class:`ChunkPlan`. ``chunk_bytes``
is a target for the field bytes a chunk holds (the grain of the overlap, the
same in and out of core); ``max_device_bytes`` is a bound: its share for each
chunk in flight bounds a chunk's fields, coordinates and topology, halo
included. So a budget only ever makes chunks smaller than the in-core ones
when their whole working set would not fit its share.

Out of core, the links of unstructured chunks are built on the host, once
(:mod:`daxpy.cuda.host_links`): the device holds only the link arrays
(:data:`~daxpy.stream.device_bytes.CHUNK_BYTES_PER_CORNER`), never the sort that
builds them. What the budget leaves beside the chunks in flight holds the
topology of as many chunks as fit, kept on the device between runs
(:attr:`ChunkPlan.resident`); the others upload theirs with their fields. A
plan is made once per grid topology, pipeline shape (depth, bytes per point and
cell) and settings, and cached with the grid's topology, chunk sub-grids and
host links included.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.stream.program import program_of
>>> g = daxpy.UniformGrid(dims=(10, 10, 10), point_data={"p": np.zeros(1000)})
>>> pipe = daxpy.pipeline(g); grad = pipe.gradient("p")
>>> found = plan_within(g, program_of(g, pipe.stages, [grad.name]), 32000)
>>> len(found.chunks), sorted(found.resident)
(2, [0, 1])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..cuda import host_links
from ..cuda.device import forget
from ..data.partition import layer_sizes
from ..errors import DeviceMemoryError
from .chunks import structured_chunks, unstructured_chunks, unstructured_layout
from . import transfer
from .captured import CAPTURED_RUN_BYTES
from .device_bytes import estimated_bytes, resident_chunks
from .program import Program

@dataclass(frozen=True)
class ChunkPlan:
    """The chunks of a streamed run and which of them keep their device topology.

    Attributes
    ----------
    chunks : list of daxpy.data.decomposition.Piece
        With their sub-grids (:mod:`daxpy.stream.chunks`).
    resident : frozenset of int
        Indices of the chunks whose device topology stays between runs (all
        of them without a budget).
    """

    chunks: list
    resident: frozenset


def item_bytes(dataset, program: Program) -> tuple[int, int]:
    """Device bytes per point and per cell of the fields a chunk holds.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.stream.program import program_of
    >>> g = daxpy.UniformGrid(dims=(3, 3), point_data={"p": np.zeros(9, np.float32)})
    >>> pipe = daxpy.pipeline(g); c = pipe.point_to_cell("p")
    >>> item_bytes(g, program_of(g, pipe.stages, [c.name]))
    (4, 4)
    """
    per = {"points": 0, "cells": 0}
    for name, association in program.reads.items():
        values = dataset.fields(association)[name]
        per[association] += np.dtype(values.dtype).itemsize * math.prod(values.shape[1:])
    for association, dtype, comps in program.fields.values():
        per[association] += dtype.itemsize * math.prod(comps)
    return per["points"], per["cells"]


def field_bytes(dataset, program: Program) -> int:
    """Device bytes of all the fields a run of ``program`` over ``dataset`` reads and
    makes, over the whole grid.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.stream.program import program_of
    >>> line = daxpy.UniformGrid(dims=(5,), point_data={"p": np.zeros(5)})
    >>> pipe = daxpy.pipeline(line); grad = pipe.gradient("p")  # 5 float64 in, 5 x 3 out
    >>> field_bytes(line, program_of(line, pipe.stages, [grad.name]))
    160
    """
    per_point, per_cell = item_bytes(dataset, program)
    return dataset.n_points * per_point + dataset.n_cells * per_cell


CHUNK_BYTES = 64 << 20
"""The field bytes a chunk aims at by default: copies this large run at the link's rate,
and a run of 100M points is a few dozen chunks."""

SMALL_RUN_CHUNKS = 4
"""Chunks a smaller run is cut into by default, where each keeps at least
:data:`SMALL_CHUNK_BYTES`: with two or three 64 MiB chunks (10M points) the first
chunk's copy in and the last one's copy out overlap nothing. 10M points on an H100,
64 MiB against this default: pass-through 2.24 -> 2.15 ms, point-to-cell 1.62 -> 1.38,
gradient 2.87 -> 2.85 (``benchmarks/NOTES-streaming.md``)."""

SMALL_CHUNK_BYTES = 32 << 20
"""The least field bytes of a default chunk: each chunk costs the host about 0.15 ms
(its sub-grid, launches and events), and 16 MiB chunks already ran slower than 32 MiB
ones at 10M points."""


REPLAYED_RUN_CHUNKS = 8
"""Chunks a structured run replayed from CUDA graphs (:mod:`daxpy.stream.captured`)
is cut into by default: a replayed chunk costs the host a few CUDA calls, so what
is left to shorten is the first chunk's copy in and the last one's copy out. 10M
points on an H100, warm runs, against 3-5 chunks: gradient 1.20 -> 1.09-1.27x the
overlapped copy floor, point-to-cell 1.60 -> 1.41-1.45x. Unstructured grids keep
their chunks: each plans its ids and builds its links on its first run (10M
hexahedra in 11 chunks: a first run of 765 ms against 339 in 3)."""

REPLAYED_CHUNK_BYTES = 8 << 20
"""The least field bytes of such a chunk (copies of a few MB still run at the
link's rate)."""


def chunk_target(dataset, program: Program, chunk_bytes: int | None,
                 replayed: bool = False) -> int:
    """The field bytes a chunk of ``program`` over ``dataset`` aims at: ``chunk_bytes``
    where set, else :data:`CHUNK_BYTES`, lowered on a uniform grid whose run's fields
    hold less than :data:`SMALL_RUN_CHUNKS` of them to an even share, but not below
    :data:`SMALL_CHUNK_BYTES`. A structured run that will be ``replayed`` from CUDA
    graphs (one of at most :data:`~daxpy.stream.captured.CAPTURED_RUN_BYTES`) is cut
    into :data:`REPLAYED_RUN_CHUNKS`, not below :data:`REPLAYED_CHUNK_BYTES`.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.stream.program import program_of
    >>> g = daxpy.UniformGrid(dims=(10, 10, 10), point_data={"p": np.zeros(1000)})
    >>> pipe = daxpy.pipeline(g); grad = pipe.gradient("p")
    >>> program = program_of(g, pipe.stages, [grad.name])
    >>> chunk_target(g, program, 4096), chunk_target(g, program, None) == SMALL_CHUNK_BYTES
    (4096, True)
    """
    if chunk_bytes is not None:
        return int(chunk_bytes)
    total = field_bytes(dataset, program)
    if replayed and dataset.family != "unstructured" and total <= CAPTURED_RUN_BYTES:
        return min(CHUNK_BYTES, max(REPLAYED_CHUNK_BYTES, total // REPLAYED_RUN_CHUNKS))
    if dataset.family != "uniform":
        # Measured on an H100 at 10M hexahedra, with each chunk's kernel plan kept
        # between runs (daxpy.cuda.plan_cache): 4-5 chunks ran 1.3-1.6x slower than
        # 2-3 (each holds a ring of neighbour cells and its own point ids).
        return CHUNK_BYTES
    return min(CHUNK_BYTES, max(SMALL_CHUNK_BYTES, total // SMALL_RUN_CHUNKS))


def _owned_unit(dataset, program: Program, resident: bool) -> float:
    """Estimated bytes per owned layer (structured) or owned cell (unstructured)."""
    per_point, per_cell = item_bytes(dataset, program)
    if dataset.family == "unstructured":
        cells = max(dataset.n_cells, 1)
        return estimated_bytes("unstructured", (dataset.n_points / cells, 1,
                                                dataset.connectivity.size / cells),
                               per_point, per_cell, resident)
    layer, cell_layer = layer_sizes(dataset)
    return estimated_bytes(dataset.family, (layer, cell_layer, 0), per_point, per_cell,
                           resident)


def _first_size(dataset, program: Program, budget: int, unit: float) -> int:
    """Owned layers or cells per chunk from the budget, before halos are counted."""
    halo = 0 if dataset.family == "unstructured" else 2 * max(program.depth, 1)
    return max(int(budget // max(unit, 1)) - halo, 1)


def _levels(program: Program) -> int:
    return max(program.depth - 1, 0)


def _structured_depth(program: Program) -> int:
    # A slab of one layer reads no cells across the cut: cells need a halo.
    return max(program.depth, 1 if program.touches_cells else 0)


def _layout(dataset, program: Program, size: int):
    key = ("stream:layout", _levels(program), size)
    if key not in dataset._cache:
        dataset._cache[key] = unstructured_layout(dataset, _levels(program), size)
    return dataset._cache[key]


def chunk_sizes(dataset, program: Program, size: int) -> list[tuple[int, int, int]]:
    """(points, cells, corners) of each chunk of ``size`` owned layers or cells.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.stream.program import program_of
    >>> g = daxpy.UniformGrid(dims=(4, 4, 8), point_data={"p": np.zeros(128)})
    >>> pipe = daxpy.pipeline(g); grad = pipe.gradient("p")
    >>> chunk_sizes(g, program_of(g, pipe.stages, [grad.name]), 4)
    [(80, 36, 0), (80, 36, 0)]
    """
    if dataset.family == "unstructured":
        return _layout(dataset, program, size).sizes(dataset)
    return [(c.grid.n_points, c.grid.n_cells, 0) for c in plan(dataset, program, size)]


def plan(dataset, program: Program, size: int) -> list:
    """The chunks of ``dataset`` for ``program``, ``size`` owned layers or cells
    each (cached on the dataset).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.stream.program import program_of
    >>> g = daxpy.UniformGrid(dims=(4, 4, 20), point_data={"p": np.zeros(320)})
    >>> pipe = daxpy.pipeline(g); c = pipe.point_to_cell("p")
    >>> len(plan(g, program_of(g, pipe.stages, [c.name]), 5))
    4
    """
    if dataset.family == "unstructured":
        key = ("stream:chunks", _levels(program), size)
        if key not in dataset._cache:
            dataset._cache[key] = unstructured_chunks(dataset, _levels(program), size,
                                                      _layout(dataset, program, size))
    else:
        key = ("stream:chunks", _structured_depth(program), size)
        if key not in dataset._cache:
            dataset._cache[key] = structured_chunks(dataset, _structured_depth(program), size)
    return dataset._cache[key]


def _size_within(dataset, program: Program, target: int, share: int | None):
    """Owned layers or cells per chunk, and the largest chunk's estimated bytes:
    fields within ``target`` (unless the chunks would be mostly halo), and
    everything within ``share`` where given (or size 1)."""
    per_point, per_cell = item_bytes(dataset, program)
    moved = _owned_unit(dataset, program, False)
    held = _owned_unit(dataset, program, True)
    size = _first_size(dataset, program, target, moved)
    if share is not None:
        size = min(size, _first_size(dataset, program, share, held))
    while True:
        sizes = chunk_sizes(dataset, program, size)
        fields = max(estimated_bytes(dataset.family, s, per_point, per_cell, False)
                     for s in sizes)
        whole = max(estimated_bytes(dataset.family, s, per_point, per_cell, True)
                    for s in sizes)
        # chunk_bytes alone is a target: no point in chunks that are mostly halo.
        on_target = fields <= target or fields > 2 * size * moved
        in_share = share is None or whole <= share
        if (on_target and in_share) or size == 1:
            return size, whole
        # Halos and neighbour rings make chunks larger than their owned part, by
        # about as much whatever the size: take them off the bound, once measured.
        fits = [_fitting(size, fields, moved, target)] if not on_target else []
        fits += [_fitting(size, whole, held, share)] if not in_share else []
        size = max(min([size - 1] + fits), 1)


def _fitting(size: int, found: float, unit: float, bound: int) -> int:
    """Owned layers or cells that fit ``bound`` if a chunk of ``size`` of them takes
    ``found`` bytes, at ``unit`` bytes each and the rest halo (a margin of 2%)."""
    halo = found - size * unit
    if halo >= bound:
        return int(size * bound / found * 0.9)
    return int((bound - halo) / max(unit, 1) * 0.98)


def plan_within(dataset, program: Program, chunk_budget: int, max_device_bytes=None,
                streams: int = 3) -> ChunkPlan:
    """The :class:`ChunkPlan` of ``program`` over ``dataset``: chunks whose
    estimated field bytes (:func:`estimated_bytes`, halos and neighbour rings
    included) aim at ``chunk_budget`` and, with ``max_device_bytes``, whose
    fields, coordinates and topology stay under its share for ``streams``
    chunks in flight. Cached with the grid's topology, per pipeline shape and
    settings.

    Raises
    ------
    DeviceMemoryError
        If even the smallest chunks do not fit ``max_device_bytes``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.stream.program import program_of
    >>> g = daxpy.UniformGrid(dims=(10, 10, 10), point_data={"p": np.zeros(1000)})
    >>> pipe = daxpy.pipeline(g); grad = pipe.gradient("p")
    >>> chunks = plan_within(g, program_of(g, pipe.stages, [grad.name]), 32000).chunks
    >>> len(chunks), max(c.grid.n_points for c in chunks)
    (2, 900)
    """
    per_point, per_cell = item_bytes(dataset, program)
    key = ("stream:plan", program.depth, program.touches_cells, per_point, per_cell,
           int(chunk_budget), max_device_bytes, int(streams))
    if key in dataset._cache:
        return dataset._cache[key]
    share = None
    if max_device_bytes is not None:
        share = int(max_device_bytes) // max(int(streams), 1)
    size, worst = _size_within(dataset, program, int(chunk_budget), share)
    if share is not None and worst > share:
        raise DeviceMemoryError(
            f"max_device_bytes={max_device_bytes} is too small for {streams} chunks in "
            f"flight: the smallest chunk of this {dataset.topology_name} pipeline needs "
            f"about {worst} bytes")
    chunks = plan(dataset, program, size)
    if max_device_bytes is None:
        resident = frozenset(range(len(chunks)))
    else:
        resident = resident_chunks(dataset.family, chunk_sizes(dataset, program, size),
                                   per_point, per_cell, max_device_bytes, streams)
        if dataset.family == "unstructured":
            # Imported here: importing the worklets package loads every worklet module.
            from ..worklets._links_cpu import build_links

            for chunk in chunks:
                if not host_links.marked(chunk.grid):
                    # An in-core run of the same chunks left device topology built the
                    # device's way (its sort's int64 ids too): not the budget's to keep.
                    forget(chunk.grid)
                    host_links.mark(chunk.grid, build_links, transfer.page_lock)
    # Sizing reads every chunk's cells (unstructured): once per grid, shape and budget.
    dataset._cache[key] = ChunkPlan(chunks, resident)
    return dataset._cache[key]
