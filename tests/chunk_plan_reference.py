"""The chunk plan of an unstructured grid as NumPy's plain passes make it, written
out step by step (no caches, no threads, no shortcuts): what the planner of
:mod:`daxpy.stream.chunks` must give, chunk for chunk and id for id."""

import numpy as np


def _corner_bounds(grid):
    ids = grid.connectivity.astype(np.int64)
    starts = grid.offsets[:-1].astype(np.int64)
    if grid.n_cells == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.minimum.reduceat(ids, starts), np.maximum.reduceat(ids, starts)


def _held_cells(lowest, highest, cells_owned, points_owned, levels):
    """Owned cells, every cell whose corner range meets the points, and ``levels``
    rings more (each ring met by the point range of the cells held so far)."""
    keep = np.zeros(lowest.shape[0], bool)
    keep[cells_owned[0]:cells_owned[1]] = True
    first, stop = points_owned
    held = np.flatnonzero(keep)
    for _ in range(levels + 1):
        keep |= (lowest < stop) & (highest >= first)
        held = np.flatnonzero(keep)
        if held.size == 0:
            break
        first, stop = int(lowest[held].min()), int(highest[held].max()) + 1
    return held


def _selection(ids):
    if ids.size and int(ids[-1]) - int(ids[0]) + 1 == ids.size:
        return slice(int(ids[0]), int(ids[-1]) + 1)
    return slice(0, 0) if ids.size == 0 else ids


def reference_chunks(grid, levels, cells):
    """Per chunk: the point ids and cell ids it reads, its owned points and cells
    (local slices), and its sub-grid's points, connectivity, offsets and cell types.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3), {LINE: np.c_[:4, 1:5]})
    >>> [c["cell_ids"] for c in reference_chunks(g, 0, 2)]
    [slice(0, 2, None), slice(1, 4, None)]
    """
    lowest, highest = _corner_bounds(grid)
    count = max(-(-grid.n_cells // max(int(cells), 1)), 1)
    bounds = np.linspace(0, grid.n_cells, count + 1).round().astype(np.int64)
    starts = lowest[bounds[1:-1]] if grid.n_cells else np.zeros(count - 1, np.int64)
    splits = np.concatenate([[0], starts, [grid.n_points]]).astype(np.int64)
    splits = np.minimum(np.maximum.accumulate(splits), grid.n_points)
    offsets = grid.offsets.astype(np.int64)
    found = []
    for k in range(count):
        (c0, c1), (p0, p1) = bounds[k:k + 2].tolist(), splits[k:k + 2].tolist()
        held = _held_cells(lowest, highest, (c0, c1), (p0, p1), levels)
        sizes = offsets[held + 1] - offsets[held]
        local_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        # Each held cell's corners in turn: the position of every corner id.
        slot = np.arange(local_offsets[-1]) - np.repeat(local_offsets[:-1], sizes)
        corners = grid.connectivity[np.repeat(offsets[held], sizes) + slot]
        first, stop = p0, p1
        if held.size:
            first, stop = min(p0, int(lowest[held].min())), max(p1, int(highest[held].max()) + 1)
        if stop - first <= 2 * (corners.size + (p1 - p0)) + 1024:
            point_read = slice(first, stop)
            narrow = np.int32 if stop - first <= np.iinfo(np.int32).max else np.int64
            local = (corners.astype(np.int64) - first).astype(narrow)
            point_local = p0 - first
        else:
            point_read = np.union1d(np.unique(corners), np.arange(p0, p1, dtype=np.int64))
            local = np.searchsorted(point_read, corners)
            point_local = int(np.searchsorted(point_read, p0))
        cell_local = int(np.searchsorted(held, c0))
        found.append({
            "point_ids": point_read, "cell_ids": _selection(held),
            "owned_points": slice(point_local, point_local + p1 - p0),
            "owned_cells": slice(cell_local, cell_local + c1 - c0),
            "points": grid.points()[point_read], "connectivity": local,
            "offsets": local_offsets,
            "cell_types": grid.cell_types[held]})
    return found


def assert_same_chunks(chunks, reference):
    """The planner's chunks are the reference's: same selections, same arrays, same dtypes."""
    assert len(chunks) == len(reference)
    for chunk, want in zip(chunks, reference):
        got = {"point_ids": chunk.point_ids, "cell_ids": chunk.cell_ids,
               "owned_points": chunk.owned_points, "owned_cells": chunk.owned_cells,
               "points": chunk.grid.points(), "connectivity": chunk.grid.connectivity,
               "offsets": chunk.grid.offsets, "cell_types": chunk.grid.cell_types}
        for name, value in want.items():
            if isinstance(value, np.ndarray):
                assert isinstance(got[name], np.ndarray), name
                assert got[name].dtype == value.dtype, (name, got[name].dtype, value.dtype)
                np.testing.assert_array_equal(got[name], value, err_msg=name)
            else:
                assert got[name] == value, (name, got[name], value)
