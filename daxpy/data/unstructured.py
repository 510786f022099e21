"""Unstructured grids: explicit points and cells of the VTK linear shapes.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import TETRA
>>> pts = np.eye(4, 3)
>>> g = daxpy.UnstructuredGrid(pts, [0, 1, 2, 3], [0, 4], [TETRA])
>>> (g.topology_name, g.n_cells)
('unstructured_tet', 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from numpy.typing import ArrayLike

import numpy as np

from .arrays import checked_array, to_host
from .celltypes import (CELL_SHAPES, HEXAHEDRON, PIXEL, PIXEL_TO_QUAD_ORDER, QUAD,
                        VOXEL, VOXEL_TO_HEX_ORDER, CellShape)
from .dataset import DataSet
from ..errors import InvalidDataSetError
from .memory_budget import require_bytes
from .topology_checks import (check_cell_types, check_coordinates, check_offsets,
                              check_point_ids, check_repeated_points, check_sizes,
                              read_only, signed, topology_array, written_out)


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
        a corner count that does not match the cell type, a cell that
        repeats a point, or a broadcast (zero-stride) array of more than 1 MiB.
    ResourceError
        If checking the cells would need more memory than is available.

    Notes
    -----
    The arrays are shared, not copied (except uint64 ids and offsets, copied
    to int64, and pixels and voxels, renumbered in a copy). The grid checked
    their contents when it was built and holds read-only views of them, but
    the caller's own arrays stay writable: after writing into them, call
    :meth:`validate` or build a new grid. Caches derived from them (shape
    partitions, links, corner tables, device copies) are keyed on a
    fingerprint of the arrays (see :mod:`daxpy.data.fingerprint`): a change it
    sees drops them and validates the arrays again, so no kernel reads an id
    that was not checked.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import TRIANGLE
    >>> g = daxpy.UnstructuredGrid(np.eye(3), [0, 1, 2], [0, 3], [TRIANGLE])
    >>> g.n_points
    3
    """

    family = "unstructured"

    def __init__(self, points: ArrayLike, connectivity: ArrayLike, offsets: ArrayLike,
                 cell_types: ArrayLike, point_data: Mapping[str, Any] | None = None,
                 cell_data: Mapping[str, Any] | None = None, name: str = "unstructured grid") -> None:
        self.name = name
        points = self._check_points(points)
        conn = topology_array(connectivity, f"connectivity of {name}")
        offs = to_host(topology_array(offsets, f"offsets of {name}"))
        types = to_host(topology_array(cell_types, f"cell_types of {name}"))
        # Lengths and ranges first: nothing proportional to the arrays is
        # allocated before they are known to be consistent.
        check_offsets(offs, types.shape[0], conn.shape[0], name)
        # Checked where the ids live (one reduction on a device array), once
        # per grid: every dataset derived from it shares the checked topology.
        check_point_ids(conn, int(points.shape[0]), name)
        conn, offs = signed(to_host(conn)), signed(offs)
        check_cell_types(types, name)
        types = signed(types)
        check_sizes(offs, types, name)
        conn, types = self._renumber_pixels_and_voxels(conn, offs, types)
        self._set_arrays(points, conn, offs, types)
        check_repeated_points(self.cell_blocks().values(), name)
        self._init_fields(point_data, cell_data)

    def _set_arrays(self, points, connectivity, offsets, cell_types) -> None:
        self.points_array = read_only(points)
        self.n_points = int(points.shape[0])
        self.connectivity = read_only(connectivity)
        self.offsets = read_only(offsets)
        self.cell_types = read_only(cell_types)
        self.n_cells = int(cell_types.shape[0])

    def _validated_arrays(self) -> tuple:
        if self.__dict__.get("_guarded_by_source"):
            return ()
        return self.points_array, self.connectivity, self.offsets, self.cell_types

    def _check_contents(self) -> None:
        check_coordinates(self.points_array, self.name)
        check_offsets(self.offsets, self.n_cells, self.connectivity.shape[0], self.name)
        check_point_ids(self.connectivity, self.n_points, self.name)
        check_cell_types(self.cell_types, self.name, legacy=False)
        check_sizes(self.offsets, self.cell_types, self.name)
        check_repeated_points(self._partition().values(), self.name)

    @classmethod
    def from_checked(cls, points, connectivity, offsets, cell_types, point_data=None,
                     cell_data=None, name: str = "unstructured grid",
                     guarded_by_source: bool = False) -> UnstructuredGrid:
        """Build a grid from arrays cut out of an already validated grid.

        Chunks and partition pieces renumber a validated grid's cells; checking
        them again would cost more than the work they are cut for (seconds at
        10M hexahedra). Nothing is checked: the caller guarantees in-range
        point ids, consistent offsets, known types (pixels and voxels already
        renumbered) and no repeated points.

        With ``guarded_by_source``, the grid's caches are not compared with its
        arrays at every read (a fingerprint of four arrays, ~20-45 us, some 25
        reads a streamed run of three chunks): for a run's chunks, kept in their
        source grid's caches, whose own check at every run drops them with the
        rest; their ids are the planner's copies, which nothing writes, and their
        offsets too, or (a run of cells of one shape) the source's own first offsets.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.data.celltypes import LINE
        >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[0, 1], [1, 2]]})
        >>> part = UnstructuredGrid.from_checked(g.points()[1:], g.connectivity[2:] - 1,
        ...                                      g.offsets[:2], g.cell_types[1:])
        >>> part.n_points, part.n_cells, part.cell_blocks()["line"].corners.tolist()
        (2, 1, [[0, 1]])
        """
        grid = cls.__new__(cls)
        grid.name = name
        grid._guarded_by_source = guarded_by_source
        grid._set_arrays(points, connectivity, offsets, cell_types)
        grid._init_fields(point_data, cell_data)
        return grid

    @classmethod
    def from_blocks(cls, points, blocks: dict[int, Any], **kwargs) -> UnstructuredGrid:
        """Build a grid from ``{vtk_cell_type: corners (n, k)}``; cells keep that order.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.data.celltypes import LINE
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
        array = written_out(array, f"points of {self.name}")
        check_coordinates(array, self.name)
        return array

    def _renumber_pixels_and_voxels(self, conn, offs, types):
        legacy = np.isin(types, (PIXEL, VOXEL))
        if not np.any(legacy):
            return conn, types
        # A copy of the ids and, at most, an index and a gather of the same size.
        require_bytes(3 * 8 * conn.shape[0], f"renumbering the pixels and voxels of {self.name}")
        conn, types = conn.copy(), types.copy()
        for old, new, order in ((PIXEL, QUAD, PIXEL_TO_QUAD_ORDER),
                                (VOXEL, HEXAHEDRON, VOXEL_TO_HEX_ORDER)):
            ids = np.flatnonzero(types == old)
            if ids.size:
                index = offs[ids][:, None] + np.arange(len(order))
                conn[index] = conn[index[:, list(order)]]
                types[ids] = new
        return conn, types

    # -- topology -----------------------------------------------------------
    def cells_connectivity(self, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Corner ids of ``cells`` (ascending ids) one after the other, and offsets
        into them from 0: the connectivity of a grid made of just those cells.

        A contiguous run of cells gives a view of the connectivity, not a copy.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.data.celltypes import LINE, TRIANGLE
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
        >>> from daxpy.data.celltypes import LINE
        >>> g = daxpy.UnstructuredGrid(np.eye(3), [0, 1], [0, 2], [LINE])
        >>> list(g.cell_blocks())
        ['line']
        """
        cache = self._cache
        if "cell_blocks" not in cache:
            cache["cell_blocks"] = self._partition()
        return cache["cell_blocks"]

    def _partition(self) -> dict[str, CellBlock]:
        """The cells by shape, built from the arrays as they are (not cached)."""
        blocks = {}
        types = self.cell_types
        # One shape is the common case: a comparison, not a sort or hash of the types.
        kinds = types[:1] if types.size and bool((types == types[0]).all()) else np.unique(types)
        if len(kinds) == 1:
            # One shape: every cell has its corner count, so the connectivity
            # is already the (n_cells, n_corners) table (viewed, not copied).
            shape = CELL_SHAPES[int(kinds[0])]
            blocks[shape.name] = CellBlock(shape, np.arange(self.n_cells, dtype=np.int64),
                                           self.connectivity.reshape(-1, shape.n_corners))
            return blocks
        # Each block copies its corners, through an index of the same size.
        require_bytes(16 * self.connectivity.shape[0], f"partitioning {self.name} by shape")
        starts = self.offsets[:-1].astype(np.int64)
        for vtk_id in kinds:
            shape = CELL_SHAPES[int(vtk_id)]
            ids = np.flatnonzero(self.cell_types == vtk_id).astype(np.int64)
            index = starts[ids][:, None] + np.arange(shape.n_corners)
            blocks[shape.name] = CellBlock(shape, ids, self.connectivity[index])
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
        """Point coordinates ``(n_points, 3)`` as given (a read-only view, not a copy)."""
        return self.points_array

