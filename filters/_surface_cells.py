"""PolyData's vertices, lines, triangles and quads as an unstructured grid, so that the
filters of unstructured grids (the gradient first) run on surfaces as VTK's do: VTK
computes them through the same generic cell interface for both.

Examples
--------
>>> import numpy as np, daxpy
>>> p = daxpy.PolyData(np.eye(3), polys=([0, 3], [0, 1, 2]), lines=([0, 2], [0, 1]))
>>> as_unstructured(p, "Gradient").cell_types.tolist()
[3, 5]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daxpy.data.arrays import to_host
from daxpy.data.celltypes import LINE, QUAD, TRIANGLE, VERTEX
from daxpy.data.unstructured import UnstructuredGrid
from daxpy.errors import ArgumentError

# PolyData's cells by kind and corner count: the VTK type its generic cell access gives.
_TYPES = {("verts", 1): VERTEX, ("lines", 2): LINE, ("polys", 3): TRIANGLE,
          ("polys", 4): QUAD}


def as_unstructured(surface: Any, verb: str, degenerate: bool = False) -> UnstructuredGrid:
    """The grid of ``surface``'s cells, in PolyData's cell order (verts, lines, polys),
    sharing its points and fields; ``degenerate``: whether cells that repeat a
    point may come along (a threshold or clip treats them as VTK does, a
    gradient does not).

    Raises
    ------
    ArgumentError
        For cells no unstructured grid holds yet: poly-vertices, polylines, polygons
        of more than four corners, triangle strips, and, unless ``degenerate``,
        cells that repeat a point (naming ``verb``).
    """
    connectivity, types, counts = [], [], []
    for kind in ("verts", "lines", "polys", "strips"):
        offsets, corners = (to_host(a) for a in surface.cell_array(kind))
        sizes = np.diff(offsets)
        if not sizes.size:
            continue
        lookup = np.full(int(sizes.max()) + 1, -1)
        for (of_kind, count), vtk_type in _TYPES.items():
            if of_kind == kind and count < lookup.shape[0]:
                lookup[count] = vtk_type
        kinds = lookup[sizes]
        if (kinds < 0).any():
            raise ArgumentError(
                f"{verb} runs on PolyData of vertices, lines, triangles and quads; "
                f"{surface.name!r} has {kind} of {int(sizes[kinds < 0][0])} points (polylines, "
                "polygons and strips are not supported yet)")
        if not degenerate:
            _refuse_repeated_points(surface, kind, offsets, corners, verb)
        connectivity.append(corners)
        types.append(kinds.astype(np.uint8))
        counts.append(sizes)
    cell_types = np.concatenate(types) if types else np.zeros(0, np.uint8)
    flat = np.concatenate(connectivity) if connectivity else np.zeros(0, np.int64)
    offsets = np.concatenate([[0]] + [np.cumsum(np.concatenate(counts))] if counts else [[0]])
    # The cells are the surface's own, checked above: the grid is built unchecked.
    return UnstructuredGrid.from_checked(surface.points(), flat.astype(np.int64),
                                         offsets.astype(np.int64), cell_types,
                                         point_data=dict(surface.point_data),
                                         cell_data=dict(surface.cell_data), name=surface.name)


def _refuse_repeated_points(surface: Any, kind: str, offsets: np.ndarray,
                            corners: np.ndarray, verb: str) -> None:
    # VTK differentiates a degenerate cell its own way (a least-squares fit that may
    # fail), which daxpy's unstructured cells do not reproduce: refused, not guessed.
    for size in np.unique(np.diff(offsets)):
        starts = offsets[:-1][np.diff(offsets) == size]
        cells = np.sort(corners[starts[:, None] + np.arange(size)], axis=1)
        repeated = (cells[:, 1:] == cells[:, :-1]).any(axis=1)
        if repeated.any():
            raise ArgumentError(
                f"{verb} on PolyData: {surface.name!r} has {kind} that repeat a point "
                f"(a degenerate cell, e.g. {cells[repeated][0].tolist()}); these are not "
                "supported yet (clean() the surface first)")
