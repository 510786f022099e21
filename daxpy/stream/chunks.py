"""Chunk plans for host<->device streaming: what each chunk reads and owns.

A chunk is a :class:`~daxpy.data.decomposition.Piece` built with its
sub-grid: the global point and cell ids it reads (a contiguous ``slice``
wherever possible, so a host array can be copied to the device without a
gather), and the contiguous ranges of its own output that it owns, with the
contiguous ranges of the whole output they are written to. Owned ranges tile
the grid, so each chunk's owned results go straight to their place.

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
>>> [(c.read("points"), c.written("points")) for c in chunks]
[(slice(0, 96, None), slice(0, 80, None)), (slice(64, 160, None), slice(80, 160, None))]
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..data.celltypes import CELL_SHAPES
from ..data.decomposition import Piece, ids_of, read_count
from ..data.partition import slab_windows, window_grid
from ..data.unstructured import UnstructuredGrid
from .chunk_ids import cell_corner_bounds, held_cells, running_bounds, shifted_ids


# -- structured ------------------------------------------------------------
def structured_chunks(grid, depth: int, planes: int) -> list[Piece]:
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
    >>> chunks = structured_chunks(g, 1, 2)
    >>> [(c.read("cells"), c.owned("cells"), c.written("cells")) for c in chunks]
    ... # doctest: +NORMALIZE_WHITESPACE
    [(slice(0, 2, None), slice(0, 2, None), slice(0, 2, None)),
     (slice(1, 4, None), slice(1, 3, None), slice(2, 4, None)),
     (slice(3, 4, None), slice(1, 1, None), slice(4, 4, None))]
    """
    return [dataclasses.replace(window, index=index, grid=window_grid(grid, window))
            for index, window in enumerate(slab_windows(grid.dims, max(int(planes), 1), depth))]


# -- unstructured ----------------------------------------------------------
def _even_corners(grid: UnstructuredGrid) -> int | None:
    """The corners of every cell of a grid of one shape, else None (cached on the
    grid). Its offsets are then ``0, k, 2k ...``: a grid checks each cell's size
    against its type, and that its offsets start at 0."""
    key = "stream:even_corners"
    if key not in grid._cache:
        types = grid.cell_types
        one = types.size > 0 and bool((types == types[0]).all())
        grid._cache[key] = CELL_SHAPES[int(types[0])].n_corners if one else None
    return grid._cache[key]


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
        grid._cache[key] = cell_corner_bounds(grid.connectivity, grid.offsets,
                                              _even_corners(grid))
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
        grid._cache[key] = running_bounds(*corner_bounds(grid))
    return grid._cache[key]


def _meeting_window(index, first: int, stop: int) -> tuple[int, int]:
    """Bounds ``[a, b)`` of the cell ids whose corner range may meet points
    ``[first, stop)`` (by the grid's :func:`_bounds_index`): every such cell lies in it."""
    high_so_far, low_from_here = index
    a = int(np.searchsorted(high_so_far, first, side="left"))
    b = int(np.searchsorted(low_from_here, stop, side="left"))
    return a, max(a, b)


def _ascending(bounds, index) -> bool:
    """Whether the cells' lowest and highest corners (``bounds``) never decrease
    (cells numbered along their points, as a lattice's are): they are then their
    own running bounds (``index``: :func:`~daxpy.stream.chunk_ids.running_bounds`
    gives them back on threads)."""
    (lowest, highest), (high_so_far, low_from_here) = bounds, index
    return high_so_far is highest and low_from_here is lowest


def _held_runs(bounds, ranges):
    """:func:`~daxpy.stream.chunk_ids.held_cells` where the bounds never decrease:
    every cell of a range's window meets its points (the window ends where the
    bounds pass them), so the held cells are the union of the ranges (no pass over
    them), and their corners span from the lowest of the first to the highest of
    the last."""
    runs = []
    for a, b in sorted((a, b) for a, b, _ in ranges if a < b):
        if runs and a <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], b))
        else:
            runs.append((a, b))
    if not runs:
        return slice(0, 0), None
    lowest, highest = bounds
    span = (int(lowest[runs[0][0]]), int(highest[runs[-1][1] - 1]) + 1)
    if len(runs) == 1:
        return slice(*runs[0]), span
    return np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in runs]), span


def _held(grid, cells_owned, points_owned, levels: int):
    """The cells of :func:`chunk_cells` (a slice where they are one run, else their
    ids) and the point range ``[first, stop)`` their corners span (None where it
    holds none)."""
    # Read from the grid's cache once: each read compares the grid's fingerprint.
    bounds, index = corner_bounds(grid), _bounds_index(grid)
    ascending = _ascending(bounds, index)
    c0, c1 = cells_owned
    ranges = [(c0, c1, None)]
    first, stop = points_owned
    for _ in range(levels + 1):
        a, b = _meeting_window(index, first, stop)
        ranges.append((a, b, (first, stop)))
        held, span = (_held_runs(bounds, ranges) if ascending else
                      held_cells(*bounds, ranges))
        if span is None:
            break
        first, stop = span
    return held, span


def chunk_cells(grid, cells_owned, points_owned, levels: int) -> np.ndarray:
    """The cells a chunk holds: its own, every cell whose corner range meets
    its points, and ``levels`` rings more (each a superset by corner range).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3), {LINE: np.c_[:4, 1:5]})
    >>> chunk_cells(g, (2, 3), (3, 4), 1).tolist()
    [1, 2, 3]
    """
    return ids_of(_held(grid, cells_owned, points_owned, levels)[0])


def _point_range(span, points_owned) -> tuple[int, int]:
    """First and stop of the point ids a chunk's cells (their ``span``) and owned
    points span."""
    p0, p1 = points_owned
    if span is None:
        return p0, p1
    return min(p0, span[0]), max(p1, span[1])


def _cells_connectivity(grid, held):
    """``grid.cells_connectivity`` of the cells ``held`` (a selection), where a run
    of cells of a grid of one shape takes the grid's first offsets (int64) as its
    own: the same numbers (``0, k, 2k ...``), without a fresh array of them."""
    corners = _even_corners(grid)
    if not isinstance(held, slice) or corners is None or grid.offsets.dtype != np.int64:
        return grid.cells_connectivity(ids_of(held))
    return (grid.connectivity[held.start * corners:held.stop * corners],
            grid.offsets[:held.stop - held.start + 1])


def _position(held, cell: int) -> int:
    """``np.searchsorted`` of ``cell`` in the cells ``held`` (a selection)."""
    if isinstance(held, slice):
        return min(max(cell - held.start, 0), held.stop - held.start)
    return int(np.searchsorted(held, cell))


def _unstructured_chunk(grid, index, cells_owned, points_owned, held, span) -> Piece:
    # Imported here: importing the worklets package loads every worklet module.
    from ..worklets._averaging import id_dtype

    corners, local_offsets = _cells_connectivity(grid, held)
    p0, p1 = points_owned
    first, stop = _point_range(span, points_owned)
    # A range read without a gather, unless it is mostly points the chunk never
    # uses (it holds at most one used point per corner).
    if stop - first <= 2 * (corners.size + (p1 - p0)) + 1024:
        point_read = slice(first, stop)
        local_corners = shifted_ids(corners, first, id_dtype(stop - first),
                                    grid.connectivity.shape[0])
        point_local = p0 - first
    else:
        ids = np.union1d(np.unique(corners), np.arange(p0, p1, dtype=np.int64))
        point_read = ids
        local_corners = np.searchsorted(ids, corners)
        point_local = int(np.searchsorted(ids, p0))
    points = grid.points()[point_read]
    sub = UnstructuredGrid.from_checked(points, local_corners, local_offsets,
                                        grid.cell_types[held], name=f"{grid.name} chunk {index}",
                                        guarded_by_source=True)
    cell_local = _position(held, cells_owned[0])
    return Piece(index=index, grid=sub, point_ids=point_read, cell_ids=held,
                 owned_points=slice(point_local, point_local + p1 - p0),
                 owned_cells=slice(cell_local, cell_local + cells_owned[1] - cells_owned[0]))


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where the chunks of an unstructured grid lie, before their sub-grids are built.

    Attributes
    ----------
    owned : list of ((int, int), (int, int))
        Per chunk, its owned cell range and owned point range.
    cells : list of slice or numpy.ndarray
        Per chunk, the cells it holds: a slice where they are one run, else their
        ids (ascending, int64).
    spans : list of (int, int) or None
        Per chunk, the point range ``[first, stop)`` its cells' corners span (None
        where it holds no cell).
    """

    owned: list
    cells: list
    spans: list

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
        for (_, points_owned), held, span in zip(self.owned, self.cells, self.spans):
            first, stop = _point_range(span, points_owned)
            corners = (int(offsets[held.stop] - offsets[held.start])
                       if isinstance(held, slice) else
                       int((offsets[held + 1] - offsets[held]).sum()))
            found.append((stop - first, read_count(held), corners))
        return found


def unstructured_layout(grid: UnstructuredGrid, levels: int, cells: int) -> Layout:
    """The :class:`Layout` of :func:`unstructured_chunks` (cheap: no sub-grids)."""
    count = max(-(-grid.n_cells // max(int(cells), 1)), 1)
    bounds = np.linspace(0, grid.n_cells, count + 1).round().astype(np.int64)
    splits = point_splits(grid, bounds)
    owned = [((int(bounds[k]), int(bounds[k + 1])), (int(splits[k]), int(splits[k + 1])))
             for k in range(count)]
    held = [_held(grid, c, p, levels) for c, p in owned]
    return Layout(owned, [cells for cells, _ in held], [span for _, span in held])


def unstructured_chunks(grid: UnstructuredGrid, levels: int, cells: int,
                        layout: Layout | None = None) -> list[Piece]:
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
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3), {LINE: np.c_[:4, 1:5]})
    >>> [(c.read("cells"), c.written("points")) for c in unstructured_chunks(g, 0, 2)]
    [(slice(0, 2, None), slice(0, 2, None)), (slice(1, 4, None), slice(2, 5, None))]
    """
    layout = layout or unstructured_layout(grid, levels, cells)
    return [_unstructured_chunk(grid, k, c, p, held, span) for k, ((c, p), held, span)
            in enumerate(zip(layout.owned, layout.cells, layout.spans))]
