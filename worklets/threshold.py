"""Threshold: the topology-generating worklet that keeps the cells whose scalars lie
in a range, as vtkThreshold does.

One array program runs on NumPy (CPU) or CuPy (CUDA): classify each cell (its
value, or its corners' values: all, any, or their range), count the kept cells and
their corners, scan (one host sync learns the sizes), and emit the kept cells'
corners with the points they use renumbered in ascending id order. On the GPU,
3-D structured grids with float32 or float64 scalars run dedicated kernels that
give its bits (:mod:`daxpy.cuda.threshold_cells`, about 10x faster at 256³).

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(4,), point_data={"t": np.array([0.0, 1, 2, 3])})
>>> kept = threshold_cells(g, g.point_data["t"], at="points", lower=0.5,
...                        upper=2.5)
>>> kept.cell_ids.tolist(), kept.point_ids.tolist(), kept.connectivity.tolist()
([1], [1, 2], [0, 1])
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from daxpy.data.arrays import array_module
from daxpy.data.celltypes import HEXAHEDRON, LINE, QUAD, VERTEX

from ._marching import (GRID_FAMILIES, IMAGE_CELL_CORNERS, at_least, at_most, range_bounds,
                        register_generating, structured_corners, used_points)
from ._numba import compiled


@dataclass(frozen=True)
class Kept:
    """The cells a threshold keeps, where the scalars live (NumPy or CuPy).

    Attributes
    ----------
    cell_ids : int64 array or None
        Kept input cells, ascending.
    point_ids : int64 array or None
        Input points the kept cells use, ascending (the output's points).
    connectivity, offsets, cell_types : arrays
        The kept cells as output point ids, in vtkCellArray's form.
    point_words, cell_words : daxpy.cuda.bit_words.BitWords or None
        The GPU's threshold of a 3-D structured grid or of an unstructured grid
        of one cell shape: the used points and kept cells as bit words, by which
        the output's arrays are gathered without reading ids. Asked for no ids
        (``ids=False``), it leaves ``cell_ids`` and ``point_ids`` None, and
        :meth:`with_ids` makes them. The words stand for the ids they hold: a Kept
        made with other ids (a replace) is gathered by its ids. They live on the
        device only (``device_only``).
    """

    cell_ids: Any
    point_ids: Any
    connectivity: Any
    offsets: Any
    cell_types: Any
    point_words: Any = field(default=None, metadata={"device_only": True})
    cell_words: Any = field(default=None, metadata={"device_only": True})

    @property
    def n_points(self) -> int:
        """The used points.

        Examples
        --------
        >>> Kept(np.array([0]), np.array([0, 1]), np.array([0, 1]), np.array([0, 2]),
        ...      np.array([3], np.uint8)).n_points
        2
        """
        if self.point_ids is None:
            return int(self.point_words.count)
        return int(self.point_ids.shape[0])

    def with_ids(self) -> "Kept":
        """This Kept with its cell and point ids as arrays (made from its words where
        it has none).

        Examples
        --------
        >>> kept = Kept(np.array([0]), np.array([0, 1]), np.array([0, 1]),
        ...             np.array([0, 2]), np.array([3], np.uint8))
        >>> kept.with_ids() is kept
        True
        """
        if self.cell_ids is not None and self.point_ids is not None:
            return self
        points, cells = self.point_words.with_ids(), self.cell_words.with_ids()
        return replace(self, cell_ids=cells.ids, point_ids=points.ids, point_words=points,
                       cell_words=cells)


def _in_range(values: Any, lower: float, upper: float) -> Any:
    # Compared as VTK compares, in float64. A comparison with NaN is false: NaN is
    # in no range (the README's NaN rule).
    return at_least(values, lower) & at_most(values, upper)


def cell_corners(grid: Any, xp, cells: Any) -> tuple[Any, int]:
    """The corners of a structured grid's ``cells`` (int64 ids where ``xp`` works),
    in hexahedron, quad or line order, and their VTK type.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> corners, kind = cell_corners(daxpy.UniformGrid(dims=(3, 2)), np, np.array([1]))
    >>> corners.tolist(), kind == QUAD
    ([[1, 2, 5, 4]], True)
    """
    dims = tuple(int(d) for d in grid.dims)
    active = [a for a in range(3) if dims[a] > 1]
    corners = structured_corners(dims, cells, IMAGE_CELL_CORNERS[len(active)])
    # daxpy's unstructured grids hold VTK's voxels and pixels as hexahedra and quads:
    # their corner order.
    order = {3: (0, 1, 3, 2, 4, 5, 7, 6), 2: (0, 1, 3, 2), 1: (0, 1)}[len(active)]
    corners = corners[:, list(order)]
    kind = {3: HEXAHEDRON, 2: QUAD, 1: LINE}[len(active)]
    return corners, kind


def _blocks(grid: Any, place) -> list[tuple[Any, Any, int]]:
    """``(cell ids, corners, VTK type)`` per shape of an unstructured grid."""
    return [(place(b.cell_ids), place(b.corners), b.shape.vtk_id)
            for b in grid.cell_blocks().values()]


def threshold_cells(grid: Any, values: Any, *, at: str, lower: float,
                    upper: float, all_points: bool = True, continuous: bool = False,
                    invert: bool = False, ids: bool = True, place=None) -> Kept:
    """The cells of ``grid`` whose scalars lie in ``[lower, upper]``.

    Parameters
    ----------
    grid, values, place
        As for every topology-generating program
        (:func:`~daxpy.worklets._marching.register_generating`); ``values`` of shape
        ``(n,)``, the scalars at ``at`` (one per point or per cell).
    at : {"points", "cells"}
    lower, upper : float
        The range, ends included (infinite for one-sided thresholds).
    all_points : bool
        Point scalars: a cell is kept when all its corners are in range (False:
        any corner), as vtkThreshold's AllScalars.
    continuous : bool
        Point scalars, with ``all_points`` False: a cell is kept when the range
        of its corners' values meets ``[lower, upper]`` (vtkThreshold's
        UseContinuousCellRange).
    invert : bool
        Keep the cells that would not be kept.
    ids : bool
        Whether the caller reads the ids (``cell_ids``, ``point_ids``): without
        (False), the GPU's kernels of 3-D structured grids and of unstructured
        grids of one cell shape leave them None, and hand the words to gather by
        (:class:`Kept`). Other paths make them.

    Returns
    -------
    Kept
    """
    xp = array_module(values)
    if grid.family != "unstructured":
        return _threshold_structured(grid, values, at, lower, upper, all_points, continuous,
                                     invert, ids, xp)
    if xp is not np:
        found = _one_shape_on_gpu(grid, values, at, lower, upper, all_points, continuous,
                                  invert, ids, place or xp.asarray)
        if found is not None:
            return found
    pieces = _blocks(grid, place or xp.asarray)
    n_cells = sum(int(ids.shape[0]) for ids, _, _ in pieces)
    keep = xp.zeros(n_cells, dtype=bool)
    for ids, corners, _ in pieces:
        if at == "cells":
            keep[ids] = _in_range(values[ids], lower, upper)
        elif continuous and not all_points:
            # As vtkThreshold: AllScalars wins over the continuous range.
            corner_values = values[corners]
            keep[ids] = (at_least(corner_values.max(axis=1), lower)
                         & at_most(corner_values.min(axis=1), upper))
        else:
            inside = _in_range(values[corners], lower, upper)
            keep[ids] = inside.all(axis=1) if all_points else inside.any(axis=1)
    if invert:
        keep = ~keep
    return _emit(pieces, keep, grid.n_points, xp)


def _test(at: str, all_points: bool, continuous: bool) -> str:
    """The GPU kernels' name of the test (``"cells"``, ``"all"``, ``"any"``,
    ``"range"``); as vtkThreshold, AllScalars wins over the continuous range.

    Examples
    --------
    >>> _test("points", False, True), _test("points", True, True)
    ('range', 'all')
    """
    if at == "cells":
        return "cells"
    return "all" if all_points else "range" if continuous else "any"


def _one_shape_on_gpu(grid: Any, values: Any, at: str, lower: float, upper: float,
                      all_points: bool, continuous: bool, invert: bool, ids: bool,
                      place) -> Kept | None:
    """The threshold of an unstructured grid of one cell shape by the GPU's kernels
    (:mod:`daxpy.cuda.threshold_block`), which give this program's bits; None where
    the program runs instead (several shapes, no cells, other dtypes)."""
    from daxpy.cuda.threshold_block import MODES, threshold_block

    blocks = list(grid.cell_blocks().values())
    if (len(blocks) != 1 or grid.n_cells == 0 or values.ndim != 1
            or values.dtype not in (np.float32, np.float64)):
        return None
    from daxpy.cuda.device import narrow_ids

    corners = narrow_ids(blocks[0].corners, grid)
    if corners.dtype not in (np.int32, np.int64):
        return None
    # The range rounded inwards to the values' dtype: compared in it, as in float64.
    bounds = (*range_bounds(values.dtype, lower, upper), lower, upper)
    found = threshold_block(values, corners, int(grid.n_points),
                            MODES[_test(at, all_points, continuous)], bounds, invert,
                            blocks[0].shape.vtk_id, ids)
    return None if found is None else Kept(*found)


def _corner_views(grid: Any, values: Any) -> list:
    """Per corner of a structured cell, the point values at that corner of every cell:
    the point array shifted along the active axes (no corner table is built)."""
    dims = tuple(int(d) for d in grid.dims)
    grid_values = values.reshape(dims[::-1])  # (z, y, x): x varies fastest
    active = [a for a in range(3) if dims[a] > 1]
    views = []
    for offset in IMAGE_CELL_CORNERS[len(active)]:
        index = [slice(None)] * 3
        for a, d in zip(active, offset):
            index[2 - a] = slice(d, d + dims[a] - 1)
        views.append(grid_values[tuple(index)])
    return views


def _threshold_structured(grid: Any, values: Any, at: str, lower: float, upper: float,
                          all_points: bool, continuous: bool, invert: bool, ids: bool,
                          xp) -> Kept:
    """Structured grids: cells classified from shifted views of the point values, and
    corners built for the kept cells only. A grid of one point has one vertex cell.
    3-D grids on the GPU run kernels that give these bits
    (:mod:`daxpy.cuda.threshold_cells`)."""
    dims = tuple(int(d) for d in grid.dims)
    if xp.__name__ != "numpy" and min(dims) > 1 and values.dtype in (np.float32, np.float64):
        from daxpy.cuda.threshold_cells import threshold_cells as on_gpu

        # The dtype's numbers at or inside the range: compared in the field's dtype,
        # they keep what the float64 comparisons keep (at_least, at_most).
        found = on_gpu(values, dims, _test(at, all_points, continuous),
                       *range_bounds(values.dtype, lower, upper), invert, HEXAHEDRON, ids)
        if found is not None:
            return Kept(*found)
    if all(int(d) == 1 for d in grid.dims):
        keep = _in_range(values[:1], lower, upper) != invert
        kept = xp.flatnonzero(keep).astype(xp.int64)
        return Kept(kept, kept, xp.zeros_like(kept), xp.arange(kept.shape[0] + 1, dtype=xp.int64),
                    xp.full(kept.shape[0], VERTEX, dtype=xp.uint8))
    if at == "cells":
        keep = _in_range(values, lower, upper)
    elif continuous and not all_points:
        views = [v.astype(xp.float64) for v in _corner_views(grid, values)]
        high, low = views[0], views[0]
        for view in views[1:]:
            high, low = xp.maximum(high, view), xp.minimum(low, view)
        keep = (at_least(high, lower) & at_most(low, upper)).reshape(-1)
    else:
        inside = _in_range(values, lower, upper)
        views = _corner_views(grid, inside)
        keep = views[0].copy()
        for view in views[1:]:
            keep = keep & view if all_points else keep | view
        keep = keep.reshape(-1)
    if invert:
        keep = ~keep
    kept = xp.flatnonzero(keep).astype(xp.int64)
    corners, kind = cell_corners(grid, xp, kept)
    width = corners.shape[1]
    connectivity = corners.reshape(-1)
    point_ids, renumber = used_points(connectivity, grid.n_points)
    offsets = xp.arange(0, connectivity.shape[0] + 1, width, dtype=xp.int64)
    return Kept(kept, point_ids.astype(xp.int64), renumber[connectivity].astype(xp.int64),
                offsets, xp.full(kept.shape[0], kind, dtype=xp.uint8))


def _emit(pieces: list, keep: Any, n_points: int, xp) -> Kept:
    """The kept cells' corners in cell id order, their points renumbered."""
    kept = xp.flatnonzero(keep)
    sizes = xp.zeros(keep.shape[0], dtype=xp.int64)
    types = xp.zeros(keep.shape[0], dtype=xp.uint8)
    for ids, corners, kind in pieces:
        sizes[ids] = corners.shape[1]
        types[ids] = kind
    counts = sizes[kept]
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if ends.shape[0] else 0   # the one host sync: the output's size
    connectivity = xp.zeros(total, dtype=xp.int64)
    # Where each kept cell sits among the kept ones: its corners' first slot.
    slot = xp.full(keep.shape[0], -1, dtype=xp.int64)
    slot[kept] = ends - counts
    for ids, corners, _ in pieces:
        chosen = keep[ids]
        where = slot[ids][chosen]
        width = corners.shape[1]
        connectivity[(where[:, None] + xp.arange(width)[None, :]).ravel()] = \
            corners[chosen].ravel()
    point_ids, renumber = used_points(connectivity, n_points)
    offsets = xp.concatenate([xp.zeros(1, xp.int64), ends])
    return Kept(kept.astype(xp.int64), point_ids.astype(xp.int64),
                renumber[connectivity].astype(xp.int64), offsets, types[kept])


# Compiled (Numba) twins of the array program, for float32 and float64 scalars.
_COMPILED = compiled("threshold_cpu", "threshold_cells", threshold_cells)

register_generating("threshold", {family: threshold_cells for family in GRID_FAMILIES},
                    input_association="any", halo=0,
                    doc="the cells whose scalars lie in a range, with the points they use",
                    cpu={family: _COMPILED for family in GRID_FAMILIES})
