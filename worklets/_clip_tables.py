"""Table-based clip cases: VTK's (vtkTableBasedClipDataSet), so that daxpy's clips
match VTK's cell for cell.

Derived from the installed VTK by clipping one cell of each kind per case
(``tests/clip_table_source.py``, which ``tests/test_clip_tables.py`` re-runs and
compares). ``CLIP[kind][case]`` is ``(cells, centres)`` for the case whose bit ``i``
is set when corner ``i`` is kept: each output cell is ``(vtk cell type, codes)``, a
code naming a kept corner (``i``), the point where edge ``e`` of
:data:`daxpy.worklets._contour_tables.EDGES` is cut (``100 + e``), or a centre
point (``-1 - j``: ``centres[j]`` lists its points as ``(code, numerator,
denominator)``, the point being their weighted sum). ``CLIP_INSIDE_OUT`` holds
VTK's InsideOut cases the same way (the case's bits are still the kept corners):
VTK keeps the other side's cells of a case, which differ at saddles.

Examples
--------
>>> from daxpy.worklets._clip_tables import CLIP
>>> CLIP["tetra"][1]     # corner 0 kept: a tetrahedron of it and three cut edges
(((10, (0, 100, 102, 103)),), ())
"""
from ._clip_cases_0 import (_LINE_0, _TRIANGLE_0, _QUAD_0, _PIXEL_0, _TETRA_0, _HEXAHEDRON_0)
from ._clip_cases_1 import (_HEXAHEDRON_1)
from ._clip_cases_2 import (_HEXAHEDRON_2)
from ._clip_cases_3 import (_HEXAHEDRON_3)
from ._clip_cases_4 import (_VOXEL_0)
from ._clip_cases_5 import (_VOXEL_1)
from ._clip_cases_6 import (_VOXEL_2)
from ._clip_cases_7 import (_VOXEL_3)
from ._clip_cases_8 import (_WEDGE_0, _PYRAMID_0, _LINE_INSIDE_OUT_0, _TRIANGLE_INSIDE_OUT_0, _QUAD_INSIDE_OUT_0, _PIXEL_INSIDE_OUT_0, _TETRA_INSIDE_OUT_0)
from ._clip_cases_9 import (_HEXAHEDRON_INSIDE_OUT_0, _HEXAHEDRON_INSIDE_OUT_1)
from ._clip_cases_10 import (_HEXAHEDRON_INSIDE_OUT_2)
from ._clip_cases_11 import (_HEXAHEDRON_INSIDE_OUT_3)
from ._clip_cases_12 import (_VOXEL_INSIDE_OUT_0, _VOXEL_INSIDE_OUT_1)
from ._clip_cases_13 import (_VOXEL_INSIDE_OUT_2)
from ._clip_cases_14 import (_VOXEL_INSIDE_OUT_3)
from ._clip_cases_15 import (_WEDGE_INSIDE_OUT_0, _PYRAMID_INSIDE_OUT_0)

CLIP = {
    "line": _LINE_0,
    "triangle": _TRIANGLE_0,
    "quad": _QUAD_0,
    "pixel": _PIXEL_0,
    "tetra": _TETRA_0,
    "hexahedron": _HEXAHEDRON_0 + _HEXAHEDRON_1 + _HEXAHEDRON_2 + _HEXAHEDRON_3,
    "voxel": _VOXEL_0 + _VOXEL_1 + _VOXEL_2 + _VOXEL_3,
    "wedge": _WEDGE_0,
    "pyramid": _PYRAMID_0,
}

CLIP_INSIDE_OUT = {
    "line": _LINE_INSIDE_OUT_0,
    "triangle": _TRIANGLE_INSIDE_OUT_0,
    "quad": _QUAD_INSIDE_OUT_0,
    "pixel": _PIXEL_INSIDE_OUT_0,
    "tetra": _TETRA_INSIDE_OUT_0,
    "hexahedron": _HEXAHEDRON_INSIDE_OUT_0 + _HEXAHEDRON_INSIDE_OUT_1 + _HEXAHEDRON_INSIDE_OUT_2 + _HEXAHEDRON_INSIDE_OUT_3,
    "voxel": _VOXEL_INSIDE_OUT_0 + _VOXEL_INSIDE_OUT_1 + _VOXEL_INSIDE_OUT_2 + _VOXEL_INSIDE_OUT_3,
    "wedge": _WEDGE_INSIDE_OUT_0,
    "pyramid": _PYRAMID_INSIDE_OUT_0,
}
