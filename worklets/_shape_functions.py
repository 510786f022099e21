"""Parametric derivatives of the interpolation functions of VTK's linear cells.

Each shape's table says how the corner values of a cell combine into the
derivatives along its parametric axes r, s, t, at a given parametric point.
The gradient worklets turn those into spatial derivatives through the cell's
Jacobian (see :mod:`daxpy.worklets._jacobian`). Corner orders, parametric
coordinates and centres are VTK's, so that results match ``vtkCell::Derivatives``.

Examples
--------
>>> parametric_derivatives("tri", (0.2, 0.3, 0.0)).tolist()
[[-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]]
"""

from __future__ import annotations

from typing import Callable

import numpy as np


def _line(r, s, t):
    return [[-1.0, 1.0]]


def _tri(r, s, t):
    return [[-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]]


def _quad(r, s, t):
    return [[-(1 - s), 1 - s, s, -s],
            [-(1 - r), -r, r, 1 - r]]


def _tet(r, s, t):
    return [[-1.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 1.0, 0.0], [-1.0, 0.0, 0.0, 1.0]]


def _hex(r, s, t):
    rm, sm, tm = 1 - r, 1 - s, 1 - t
    return [[-sm * tm, sm * tm, s * tm, -s * tm, -sm * t, sm * t, s * t, -s * t],
            [-rm * tm, -r * tm, r * tm, rm * tm, -rm * t, -r * t, r * t, rm * t],
            [-rm * sm, -r * sm, -r * s, -rm * s, rm * sm, r * sm, r * s, rm * s]]


def _wedge(r, s, t):
    u, tm = 1 - r - s, 1 - t
    return [[-tm, tm, 0.0, -t, t, 0.0],
            [-tm, 0.0, tm, -t, 0.0, t],
            [-u, -r, -s, u, r, s]]


def _pyramid(r, s, t):
    rm, sm, tm = 1 - r, 1 - s, 1 - t
    return [[-sm * tm, sm * tm, s * tm, -s * tm, 0.0],
            [-rm * tm, -r * tm, r * tm, rm * tm, 0.0],
            [-rm * sm, -r * sm, -r * s, -rm * s, 1.0]]


_DERIVATIVES: dict[str, Callable] = {
    "line": _line, "tri": _tri, "quad": _quad, "tet": _tet,
    "hex": _hex, "wedge": _wedge, "pyramid": _pyramid,
}

CORNER_PCOORDS: dict[str, tuple[tuple[float, float, float], ...]] = {
    "vertex": ((0, 0, 0),),
    "line": ((0, 0, 0), (1, 0, 0)),
    "tri": ((0, 0, 0), (1, 0, 0), (0, 1, 0)),
    "quad": ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)),
    "tet": ((0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "hex": ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0),
            (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)),
    "wedge": ((0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (0, 1, 1)),
    "pyramid": ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1)),
}
"""Parametric coordinates of each corner, in VTK's corner order."""

PARAMETRIC_CENTERS: dict[str, tuple[float, float, float]] = {
    "vertex": (0.0, 0.0, 0.0),
    "line": (0.5, 0.0, 0.0),
    "tri": (1 / 3, 1 / 3, 0.0),
    "quad": (0.5, 0.5, 0.0),
    "tet": (0.25, 0.25, 0.25),
    "hex": (0.5, 0.5, 0.5),
    # VTK's wedge centre is written with six digits; keep them to match it.
    "wedge": (0.333333, 0.333333, 0.5),
    "pyramid": (0.4, 0.4, 0.2),
}
"""``vtkCell::GetParametricCenter`` of each shape."""

# At the apex of a pyramid the r and s rows vanish together with the inverse
# Jacobian. vtkPyramid::Derivatives extrapolates along the axis r = s = 0.5,
# where the scaled rows do not depend on t: their t = 0 values give the limit.
_PYRAMID_APEX_PCOORDS = (0.5, 0.5, 0.0)


def parametric_derivatives(shape: str, pcoords) -> np.ndarray:
    """Derivatives of the interpolation functions at ``pcoords``.

    Parameters
    ----------
    shape : str
        Shape name (``line``, ``tri``, ``quad``, ``tet``, ``hex``, ``wedge``,
        ``pyramid``); vertices have no parametric axis.
    pcoords : sequence of 3 float
        Parametric point.

    Returns
    -------
    numpy.ndarray
        Shape ``(dimension, n_corners)``: row ``a`` holds dN_j/d(axis a).

    Examples
    --------
    >>> parametric_derivatives("line", (0.5, 0, 0)).tolist()
    [[-1.0, 1.0]]
    """
    return np.array(_DERIVATIVES[shape](*pcoords), dtype=np.float64)


def corner_derivatives(shape: str, corner: int) -> np.ndarray:
    """Parametric derivatives at one corner of a shape, as VTK evaluates them.

    Parameters
    ----------
    shape : str
        Shape name.
    corner : int
        Corner index in VTK's order.

    Returns
    -------
    numpy.ndarray
        Shape ``(dimension, n_corners)``.

    Examples
    --------
    >>> corner_derivatives("hex", 6)[:, [2, 5, 6, 7]].tolist()
    [[0.0, 0.0, 1.0, -1.0], [0.0, -1.0, 1.0, 0.0], [-1.0, 0.0, 1.0, 0.0]]
    """
    if shape == "pyramid" and corner == 4:
        return parametric_derivatives(shape, _PYRAMID_APEX_PCOORDS)
    return parametric_derivatives(shape, CORNER_PCOORDS[shape][corner])
