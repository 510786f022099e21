"""Cutting a grid into pieces that can be computed apart and put back together.

Distributed runs (:mod:`daxpy.dask`) and chunked host<->device streaming use
the same pieces; nothing here knows about either.

Structured grids: windows
-------------------------
A piece of a structured grid is a :class:`Window`: the box of points it reads
(``lo`` to ``hi`` along each axis) and the box it owns. The read box is the
owned one grown by the pipeline's *depth* on every side that has a neighbour,
and by nothing at the grid's true border, so one-sided differences happen only
there. :func:`window_grid` gives the window's sub-grid with its true
coordinates, :func:`run_window` runs a pipeline on it and keeps only what the
window owns. A window owns the cells whose first corner (lowest index) it
owns, so cell results of neighbouring windows tile the grid's cells.

Unstructured grids: ghost cells and ghost points
------------------------------------------------
:func:`partition_cells` splits the cells into contiguous id ranges, one per
:class:`Piece`. The piece owns the cells of its range and the points whose
lowest-numbered cell is in its range (points no cell uses are owned by point
id ranges). It also holds ghost cells and ghost points, marked as VTK marks
them: an unsigned char array named ``vtkGhostType`` (:data:`GHOST_ARRAY`) at
points and at cells, 0 for what the piece owns, ``DUPLICATEPOINT`` (1) for a
point that another piece owns, ``DUPLICATECELL`` (1) for a cell that another
piece owns; VTK filters skip such duplicates when they merge pieces. The
ghosts come in levels: level 1 is every cell that uses a point of an owned
cell, level ``k + 1`` every cell that uses a point of a level ``k`` cell, and
the ghost points are the corners of ghost cells. A stencil (point gradient,
cell-to-point) is exact at every point whose cells are all in the piece, so
with as many levels as the pipeline's depth the owned points and cells come
out as in the single-domain run.

Examples
--------
>>> import daxpy
>>> g = daxpy.UniformGrid(dims=(4, 4, 10))
>>> [(w.lo[2], w.hi[2], w.own_lo[2], w.own_hi[2]) for w in slab_windows(g.dims, 5, 1)]
[(0, 6, 0, 5), (4, 10, 5, 10)]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .arrays import to_host
from .structured import CurvilinearGrid, RectilinearGrid, UniformGrid
from .unstructured import UnstructuredGrid

GHOST_ARRAY = "vtkGhostType"
"""Name VTK gives the ghost-type arrays (vtkDataSetAttributes::GhostArrayName())."""

DUPLICATEPOINT = 1
"""vtkDataSetAttributes::DUPLICATEPOINT: the point is owned by another piece."""

DUPLICATECELL = 1
"""vtkDataSetAttributes::DUPLICATECELL: the cell is owned by another piece."""


def worklet_reach(worklet) -> int:
    """Layers of points a worklet reads beyond the element it writes.

    The declared halo, and at least 1 where the worklet moves a field between
    points and cells: a cell's corners span two layers of points.

    Examples
    --------
    >>> from daxpy.worklet import get_worklet
    >>> worklet_reach(get_worklet("point_gradient")), worklet_reach(get_worklet("cell_gradient"))
    (1, 1)
    """
    moves = worklet.output_association not in (None, worklet.input_association)
    return max(int(worklet.halo), 1 if moves else 0)


# -- structured grids ------------------------------------------------------------

@dataclass(frozen=True)
class Window:
    """A box of a structured grid's points: those read and those owned.

    Attributes
    ----------
    lo, hi : tuple of int
        First and one-past-last point read along x, y and z.
    own_lo, own_hi : tuple of int
        The same for the points the window owns (inside the read box).
    """

    lo: tuple[int, int, int]
    hi: tuple[int, int, int]
    own_lo: tuple[int, int, int]
    own_hi: tuple[int, int, int]

    @property
    def dims(self) -> tuple[int, int, int]:
        """Points read along x, y and z."""
        return tuple(h - l for l, h in zip(self.lo, self.hi))


class UniformWindow(UniformGrid):
    """A box of a uniform grid whose coordinates are computed as the whole grid's.

    ``origin + spacing * global_index`` rounds like the whole grid does, where
    a grid of its own (``origin`` moved to the box) would round differently,
    so results on the window are bitwise those on the grid.

    Parameters
    ----------
    parent : UniformGrid
    lo, hi : sequence of int
        First and one-past-last point along x, y, z.

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.UniformGrid(dims=(9,), origin=(0.1,), spacing=(0.3,))
    >>> w = UniformWindow(g, (4, 0, 0), (7, 1, 1))
    >>> bool((w.axis_coordinates(0) == g.axis_coordinates(0)[4:7]).all())
    True
    """

    def __init__(self, parent: UniformGrid, lo: Sequence[int], hi: Sequence[int]):
        self.parent_origin = parent.origin
        self.first = tuple(int(v) for v in lo)
        origin = [parent.axis_coordinates(a)[lo[a]] for a in range(3)]
        super().__init__(dims=tuple(h - l for l, h in zip(lo, hi)), origin=origin,
                         spacing=parent.spacing, name=parent.name)

    def axis_coordinates(self, axis: int) -> np.ndarray:
        """Coordinates along one axis, exactly the parent's (float64)."""
        first = self.first[axis]
        return (self.parent_origin[axis]
                + self.spacing[axis] * np.arange(first, first + self.dims[axis]))


def window_grid(grid, window: Window, points: Any = None):
    """The sub-grid of ``grid`` inside ``window``'s read box, with no fields.

    Parameters
    ----------
    grid : UniformGrid, RectilinearGrid or CurvilinearGrid
    window : Window
    points : array, shape (nz, ny, nx, 3), optional
        The window's point coordinates (curvilinear grids); by default sliced
        from ``grid``.

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.RectilinearGrid([0, 1, 3, 7])
    >>> window_grid(g, Window((1, 0, 0), (4, 1, 1), (1, 0, 0), (4, 1, 1))).axis_coordinates(0)
    array([1., 3., 7.])
    """
    lo, hi = window.lo, window.hi
    if grid.family == "uniform":
        return UniformWindow(grid, lo, hi)
    if grid.family == "rectilinear":
        return RectilinearGrid(*(grid.coordinates[a][lo[a]:hi[a]] for a in range(3)),
                               name=grid.name)
    if points is None:
        view = grid.points().reshape(grid.point_shape() + (3,))
        points = view[lo[2]:hi[2], lo[1]:hi[1], lo[0]:hi[0]]
    return CurvilinearGrid(window.dims, points.reshape(-1, 3), name=grid.name)


def cell_box(window: Window, dims: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Cells of the window's sub-grid, as ``(first, stop)`` along x, y and z.

    Along an axis of one point there is one layer of cells, as in the grid.

    Examples
    --------
    >>> cell_box(Window((2, 0, 0), (6, 1, 1), (3, 0, 0), (6, 1, 1)), (6, 1, 1))
    ((2, 5), (0, 1), (0, 1))
    """
    return tuple((window.lo[a], window.hi[a] - 1) if dims[a] > 1 else (0, 1)
                 for a in range(3))


def owned_slices(window: Window, dims: Sequence[int], association: str) -> tuple[slice, ...]:
    """C-order slices that keep the owned points or cells of a window's result.

    Examples
    --------
    >>> w = Window((2, 0, 0), (6, 1, 1), (3, 0, 0), (6, 1, 1))
    >>> owned_slices(w, (6, 1, 1), "cells")
    (slice(0, 1, None), slice(0, 1, None), slice(1, 3, None))
    """
    slices = []
    for a in (2, 1, 0):
        start = window.own_lo[a] - window.lo[a]
        if association == "points":
            stop = window.own_hi[a] - window.lo[a]
        elif dims[a] > 1:
            stop = min(window.own_hi[a], dims[a] - 1) - window.lo[a]
        else:
            start, stop = 0, 1
        slices.append(slice(start, stop))
    return tuple(slices)


def _flat(block, shape: tuple) -> Any:
    return block.reshape((math.prod(shape),) + tuple(block.shape[3:]))


def run_window(run: Callable, grid, window: Window, point_blocks: dict, cell_blocks: dict,
               outputs: dict[str, str], points: Any = None) -> dict[str, Any]:
    """Run a pipeline on one window; return its owned results in C-order shape.

    Parameters
    ----------
    run : callable
        ``run(dataset) -> dataset`` holding the ``outputs`` fields.
    grid : structured grid
        The whole grid (topology only is read).
    window : Window
    point_blocks : dict of str to array
        Point fields over the read box, shape ``(nz, ny, nx)`` or ``(nz, ny, nx, c)``.
    cell_blocks : dict of str to array
        Cell fields over :func:`cell_box`, the same way.
    outputs : dict of str to str
        Output field name to its association.
    points : array, optional
        Point coordinates of the read box (curvilinear grids).

    Returns
    -------
    dict of str to array
        Each output over the owned points or cells, shape ``(nz, ny, nx[, c])``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(6,))
    >>> w = Window((2, 0, 0), (6, 1, 1), (3, 0, 0), (6, 1, 1))
    >>> run = lambda d: daxpy.pipeline(d).point_to_cell("p", "c").pipeline.run(backend="cpu")
    >>> out = run_window(run, g, w, {"p": np.arange(2.0, 6.0)[None, None]}, {}, {"c": "cells"})
    >>> out["c"].ravel().tolist()
    [3.5, 4.5]
    """
    sub = window_grid(grid, window, points)
    cells = sub.cell_shape()
    data = sub.with_fields({k: _flat(b, sub.point_shape()) for k, b in point_blocks.items()},
                           {k: _flat(b, cells) for k, b in cell_blocks.items()})
    result = run(data)
    trimmed = {}
    for name, association in outputs.items():
        values, _ = result.field(name, association)
        shape = sub.point_shape() if association == "points" else cells
        trimmed[name] = values.reshape(shape + values.shape[1:])[
            owned_slices(window, grid.dims, association)]
    return trimmed


def even_split(n: int, count: int) -> tuple[int, ...]:
    """``n`` split into ``count`` near-equal positive parts, larger ones first.

    Examples
    --------
    >>> even_split(10, 3)
    (4, 3, 3)
    """
    count = max(1, min(count, n))
    return tuple(n // count + (1 if i < n % count else 0) for i in range(count))


def merge_small(sizes: Iterable[int], minimum: int, last_minimum: int) -> tuple[int, ...]:
    """Merge neighbouring chunk sizes until each is at least ``minimum`` and the
    last at least ``last_minimum`` (halos need that many layers next door).

    Examples
    --------
    >>> merge_small((1, 1, 3, 2, 1), 2, 3)
    (2, 3, 3)
    """
    merged: list[int] = []
    pending = 0
    for size in sizes:
        pending += size
        if pending >= minimum:
            merged.append(pending)
            pending = 0
    if pending:
        if merged:
            merged[-1] += pending
        else:
            merged.append(pending)
    while len(merged) > 1 and merged[-1] < last_minimum:
        merged[-2] += merged.pop()
    return tuple(merged)


def plan_chunks(dims: Sequence[int], bytes_per_point: int, memory_bytes: int,
                pieces: int = 1, depth: int = 0) -> tuple[tuple[int, ...], ...]:
    """Chunk sizes, in C order (z, y, x), for slabs of a structured grid.

    Slabs are cut along the slowest axis with more than one point: as few as
    fit ``memory_bytes`` each at ``bytes_per_point``, at least ``pieces`` and a
    multiple of it where the axis allows, so every worker gets equal work.
    Only when one layer is too large is the next axis cut too. Each slab is at
    least ``depth`` layers thick, the last one ``depth + 1`` (its cells).

    Examples
    --------
    >>> plan_chunks((100, 100, 100), 8, 8 * 100 * 100 * 30, pieces=2)
    ((25, 25, 25, 25), (100,), (100,))
    >>> plan_chunks((100, 100, 1), 8, 8 * 100 * 10)
    ((1,), (10, 10, 10, 10, 10, 10, 10, 10, 10, 10), (100,))
    """
    shape = tuple(dims[::-1])
    budget = max(1, memory_bytes // max(bytes_per_point, 1))
    needed = max(-(-math.prod(shape) // budget), pieces, 1)
    chunks = [(n,) for n in shape]
    for axis, n in enumerate(shape):
        if needed <= 1:
            break
        if n == 1:
            continue
        count = min(n, -(-needed // pieces) * pieces if axis == first_axis(shape) else needed)
        sizes = merge_small(even_split(n, count), max(depth, 1), depth + 1)
        chunks[axis] = sizes
        needed = -(-needed // len(sizes))
    return tuple(chunks)


def first_axis(shape: Sequence[int]) -> int:
    """Index of the first (slowest, in C order) axis with more than one point.

    Examples
    --------
    >>> first_axis((1, 4, 5))
    1
    """
    return next((a for a, n in enumerate(shape) if n > 1), 0)


def slab_windows(dims: Sequence[int], planes: int, depth: int) -> list[Window]:
    """Windows of ``planes`` owned layers along the slowest axis, halos of ``depth``.

    Examples
    --------
    >>> [w.hi[0] for w in slab_windows((7, 1, 1), 3, 1)]
    [4, 7, 7]
    """
    axis = 2 - first_axis(tuple(dims[::-1]))
    n = dims[axis]
    windows = []
    for start in range(0, n, max(planes, 1)):
        stop = min(start + planes, n)
        lo, hi = [0, 0, 0], list(dims)
        lo[axis], hi[axis] = max(start - depth, 0), min(stop + depth, n)
        own_lo, own_hi = [0, 0, 0], list(dims)
        own_lo[axis], own_hi[axis] = start, stop
        windows.append(Window(tuple(lo), tuple(hi), tuple(own_lo), tuple(own_hi)))
    return windows


# -- unstructured grids ----------------------------------------------------------

@dataclass(frozen=True)
class Piece:
    """One piece of an unstructured grid: owned cells, ghosts, and global ids.

    Attributes
    ----------
    index : int
        Position among the pieces.
    grid : UnstructuredGrid
        The piece's cells and points, numbered locally (ascending global ids),
        with ``vtkGhostType`` at points and cells.
    point_ids, cell_ids : numpy.ndarray
        Global id of each local point and cell (int64, ascending).
    owned_points : numpy.ndarray
        Local ids of the points the piece owns.
    owned_cells : slice
        Local ids of the cells the piece owns (a contiguous range).
    """

    index: int
    grid: UnstructuredGrid
    point_ids: np.ndarray
    cell_ids: np.ndarray
    owned_points: np.ndarray
    owned_cells: slice


def cell_ranges(n_cells: int, pieces: int) -> np.ndarray:
    """Bounds of ``pieces`` near-equal contiguous cell ranges (``pieces + 1`` ints).

    Examples
    --------
    >>> cell_ranges(10, 3).tolist()
    [0, 4, 7, 10]
    """
    return np.concatenate([[0], np.cumsum(even_split(n_cells, pieces))]).astype(np.int64) \
        if n_cells else np.zeros(pieces + 1, dtype=np.int64)


def _links(grid: UnstructuredGrid):
    """Point -> cells links (CSR) and each connectivity entry's cell, cached."""
    cache = grid._cache
    if "partition_links" not in cache:
        sizes = np.diff(grid.offsets.astype(np.int64))
        entry_cell = np.repeat(np.arange(grid.n_cells, dtype=np.int64), sizes)
        order = np.argsort(grid.connectivity, kind="stable")
        counts = np.bincount(grid.connectivity, minlength=grid.n_points)
        starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        cache["partition_links"] = (starts, entry_cell[order], entry_cell)
    return cache["partition_links"]


def _ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(start, stop)`` for each pair, without a loop."""
    counts = stops - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return shift + np.arange(total, dtype=np.int64)


def point_owners(grid: UnstructuredGrid, bounds: np.ndarray) -> np.ndarray:
    """The piece that owns each point: the one holding the point's lowest-id cell.

    Points no cell uses go by point id: piece ``p * pieces // n_points``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {LINE: [[0, 1], [1, 2]]})
    >>> point_owners(g, cell_ranges(2, 2)).tolist()
    [0, 0, 1, 1]
    """
    pieces = len(bounds) - 1
    owners = np.minimum(np.arange(grid.n_points) * pieces // max(grid.n_points, 1),
                        pieces - 1)
    _, _, entry_cell = _links(grid)
    # Connectivity runs in cell order, so a point's first entry is its lowest cell.
    used, first_entry = np.unique(grid.connectivity, return_index=True)
    owners[used] = np.searchsorted(bounds, entry_cell[first_entry], side="right") - 1
    return owners


def _piece(grid, index, bounds, owners, levels) -> Piece:
    starts, link_cells, _ = _links(grid)
    offsets = grid.offsets.astype(np.int64)
    owned = np.arange(bounds[index], bounds[index + 1])
    cells = owned
    lonely = np.flatnonzero((owners == index) & (np.diff(starts) == 0))
    points = np.union1d(np.unique(grid.connectivity[_ranges(offsets[cells], offsets[cells + 1])]),
                        lonely)
    for _ in range(levels):
        cells = np.unique(link_cells[_ranges(starts[points], starts[points + 1])])
        corners = grid.connectivity[_ranges(offsets[cells], offsets[cells + 1])]
        points = np.union1d(np.unique(corners), lonely)
    corners = grid.connectivity[_ranges(offsets[cells], offsets[cells + 1])]
    local_offsets = np.concatenate([[0], np.cumsum(offsets[cells + 1] - offsets[cells])])
    point_ghosts = np.where(owners[points] == index, 0, DUPLICATEPOINT).astype(np.uint8)
    in_range = (cells >= bounds[index]) & (cells < bounds[index + 1])
    cell_ghosts = np.where(in_range, 0, DUPLICATECELL).astype(np.uint8)
    local = UnstructuredGrid(
        to_host(grid.points())[points], np.searchsorted(points, corners), local_offsets,
        grid.cell_types[cells], point_data={GHOST_ARRAY: point_ghosts},
        cell_data={GHOST_ARRAY: cell_ghosts}, name=f"{grid.name} piece {index}")
    first = int(np.searchsorted(cells, bounds[index]))
    return Piece(index, local, points.astype(np.int64), cells.astype(np.int64),
                 np.flatnonzero(point_ghosts == 0), slice(first, first + len(owned)))


def partition_cells(grid: UnstructuredGrid, pieces: int, levels: int) -> list[Piece]:
    """Split ``grid`` into ``pieces`` cell ranges with ``levels`` of ghost cells.

    Parameters
    ----------
    grid : UnstructuredGrid
    pieces : int
        Number of pieces (at least 1).
    levels : int
        Ghost levels: the pipeline's depth (see the module docstring).

    Returns
    -------
    list of Piece

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3),
    ...                                        {LINE: [[0, 1], [1, 2], [2, 3], [3, 4]]})
    >>> second = partition_cells(g, 2, 1)[1]
    >>> second.cell_ids.tolist(), second.grid.cell_data["vtkGhostType"].tolist()
    ([1, 2, 3], [1, 0, 0])
    >>> second.point_ids.tolist(), second.grid.point_data["vtkGhostType"].tolist()
    ([1, 2, 3, 4], [1, 1, 0, 0])
    """
    pieces = max(int(pieces), 1)
    bounds = cell_ranges(grid.n_cells, pieces)
    owners = point_owners(grid, bounds)
    return [_piece(grid, index, bounds, owners, levels) for index in range(pieces)]


def run_piece(run: Callable, piece: Piece, point_values: dict, cell_values: dict,
              outputs: dict[str, str]) -> dict[str, Any]:
    """Run a pipeline on one piece; return its owned results.

    Parameters
    ----------
    run : callable
        ``run(dataset) -> dataset`` holding the ``outputs`` fields.
    piece : Piece
    point_values, cell_values : dict of str to array
        Input fields at the piece's points and cells (global values gathered
        through ``piece.point_ids`` and ``piece.cell_ids``).
    outputs : dict of str to str
        Output field name to its association.

    Returns
    -------
    dict of str to array
        Point outputs at ``piece.point_ids[piece.owned_points]``, cell outputs
        at ``piece.cell_ids[piece.owned_cells]``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3),
    ...                                        {LINE: [[0, 1], [1, 2], [2, 3], [3, 4]]})
    >>> piece = partition_cells(g, 2, 1)[1]
    >>> run = lambda d: daxpy.pipeline(d).cell_to_point("c", "p").pipeline.run(backend="cpu")
    >>> c = np.array([1.0, 2.0, 4.0, 8.0])
    >>> run_piece(run, piece, {}, {"c": c[piece.cell_ids]}, {"p": "points"})["p"].tolist()
    [6.0, 8.0]
    """
    data = piece.grid.with_fields(point_values, cell_values)
    result = run(data)
    kept = {}
    for name, association in outputs.items():
        values, _ = result.field(name, association)
        kept[name] = values[piece.owned_points if association == "points"
                            else piece.owned_cells]
    return kept
