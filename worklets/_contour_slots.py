"""The lookup tables of the compiled CPU contour's march
(:func:`daxpy.worklets._contour_march_cpu._march`): the kinds it marches, their cut edges,
where a cell's edge points sit among its four point rows' (:data:`_SLOT`), the case
tables by those places, and which point rows' x, y and z edges a column of eight
rows' bits cuts (:data:`_LANES`, :data:`_Y`, :data:`_Z`: four counts in one integer).

Examples
--------
>>> int(_LANES[0b0001])   # point row 0's x edge cut: lane 0
1
"""

from __future__ import annotations

import numpy as np

from ._marching import TABLES, cut_edges

_KINDS = {3: "voxel", 2: "pixel"}
"""The cell each grid dimension is marched as (1-D grids run the NumPy path)."""


_CUT = {kind: cut_edges(kind) for kind in _KINDS.values()}
"""Each case's cut edges, by kind (a cell's triangles use all of them)."""

_SLOT = {(0, 0, 0): 0, (0, 0, 1): 1, (0, 0, 2): 2, (0, 1, 1): 3, (0, 1, 2): 4, (1, 0, 0): 5,
         (1, 0, 2): 6, (1, 1, 2): 7, (2, 0, 0): 8, (2, 0, 1): 9, (2, 1, 1): 10, (3, 0, 0): 11}
"""Where :func:`_march` puts a cell's edge points, by the edge's (point row, x
offset, axis): the row of its low corner among the cell row's four, 0 or 1 for
the cell's x or x + 1, and 0, 1, 2 for x, y, z."""


def _slotted(kind: str) -> np.ndarray:
    """The case table of ``kind`` with each edge as its :data:`_SLOT`.

    Examples
    --------
    >>> _slotted("pixel")[1].tolist()   # corner 0 in: edges 0 (x) and 3 (y)
    [[0, 1], [0, 0]]
    """
    counts, table, edges = TABLES[kind]
    slot = np.array([_SLOT[(a >> 1, a & 1, int(b ^ a).bit_length() - 1)] for a, b in edges])
    return slot[table]


_SLOTTED = {kind: _slotted(kind) for kind in _KINDS.values()}
"""Each kind's case table by :data:`_SLOT`, for :func:`_march`."""


def _lanes(bits: int) -> int:
    """Bits 0 to 3 at bits 0, 4, 8, 12: four small counts in one integer.

    Examples
    --------
    >>> hex(_lanes(0b1011))
    '0x1011'
    """
    return (bits & 1) | ((bits & 2) << 3) | ((bits & 4) << 6) | ((bits & 8) << 9)


_LANES = np.array([_lanes(column) for column in range(256)], np.int64)
"""Of two columns' ``^``: which of the four point rows' x edges are cut, a lane each."""

_Y = np.array([_lanes(c ^ (((c >> 1) & 5) | ((c >> 3) & 10))) for c in range(256)], np.int64)
"""Of a column: which of the four point rows' y edges are cut (row 0 to 1, 1 to 4, 2 to 3,
3 to 6), a lane each. Tables, not arithmetic: fewer operations to compile, cold."""

_Z = np.array([_lanes(c ^ (((c >> 2) & 3) | ((c >> 3) & 4) | ((c >> 4) & 8))) for c in range(256)],
              np.int64)
"""Of a column: which of the four point rows' z edges are cut (row 0 to 2, 1 to 3, 2 to 5,
3 to 7), a lane each."""
