"""Table-based clip cases: VTK's (vtkTableBasedClipDataSet), so that daxpy's clips
match VTK's cell for cell.

Derived from the installed VTK by clipping one cell of each kind per case
(``tests/clip_table_source.py``, which ``tests/test_clip_tables.py`` re-runs and
compares). ``CLIP[kind][case]`` is ``(cells, centres)`` for the case whose bit ``i``
is set when corner ``i`` is kept: each output cell is ``(vtk cell type, codes)``, a
code naming a kept corner (``i``), the point where edge ``e`` of
:data:`daxpy.worklets._contour_tables.EDGES` is cut (``100 + e``), or a centre
point (``-1 - j``: ``centres[j]`` lists its points as ``(code, numerator,
denominator)``, the point being their weighted sum).

Examples
--------
>>> from daxpy.worklets._clip_tables import CLIP
>>> CLIP["tetra"][1]     # corner 0 kept: a tetrahedron of it and three cut edges
(((10, (0, 100, 102, 103)),), ())
"""
from ._clip_cases_0 import (_LINE_0, _TRIANGLE_0, _QUAD_0, _TETRA_0, _HEXAHEDRON_0)
from ._clip_cases_1 import (_HEXAHEDRON_1)
from ._clip_cases_2 import (_HEXAHEDRON_2)
from ._clip_cases_3 import (_HEXAHEDRON_3)
from ._clip_cases_4 import (_WEDGE_0, _PYRAMID_0)

CLIP = {
    "line": _LINE_0,
    "triangle": _TRIANGLE_0,
    "quad": _QUAD_0,
    "tetra": _TETRA_0,
    "hexahedron": _HEXAHEDRON_0 + _HEXAHEDRON_1 + _HEXAHEDRON_2 + _HEXAHEDRON_3,
    "wedge": _WEDGE_0,
    "pyramid": _PYRAMID_0,
}
