"""What a streamed pipeline reads, makes and needs around each chunk, and how big
its chunks are.

:func:`program_of` learns a pipeline's :class:`Program`: the halo depth and
every field it makes, with its dtype and components, from one tiny CPU run
of its stages (:func:`daxpy.engine.probe.probe`); the source fields it reads
and whether every stage gives the same result wherever a value sits in the
field from the filters' declarations (a stage whose result depends on the
position, such as a BiasAdd whose bias spans several tuples, cannot be cut
into chunks).
:func:`plan_within` and :func:`plan` turn a byte budget into chunks.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(4, 4), point_data={"p": np.ones(16)})
>>> pipe = daxpy.pipeline(g)
>>> _ = pipe.gradient("p").magnitude()
>>> prog = program_of(g, pipe.stages, ["magnitude_2"])
>>> prog.depth, prog.reads, prog.outputs
(1, {'p': 'points'}, ['magnitude_2'])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.partition import layer_sizes
from .chunks import structured_chunks, unstructured_chunks, unstructured_layout
from ..errors import DaxpyError, DeviceMemoryError
from ..engine.probe import probe


class NotStreamable(DaxpyError):
    """A pipeline that cannot be cut into chunks (it runs on the whole grid)."""


@dataclass
class Program:
    """What a pipeline reads and makes, learnt once from probe runs.

    Attributes
    ----------
    depth : int
        Longest chain of worklet reaches (halo layers).
    reads : dict of str to str
        Source fields the stages read, with their associations.
    fields : dict of str to (str, numpy.dtype, tuple)
        Every field the stages make: association, dtype, components.
    outputs : list of str
        Wanted fields that the stages make.
    passed : list of str
        Wanted source fields (returned as they are).
    position_free : bool
        Whether every map gives the same values wherever an element sits.
    """

    depth: int
    reads: dict
    fields: dict
    outputs: list
    passed: list
    position_free: bool = True

    @property
    def touches_cells(self) -> bool:
        """Whether any field read or made lives at the cells."""
        return "cells" in set(self.reads.values()) | {a for a, _, _ in self.fields.values()}


def fields_read(dataset, stages, produced) -> dict:
    """Source fields the stages read, with their associations, from each
    filter's declaration (:meth:`~daxpy.filters.Filter.reads`).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"p": np.zeros(2)})
    >>> pipe = daxpy.pipeline(g); c = pipe.point_to_cell("p")
    >>> fields_read(g, pipe.stages, {c.name})
    {'p': 'points'}
    """
    reads = {}
    for stage in stages:
        for name, association in stage.filter.reads().items():
            if name not in produced:
                reads[name] = dataset.field(name, association)[1]
    return reads


def position_dependent(where: str) -> str:
    """The message refusing a pipeline whose maps are not :func:`position_free`
    when it would run ``where`` (in chunks, on Dask blocks...).

    Examples
    --------
    >>> position_dependent("in chunks").startswith("a map of this pipeline")
    True
    """
    return ("a map of this pipeline depends on where a value sits in the whole field "
            "(such as a BiasAdd whose bias spans several tuples, not one entry per "
            f"component); it cannot run {where}: give one bias entry per component, or "
            "run it with daxpy.pipeline on the whole grid")


def position_free(dataset, stages, fields: dict | None = None) -> bool:
    """Whether every stage gives the same value for a tuple wherever it sits in
    its input field, as its filter declares
    (:meth:`~daxpy.filters.Filter.position_free`): such stages give the same
    values in any chunk. ``fields`` maps field names to (association, dtype,
    components), as :func:`daxpy.engine.probe.probe` finds them (probed here
    when not given).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3), point_data={"p": np.ones(9)})
    >>> pipe = daxpy.pipeline(g); _ = pipe.bias_add("p", [1.0, 2.0, 3.0])
    >>> position_free(g, pipe.stages)
    False
    """
    if fields is None:
        fields = probe(dataset, stages).fields
    for stage in stages:
        first = next(iter(stage.filter.reads()))
        if not stage.filter.position_free(int(np.prod(fields[first][2]))):
            return False
    return True


def program_of(dataset, stages, wanted) -> Program:
    """The :class:`Program` of ``stages`` over ``dataset`` (cached on the dataset).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3), point_data={"p": np.zeros(9), "q": np.ones(9)})
    >>> pipe = daxpy.pipeline(g)
    >>> m = pipe.map("p", "x + q")
    >>> program_of(g, pipe.stages, [m.name]).reads
    {'p': 'points', 'q': 'points'}
    """
    signature = tuple((a, n, np.dtype(v.dtype).str, tuple(v.shape[1:]))
                      for a in ("points", "cells") for n, v in dataset.fields(a).items())
    key = ("stream:program", tuple(id(s.filter) for s in stages), tuple(wanted), signature)
    cached = dataset._cache.get(key)
    if cached is not None and all(a is b.filter for a, b in zip(cached[0], stages)):
        return cached[1]
    try:
        found = probe(dataset, stages)
    except DaxpyError as err:
        # Stages that fail on a few points (a bias longer than the probe's field,
        # a wrong association...) run whole, where any real error shows.
        raise NotStreamable(f"the pipeline cannot run on a few points: {err}") from err
    produced = {n for names in found.produced.values() for n in names}
    result = Program(found.depth, fields_read(dataset, stages, produced),
                     {n: found.fields[n] for n in sorted(produced)},
                     [n for n in wanted if n in produced],
                     [n for n in wanted if n not in produced],
                     position_free(dataset, stages, found.fields))
    dataset._cache[key] = ([s.filter for s in stages], result)
    return result


# -- chunk sizes -------------------------------------------------------------
UNSTRUCTURED_BYTES_PER_CORNER = 80
"""Estimated peak device bytes of topology per cell corner of an unstructured
chunk: its corner ids, the 64-bit keys, order and temporaries of sorting the
links from points to corners, and the links kept."""

COORDINATE_BYTES = 24
"""Device bytes per point of explicit coordinates (three float64 at most)."""


def item_bytes(dataset, program: Program) -> tuple[int, int]:
    """Device bytes per point and per cell of the fields a chunk holds.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3), point_data={"p": np.zeros(9, np.float32)})
    >>> pipe = daxpy.pipeline(g); c = pipe.point_to_cell("p")
    >>> item_bytes(g, program_of(g, pipe.stages, [c.name]))
    (4, 4)
    """
    per = {"points": 0, "cells": 0}
    for name, association in program.reads.items():
        values = dataset.fields(association)[name]
        per[association] += np.dtype(values.dtype).itemsize * int(np.prod(values.shape[1:]))
    for association, dtype, comps in program.fields.values():
        per[association] += dtype.itemsize * int(np.prod(comps))
    return per["points"], per["cells"]


def estimated_bytes(family: str, sizes, per_point: int, per_cell: int,
                    resident: bool) -> int:
    """Estimated device bytes of a chunk of ``sizes`` = (points, cells, corners):
    its fields, and with ``resident`` its coordinates and topology too (they
    stay on the device between runs unless a budget is set, so only then do
    they count against a chunk's share).

    Examples
    --------
    >>> estimated_bytes("unstructured", (10, 8, 64), 4, 0, False)
    40
    >>> estimated_bytes("unstructured", (10, 8, 64), 4, 0, True)
    5400
    """
    points, cells, corners = sizes
    total = points * per_point + cells * per_cell
    if resident and family in ("curvilinear", "unstructured"):
        total += points * COORDINATE_BYTES
    if resident and family == "unstructured":
        total += corners * UNSTRUCTURED_BYTES_PER_CORNER
    return int(total)


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


def plan_within(dataset, program: Program, chunk_budget: int, max_device_bytes=None,
                streams: int = 3) -> list:
    """Chunks whose estimated device bytes (:func:`estimated_bytes`, halos and
    neighbour rings included) stay under ``chunk_budget`` and, with
    ``max_device_bytes``, under its share for ``streams`` chunks in flight,
    coordinates and topology included.

    Raises
    ------
    DeviceMemoryError
        If even the smallest chunks do not fit ``max_device_bytes``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(10, 10, 10), point_data={"p": np.zeros(1000)})
    >>> pipe = daxpy.pipeline(g); grad = pipe.gradient("p")
    >>> chunks = plan_within(g, program_of(g, pipe.stages, [grad.name]), 32000)
    >>> len(chunks), max(c.grid.n_points for c in chunks)
    (2, 900)
    """
    key = ("stream:plan", id(program), int(chunk_budget), max_device_bytes, int(streams))
    if key in dataset._cache and dataset._cache[key][0] is program:
        return dataset._cache[key][1]
    budget = int(chunk_budget)
    if max_device_bytes is not None:
        budget = min(budget, int(max_device_bytes) // max(int(streams), 1))
    resident = max_device_bytes is not None
    per_point, per_cell = item_bytes(dataset, program)
    unit = _owned_unit(dataset, program, resident)
    size = _first_size(dataset, program, budget, unit)
    while True:
        worst = max(estimated_bytes(dataset.family, sizes, per_point, per_cell, resident)
                    for sizes in chunk_sizes(dataset, program, size))
        # chunk_bytes alone is a target: no point in chunks that are mostly halo.
        mostly_halo = not resident and worst > 2 * size * unit
        if worst <= budget or size == 1 or mostly_halo:
            break
        # Halos and neighbour rings make chunks larger than their owned part.
        size = max(min(size - 1, int(size * budget / worst * 0.9)), 1)
    if max_device_bytes is not None and worst > budget:
        raise DeviceMemoryError(
            f"max_device_bytes={max_device_bytes} is too small for {streams} chunks in "
            f"flight: the smallest chunk of this {dataset.topology_name} pipeline needs "
            f"about {worst} bytes")
    # Sizing reads every chunk's cells (unstructured): once per program and budget.
    dataset._cache[key] = (program, plan(dataset, program, size))
    return dataset._cache[key][1]
