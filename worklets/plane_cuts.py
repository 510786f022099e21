"""The slice and the clip of a 3-D image or rectilinear grid by a plane on the host,
from the plane's axes' terms (``(axis - origin) normal``, one per point of each axis):
the compiled rows make the distance where they read it
(:mod:`daxpy.worklets._plane_cpu`), with the bits of the distance field's cut and
clip and no field of the grid's size. Each returns None where it does not serve (no
Numba, a grid not 3-D): the filter then makes the field (:func:`array_axis_distance`
is its array program, which the careful rows of a plane's cut read too).

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(3, 3, 3))
>>> terms = (np.arange(3.0) - 0.5, np.zeros(3), np.zeros(3))
>>> plane_cut_cpu(g, terms).n_points, plane_clip_cpu(g, terms, value=0.0).n_kept
(9, 18)
"""

from __future__ import annotations

from typing import Any

from ._numba import compiled


def _field_instead(grid, terms, **params) -> None:
    """No compiled pass from a plane's terms: the filter makes the field instead."""
    return None


plane_cut_cpu = compiled("_plane_cpu", "plane_cut", _field_instead)
"""The slice's cut at 0 (``plane_cut_cpu(grid, terms)``: an EdgeCut, or None)."""

plane_clip_cpu = compiled("_plane_cpu", "plane_clip", _field_instead)
"""The clip (``plane_clip_cpu(grid, terms, value=..., invert=...)``: Clipped, or None)."""


def array_axis_distance(terms: Any, n_points: int, x_first: bool = False) -> Any:
    """The plane's distance at every point of the grid from its axes' terms, as an
    array program where the terms are (NumPy or CuPy): ``(z term + y term) + x term``
    (the slice's order), or with ``x_first`` ``(x term + y term) + z term`` (the
    clip's implicit plane's), each sum rounded on its own, in point id order.

    Examples
    --------
    >>> import numpy as np
    >>> array_axis_distance([np.arange(2.0), np.zeros(1), np.ones(2)], 4).tolist()
    [1.0, 2.0, 1.0, 2.0]
    """
    tx, ty, tz = terms[0][None, None, :], terms[1][None, :, None], terms[2][:, None, None]
    return ((tx + ty) + tz if x_first else (tz + ty) + tx).reshape(-1)
