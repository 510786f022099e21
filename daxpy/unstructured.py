"""Unstructured grids: explicit points and cells of the VTK linear shapes.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.celltypes import TETRA
>>> pts = np.eye(4, 3)
>>> g = daxpy.UnstructuredGrid(pts, [0, 1, 2, 3], [0, 4], [TETRA])
>>> (g.topology_name, g.n_cells)
('unstructured_tet', 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .arrays import all_finite, checked_array, is_device_array, to_host
from .celltypes import (CELL_SHAPES, HEXAHEDRON, PIXEL, PIXEL_TO_QUAD_ORDER, QUAD,
                        VOXEL, VOXEL_TO_HEX_ORDER, CellShape)
from .dataset import DataSet
from .errors import InvalidDataSetError


def concatenated_ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(start, stop)`` for each pair, without a loop.

    With ``offsets[cells]`` and ``offsets[cells + 1]`` these are the
    connectivity positions of ``cells``; with CSR link offsets, a point set's links.

    Examples
    --------
    >>> import numpy as np
    >>> concatenated_ranges(np.array([0, 5]), np.array([2, 8])).tolist()
    [0, 1, 5, 6, 7]
    """
    counts = stops - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return shift + np.arange(total, dtype=np.int64)


def check_coordinates(points, owner: str) -> None:
    """Raise InvalidDataSetError unless ``points`` are finite float32 or float64.

    Examples
    --------
    >>> import numpy as np
    >>> check_coordinates(np.array([[0, 0, np.inf]]), "mesh")
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: points of mesh hold NaN or Inf; coordinates must be finite
    """
    if np.dtype(points.dtype).kind != "f":
        raise InvalidDataSetError(
            f"points of {owner} must be float32 or float64, got {points.dtype}"
        )
    if not all_finite(points):
        raise InvalidDataSetError(f"points of {owner} hold NaN or Inf; coordinates must be finite")


@dataclass(frozen=True)
class CellBlock:
    """All cells of one shape: their ids in the grid and their corner point ids.

    Attributes
    ----------
    shape : CellShape
        The shape shared by every cell of the block.
    cell_ids : numpy.ndarray
        Ids (int64) of the block's cells in the grid, ascending.
    corners : numpy.ndarray
        Point ids, shape ``(len(cell_ids), shape.n_corners)``.
    """

    shape: CellShape
    cell_ids: np.ndarray
    corners: np.ndarray


class UnstructuredGrid(DataSet):
    """Points and explicitly listed cells of VTK's linear shapes.

    Parameters
    ----------
    points : array-like, shape (n_points, 3)
        Finite float32 or float64 coordinates.
    connectivity : array-like of int
        Point ids of all cells, one after the other.
    offsets : array-like of int
        ``n_cells + 1`` entries: cell ``c`` uses ``connectivity[offsets[c]:offsets[c+1]]``.
    cell_types : array-like of int
        VTK cell type id of each cell (vertex, line, triangle, quad, tetra,
        hexahedron, wedge, pyramid; pixel and voxel are renumbered to quad/hex).
    point_data, cell_data : dict, optional
        Initial fields.
    name : str, optional
        Used in error messages.

    Raises
    ------
    InvalidDataSetError
        On out-of-range point ids, inconsistent offsets, unknown cell types,
        a corner count that does not match the cell type, or a cell that
        repeats a point.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.celltypes import TRIANGLE
    >>> g = daxpy.UnstructuredGrid(np.eye(3), [0, 1, 2], [0, 3], [TRIANGLE])
    >>> g.n_points
    3
    """

    family = "unstructured"

    def __init__(self, points, connectivity, offsets, cell_types, point_data=None,
                 cell_data=None, name: str = "unstructured grid"):
        self.name = name
        self._cache = {}
        self.points_array = self._check_points(points)
        self.n_points = int(self.points_array.shape[0])
        conn = self._int_array(connectivity, "connectivity")
        offs = to_host(self._int_array(offsets, "offsets"))
        types = to_host(self._int_array(cell_types, "cell_types"))
        self._check_offsets(offs, types, conn.shape[0])
        # Checked where the ids live (one reduction on a device array), once
        # per grid: every dataset derived from it shares the checked topology.
        self._check_point_ids(conn)
        conn = to_host(conn)
        self._check_types(types)
        self._check_sizes(offs, types)
        conn, types = self._renumber_pixels_and_voxels(conn, offs, types)
        self._set_cells(conn, offs, types)
        self._check_repeated_points()
        self._init_fields(point_data, cell_data)

    def _set_cells(self, connectivity, offsets, cell_types) -> None:
        self.connectivity, self.offsets, self.cell_types = connectivity, offsets, cell_types
        self.n_cells = int(cell_types.shape[0])

    @classmethod
    def from_checked(cls, points, connectivity, offsets, cell_types, point_data=None,
                     cell_data=None, name: str = "unstructured grid") -> UnstructuredGrid:
        """Build a grid from arrays cut out of an already validated grid.

        Chunks and partition pieces renumber a validated grid's cells; checking
        them again would cost more than the work they are cut for (seconds at
        10M hexahedra). Nothing is checked: the caller guarantees in-range
        point ids, consistent offsets, known types (pixels and voxels already
        renumbered) and no repeated points.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.celltypes import LINE
        >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[0, 1], [1, 2]]})
        >>> part = UnstructuredGrid.from_checked(g.points()[1:], g.connectivity[2:] - 1,
        ...                                      g.offsets[:2], g.cell_types[1:])
        >>> part.n_points, part.n_cells, part.cell_blocks()["line"].corners.tolist()
        (2, 1, [[0, 1]])
        """
        grid = cls.__new__(cls)
        grid.name, grid._cache = name, {}
        grid.points_array, grid.n_points = points, int(points.shape[0])
        grid._set_cells(connectivity, offsets, cell_types)
        grid._init_fields(point_data, cell_data)
        return grid

    @classmethod
    def from_blocks(cls, points, blocks: dict[int, Any], **kwargs) -> UnstructuredGrid:
        """Build a grid from ``{vtk_cell_type: corners (n, k)}``; cells keep that order.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.celltypes import LINE
        >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[0, 1], [1, 2]]})
        >>> g.n_cells
        2
        """
        conns, types = [], []
        for vtk_id, corners in blocks.items():
            if isinstance(vtk_id, bool) or not isinstance(vtk_id, (int, np.integer)):
                raise InvalidDataSetError(
                    f"blocks must be keyed by VTK cell type ids (int), got {vtk_id!r}"
                )
            what = f"corners of cell type {vtk_id}"
            corners = to_host(checked_array(corners, what, InvalidDataSetError))
            if corners.ndim != 2:
                raise InvalidDataSetError(f"{what} must be 2-D (n_cells, n_corners)")
            if corners.size and corners.dtype.kind not in "iu":
                raise InvalidDataSetError(f"{what} must hold integers, got {corners.dtype}")
            conns.append(corners.ravel().astype(np.int64, copy=False))
            types.append(np.full(corners.shape[0], vtk_id, dtype=np.uint8))
        sizes = np.concatenate([np.full(len(t), c.size // max(len(t), 1))
                                for c, t in zip(conns, types)]) if conns else np.zeros(0)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        return cls(points, np.concatenate(conns) if conns else np.zeros(0, np.int64),
                   offsets, np.concatenate(types) if types else np.zeros(0, np.uint8),
                   **kwargs)

    # -- validation ---------------------------------------------------------
    def _check_points(self, points):
        array = checked_array(points, f"points of {self.name}", InvalidDataSetError)
        if array.ndim != 2 or array.shape[1] != 3:
            raise InvalidDataSetError(
                f"points of {self.name} must have shape (n_points, 3), got {array.shape}"
            )
        check_coordinates(array, self.name)
        return array

    def _int_array(self, values, what: str):
        """NumPy or CuPy (left where it is) 1-D integer array."""
        array = checked_array(values, f"{what} of {self.name}", InvalidDataSetError)
        if array.ndim != 1:
            raise InvalidDataSetError(
                f"{what} of {self.name} must be 1-D, got shape {array.shape}"
            )
        if array.size and np.dtype(array.dtype).kind not in "iu":
            raise InvalidDataSetError(
                f"{what} of {self.name} must hold integers, got {array.dtype}"
            )
        return array if array.size else array.astype(np.int64)

    def _check_offsets(self, offs, types, n_ids: int) -> None:
        if offs.shape[0] != types.shape[0] + 1:
            raise InvalidDataSetError(
                f"offsets of {self.name} must have n_cells + 1 = {types.shape[0] + 1} "
                f"entries, got {offs.shape[0]}"
            )
        if offs[0] != 0:
            raise InvalidDataSetError(f"offsets of {self.name} must start at 0, got {offs[0]}")
        if np.any(np.diff(offs.astype(np.int64)) < 0):
            raise InvalidDataSetError(f"offsets of {self.name} must not decrease")
        if offs[-1] != n_ids:
            raise InvalidDataSetError(
                f"last offset of {self.name} is {offs[-1]} but connectivity has "
                f"{n_ids} entries"
            )

    def _check_point_ids(self, conn) -> None:
        if not conn.size:
            return
        if is_device_array(conn):
            from .cuda.validate import count_out_of_range

            wrong = count_out_of_range(conn, self.n_points) > 0
        else:
            wrong = conn.min() < 0 or conn.max() >= self.n_points
        if wrong:
            bad = conn[(conn < 0) | (conn >= self.n_points)][0]
            raise InvalidDataSetError(
                f"connectivity of {self.name} holds point id {int(bad)}, outside "
                f"[0, {self.n_points})"
            )

    def _check_types(self, types) -> None:
        known = np.array(sorted(CELL_SHAPES), dtype=np.int64)
        unknown = ~np.isin(types, known)
        if np.any(unknown):
            raise InvalidDataSetError(
                f"cell_types of {self.name} holds unsupported VTK cell type "
                f"{int(types[unknown][0])}; supported: {sorted(CELL_SHAPES)}"
            )

    def _renumber_pixels_and_voxels(self, conn, offs, types):
        legacy = np.isin(types, (PIXEL, VOXEL))
        if not np.any(legacy):
            return conn, types
        conn, types = conn.copy(), types.copy()
        for old, new, order in ((PIXEL, QUAD, PIXEL_TO_QUAD_ORDER),
                                (VOXEL, HEXAHEDRON, VOXEL_TO_HEX_ORDER)):
            ids = np.flatnonzero(types == old)
            if ids.size:
                index = offs[ids][:, None] + np.arange(len(order))
                conn[index] = conn[index[:, list(order)]]
                types[ids] = new
        return conn, types

    def _check_sizes(self, offs, types) -> None:
        # Before pixels and voxels are renumbered: that reads 4 or 8 ids per cell.
        sizes = np.diff(offs.astype(np.int64))
        expected_by_type = np.zeros(max(CELL_SHAPES) + 1, dtype=np.int64)
        for vtk_id, shape in CELL_SHAPES.items():
            expected_by_type[vtk_id] = shape.n_corners
        expected = expected_by_type[types]
        wrong = np.flatnonzero(sizes != expected)
        if wrong.size:
            cell = int(wrong[0])
            shape = CELL_SHAPES[int(types[cell])]
            raise InvalidDataSetError(
                f"cell {cell} of {self.name} is a {shape.name} with {int(sizes[cell])} "
                f"points; expected {shape.n_corners}"
            )

    def _check_repeated_points(self) -> None:
        for block in self.cell_blocks().values():
            ordered = np.sort(block.corners, axis=1)
            repeated = np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)
            if np.any(repeated):
                cell = int(block.cell_ids[repeated][0])
                raise InvalidDataSetError(
                    f"cell {cell} of {self.name} ({block.shape.name}) repeats a point id: "
                    f"{block.corners[repeated][0].tolist()}"
                )

    # -- topology -----------------------------------------------------------
    def cells_connectivity(self, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Corner ids of ``cells`` (ascending ids) one after the other, and offsets
        into them from 0: the connectivity of a grid made of just those cells.

        A contiguous run of cells gives a view of the connectivity, not a copy.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.celltypes import LINE, TRIANGLE
        >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {LINE: [[0, 1], [1, 2]],
        ...                                                      TRIANGLE: [[1, 2, 3]]})
        >>> [a.tolist() for a in g.cells_connectivity(np.array([0, 2]))]
        [[0, 1, 1, 2, 3], [0, 2, 5]]
        """
        offsets = self.offsets.astype(np.int64, copy=False)
        cells = np.asarray(cells, dtype=np.int64)
        if cells.size and int(cells[-1]) - int(cells[0]) + 1 == cells.size:
            first, stop = int(cells[0]), int(cells[-1]) + 1
            start = int(offsets[first])
            return (self.connectivity[start:int(offsets[stop])],
                    offsets[first:stop + 1] - start)
        ends = offsets[cells + 1]
        corners = self.connectivity[concatenated_ranges(offsets[cells], ends)]
        return corners, np.concatenate([[0], np.cumsum(ends - offsets[cells])]).astype(np.int64)

    def cell_blocks(self) -> dict[str, CellBlock]:
        """Cells partitioned by shape, computed once and cached on the grid.

        Returns
        -------
        dict of str to CellBlock
            Keyed by shape name (``hex``, ``tet``...), in ascending VTK id order.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.celltypes import LINE
        >>> g = daxpy.UnstructuredGrid(np.eye(3), [0, 1], [0, 2], [LINE])
        >>> list(g.cell_blocks())
        ['line']
        """
        if "cell_blocks" in self._cache:
            return self._cache["cell_blocks"]
        blocks = {}
        kinds = np.unique(self.cell_types)
        if len(kinds) == 1:
            # One shape: every cell has its corner count, so the connectivity
            # is already the (n_cells, n_corners) table (viewed, not copied).
            shape = CELL_SHAPES[int(kinds[0])]
            blocks[shape.name] = CellBlock(shape, np.arange(self.n_cells, dtype=np.int64),
                                           self.connectivity.reshape(-1, shape.n_corners))
            kinds = kinds[:0]
        starts = self.offsets[:-1].astype(np.int64)
        for vtk_id in kinds:
            shape = CELL_SHAPES[int(vtk_id)]
            ids = np.flatnonzero(self.cell_types == vtk_id).astype(np.int64)
            index = starts[ids][:, None] + np.arange(shape.n_corners)
            blocks[shape.name] = CellBlock(shape, ids, self.connectivity[index])
        self._cache["cell_blocks"] = blocks
        return blocks

    @property
    def topology_name(self) -> str:
        names = list(self.cell_blocks())
        if len(names) == 1:
            return f"unstructured_{names[0]}"
        return "unstructured_mixed" if names else "unstructured_empty"

    @property
    def dimension(self) -> int:
        """Highest topological dimension among the cells (0 if there are none)."""
        return max((b.shape.dimension for b in self.cell_blocks().values()), default=0)

    def points(self) -> Any:
        """Point coordinates ``(n_points, 3)`` as given (not copied)."""
        return self.points_array
