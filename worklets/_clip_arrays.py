"""The clip's case tables (:mod:`daxpy.worklets._clip_tables`) as arrays: padded per
kind for the array program (:data:`TABLES`), and per case and output cell for the
row kernels of structured grids, the compiled CPU ones
(:mod:`daxpy.worklets.clip_cpu`) and the GPU's (:mod:`daxpy.cuda.clip_cells`)
alike (:data:`CASE_ARRAYS`, :data:`PLACES`). No Numba here: the GPU path reads
these without importing the CPU kernels.

Examples
--------
>>> int(TABLES[("voxel", False)]["count"][255]), int(CASE_ARRAYS[("voxel", False)][2][255])
(1, 8)
"""

from __future__ import annotations

import numpy as np

from ._clip_tables import CLIP, CLIP_INSIDE_OUT
from ._contour_tables import EDGES

_EDGE_CODE = 100
_CORNER_CODES = 8
"""Corner codes 0..7; an edge code ``100 + e`` becomes ``8 + e`` in the kernels."""


def _table(kind: str, cases: tuple) -> dict[str, np.ndarray]:
    """A kind's cases as padded arrays: per case its first output cell and count,
    per output cell its type, size and codes, per centre its terms."""
    starts, counts, types, sizes, codes = [], [], [], [], []
    centre_starts, terms = [], []
    for cells, centres in cases:
        starts.append(len(types))
        counts.append(len(cells))
        centre_starts.append(len(terms))
        for cell_type, cell_codes in cells:
            types.append(cell_type)
            sizes.append(len(cell_codes))
            codes.append(list(cell_codes) + [0] * (8 - len(cell_codes)))
        terms += [[(c, n / d) for c, n, d in centre] for centre in centres]
    width = max([len(t) for t in terms] + [1])
    term_codes = np.zeros((max(len(terms), 1), width), np.int64)
    term_weights = np.zeros((max(len(terms), 1), width))
    for j, centre in enumerate(terms):
        for k, (code, weight) in enumerate(centre):
            term_codes[j, k], term_weights[j, k] = code, weight
    return {"start": np.array(starts), "count": np.array(counts),
            "type": np.array(types or [0], np.uint8), "size": np.array(sizes or [0]),
            "codes": np.array(codes or [[0] * 8], np.int64),
            "centre_start": np.array(centre_starts), "term_codes": term_codes,
            "term_weights": term_weights,
            "edges": np.array(EDGES.get(kind, ((0, 0),)), np.int64)}


TABLES = {(kind, inside_out): _table(kind, tables[kind])
          for inside_out, tables in ((False, CLIP), (True, CLIP_INSIDE_OUT)) for kind in CLIP}
"""Per (kind, InsideOut): the case tables as arrays."""


def _case_arrays(kind: str, invert: bool) -> tuple:
    """A kind's tables for the kernels: per case its output cells, slots and
    centres; per output cell its type, size and codes (edges renumbered after the
    corners); per centre its terms."""
    t = TABLES[(kind, invert)]
    cases = (CLIP_INSIDE_OUT if invert else CLIP)[kind]
    slots = np.array([int(t["size"][s:s + c].sum()) for s, c in zip(t["start"], t["count"])],
                     np.int64)
    centres = np.array([len(c) for _, c in cases], np.int64)
    codes = np.where(t["codes"] >= _EDGE_CODE, t["codes"] - _EDGE_CODE + _CORNER_CODES,
                     t["codes"])
    terms = np.where(t["term_codes"] >= _EDGE_CODE,
                     t["term_codes"] - _EDGE_CODE + _CORNER_CODES, t["term_codes"])
    return (t["count"].astype(np.int64), t["start"].astype(np.int64), slots, centres,
            t["centre_start"].astype(np.int64), t["type"], t["size"].astype(np.int64), codes,
            terms, t["term_weights"])


def _code_places(kind: str) -> np.ndarray:
    """Per corner or edge code: the row of the cell's (up to) four point rows its
    (lower) corner lies on, its x step (0 or 1), and its axis (-1: a corner).
    Corner ``c`` sits at ``(c & 1, c >> 1 & 1, c >> 2)``; an edge joins two corners
    one bit apart, the lower one first."""
    edges = TABLES[(kind, False)]["edges"]
    places = np.zeros((_CORNER_CODES + edges.shape[0], 3), np.int64)
    for c in range(_CORNER_CODES):
        places[c] = (c >> 1, c & 1, -1)
    for e, (a, b) in enumerate(edges):
        lo = min(a, b)
        places[_CORNER_CODES + e] = (lo >> 1, lo & 1, int(a ^ b).bit_length() - 1)
    return places


CASE_ARRAYS = {(kind, invert): _case_arrays(kind, invert)
               for kind in ("voxel", "pixel") for invert in (False, True)}
"""Per (kind, InsideOut) of the structured cells: :func:`_case_arrays`."""
PLACES = {kind: _code_places(kind) for kind in ("voxel", "pixel")}
"""Per structured cell kind: :func:`_code_places`."""
