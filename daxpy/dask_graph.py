"""Task graphs of partitioned pipeline runs, for :mod:`daxpy.dask`.

Structured grids: every field is rechunked into slabs, its halo comes through
Dask's overlap (what ``map_overlap`` does) with ``boundary='none'``, and one
``blockwise`` task per block runs the pipeline on its window
(:func:`daxpy.partition.run_window`), returning a tuple of owned results that
one ``getitem`` layer per output unpacks; a block learns where it sits from
the global point indices it reads and owns, which travel as tiny overlapped
arrays. Unstructured grids: one task per piece (:func:`daxpy.ghosts.run_piece`),
and one task per range of point ids gathers the owned point results.

Examples
--------
>>> pieces, memory = resources(on_gpu=False)
>>> pieces >= 1
True
"""

from __future__ import annotations

import operator
import os

import dask
import dask.array as da
import numpy as np

from .ghosts import partition_cells, run_piece
from .partition import Window, merge_small, plan_chunks, run_window

AXES = ("z", "y", "x")

MEMORY_FRACTION = 0.25
"""Share of a worker's memory (GPU memory on GPU workers) one block may use:
the rest holds the resident fields, Dask's halo copies and the outputs."""


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


def _meta(on_device: bool, ndim: int, dtype):
    """An empty array of the chunks' kind (CuPy when results stay on the device)."""
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
    """Cell chunks under point chunks: the last one has a layer less along cell axes."""
    return tuple(c[:-1] + (c[-1] - 1,) if n > 1 else c for c, n in zip(point_chunks, dims_c))


def _structured_chunks(dgrid, probe, chunks, depth, has_cells, on_gpu):
    """Point chunks (C order): planned, kept or given, then merged so every
    chunk holds ``depth`` layers (its last cells too) for the neighbours' halos."""
    shape = dgrid.topology.point_shape()
    if isinstance(chunks, str) and chunks == "auto":
        pieces, memory = resources(on_gpu)
        chunks = plan_chunks(dgrid.topology.dims, probe.bytes_per_point(),
                             int(memory * MEMORY_FRACTION), pieces, depth)
    elif isinstance(chunks, int):
        chunks = plan_chunks(dgrid.topology.dims, 1, 1 << 62, chunks, depth)
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


def structured_outputs(dgrid, program, probe, chunks, on_gpu: bool) -> dict:
    """Lazy outputs of ``program`` over a structured DaskGrid, in C-order layout.

    Parameters
    ----------
    dgrid : daxpy.dask.DaskGrid
        Structured topology and C-order Dask fields.
    program : daxpy.pipeline_probe.StagesRunner
        What each block runs; ``program.outputs`` names the results.
    probe : daxpy.pipeline_probe.Probe
        The pipeline's depth and output dtypes.
    chunks : "auto", None or tuple
        See :meth:`daxpy.dask.DaskPipeline.run`.
    on_gpu : bool
        Plan chunks from GPU memory rather than host memory.

    Returns
    -------
    dict of str to dask.array.Array

    Examples
    --------
    >>> import numpy as np, daxpy, daxpy.dask
    >>> from daxpy.pipeline_probe import StagesRunner, probe
    >>> d = daxpy.dask.DaskGrid(daxpy.UniformGrid(dims=(6,)), {"p": np.arange(6.0)})
    >>> pipe = daxpy.pipeline(d.standin())
    >>> _ = pipe.point_to_cell("p", "c")
    >>> run = StagesRunner(pipe.stages, {"c": "cells"}, "cpu", "host")
    >>> out = structured_outputs(d, run, probe(d.standin(), pipe.stages), ((3, 3),), False)
    >>> out["c"].chunks, out["c"].compute().ravel().tolist()
    (((1,), (1,), (3, 2)), [0.5, 1.5, 2.5, 3.5, 4.5])
    """
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
    """The ``j``-th result of every block's tuple, as one Dask array."""
    _, dtype, comps = probe.fields[name]
    chunks = tuple(spatial_chunks) + tuple((c,) for c in comps)
    return packed.map_blocks(operator.getitem, j, chunks=chunks, dtype=dtype,
                             new_axis=list(range(3, 3 + len(comps))) or None,
                             meta=_meta(program.to == "device", len(chunks), dtype))


# -- unstructured grids -----------------------------------------------------------

def _piece_block(program, piece, point_names, cell_names, *values):
    """One piece: its gathered fields in, its owned results out."""
    split = len(point_names)
    return run_piece(program, piece, dict(zip(point_names, values[:split])),
                     dict(zip(cell_names, values[split:])), program.outputs)


def _gather_points(start, stop, name, parts):
    """Owned point results of several pieces, put in global order over [start, stop)."""
    first = parts[0][1][name]
    if isinstance(first, np.ndarray):
        xp = np
    else:
        import cupy as xp
    out = xp.empty((stop - start,) + first.shape[1:], dtype=first.dtype)
    for ids, result, where in parts:
        out[ids - start] = result[name][where]
    return out


def unstructured_outputs(dgrid, program, probe, chunks, on_gpu: bool) -> dict:
    """Lazy outputs of ``program`` over an unstructured DaskGrid, flat ``(n[, c])``.

    ``chunks`` is a number of pieces, or "auto" (the workers' count, more if
    a piece would not fit ``MEMORY_FRACTION`` of a worker's memory).

    Examples
    --------
    >>> import numpy as np, daxpy, daxpy.dask
    >>> from daxpy.celltypes import LINE
    >>> from daxpy.pipeline_probe import StagesRunner, probe
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {LINE: [[0, 1], [1, 2], [2, 3]]})
    >>> d = daxpy.dask.DaskGrid(g, cell_data={"c": np.array([1.0, 2.0, 4.0])})
    >>> pipe = daxpy.pipeline(d.standin())
    >>> _ = pipe.cell_to_point("c", "p")
    >>> run = StagesRunner(pipe.stages, {"p": "points"}, "cpu", "host")
    >>> unstructured_outputs(d, run, probe(d.standin(), pipe.stages), 2, False)["p"].compute()
    array([1. , 1.5, 3. , 4. ])
    """
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
        results.append(dask.delayed(_piece_block, pure=False)(
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
                value = dask.delayed(_gather_points, pure=False)(start, stop, name,
                                                                contributions)
            blocks.append(da.from_delayed(value, (rows,) + comps, dtype=dtype,
                                          meta=_meta(program.to == "device",
                                                     1 + len(comps), dtype)))
        outputs[name] = da.concatenate(blocks) if blocks else da.zeros(
            (0,) + comps, dtype=dtype)
    return outputs


