"""Task graphs of partitioned pipeline runs, for :mod:`daxpy.dask`.

Structured grids: one task per block runs the pipeline on its window
(:func:`daxpy.data.partition.run_window`); the window (a
:class:`~daxpy.data.decomposition.Piece`) is known when the graph is built and is written into the task. Each field comes
as the block's own chunk (rechunked only where its chunks are not the plan's)
plus small ``getitem`` tasks that cut the ``depth`` boundary layers off each
neighbour's chunk where that chunk lives, so only halos travel (what
``map_overlap`` does, ``boundary='none'``, with fewer tasks). Unstructured
grids: one task per piece (:func:`daxpy.distributed.ghosts.run_piece`), and one task per
range of point ids gathers the owned point results.

Examples
--------
>>> pieces, memory = resources(on_gpu=False)
>>> pieces >= 1
True
"""

from __future__ import annotations

import functools
import itertools
import operator
import os

import dask
import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from ..data.arrays import array_module
from .ghosts import partition_cells, run_piece
from ..data.decomposition import Piece, ids_of, read_count
from ..data.partition import merge_small, plan_chunks, run_window

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

def _structured_block(window, fields, points, *, program, topology, outputs, point_names,
                      cell_names):
    """One block: its fields over the window's read box in, its owned results out
    (the array itself for a single output, else a tuple in ``outputs`` order)."""
    split = len(point_names)
    result = run_window(program, topology, window, dict(zip(point_names, fields[:split])),
                        dict(zip(cell_names, fields[split:])), outputs, points)
    values = tuple(result[name] for name in outputs)
    return values[0] if len(values) == 1 else values


def _assemble(pieces, places, shape):
    """One field's read box from its own chunk and its neighbours' halo layers.

    The worklets need the box contiguous (the fields are used flat), so this
    one copy per block is made inside the block's own task, not as a task of
    its own; a block with no neighbour reads its chunk as it is, uncopied.
    """
    first = pieces[0]
    out = array_module(first).empty(tuple(shape) + first.shape[3:], dtype=first.dtype)
    for piece, place in zip(pieces, places):
        out[place] = piece
    return out


def _axis_pieces(sizes, lo, hi):
    """``(chunk, slice in the chunk, slice in the box)`` for every chunk of
    ``sizes`` that the range ``[lo, hi)`` of one axis crosses."""
    pieces, start = [], 0
    for chunk, size in enumerate(sizes):
        first, stop = max(lo, start), min(hi, start + size)
        if first < stop:
            pieces.append((chunk, slice(first - start, stop - start),
                           slice(first - lo, stop - lo)))
        start += size
    return pieces


def _read(array, box, block, halo_key, tasks):
    """The task argument that gives ``array`` over ``box`` (C-order ``(lo, hi)``
    per axis) to ``block``: its chunk's key when that is the box, else an
    :func:`_assemble` of it and of the halo layers cut from the neighbours.

    Each cut is a ``getitem`` task of its own (added to ``tasks``) on the
    neighbour's chunk: the scheduler runs it where that chunk lives, so only
    the ``depth`` layers travel, never a whole chunk.
    """
    sizes = array.chunks[:3]
    extra = (0,) * (array.ndim - 3)
    pieces, places = [], []
    for combo in itertools.product(*(_axis_pieces(s, lo, hi) for s, (lo, hi)
                                     in zip(sizes, box))):
        chunk = tuple(c for c, _, _ in combo)
        cut = tuple(s for _, s, _ in combo)
        key = (array.name,) + chunk + extra
        whole = all(s.start == 0 and s.stop == sizes[a][c] for a, (c, s, _) in enumerate(combo))
        if chunk != block or not whole:
            tasks[halo_key + (len(pieces),)] = (operator.getitem, key, cut)
            key = halo_key + (len(pieces),)
        pieces.append(key)
        places.append(tuple(s for _, _, s in combo))
    if len(pieces) == 1:
        return pieces[0]
    return (_assemble, pieces, places, tuple(hi - lo for lo, hi in box))


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


def _windows(point_chunks, shape, depth):
    """Every block's index and window (a :class:`Piece`): its chunk, grown by
    ``depth`` towards each neighbour (an axis in one chunk has none)."""
    bounds = [np.concatenate([[0], np.cumsum(c)]).tolist() for c in point_chunks]
    for block in itertools.product(*(range(len(c)) for c in point_chunks)):
        own = [(b[i], b[i + 1]) for b, i in zip(bounds, block)]
        read = [(max(lo - depth, 0), min(hi + depth, n)) for (lo, hi), n in zip(own, shape)]
        yield block, Piece(tuple(lo for lo, _ in read[::-1]), tuple(hi for _, hi in read[::-1]),
                           tuple(lo for lo, _ in own[::-1]), tuple(hi for _, hi in own[::-1]),
                           tuple(shape[::-1]))


def structured_outputs(dgrid, program, probe, chunks, on_gpu: bool) -> dict:
    """Lazy outputs of ``program`` over a structured DaskGrid, in C-order layout.

    One task per block runs the pipeline on its window; the window is written
    into the task when the graph is built. Its fields arrive as the block's
    own chunk (no rechunk where the chunks already are the plan's) and small
    ``getitem`` tasks cutting the ``depth`` boundary layers off each
    neighbour's chunk. With several outputs the task returns a tuple that one
    ``getitem`` task per output and block unpacks.

    Parameters
    ----------
    dgrid : daxpy.dask.DaskGrid
        Structured topology and C-order Dask fields.
    program : daxpy.distributed.runner.StagesRunner
        What each block runs; ``program.outputs`` names the results.
    probe : daxpy.engine.probe.Probe
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
    >>> from daxpy.distributed.runner import StagesRunner
    >>> from daxpy.engine.probe import probe
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
    sources = []
    for association, data, spatial in (("points", dgrid.point_data, point_chunks),
                                       ("cells", dgrid.cell_data, cell_chunks)):
        for array in data.values():
            wanted = spatial + tuple((n,) for n in array.shape[3:])
            sources.append((association, array if array.chunks == wanted
                            else array.rechunk(wanted)))
    curvilinear = topology.family == "curvilinear"
    coordinates = topology.points().reshape(shape + (3,)) if curvilinear else None
    template = _CurvilinearTopology(topology) if curvilinear else topology
    outputs = program.outputs
    token = tokenize([a.name for _, a in sources], point_chunks, depth, outputs, program,
                     template, coordinates)
    name = f"daxpy-window-{token}"
    run = functools.partial(_structured_block, program=program, topology=template,
                            outputs=outputs, point_names=list(dgrid.point_data),
                            cell_names=list(dgrid.cell_data))
    # A single output is the block task's own result: its key is the output's.
    single = len(outputs) == 1
    extra = (0,) * len(probe.fields[next(iter(outputs))][2]) if single else ()
    tasks = {}
    for block, window in _windows(point_chunks, shape, depth):
        boxes = {association: window.read_box(association)[::-1]
                 for association in ("points", "cells")}
        reads = [_read(array, boxes[association], block,
                       (f"daxpy-halo-{token}", n) + block, tasks)
                 for n, (association, array) in enumerate(sources)]
        points = None if coordinates is None else coordinates[tuple(
            slice(lo, hi) for lo, hi in boxes["points"])]
        tasks[(name,) + block + extra] = (run, window, reads, points)
    graph = HighLevelGraph.from_collections(name, tasks, dependencies=[a for _, a in sources])
    results = {}
    for j, (field, association) in enumerate(outputs.items()):
        _, dtype, comps = probe.fields[field]
        spatial = point_chunks if association == "points" else cell_chunks
        chunks = spatial + tuple((c,) for c in comps)
        meta = _meta(program.to == "device", len(chunks), dtype)
        if single:
            results[field] = da.Array(graph, name, chunks, meta=meta)
            continue
        packed = da.Array(graph, name, point_chunks, meta=np.empty((0, 0, 0), dtype=object))
        unpacked = f"daxpy-result{j}-{token}"
        layer = {(unpacked,) + block + (0,) * len(comps): (operator.getitem, (name,) + block, j)
                 for block in itertools.product(*(range(len(c)) for c in point_chunks))}
        results[field] = da.Array(HighLevelGraph.from_collections(unpacked, layer, [packed]),
                                  unpacked, chunks, meta=meta)
    return results


# -- unstructured grids -----------------------------------------------------------

def _piece_block(program, piece, point_names, cell_names, *values):
    """One piece: its gathered fields in, its owned results out."""
    split = len(point_names)
    return run_piece(program, piece, dict(zip(point_names, values[:split])),
                     dict(zip(cell_names, values[split:])), program.outputs)


def _gather_points(start, stop, name, parts):
    """Owned point results of several pieces, put in global order over [start, stop)."""
    first = parts[0][1][name]
    out = array_module(first).empty((stop - start,) + first.shape[1:], dtype=first.dtype)
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
    >>> from daxpy.data.celltypes import LINE
    >>> from daxpy.distributed.runner import StagesRunner
    >>> from daxpy.engine.probe import probe
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
    owned_ids = [ids_of(piece.written("points")) for piece in parts]
    bounds = np.linspace(0, grid.n_points, len(parts) + 1).astype(np.int64)
    outputs = {}
    for name, association in program.outputs.items():
        _, dtype, comps = probe.fields[name]
        blocks = []
        for k, piece in enumerate(parts):
            if association == "cells":
                rows = read_count(piece.owned("cells"))
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


