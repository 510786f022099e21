"""Scale out with Dask: run daxpy pipelines over grids whose fields are Dask arrays.

Install with ``pip install daxpy[dask]``. A :class:`DaskGrid` is a daxpy grid
whose fields are Dask arrays, with NumPy chunks on CPU workers or CuPy chunks
on GPU workers (dask-cuda, one worker per GPU). :func:`pipeline` gives the
usual lazy pipeline over it; its ``run`` returns a :class:`DaskGrid` of lazy
results, equal to the single-domain run of the same pipeline.

Structured grids are cut into slabs (:func:`daxpy.partition.plan_chunks`) and
exchange halos through Dask's overlap (what ``map_overlap`` does), with
``boundary='none'`` so that a stencil is one-sided only at the grid's true
border. The depth is the longest chain of worklet reaches in the pipeline
(:func:`daxpy.partition.worklet_reach`); every block runs the pipeline on its
sub-grid, which keeps the true coordinates, and keeps what it owns. Fields
live in C order: a point field is ``(nz, ny, nx)`` or ``(nz, ny, nx, c)``, a
cell field the same over the cells. Unstructured grids are cut into cell
ranges with ghost levels (:func:`daxpy.partition.partition_cells`); fields
there are ``(n,)`` or ``(n, c)``.

Maps must not depend on a value's position in the whole field: a BiasAdd
whose bias spans several tuples does, and gives other results per block.

Examples
--------
>>> import numpy as np, daxpy, daxpy.dask
>>> grid = daxpy.UniformGrid(dims=(6, 5, 8), spacing=(0.5, 0.5, 0.5))
>>> p = grid.points()[:, 0] ** 2
>>> dgrid = daxpy.dask.DaskGrid(grid, point_data={"p": p})
>>> pipe = daxpy.dask.pipeline(dgrid)
>>> out = pipe.gradient("p").magnitude().point_to_cell()
>>> result = pipe.run(backend="cpu", chunks=((3, 5), (5,), (6,)))
>>> single = daxpy.pipeline(grid.with_fields(point_data={"p": p}))
>>> _ = single.gradient("p").magnitude().point_to_cell()
>>> expected = single.run(backend="cpu").cell_data[out.name]
>>> bool((result.compute().cell_data[out.name] == expected).all())
True
"""

from __future__ import annotations

import copy
import math
import operator
import os
from typing import Any

import dask
import dask.array as da
import numpy as np

from .arrays import is_device_array, to_host
from .dispatch import traced
from .errors import ArgumentError, FieldError
from .partition import (Window, partition_cells, plan_chunks, merge_small, run_piece,
                        run_window, worklet_reach)
from .pipeline import Pipeline, Stage
from .pipeline_run import run_stages
from .structured import StructuredGrid
from .unstructured import UnstructuredGrid

AXES = ("z", "y", "x")

MEMORY_FRACTION = 0.25
"""Share of a worker's memory (GPU memory on GPU workers) one block may use:
the rest holds the resident fields, Dask's halo copies and the outputs."""


class DaskGrid:
    """A daxpy grid (its topology) with fields held as Dask arrays.

    Parameters
    ----------
    grid : DataSet
        Gives the topology; its own fields are wrapped too (one chunk each).
    point_data, cell_data : dict of str to array, optional
        More fields: Dask, NumPy or CuPy arrays. Structured grids take them
        in C order, ``(nz, ny, nx[, c])`` at points and the same over cells, or
        flat ``(n[, c])``; unstructured grids flat.

    Examples
    --------
    >>> import numpy as np, dask.array as da, daxpy, daxpy.dask
    >>> g = daxpy.UniformGrid(dims=(4, 3, 2))
    >>> d = DaskGrid(g, point_data={"v": da.ones((2, 3, 4, 3), chunks=(1, 3, 4, 3))})
    >>> d.point_data["v"].shape, d.topology.point_data.keys() == set()
    ((2, 3, 4, 3), True)
    """

    def __init__(self, grid, point_data=None, cell_data=None):
        from .filters._base import as_dataset

        grid = as_dataset(grid)
        self.topology = grid.with_fields()
        for data in (self.topology.point_data, self.topology.cell_data):
            for name in list(data):
                del data[name]
        self.point_data: dict[str, Any] = {}
        self.cell_data: dict[str, Any] = {}
        for association, given in (("points", grid.point_data), ("points", point_data),
                                   ("cells", grid.cell_data), ("cells", cell_data)):
            for name, values in (given or {}).items():
                self.add(name, values, association)

    @property
    def structured(self) -> bool:
        """True for uniform, rectilinear and curvilinear grids."""
        return isinstance(self.topology, StructuredGrid)

    def field_shape(self, association: str) -> tuple[int, ...]:
        """Shape of a one-component field at ``association`` (C order if structured)."""
        if not self.structured:
            return (self.topology.n_points if association == "points" else self.topology.n_cells,)
        return (self.topology.point_shape() if association == "points"
                else self.topology.cell_shape())

    def add(self, name: str, values: Any, association: str) -> None:
        """Add a field, checking its shape; NumPy and CuPy arrays become one chunk.

        Raises
        ------
        FieldError
            If the shape fits neither layout of ``association``.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> d = DaskGrid(daxpy.UniformGrid(dims=(3, 2)))
        >>> d.add("t", np.zeros(6), "points")
        >>> d.point_data["t"].shape
        (1, 2, 3)
        """
        array = values if isinstance(values, da.Array) else da.from_array(
            values, chunks=values.shape, asarray=False)
        base = self.field_shape(association)
        flat = (math.prod(base),)
        if array.shape[:len(base)] == base and array.ndim in (len(base), len(base) + 1):
            shaped = array
        elif array.shape[:1] == flat and array.ndim in (1, 2):
            shaped = array.reshape(base + array.shape[1:])
        else:
            raise FieldError(
                f"{association[:-1]} field {name!r} has shape {array.shape}; expected "
                f"{base} or {flat} (optionally with a component axis)")
        (self.point_data if association == "points" else self.cell_data)[name] = shaped

    def fields(self):
        """Every field as ``(name, association, array)``."""
        for association, data in (("points", self.point_data), ("cells", self.cell_data)):
            for name, array in data.items():
                yield name, association, array

    def standin(self):
        """The topology with zero-memory fields of the right dtypes and shapes
        (what a pipeline is built against).

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> DaskGrid(daxpy.UniformGrid(dims=(3,)), {"t": np.ones(3)}).standin().point_data["t"].strides
        (0,)
        """
        flat = {}
        for name, association, array in self.fields():
            rows = math.prod(self.field_shape(association))
            placeholder = np.broadcast_to(np.ones(1, dtype=array.dtype),
                                          (rows,) + _components(self, association, array))
            flat.setdefault(association, {})[name] = placeholder
        return self.topology.with_fields(flat.get("points"), flat.get("cells"))

    def persist(self) -> "DaskGrid":
        """Persist every field (on the cluster's workers); return a new DaskGrid.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> d = DaskGrid(daxpy.UniformGrid(dims=(3,)), {"t": np.ones(3)}).persist()
        >>> float(d.point_data["t"].sum().compute())
        3.0
        """
        names = list(self.fields())
        arrays = dask.persist(*(array for _, _, array in names))
        result = DaskGrid(self.topology)
        for (name, association, _), array in zip(names, arrays):
            (result.point_data if association == "points" else result.cell_data)[name] = array
        return result

    def compute(self):
        """Gather every field into a daxpy grid of NumPy arrays, flat ``(n[, c])``.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> DaskGrid(daxpy.UniformGrid(dims=(2, 2)), {"t": np.arange(4.0)}).compute().point_data["t"]
        array([0., 1., 2., 3.])
        """
        names = list(self.fields())
        values = dask.compute(*(array for _, _, array in names))
        flat = {"points": {}, "cells": {}}
        for (name, association, array), value in zip(names, values):
            rows = math.prod(self.field_shape(association))
            flat[association][name] = to_host(value).reshape(
                (rows,) + _components(self, association, array))
        return self.topology.with_fields(flat["points"], flat["cells"])

    def __repr__(self) -> str:
        return (f"DaskGrid({self.topology.topology_name}, points={list(self.point_data)}, "
                f"cells={list(self.cell_data)})")


def _components(dgrid: DaskGrid, association: str, array) -> tuple[int, ...]:
    return tuple(array.shape[len(dgrid.field_shape(association)):])


# -- what each block runs, and what the pipeline needs around it ----------------

class _Program:
    """The stages every block runs; picklable, so it travels to the workers."""

    def __init__(self, stages, outputs: dict[str, str], backend: str, to: str):
        self.stages, self.outputs, self.backend, self.to = stages, outputs, backend, to

    def __call__(self, dataset):
        result, _ = run_stages(dataset, self.stages, list(self.outputs), self.backend, self.to)
        return result


class _Probe:
    """What a pipeline does, read off one run on a few points of the grid.

    Attributes
    ----------
    depth : int
        Longest chain of worklet reaches (points of halo every block needs).
    fields : dict of str to (association, dtype, components)
        Every field the run holds: sources and each stage's outputs.
    produced : dict of int to list of str
        Fields each stage added.
    """

    def __init__(self, dgrid: DaskGrid, stages):
        working = _probe_dataset(dgrid)
        self.fields = {}
        self.produced = {}
        need: dict[int, int] = {}
        self.depth = 0
        self._note(working)
        for stage in stages:
            configured = copy.copy(stage.filter)
            configured.backend = "cpu"
            before = set(working.point_data) | set(working.cell_data)
            with traced() as seen, np.errstate(all="ignore"):
                working = configured.execute(working)
            self.produced[stage.index] = [n for n in (*working.point_data, *working.cell_data)
                                          if n not in before]
            self._note(working)
            reach = sum(worklet_reach(w) for w in seen)
            need[stage.index] = reach + max((need[d] for d in stage.depends_on), default=0)
            self.depth = max(self.depth, need[stage.index])

    def _note(self, dataset) -> None:
        for association in ("points", "cells"):
            for name, values in dataset.fields(association).items():
                comps = () if values.ndim == 1 else (int(values.shape[1]),)
                self.fields[name] = (association, np.dtype(values.dtype), comps)

    def bytes_per_point(self) -> int:
        """Bytes per point of every field of the run together (an upper bound)."""
        return sum(dtype.itemsize * math.prod(comps) for _, dtype, comps in self.fields.values())


def _probe_dataset(dgrid: DaskGrid):
    """A few points of the grid with fields of ones (ones keep log, sqrt... finite)."""
    grid = dgrid.topology
    if dgrid.structured:
        from .partition import window_grid

        hi = tuple(min(n, 3) for n in grid.dims)
        small = window_grid(grid, Window((0, 0, 0), hi, (0, 0, 0), hi))
    elif grid.n_cells:
        corners = grid.connectivity[grid.offsets[0]:grid.offsets[1]]
        small = UnstructuredGrid(to_host(grid.points())[corners], np.arange(len(corners)),
                                 [0, len(corners)], grid.cell_types[:1])
    else:
        small = grid
    data = {"points": {}, "cells": {}}
    for name, association, array in dgrid.fields():
        rows = small.n_points if association == "points" else small.n_cells
        data[association][name] = np.ones((rows,) + _components(dgrid, association, array),
                                          dtype=array.dtype)
    return small.with_fields(data["points"], data["cells"])


# -- where the blocks go --------------------------------------------------------

def _client():
    try:
        from distributed import default_client

        return default_client()
    except (ImportError, ValueError):
        return None


def _device_memory() -> int:
    import cupy

    return int(cupy.cuda.runtime.memGetInfo()[1])


def _host_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def resources(on_gpu: bool) -> tuple[int, int]:
    """``(pieces, bytes)``: how many blocks run at once, and the memory of each.

    From the current ``distributed`` client's workers if there is one (GPU
    memory on GPU workers), else from this machine.

    Examples
    --------
    >>> pieces, memory = resources(on_gpu=False)
    >>> pieces >= 1 and memory > 0
    True
    """
    client = _client()
    if client is not None:
        workers = client.scheduler_info(n_workers=-1)["workers"]
        if on_gpu:
            memory = min(client.run(_device_memory).values())
            return len(workers), memory
        threads = sum(w["nthreads"] for w in workers.values())
        memory = min(w["memory_limit"] / max(w["nthreads"], 1) for w in workers.values())
        return threads, int(memory) or _host_memory() // max(threads, 1)
    if on_gpu:
        return 1, _device_memory()
    cores = os.cpu_count() or 1
    return cores, _host_memory() // cores


def _on_gpu(dgrid: DaskGrid, backend: str) -> bool:
    chunked_on_gpu = any(is_device_array(array._meta) for _, _, array in dgrid.fields())
    return chunked_on_gpu or backend == "cuda"


def _meta(on_device: bool, ndim: int, dtype):
    if on_device:
        import cupy

        return cupy.empty((0,) * ndim, dtype=dtype)
    return np.empty((0,) * ndim, dtype=dtype)


# -- structured grids -------------------------------------------------------------

def _structured_block(iz, iy, ix, oz, oy, ox, *blocks, program, topology, outputs,
                      point_names, cell_names, curvilinear):
    """One block: rebuild its window from the global indices it read and owns."""
    read, owned = (ix, iy, iz), (ox, oy, oz)
    window = Window(tuple(int(i[0]) for i in read), tuple(int(i[-1]) + 1 for i in read),
                    tuple(int(i[0]) for i in owned), tuple(int(i[-1]) + 1 for i in owned))
    n_points = len(point_names)
    points = dict(zip(point_names, blocks[:n_points]))
    cells = {}
    # Each cell block runs over the cells the read box's points carry, plus
    # (except at the far border) one more: the sub-grid has one cell less.
    cell_stop = tuple(slice(0, h - l - 1) if n > 1 else slice(0, 1)
                      for l, h, n in zip(window.lo[::-1], window.hi[::-1], topology.dims[::-1]))
    for name, block in zip(cell_names, blocks[n_points:n_points + len(cell_names)]):
        cells[name] = block[cell_stop]
    coordinates = blocks[-1] if curvilinear else None
    result = run_window(program, topology, window, points, cells, outputs, coordinates)
    return tuple(result[name] for name in outputs)


class _CurvilinearTopology:
    """Family, name and dims of a curvilinear grid: blocks bring their own points."""

    family = "curvilinear"

    def __init__(self, grid):
        self.name, self.dims = grid.name, grid.dims


def _cell_chunks(point_chunks, dims_c):
    return tuple(c[:-1] + (c[-1] - 1,) if n > 1 else c for c, n in zip(point_chunks, dims_c))


def _structured_chunks(dgrid, probe, chunks, depth, has_cells, on_gpu):
    shape = dgrid.topology.point_shape()
    if isinstance(chunks, str) and chunks == "auto":
        pieces, memory = resources(on_gpu)
        chunks = plan_chunks(dgrid.topology.dims, probe.bytes_per_point(),
                             int(memory * MEMORY_FRACTION), pieces, depth)
    elif chunks is None:
        first = next(iter(dgrid.point_data.values()), None)
        chunks = first.chunks[:3] if first is not None else tuple((n,) for n in shape)
    else:
        # Leading axes of one point may be left out: ((2, 3),) for a 1-D grid.
        given = tuple(chunks)
        chunks = da.core.normalize_chunks(
            tuple((n,) for n in shape[:3 - len(given)]) + given, shape)
    last_minimum = depth + 1 if has_cells else max(depth, 1)
    return tuple(merge_small(c, max(depth, 1), last_minimum) if n > 1 else (n,)
                 for c, n in zip(chunks, shape))


def _run_structured(dgrid, program, probe, chunks, on_gpu):
    topology = dgrid.topology
    shape = topology.point_shape()
    has_cells = bool(dgrid.cell_data) or any(a == "cells" for a in program.outputs.values())
    depth = max(probe.depth, 1 if has_cells else 0)
    point_chunks = _structured_chunks(dgrid, probe, chunks, depth, has_cells, on_gpu)
    cell_chunks = _cell_chunks(point_chunks, shape)
    # An axis in one chunk has no neighbour to trade halos with.
    overlap_depth = {a: (depth if len(point_chunks[a]) > 1 else 0) for a in range(3)}

    def halo(array, spatial_chunks):
        extra = tuple((n,) for n in array.shape[3:])
        rechunked = array.rechunk(spatial_chunks + extra)
        depths = {**overlap_depth, **{a: 0 for a in range(3, array.ndim)}}
        return da.overlap.overlap(rechunked, depth=depths, boundary="none")

    args = []
    # Each block learns where it sits from the global point indices it reads
    # and owns along each axis (tiny arrays, overlapped like the fields).
    for axis, index in zip(range(3), AXES):
        positions = da.from_array(np.arange(shape[axis]), chunks=(point_chunks[axis],))
        args.append((da.overlap.overlap(positions, depth={0: overlap_depth[axis]},
                                        boundary="none"), (index,)))
    for axis, index in zip(range(3), AXES):
        args.append((da.from_array(np.arange(shape[axis]), chunks=(point_chunks[axis],)),
                     (index,)))
    for association, data, spatial in (("points", dgrid.point_data, point_chunks),
                                       ("cells", dgrid.cell_data, cell_chunks)):
        for n, array in enumerate(data.values()):
            args.append((halo(array, spatial),
                         AXES + tuple(f"{association}{n}c" for _ in array.shape[3:])))
    curvilinear = topology.family == "curvilinear"
    if curvilinear:
        points = da.from_array(topology.points().reshape(shape + (3,)), asarray=False,
                               chunks=point_chunks + ((3,),))
        args.append((halo(points, point_chunks), AXES + ("xyz",)))
        template = _CurvilinearTopology(topology)
    else:
        template = topology
    flat_args = [item for pair in args for item in pair]
    packed = da.blockwise(
        _structured_block, AXES, *flat_args, align_arrays=False, concatenate=True,
        meta=np.empty((0, 0, 0), dtype=object), program=program, topology=template,
        outputs=program.outputs, point_names=list(dgrid.point_data),
        cell_names=list(dgrid.cell_data), curvilinear=curvilinear)
    return {name: _unpack(packed, j, name, program, probe,
                          point_chunks if program.outputs[name] == "points" else cell_chunks)
            for j, name in enumerate(program.outputs)}


def _unpack(packed, j, name, program, probe, spatial_chunks):
    _, dtype, comps = probe.fields[name]
    chunks = tuple(spatial_chunks) + tuple((c,) for c in comps)
    return packed.map_blocks(operator.getitem, j, chunks=chunks, dtype=dtype,
                             new_axis=list(range(3, 3 + len(comps))) or None,
                             meta=_meta(program.to == "device", len(chunks), dtype))


# -- unstructured grids -----------------------------------------------------------

def _piece_block(program, piece, point_names, cell_names, *values):
    split = len(point_names)
    return run_piece(program, piece, dict(zip(point_names, values[:split])),
                     dict(zip(cell_names, values[split:])), program.outputs)


def _gather_points(start, stop, name, parts):
    """Owned point results of several pieces, put in global order over [start, stop)."""
    first = parts[0][1][name]
    xp = np if isinstance(first, np.ndarray) else __import__("cupy")
    out = xp.empty((stop - start,) + first.shape[1:], dtype=first.dtype)
    for ids, result, where in parts:
        out[ids - start] = result[name][where]
    return out


def _run_unstructured(dgrid, program, probe, chunks, on_gpu):
    grid = dgrid.topology
    if isinstance(chunks, int):
        pieces = chunks
    else:
        count, memory = resources(on_gpu)
        total = probe.bytes_per_point() * max(grid.n_points, grid.n_cells)
        pieces = max(count, -(-total // max(int(memory * MEMORY_FRACTION), 1)))
    parts = partition_cells(grid, min(pieces, max(grid.n_cells, 1)), probe.depth)
    results = []
    for piece in parts:
        gathered = [array[piece.point_ids] for array in dgrid.point_data.values()]
        gathered += [array[piece.cell_ids] for array in dgrid.cell_data.values()]
        results.append(dask.delayed(_piece_block, pure=True)(
            program, piece, list(dgrid.point_data), list(dgrid.cell_data), *gathered))
    owned_ids = [piece.point_ids[piece.owned_points] for piece in parts]
    bounds = np.linspace(0, grid.n_points, len(parts) + 1).astype(np.int64)
    outputs = {}
    for name, association in program.outputs.items():
        _, dtype, comps = probe.fields[name]
        blocks = []
        for k, piece in enumerate(parts):
            if association == "cells":
                rows = piece.owned_cells.stop - piece.owned_cells.start
                value = results[k][name]
            else:
                start, stop = int(bounds[k]), int(bounds[k + 1])
                rows = stop - start
                contributions = []
                for ids, result in zip(owned_ids, results):
                    where = np.flatnonzero((ids >= start) & (ids < stop))
                    if where.size:
                        contributions.append((ids[where], result, where))
                if not contributions:
                    continue
                value = dask.delayed(_gather_points, pure=True)(start, stop, name,
                                                                contributions)
            blocks.append(da.from_delayed(value, (rows,) + comps, dtype=dtype,
                                          meta=_meta(program.to == "device",
                                                     1 + len(comps), dtype)))
        outputs[name] = da.concatenate(blocks) if blocks else da.zeros(
            (0,) + comps, dtype=dtype)
    return outputs


# -- the user's verbs ---------------------------------------------------------------

def _as_dask_grid(data) -> DaskGrid:
    return data if isinstance(data, DaskGrid) else DaskGrid(data)


def _execute(dgrid: DaskGrid, stages, wanted, backend: str, to: str, chunks) -> DaskGrid:
    if to not in ("host", "device"):
        raise ArgumentError(f"to must be 'host' or 'device', got {to!r}")
    probe = _Probe(dgrid, stages)
    outputs = {name: probe.fields[name][0] for name in wanted}
    program = _Program(stages, outputs, backend, to)
    runner = _run_structured if dgrid.structured else _run_unstructured
    arrays = runner(dgrid, program, probe, chunks, _on_gpu(dgrid, backend))
    result = DaskGrid(dgrid.topology)
    for name, array in arrays.items():
        (result.point_data if outputs[name] == "points" else result.cell_data)[name] = array
    return result


class DaskPipeline(Pipeline):
    """A lazy pipeline over a :class:`DaskGrid`; build it with :func:`pipeline`.

    Verbs, branching and printing are :class:`daxpy.Pipeline`'s; only ``run``
    differs: it returns a :class:`DaskGrid` of lazy results.
    """

    def __init__(self, dgrid: DaskGrid):
        super().__init__(dgrid.standin())
        self.dask_grid = dgrid

    def run(self, backend: str = "auto", outputs=None, to: str = "host", chunks="auto"):
        """Build the task graph of the pipeline; return a DaskGrid of the outputs.

        Parameters
        ----------
        backend : {"auto", "cpu", "cuda"}
            Where each block runs; ``"auto"`` is decided on each worker.
        outputs : list of Node or str, optional
            Fields to return; by default the outputs no other stage reads.
        to : {"host", "device"}
            Whether the result chunks are NumPy or CuPy arrays.
        chunks : "auto", None, tuple or int
            Structured grids: ``"auto"`` plans slabs from the workers' memory
            and the pipeline's bytes per point, None keeps the fields' chunks,
            a tuple gives Dask chunks over ``(nz, ny, nx)``. Unstructured grids:
            ``"auto"`` or a number of pieces.

        Returns
        -------
        DaskGrid
            Lazy: call ``compute()`` or ``persist()`` on it.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> d = DaskGrid(daxpy.UniformGrid(dims=(5,)), {"p": np.arange(5.0) ** 2})
        >>> pipe = pipeline(d)
        >>> g = pipe.gradient("p")
        >>> pipe.run(backend="cpu", chunks=((2, 3),)).compute().point_data[g.name][:, 0].tolist()
        [1.0, 2.0, 4.0, 6.0, 7.0]
        """
        if chunks is not None and not isinstance(chunks, (str, tuple, int)):
            raise ArgumentError(f"chunks must be 'auto', None, a tuple or an int, got {chunks!r}")
        return _execute(self.dask_grid, self.stages, self._output_names(outputs), backend,
                        to, chunks)


def pipeline(data) -> DaskPipeline:
    """Start a lazy pipeline over a DaskGrid (or a daxpy/VTK dataset, wrapped).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> d = DaskGrid(daxpy.UniformGrid(dims=(3, 3)), {"p": np.zeros(9)})
    >>> print(pipeline(d).gradient("p").pipeline)
    Pipeline over UniformGrid (uniform2d, 9 points)
      [1] gradient(p) -> gradient_1
    """
    return DaskPipeline(_as_dask_grid(data))


def apply(flt, data, backend: str = "auto", to: str = "host", chunks="auto") -> DaskGrid:
    """Run one filter over a DaskGrid; return a DaskGrid of the fields it adds.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.filters import CellToPoint
    >>> d = DaskGrid(daxpy.UniformGrid(dims=(4,)), cell_data={"c": np.array([0.0, 2.0, 4.0])})
    >>> out = apply(CellToPoint("c", result="p"), d, backend="cpu", chunks=((2, 2),))
    >>> out.compute().point_data["p"].tolist()
    [0.0, 1.0, 3.0, 4.0]
    """
    dgrid = _as_dask_grid(data)
    stage = Stage(1, type(flt).__name__, flt, (), "")
    added = _Probe(dgrid, [stage]).produced[1]
    if not added:
        raise ArgumentError(f"{type(flt).__name__} adds no field to run")
    return _execute(dgrid, [Stage(1, stage.verb, flt, (), added[0])], added, backend, to,
                    chunks)
