"""Contour: the topology-generating worklet that cuts a point field at one value.

Each implementation takes ``(grid, scalars, value=...)`` and returns an
:class:`~daxpy.worklets._edge_cut.EdgeCut`. The CPU and CUDA implementations are
one array program (:mod:`daxpy.worklets._marching`) run on NumPy or CuPy arrays,
so the two backends give the same points and cells in the same order. On 2-D and
3-D structured grids of float32 or float64 fields, the CPU backend runs its
compiled twin (:mod:`daxpy.worklets.contour_cpu`), which gives the same bits.

- Structured grids (uniform, rectilinear, curvilinear) are marched as VTK marches
  their cells: voxels (3-D), pixels (2-D: segments) or lines (1-D: points), classified
  by slices of the grid's field: no corner table is built, only the cells the
  value crosses are emitted.
- Unstructured grids and PolyData are marched one cell shape at a time with
  VTK's table for that shape (strips as their triangles, polylines as their
  segments). PolyData polygons of more than four corners are refused.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(3, 2, 1), point_data={"t": np.arange(6.0)})
>>> cut = contour_structured(g, g.point_data["t"], value=1.5)
>>> cut.lo.tolist(), cut.hi.tolist(), cut.cells[2].tolist()
([0, 1, 1], [3, 2, 4], [[0, 2], [2, 1]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daxpy.data.arrays import all_finite, array_module
from daxpy.errors import ArgumentError

from ._edge_cut import EdgeCut
from ._marching import (IMAGE_CELL_CORNERS, TABLES, at_least_bound, classify, march, per_cell,
                        register_generating, structured_corners)
from ._merge_cuts import in_cell_order, merge
from ._numba import compiled
from ._structured_cases import mask_cases, structured_cases

# Structured cells are marched as VTK's image cells: voxels, pixels, lines.
_STRUCTURED = {3: "voxel", 2: "pixel", 1: "line"}

# daxpy's cell shape names -> the kind of VTK's tables they are marched with.
_SHAPES = {"line": "line", "tri": "triangle", "quad": "quad", "pixel": "pixel", "tet": "tetra",
           "hex": "hexahedron", "voxel": "voxel", "wedge": "wedge", "pyramid": "pyramid"}


def contour_structured(grid: Any, scalars: Any, value: float, place=None, edges: bool = True,
                       sources: bool = True) -> EdgeCut:
    """Cut a uniform, rectilinear or curvilinear grid's point field at ``value``.

    Output points: the cut edges by lower point id, then axis (x, y, z); output
    cells: by input cell id, then VTK's table order. Works where ``scalars`` lives
    (``place`` is accepted for the signature every family shares; the grid's own
    arrays are not read). ``edges`` and ``sources`` (whether the caller reads the
    cut's edges and input cells) are accepted for the compiled march's signature:
    these are always made here.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2, 2), point_data={"t": np.arange(8.0)})
    >>> contour_structured(g, g.point_data["t"], value=3.5).cells[3].tolist()
    [[1, 0, 3], [3, 0, 2]]
    """
    xp = array_module(scalars)
    dims = tuple(int(d) for d in grid.dims)
    if xp.__name__ != "numpy" and min(dims) > 1 and scalars.dtype in (np.float32, np.float64):
        from daxpy.cuda.contour_rows import contour_rows

        found = contour_rows(scalars, dims, value, at_least_bound(scalars.dtype, value),
                             TABLES["voxel"])
        if found is not None:
            lo, hi, t, triangles, source = found
            return EdgeCut(lo=lo, hi=hi, t=t, cells={3: triangles}, source={3: source})
    return marched_structured(dims, scalars, value)


def marched_structured(dims: tuple, scalars: Any, value: float) -> EdgeCut:
    """:func:`contour_structured` as the array program, on NumPy or CuPy: the rules
    every backend follows (the GPU's row kernels hand fields with values that are not
    finite to it).

    Examples
    --------
    >>> import numpy as np
    >>> marched_structured((3, 1, 1), np.array([0.0, 1.0, 2.0]), 0.5).t.tolist()
    [0.5]
    """
    xp = array_module(scalars)
    active = [axis for axis in range(3) if dims[axis] > 1]
    if not active:  # a single point has no edge to cut
        return merge({}, scalars, value, scalars.shape[0])
    kind, offsets = _STRUCTURED[len(active)], IMAGE_CELL_CORNERS[len(active)]
    sizes = [dims[axis] for axis in active]
    cases = structured_cases(scalars, dims, value)
    full = (1 << len(offsets)) - 1
    crossed = (cases != 0) & (cases != full)
    if not all_finite(scalars):
        # A cell with a NaN or Inf corner cannot place its surface: it makes none.
        unknown = ~xp.isfinite(scalars.reshape(tuple(reversed(sizes))))
        crossed &= mask_cases(unknown, offsets) == 0
    cells = xp.flatnonzero(crossed)
    corners = structured_corners(dims, cells, offsets)
    parts = {per_cell(kind): march(corners, cells, scalars, value, kind, cases=cases[cells])}
    return merge(parts, scalars, value, scalars.shape[0])


def _pieces(block) -> list[tuple[str, Any, Any]]:
    """``(kind, corners, cell_ids)`` to march for one block of cells of one shape."""
    name = block.shape.name
    if name in _SHAPES:
        return [(_SHAPES[name], block.corners, block.cell_ids)]
    if name.startswith("strip"):
        # A strip's triangles, as vtkTriangleStrip contours them (orientation does
        # not change where a triangle is cut).
        k = block.corners.shape[1]
        return [("triangle", block.corners[:, i:i + 3], block.cell_ids) for i in range(k - 2)]
    if name.startswith("polyline"):
        k = block.corners.shape[1]
        return [("line", block.corners[:, i:i + 2], block.cell_ids) for i in range(k - 1)]
    if name.startswith("polygon"):
        raise ArgumentError(
            f"contour cuts triangles and quads; cell {int(block.cell_ids[0])} is a polygon "
            f"of {block.corners.shape[1]} corners (triangulate the surface first, for "
            "example with pyvista's triangulate())")
    return []  # vertices and polyvertices: nothing to cut


def contour_cells(grid: Any, scalars: Any, value: float, place=None, edges: bool = True,
                  sources: bool = True) -> EdgeCut:
    """Cut an unstructured grid's or PolyData's point field at ``value``.

    Output points: the cut edges in ascending ``(lo, hi)`` order; output cells: by
    input cell id, then VTK's table order. Works where ``scalars`` lives; ``place``
    puts the grid's host arrays there too (by default ``asarray`` of its module);
    ``edges`` and ``sources``, as :func:`contour_structured`'s.

    Raises
    ------
    ArgumentError
        On PolyData polygons of more than four corners.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import TETRA
    >>> tet = daxpy.UnstructuredGrid(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.]]),
    ...                              [0, 1, 2, 3], [0, 4], [TETRA])
    >>> contour_cells(tet, np.array([1.0, 0, 0, 0]), value=0.5).cells[3].tolist()
    [[2, 0, 1]]
    """
    xp = array_module(scalars)
    place = place or xp.asarray
    # Host cells by the compiled passes; device cells never load Numba.
    marched = _MARCHED if xp.__name__ == "numpy" else _array_march
    by_size: dict[int, list] = {}
    for block in grid.cell_blocks().values():
        for kind, corners, ids in _pieces(block):
            by_size.setdefault(per_cell(kind), []).append(
                marched(_placed_corners(corners, block, grid, place, xp), place(ids),
                        scalars=scalars, value=value, kind=kind))
    parts = {k: in_cell_order(found) for k, found in by_size.items()}
    return merge(parts, scalars, value, scalars.shape[0])


def _placed_corners(corners: Any, block: Any, grid: Any, place, xp) -> Any:
    """A block's corners where the cut runs: on the device as int32 where the ids fit
    (half the bytes for the cases' and the march's reads; the keys are int64), cached
    with the grid; a strip's or polyline's views as ``place`` puts them."""
    if xp.__name__ == "numpy" or corners is not block.corners:
        return place(corners)
    from daxpy.cuda.device import narrow_ids

    return narrow_ids(corners, grid)


def _array_cases(corners: Any, scalars: Any, value: float) -> Any:
    """Each cell's case at ``value``, 0 for a cell with a NaN or Inf corner (which
    makes no output), as an array program where ``corners`` live.

    Examples
    --------
    >>> import numpy as np
    >>> _array_cases(np.array([[0, 1], [1, 2]]), np.array([0.0, 2.0, np.nan]), 1.0).tolist()
    [2, 0]
    """
    xp = array_module(scalars)
    if xp is not np:
        from daxpy.cuda.cell_cases import cell_cases, serves

        # One kernel, one byte a cell, no table of corner values (the same cases).
        if serves(scalars, corners):
            return cell_cases(scalars, corners, at_least_bound(scalars.dtype, value))
    corner_values = scalars[corners]
    cases = classify(corner_values, value)
    finite = xp.isfinite(corner_values).all(axis=1)
    # A host sync, as the finiteness check of the field was before.
    return cases if bool(finite.all()) else xp.where(finite, cases, 0)


def _array_march(corners: Any, ids: Any, scalars: Any, value: float, kind: str) -> tuple:
    """:func:`~daxpy.worklets._marching.march` of cells classified by
    :func:`_array_cases`, where ``corners`` live (on the device by two kernels,
    :mod:`daxpy.cuda.march_block`, the same bits)."""
    cases = _array_cases(corners, scalars, value)
    if array_module(scalars) is not np:
        from daxpy.cuda.march_block import march_block

        found = march_block(cases, corners, ids, scalars.shape[0], kind, TABLES[kind])
        if found is not None:
            return found
    return march(corners, ids, scalars, value, kind, cases)


# The compiled march of host cells (threaded passes, one byte a cell).
_MARCHED = compiled("_march_cells_cpu", "march_cells", _array_march)

_FAMILIES = {"uniform": contour_structured, "rectilinear": contour_structured,
             "curvilinear": contour_structured, "unstructured": contour_cells,
             "polydata": contour_cells}

# Compiled (Numba) twins of the structured march, for 2-D and 3-D float grids.
_COMPILED = compiled("contour_cpu", "contour_structured", contour_structured)


register_generating("contour", _FAMILIES, input_association="points", halo=1,
                    doc="points where a point field crosses a value, joined into triangles, "
                        "segments or points",
                    cpu={family: _COMPILED for family in ("uniform", "rectilinear",
                                                          "curvilinear")})
