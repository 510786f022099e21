"""Unstructured grids in pieces: cell ranges with ghost cells and ghost points.

:func:`partition_cells` splits the cells into contiguous id ranges, one per
:class:`~daxpy.data.decomposition.Piece` (its grid numbered locally in
ascending global ids). A piece owns the cells of its range and the points
whose lowest-numbered cell is in its range (points no cell uses are owned by
point id ranges), so every cell and every point has exactly one owner.

Ghosts follow VTK's semantics. Each piece carries an unsigned char array named
``vtkGhostType`` (:data:`GHOST_ARRAY`, vtkDataSetAttributes::GhostArrayName())
at its points and at its cells: 0 for what the piece owns, ``DUPLICATEPOINT``
(1) for a point another piece owns, ``DUPLICATECELL`` (1) for a cell another
piece owns. VTK's own filters drop such duplicates when they merge pieces, and
so does :func:`run_piece`: it returns results at owned points and cells only.

Ghost cells come in levels. Level 1 is every cell that uses a point of an
owned cell; level ``k + 1`` every cell that uses a point of a level ``k``
cell. Ghost points are the corners of ghost cells that the piece does not own.
A point result that averages over the cells around a point (cell-to-point,
the point gradient) is exact at every point whose cells are all in the piece,
and each stencil of a pipeline uses up one level; so with as many levels as
the pipeline's depth, owned points and cells get the single-domain result.
Cells keep their global order inside a piece, so sums over a point's cells
add in the same order as in the whole grid.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import LINE
>>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {LINE: [[0, 1], [1, 2], [2, 3]]})
>>> [p.cell_ids.tolist() for p in partition_cells(g, 2, 1)]
[[0, 1], [0, 1, 2]]
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..data.arrays import to_host
from ..data.decomposition import Piece
from ..data.unstructured import UnstructuredGrid, concatenated_ranges

GHOST_ARRAY = "vtkGhostType"
"""Name VTK gives the ghost-type arrays (vtkDataSetAttributes::GhostArrayName())."""

DUPLICATEPOINT = 1
"""vtkDataSetAttributes::DUPLICATEPOINT: the point is owned by another piece."""

DUPLICATECELL = 1
"""vtkDataSetAttributes::DUPLICATECELL: the cell is owned by another piece."""


def cell_ranges(n_cells: int, pieces: int) -> np.ndarray:
    """Bounds of ``pieces`` near-equal contiguous cell ranges (``pieces + 1`` ints;
    ranges are empty when there are fewer cells than pieces).

    Examples
    --------
    >>> cell_ranges(10, 3).tolist()
    [0, 3, 6, 10]
    """
    return np.arange(pieces + 1, dtype=np.int64) * n_cells // pieces


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


def point_owners(grid: UnstructuredGrid, bounds: np.ndarray) -> np.ndarray:
    """The piece that owns each point: the one holding the point's lowest-id cell.

    Points no cell uses go by point id: piece ``p * pieces // n_points``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
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
    owned = np.arange(bounds[index], bounds[index + 1])
    cells = owned
    lonely = np.flatnonzero((owners == index) & (np.diff(starts) == 0))
    corners, local_offsets = grid.cells_connectivity(cells)
    points = np.union1d(np.unique(corners), lonely)
    for _ in range(levels):
        cells = np.unique(link_cells[concatenated_ranges(starts[points], starts[points + 1])])
        corners, local_offsets = grid.cells_connectivity(cells)
        points = np.union1d(np.unique(corners), lonely)
    point_ghosts = np.where(owners[points] == index, 0, DUPLICATEPOINT).astype(np.uint8)
    in_range = (cells >= bounds[index]) & (cells < bounds[index + 1])
    cell_ghosts = np.where(in_range, 0, DUPLICATECELL).astype(np.uint8)
    local = UnstructuredGrid.from_checked(
        to_host(grid.points())[points], np.searchsorted(points, corners), local_offsets,
        grid.cell_types[cells], point_data={GHOST_ARRAY: point_ghosts},
        cell_data={GHOST_ARRAY: cell_ghosts}, name=f"{grid.name} piece {index}")
    first = int(np.searchsorted(cells, bounds[index]))
    return Piece(index=index, grid=local, point_ids=points.astype(np.int64),
                 cell_ids=cells.astype(np.int64), owned_points=np.flatnonzero(point_ghosts == 0),
                 owned_cells=slice(first, first + len(owned)))


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
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3), {LINE: np.c_[:4, 1:5]})
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
        Each output at the piece's owned points or cells, which go to
        ``piece.written(association)`` in the whole output.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> lines = {daxpy.data.celltypes.LINE: np.c_[:4, 1:5]}
    >>> piece = partition_cells(daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3), lines), 2, 1)[1]
    >>> run = lambda d: daxpy.pipeline(d).cell_to_point("c", "p").pipeline.run(backend="cpu")
    >>> c = np.array([1.0, 2.0, 4.0, 8.0])
    >>> run_piece(run, piece, {}, {"c": c[piece.cell_ids]}, {"p": "points"})["p"].tolist()
    [6.0, 8.0]
    """
    data = piece.grid.with_fields(point_values, cell_values)
    result = run(data)
    return {name: piece.keep(result.field(name, association)[0], association)
            for name, association in outputs.items()}
