"""Chunk plans for host<->device streaming: what each chunk reads and owns.

A :class:`Chunk` is a piece of a grid that runs on its own: its sub-grid, the
global point and cell ids it reads (a contiguous ``slice`` wherever possible,
so a host array can be copied to the device without a gather), and the
contiguous ranges of global points and cells whose results it owns, with
where those sit in its own output. Owned ranges tile the grid, so each
chunk's owned results go straight to their place in the whole output.

- Structured grids are cut into slabs along their slowest axis
  (:func:`structured_chunks`), each grown by the pipeline's halo *depth*
  (:func:`daxpy.data.partition.slab_windows`). A slab of points is a contiguous range
  of a point field, and its cells a contiguous range of a cell field.
- Unstructured grids are cut into cell ranges and point ranges
  (:func:`unstructured_chunks`). A chunk owns cells ``[c0, c1)`` and points
  ``[p0, p1)``; it holds those cells, every cell that may use one of its
  points, and ``levels`` more rings of cells around them, with the points of
  all of them. Where point numbering has locality (as meshes written by
  most tools do) the points a chunk needs are a short contiguous range, read
  without a gather; otherwise they are gathered by id.

Nothing here needs a GPU; :mod:`daxpy.stream.streaming` runs the chunks.

Examples
--------
>>> import daxpy
>>> chunks = structured_chunks(daxpy.UniformGrid(dims=(4, 4, 10)), depth=1, planes=5)
>>> [(c.point_read, c.points_owned) for c in chunks]
[(slice(0, 96, None), (0, 80)), (slice(64, 160, None), (80, 160))]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.partition import first_axis, slab_windows, window_grid
from ..data.unstructured import UnstructuredGrid


@dataclass(frozen=True)
class Chunk:
    """One independently computed piece of a grid.

    Attributes
    ----------
    index : int
        Position among the chunks.
    grid : DataSet
        The chunk's sub-grid (no fields), with true coordinates.
    point_read, cell_read : slice or numpy.ndarray
        Global ids of the sub-grid's points and cells, in its order: a slice
        when they are contiguous, else an ascending int64 array.
    points_owned, cells_owned : (int, int)
        Global ``[first, stop)`` of the points and cells it owns.
    point_local, cell_local : int
        Index in the sub-grid of the first owned point and cell (the owned
        ones follow contiguously).
    """

    index: int
    grid: Any
    point_read: Any
    cell_read: Any
    points_owned: tuple[int, int]
    cells_owned: tuple[int, int]
    point_local: int
    cell_local: int

    def read(self, association: str):
        """The ids read at ``association`` (``"points"`` or ``"cells"``).

        Examples
        --------
        >>> import daxpy
        >>> structured_chunks(daxpy.UniformGrid(dims=(3,)), 0, 1)[1].read("points")
        slice(1, 2, None)
        """
        return self.point_read if association == "points" else self.cell_read

    def owned(self, association: str) -> tuple[int, int, int]:
        """``(global first, global stop, local first)`` of the owned ids.

        Examples
        --------
        >>> import daxpy
        >>> structured_chunks(daxpy.UniformGrid(dims=(6,)), 1, 3)[1].owned("cells")
        (3, 5, 1)
        """
        if association == "points":
            return self.points_owned + (self.point_local,)
        return self.cells_owned + (self.cell_local,)


def read_count(selection) -> int:
    """Number of ids a ``slice`` or id array selects.

    Examples
    --------
    >>> read_count(slice(4, 10)), read_count(np.arange(3))
    (6, 3)
    """
    if isinstance(selection, slice):
        return selection.stop - selection.start
    return len(selection)


def _as_selection(ids: np.ndarray):
    """A slice for a contiguous ascending id array, else the array itself."""
    if ids.size == 0:
        return slice(0, 0)
    if int(ids[-1]) - int(ids[0]) + 1 == ids.size:
        return slice(int(ids[0]), int(ids[-1]) + 1)
    return ids.astype(np.int64, copy=False)


# -- structured ------------------------------------------------------------
def slowest_axis(dims) -> int:
    """The axis (0=x, 1=y, 2=z) that slabs are cut across: the slowest with > 1 point.

    Examples
    --------
    >>> slowest_axis((5, 4, 1)), slowest_axis((1, 1, 1))
    (1, 2)
    """
    return 2 - first_axis(tuple(dims[::-1]))


def layer_sizes(grid) -> tuple[int, int]:
    """Points and cells in one layer across the slowest axis.

    Examples
    --------
    >>> import daxpy
    >>> layer_sizes(daxpy.UniformGrid(dims=(4, 3, 5)))
    (12, 6)
    """
    axis = slowest_axis(grid.dims)
    return (math.prod(grid.dims[:axis]), math.prod(grid.cell_dims[:axis]))


def structured_chunks(grid, depth: int, planes: int) -> list[Chunk]:
    """Slabs of ``planes`` owned layers with ``depth`` layers of halo each side.

    A slab owns the cells whose first corner it owns; the cell layers it
    reads are those between the point layers it reads. A slab of one layer
    reads no cells along the cut axis, so pipelines that touch cell fields
    must ask for ``depth >= 1``.

    Parameters
    ----------
    grid : UniformGrid, RectilinearGrid or CurvilinearGrid
    depth : int
        Halo layers (the pipeline's depth).
    planes : int
        Owned layers per slab (at least 1).

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2, 5))
    >>> [(c.cell_read, c.cells_owned, c.cell_local) for c in structured_chunks(g, 1, 2)]
    [(slice(0, 2, None), (0, 2), 0), (slice(1, 4, None), (2, 4), 1), (slice(3, 4, None), (4, 4), 1)]
    """
    axis = slowest_axis(grid.dims)
    n = grid.dims[axis]
    layer, cell_layer = layer_sizes(grid)
    chunks = []
    for index, window in enumerate(slab_windows(grid.dims, max(int(planes), 1), depth)):
        lo, hi = window.lo[axis], window.hi[axis]
        own_lo, own_hi = window.own_lo[axis], window.own_hi[axis]
        if n > 1:
            cell_lo, cell_hi = lo, max(hi - 1, lo)
            cells_owned = (own_lo * cell_layer, min(own_hi, n - 1) * cell_layer)
        else:
            cell_lo, cell_hi = 0, 1
            cells_owned = (0, cell_layer)
        chunks.append(Chunk(
            index, window_grid(grid, window),
            slice(lo * layer, hi * layer), slice(cell_lo * cell_layer, cell_hi * cell_layer),
            (own_lo * layer, own_hi * layer), cells_owned,
            (own_lo - lo) * layer, (own_lo - cell_lo) * cell_layer if n > 1 else 0))
    return chunks


# -- unstructured ----------------------------------------------------------
def corner_bounds(grid: UnstructuredGrid) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest point id of each cell (cached on the grid).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[2, 0], [1, 2]]})
    >>> [b.tolist() for b in corner_bounds(g)]
    [[0, 1], [2, 2]]
    """
    key = "stream:corner_bounds"
    if key not in grid._cache:
        conn = grid.connectivity.astype(np.int64, copy=False)
        starts = grid.offsets[:-1].astype(np.int64)
        if grid.n_cells:
            grid._cache[key] = (np.minimum.reduceat(conn, starts),
                                np.maximum.reduceat(conn, starts))
        else:
            grid._cache[key] = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    return grid._cache[key]


def point_splits(grid: UnstructuredGrid, cell_bounds: np.ndarray) -> np.ndarray:
    """Point range bounds that follow the cell ranges: each range starts at the
    lowest point of its first cell (kept non-decreasing), so a chunk's owned
    points and owned cells lie in the same region of a mesh with locality.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3), {LINE: [[0, 1], [1, 2], [3, 4]]})
    >>> point_splits(g, np.array([0, 2, 3])).tolist()
    [0, 3, 5]
    """
    lowest, _ = corner_bounds(grid)
    inner = cell_bounds[1:-1]
    starts = lowest[inner] if grid.n_cells else np.zeros(len(inner), np.int64)
    splits = np.concatenate([[0], starts, [grid.n_points]]).astype(np.int64)
    return np.minimum(np.maximum.accumulate(splits), grid.n_points)


def _bounds_index(grid: UnstructuredGrid):
    """Running max of the cells' highest corners and running min (from the end)
    of their lowest: both ascending, so the cells whose corner range can meet a
    point range lie in one window found by bisection (cached on the grid)."""
    key = "stream:bounds_index"
    if key not in grid._cache:
        lowest, highest = corner_bounds(grid)
        grid._cache[key] = (np.maximum.accumulate(highest),
                            np.minimum.accumulate(lowest[::-1])[::-1])
    return grid._cache[key]


def _meeting_window(grid, first: int, stop: int) -> tuple[int, int]:
    """Bounds ``[a, b)`` of the cell ids whose corner range may meet points
    ``[first, stop)``: every such cell lies in it."""
    high_so_far, low_from_here = _bounds_index(grid)
    a = int(np.searchsorted(high_so_far, first, side="left"))
    b = int(np.searchsorted(low_from_here, stop, side="left"))
    return a, max(a, b)


def chunk_cells(grid, cells_owned, points_owned, levels: int) -> np.ndarray:
    """The cells a chunk holds: its own, every cell whose corner range meets
    its points, and ``levels`` rings more (each a superset by corner range).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3),
    ...                                        {LINE: [[0, 1], [1, 2], [2, 3], [3, 4]]})
    >>> chunk_cells(g, (2, 3), (3, 4), 1).tolist()
    [1, 2, 3]
    """
    lowest, highest = corner_bounds(grid)
    c0, c1 = cells_owned
    ranges = [(c0, c1, None)]
    first, stop = points_owned
    for _ in range(levels + 1):
        a, b = _meeting_window(grid, first, stop)
        ranges.append((a, b, (first, stop)))
        lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
        # One mask over the window the ranges span (no sort of the ids).
        keep = np.zeros(max(hi - lo, 0), dtype=bool)
        for a, b, points in ranges:
            if points is None:
                keep[a - lo:b - lo] = True
            else:
                keep[a - lo:b - lo] |= (lowest[a:b] < points[1]) & (highest[a:b] >= points[0])
        held = lo + np.flatnonzero(keep)
        if held.size == 0:
            break
        first, stop = int(lowest[held].min()), int(highest[held].max()) + 1
    return held.astype(np.int64, copy=False)


def _point_range(grid, cells: np.ndarray, points_owned) -> tuple[int, int]:
    """First and stop of the point ids a chunk's cells and owned points span."""
    lowest, highest = corner_bounds(grid)
    p0, p1 = points_owned
    if cells.size == 0:
        return p0, p1
    return min(p0, int(lowest[cells].min())), max(p1, int(highest[cells].max()) + 1)


def _unstructured_chunk(grid, index, cells_owned, points_owned, cells) -> Chunk:
    held = _as_selection(cells)
    corners, local_offsets = grid.cells_connectivity(cells)
    corners = corners.astype(np.int64, copy=False)
    p0, p1 = points_owned
    first, stop = _point_range(grid, cells, points_owned)
    # A range read without a gather, unless it is mostly points the chunk never
    # uses (it holds at most one used point per corner).
    if stop - first <= 2 * (corners.size + (p1 - p0)) + 1024:
        point_read = slice(first, stop)
        local_corners = corners - first
        point_local = p0 - first
    else:
        ids = np.union1d(np.unique(corners), np.arange(p0, p1, dtype=np.int64))
        point_read = ids
        local_corners = np.searchsorted(ids, corners)
        point_local = int(np.searchsorted(ids, p0))
    points = grid.points()[point_read]
    sub = UnstructuredGrid.from_checked(points, local_corners, local_offsets,
                                        grid.cell_types[held], name=f"{grid.name} chunk {index}")
    return Chunk(index, sub, point_read, held, points_owned, cells_owned,
                 point_local, int(np.searchsorted(cells, cells_owned[0])))


@dataclass(frozen=True)
class Layout:
    """Where the chunks of an unstructured grid lie, before their sub-grids are built.

    Attributes
    ----------
    owned : list of ((int, int), (int, int))
        Per chunk, its owned cell range and owned point range.
    cells : list of numpy.ndarray
        Per chunk, the ids of the cells it holds.
    """

    owned: list
    cells: list

    def sizes(self, grid) -> list[tuple[int, int, int]]:
        """Per chunk, at most how many points, cells and cell corners it holds.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.data.celltypes import LINE
        >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3),
        ...                                        {LINE: [[0, 1], [1, 2], [2, 3], [3, 4]]})
        >>> unstructured_layout(g, 0, 2).sizes(g)
        [(3, 2, 4), (4, 3, 6)]
        """
        offsets = grid.offsets
        found = []
        for (_, points_owned), cells in zip(self.owned, self.cells):
            first, stop = _point_range(grid, cells, points_owned)
            corners = int((offsets[cells + 1] - offsets[cells]).sum()) if cells.size else 0
            found.append((stop - first, int(cells.size), corners))
        return found


def unstructured_layout(grid: UnstructuredGrid, levels: int, cells: int) -> Layout:
    """The :class:`Layout` of :func:`unstructured_chunks` (cheap: no sub-grids)."""
    count = max(-(-grid.n_cells // max(int(cells), 1)), 1)
    bounds = np.linspace(0, grid.n_cells, count + 1).round().astype(np.int64)
    splits = point_splits(grid, bounds)
    owned = [((int(bounds[k]), int(bounds[k + 1])), (int(splits[k]), int(splits[k + 1])))
             for k in range(count)]
    return Layout(owned, [chunk_cells(grid, c, p, levels) for c, p in owned])


def unstructured_chunks(grid: UnstructuredGrid, levels: int, cells: int,
                        layout: Layout | None = None) -> list[Chunk]:
    """Cell ranges of about ``cells`` cells, with their points and ``levels``
    rings of neighbouring cells.

    A chunk owns cells ``[c0, c1)`` and points ``[p0, p1)`` (from
    :func:`point_splits`); it holds every cell that may use an owned point, so
    a stencil over a point's cells (cell-to-point, point gradient) is exact at
    owned points. Each stage that reads a neighbour's result needs one more
    ring: ``levels = depth - 1`` for a pipeline of depth ``depth``.

    Parameters
    ----------
    grid : UnstructuredGrid
    levels : int
        Extra rings of cells.
    cells : int
        Owned cells per chunk (at least 1).
    layout : Layout, optional
        :func:`unstructured_layout` of the same arguments, if already made.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3),
    ...                                        {LINE: [[0, 1], [1, 2], [2, 3], [3, 4]]})
    >>> [(c.cell_read, c.points_owned) for c in unstructured_chunks(g, 0, 2)]
    [(slice(0, 2, None), (0, 2)), (slice(1, 4, None), (2, 5))]
    """
    layout = layout or unstructured_layout(grid, levels, cells)
    return [_unstructured_chunk(grid, k, c, p, held)
            for k, ((c, p), held) in enumerate(zip(layout.owned, layout.cells))]
