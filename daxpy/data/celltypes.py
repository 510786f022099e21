"""VTK cell shapes that daxpy understands.

The numeric ids are VTK's (``vtkCellType.h``) so that connectivity can be shared
with VTK and PyVista without translation.

Examples
--------
>>> from daxpy.data.celltypes import HEXAHEDRON, CELL_SHAPES
>>> CELL_SHAPES[HEXAHEDRON].n_corners
8
"""

from __future__ import annotations

from dataclasses import dataclass

VERTEX = 1
POLY_VERTEX = 2
LINE = 3
POLY_LINE = 4
TRIANGLE = 5
TRIANGLE_STRIP = 6
POLYGON = 7
PIXEL = 8
QUAD = 9
TETRA = 10
VOXEL = 11
HEXAHEDRON = 12
WEDGE = 13
PYRAMID = 14


@dataclass(frozen=True)
class CellShape:
    """Static description of one VTK cell shape.

    Attributes
    ----------
    vtk_id : int
        The VTK cell type id.
    name : str
        Short name used in kernel specialization names (``hex``, ``tet``...).
    n_corners : int
        Number of points of a linear cell of this shape.
    dimension : int
        Topological dimension: 0 for vertices, 3 for solids.
    """

    vtk_id: int
    name: str
    n_corners: int
    dimension: int


CELL_SHAPES: dict[int, CellShape] = {
    s.vtk_id: s
    for s in (
        CellShape(VERTEX, "vertex", 1, 0),
        CellShape(LINE, "line", 2, 1),
        CellShape(TRIANGLE, "tri", 3, 2),
        CellShape(QUAD, "quad", 4, 2),
        CellShape(PIXEL, "pixel", 4, 2),
        CellShape(TETRA, "tet", 4, 3),
        CellShape(VOXEL, "voxel", 8, 3),
        CellShape(HEXAHEDRON, "hex", 8, 3),
        CellShape(WEDGE, "wedge", 6, 3),
        CellShape(PYRAMID, "pyramid", 5, 3),
    )
}
"""Shapes by VTK id. Pixel and voxel are accepted on input and renumbered to quad/hex.
The variable-size cells (poly-vertex, polyline, strip, polygon) are PolyData's only
(:func:`daxpy.data.polydata.cell_shape`)."""

PIXEL_TO_QUAD_ORDER = (0, 1, 3, 2)
"""Corner order that turns a VTK pixel into a VTK quad."""

VOXEL_TO_HEX_ORDER = (0, 1, 3, 2, 4, 5, 7, 6)
"""Corner order that turns a VTK voxel into a VTK hexahedron."""

HEX_TO_TETS = ((0, 1, 3, 4), (1, 2, 3, 6), (1, 3, 4, 6), (3, 4, 6, 7), (1, 4, 5, 6))
"""Corner orders that cut a lattice hexahedron (VTK's corner numbering) into five
tetrahedra, each of VTK's positive orientation (mixed test and benchmark grids)."""

HEX_TO_WEDGES = ((0, 1, 3, 4, 5, 7), (1, 2, 3, 5, 6, 7))
"""Corner orders that cut a lattice hexahedron into two wedges of positive volume."""

SHAPES_BY_NAME: dict[str, CellShape] = {s.name: s for s in CELL_SHAPES.values()}
