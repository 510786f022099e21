"""Table-based clip cases: VTK's (vtkTableBasedClipDataSet), so that daxpy's clips
match VTK's cell for cell.

Derived from the installed VTK by clipping one cell of each kind per case
(``tests/clip_table_source.py``, which ``tests/test_clip_tables.py`` re-runs and
compares), and kept as data beside this module (``clip_cases.json``, loaded once
into these module-level constants). ``CLIP[kind][case]`` is ``(cells, centres)``
for the case whose bit ``i`` is set when corner ``i`` is kept: each output cell is
``(vtk cell type, codes)``, a code naming a kept corner (``i``), the point where
edge ``e`` of
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

import json
from importlib import resources


def _tuples(value):
    """JSON's lists back as the tuples the tables are made of."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


_DATA = json.loads(resources.files(__package__).joinpath("clip_cases.json").read_text())
CLIP = {kind: _tuples(cases) for kind, cases in _DATA["CLIP"].items()}
CLIP_INSIDE_OUT = {kind: _tuples(cases) for kind, cases in _DATA["CLIP_INSIDE_OUT"].items()}
