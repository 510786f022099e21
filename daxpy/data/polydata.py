"""PolyData: points with vertices, lines, polygons and triangle strips (VTK's
surfaces and curves).

Each of the four kinds of cells is held as vtkCellArray holds it: an
``(offsets, connectivity)`` pair, cell ``c`` of the kind using
``connectivity[offsets[c]:offsets[c + 1]]``. Cells are numbered as VTK numbers
them: the verts first, then the lines, the polys and the strips, so cell
fields line up with vtkPolyData's.

Examples
--------
>>> import numpy as np, daxpy
>>> surface = daxpy.PolyData(np.eye(4, 3), polys=([0, 3, 6], [0, 1, 2, 1, 2, 3]))
>>> (surface.topology_name, surface.n_cells, list(surface.cell_blocks()))
('polydata', 2, ['tri'])
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from numpy.typing import ArrayLike

from .arrays import array_module, checked_array, to_host
from .celltypes import (LINE, POLY_LINE, POLY_VERTEX, POLYGON, QUAD, TRIANGLE,
                        TRIANGLE_STRIP, VERTEX, CellShape)
from .dataset import DataSet
from ..errors import InvalidDataSetError
from .memory_budget import require_bytes
from .topology_checks import (check_coordinates, check_offsets, check_point_ids, read_only,
                              signed, topology_array, written_out)
from .unstructured import CellBlock

CELL_KINDS = ("verts", "lines", "polys", "strips")
"""The four cell arrays of a PolyData, in VTK's cell order."""

MIN_CORNERS = {"verts": 1, "lines": 2, "polys": 3, "strips": 3}
"""Fewest points a cell of each kind may have."""

_DIMENSION = {"verts": 0, "lines": 1, "polys": 2, "strips": 2}


def cell_shape(kind: str, n_corners: int) -> CellShape:
    """The shape of a ``kind`` cell of ``n_corners`` points: VTK's cell type, with
    the corner count in the name of the variable-size ones.

    Averages only need a cell's corners, so each (kind, corner count) is one
    block of the averaging kernels, like any fixed shape.

    Examples
    --------
    >>> cell_shape("polys", 4).name, cell_shape("polys", 5).name, cell_shape("strips", 5).name
    ('quad', 'polygon5', 'strip5')
    """
    fixed = {("verts", 1): (VERTEX, "vertex"), ("lines", 2): (LINE, "line"),
             ("polys", 3): (TRIANGLE, "tri"), ("polys", 4): (QUAD, "quad")}
    if (kind, n_corners) in fixed:
        vtk_id, name = fixed[kind, n_corners]
    else:
        vtk_id, stem = {"verts": (POLY_VERTEX, "polyvertex"), "lines": (POLY_LINE, "polyline"),
                        "polys": (POLYGON, "polygon"),
                        "strips": (TRIANGLE_STRIP, "strip")}[kind]
        name = f"{stem}{n_corners}"
    return CellShape(vtk_id, name, n_corners, _DIMENSION[kind])


class PolyData(DataSet):
    """Points with verts, lines, polys (any polygon) and triangle strips.

    Parameters
    ----------
    points : array-like, shape (n_points, 3)
        Finite float32 or float64 coordinates.
    verts, lines, polys, strips : (offsets, connectivity), optional
        Each kind of cell as vtkCellArray holds it: ``offsets`` has one entry
        more than the kind has cells, from 0 to ``len(connectivity)``; an
        empty ``offsets`` with an empty connectivity means no cells. At least
        1 point per vert, 2 per line, 3 per poly and per strip.
    point_data, cell_data : dict, optional
        Initial fields; cell fields follow VTK's cell order (verts, lines,
        polys, strips).
    name : str, optional
        Used in error messages.

    Raises
    ------
    InvalidDataSetError
        On out-of-range point ids, inconsistent offsets, a cell with too few
        points, or a broadcast array of more than 1 MiB.

    Notes
    -----
    The arrays are shared, not copied (uint64 ids and offsets are copied to
    int64), and held as read-only views; caches derived from them are keyed on
    their fingerprint, as for :class:`~daxpy.UnstructuredGrid`. A strip is one
    cell, as in VTK: its point-to-cell average is the mean of all its points.
    Unlike an unstructured grid's, a cell may list a point more than once (a
    closed polyline, a strip that turns back, as vtkStripper makes): averages
    count each listing, as VTK's do.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> pts = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0.]])
    >>> square = daxpy.PolyData(pts, polys=([0, 4], [0, 1, 2, 3]), lines=([0, 2], [0, 2]))
    >>> square.n_cells, [b.shape.name for b in square.cell_blocks().values()]
    (2, ['line', 'quad'])
    """

    family = "polydata"
    topology_name = "polydata"
    # The CUDA topologies know fixed shapes only (daxpy.cuda.topology).
    cuda_ready = False

    def __init__(self, points: ArrayLike, verts: Any = None, lines: Any = None,
                 polys: Any = None, strips: Any = None,
                 point_data: Mapping[str, Any] | None = None,
                 cell_data: Mapping[str, Any] | None = None, name: str = "polydata") -> None:
        self.name = name
        points = checked_array(points, f"points of {name}", InvalidDataSetError)
        if points.ndim != 2 or points.shape[1] != 3:
            raise InvalidDataSetError(
                f"points of {name} must have shape (n_points, 3), got {points.shape}")
        points = written_out(points, f"points of {name}")
        check_coordinates(points, name)
        self.points_array = read_only(points)
        self.n_points = int(points.shape[0])
        given = dict(zip(CELL_KINDS, (verts, lines, polys, strips)))
        self._cells = {kind: self._checked_cells(kind, given[kind]) for kind in CELL_KINDS}
        self.n_cells = sum(offsets.shape[0] - 1 for offsets, _ in self._cells.values())
        self._init_fields(point_data, cell_data)

    @classmethod
    def from_checked(cls, points: Any, cells: Mapping[str, tuple], point_data=None,
                     cell_data=None, name: str = "polydata") -> PolyData:
        """Build a surface from arrays that a filter made valid by construction (on
        the host, or on the device where a GPU run leaves its result).

        A contour or slice numbers its own points and writes its cells' offsets;
        checking them again would cost more than making them (every point id of a
        surface of millions of triangles). Nothing is checked: the caller guarantees
        finite points, consistent int64 offsets and in-range int64 point ids.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> tri = PolyData.from_checked(np.eye(3), {"polys": (np.array([0, 3]),
        ...                                                     np.array([0, 1, 2]))})
        >>> tri.n_cells, tri.n_cells_of("polys")
        (1, 1)
        """
        surface = cls.__new__(cls)
        surface.name = name
        surface.points_array = read_only(points)
        surface.n_points = int(points.shape[0])
        none = (np.zeros(1, np.int64), np.zeros(0, np.int64))
        surface._cells = {kind: tuple(read_only(a) for a in cells.get(kind, none))
                          for kind in CELL_KINDS}
        surface.n_cells = sum(offsets.shape[0] - 1 for offsets, _ in surface._cells.values())
        surface._init_fields(point_data, cell_data)
        return surface

    def _checked_cells(self, kind: str, pair: Any) -> tuple[np.ndarray, np.ndarray]:
        owner = f"{kind} of {self.name}"
        if pair is None:
            return read_only(np.zeros(1, np.int64)), read_only(np.zeros(0, np.int64))
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidDataSetError(
                f"{kind} of {self.name} must be a pair (offsets, connectivity), like "
                f"vtkCellArray's; got {type(pair).__name__}")
        offsets = to_host(topology_array(pair[0], f"offsets of {owner}"))
        connectivity = to_host(topology_array(pair[1], f"connectivity of {owner}"))
        if offsets.shape[0] == 0 and connectivity.shape[0] == 0:
            offsets = np.zeros(1, np.int64)  # no cells, as an empty vtkCellArray says
        check_offsets(offsets, max(offsets.shape[0] - 1, 0), connectivity.shape[0], owner)
        check_point_ids(connectivity, self.n_points, owner)
        offsets, connectivity = signed(offsets), signed(connectivity)
        _check_corner_counts(offsets, kind, owner)
        return read_only(offsets), read_only(connectivity)

    # -- the arrays --------------------------------------------------------
    def cell_array(self, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets, connectivity)`` of one kind of cells (read-only views).

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> line = daxpy.PolyData(np.eye(3), lines=([0, 3], [0, 1, 2]))
        >>> [a.tolist() for a in line.cell_array("lines")]
        [[0, 3], [0, 1, 2]]
        """
        if kind not in CELL_KINDS:
            raise InvalidDataSetError(f"PolyData cells are {CELL_KINDS}, got {kind!r}")
        return self._cells[kind]

    def n_cells_of(self, kind: str) -> int:
        """Number of cells of one kind.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> daxpy.PolyData(np.eye(3), verts=([0, 1, 2], [0, 2])).n_cells_of("verts")
        2
        """
        return int(self.cell_array(kind)[0].shape[0] - 1)

    def _validated_arrays(self) -> tuple:
        return (self.points_array,) + tuple(a for pair in self._cells.values() for a in pair)

    def _check_contents(self) -> None:
        check_coordinates(to_host(self.points_array), self.name)
        for kind, cells in self._cells.items():
            owner = f"{kind} of {self.name}"
            offsets, connectivity = (to_host(a) for a in cells)  # a device surface's too
            check_offsets(offsets, offsets.shape[0] - 1, connectivity.shape[0], owner)
            check_point_ids(connectivity, self.n_points, owner)
            _check_corner_counts(offsets, kind, owner)

    def points(self) -> Any:
        """Point coordinates ``(n_points, 3)`` as given (a read-only view, not a copy).

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> daxpy.PolyData(np.eye(3)).points().flags.writeable
        False
        """
        return self.points_array

    @property
    def dimension(self) -> int:
        """Highest topological dimension among the cells (0 if there are none)."""
        return max((b.shape.dimension for b in self.cell_blocks().values()), default=0)

    # -- topology for the averaging kernels ----------------------------------
    @property
    def connectivity(self) -> np.ndarray:
        """Point ids of every cell in VTK's order (verts, lines, polys, strips).

        The kind's own array when only one kind has cells; otherwise one
        concatenated copy, cached. With :attr:`offsets` it describes the cells as
        :class:`~daxpy.UnstructuredGrid`'s arrays do, for the kernels that walk
        the cells of a point.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> s = daxpy.PolyData(np.eye(3), verts=([0, 1], [2]), lines=([0, 2], [0, 1]))
        >>> s.connectivity.tolist(), s.offsets.tolist()
        ([2, 0, 1], [0, 1, 3])
        """
        return self._all_cells()[1]

    @property
    def offsets(self) -> np.ndarray:
        """Offsets into :attr:`connectivity`, ``n_cells + 1`` of them."""
        return self._all_cells()[0]

    def _all_cells(self) -> tuple[np.ndarray, np.ndarray]:
        cache = self._cache
        if "all_cells" not in cache:
            used = [pair for pair in self._cells.values() if pair[0].shape[0] > 1]
            if len(used) <= 1:
                cache["all_cells"] = used[0] if used else self._cells["verts"]
            else:
                # Where the cells are (a surface a GPU run left on the device too).
                xp = array_module(used[0][0])
                starts = np.cumsum([0] + [conn.shape[0] for _, conn in used[:-1]]).tolist()
                offsets = xp.concatenate([used[0][0][:1].astype(np.int64)] + [
                    offs[1:].astype(np.int64) + start for (offs, _), start in zip(used, starts)])
                cache["all_cells"] = (read_only(offsets), read_only(xp.concatenate(
                    [conn.astype(np.int64, copy=False) for _, conn in used])))
        return cache["all_cells"]

    def cell_blocks(self) -> dict[str, CellBlock]:
        """Cells grouped by kind and corner count (see :func:`cell_shape`), cached.

        Returns
        -------
        dict of str to CellBlock
            Keyed by shape name, in VTK's cell order of the kinds; each
            block's cell ids are PolyData cell ids, ascending.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> s = daxpy.PolyData(np.eye(5, 3), polys=([0, 3, 8], [0, 1, 2, 0, 1, 2, 3, 4]))
        >>> {k: b.cell_ids.tolist() for k, b in s.cell_blocks().items()}
        {'tri': [0], 'polygon5': [1]}
        """
        cache = self._cache
        if "cell_blocks" not in cache:
            cache["cell_blocks"] = self._partition()
        return cache["cell_blocks"]

    def _partition(self) -> dict[str, CellBlock]:
        """The cells by kind and corner count, from the arrays as they are (not cached),
        on the host: the kernels that walk cells by blocks run there for a surface
        (a device surface's cells are copied once, for its cached blocks)."""
        blocks, first = {}, 0
        for kind, cells in self._cells.items():
            offsets, connectivity = (to_host(a) for a in cells)
            sizes = np.diff(offsets)
            counts = np.unique(sizes)
            if len(counts) == 1:
                # One size: the connectivity is the (n_cells, n_corners) table (a view).
                k = int(counts[0])
                blocks[cell_shape(kind, k).name] = CellBlock(
                    cell_shape(kind, k), first + np.arange(sizes.shape[0], dtype=np.int64),
                    connectivity.reshape(-1, k))
            elif len(counts):
                require_bytes(16 * connectivity.shape[0], f"grouping the {kind} of {self.name}")
                for k in counts.tolist():
                    ids = np.flatnonzero(sizes == k)
                    index = offsets[ids][:, None] + np.arange(k)
                    blocks[cell_shape(kind, k).name] = CellBlock(
                        cell_shape(kind, k), first + ids.astype(np.int64), connectivity[index])
            first += sizes.shape[0]
        return blocks


def _check_corner_counts(offsets: np.ndarray, kind: str, owner: str) -> None:
    """Every cell of ``kind`` has at least :data:`MIN_CORNERS` points.

    Examples
    --------
    >>> import numpy as np
    >>> _check_corner_counts(np.array([0, 3, 5]), "polys", "polys of surface")
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: cell 1 of polys of surface has 2 points; polys need at least 3
    """
    short = np.diff(offsets) < MIN_CORNERS[kind]
    if np.any(short):
        cell = int(np.argmax(short))
        raise InvalidDataSetError(
            f"cell {cell} of {owner} has {int(offsets[cell + 1]) - int(offsets[cell])} "
            f"points; {kind} need at least {MIN_CORNERS[kind]}")
