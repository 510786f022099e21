"""CellToPoint: average a cell field onto the points (vtkCellDataToPointData).

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import CellToPoint
>>> g = daxpy.UniformGrid(dims=(3,), cell_data={"c": np.array([1.0, 3.0])})
>>> CellToPoint("c", backend="cpu")(g).point_data["c"].tolist()
[1.0, 2.0, 3.0]
"""

from __future__ import annotations
from daxpy.data.verbs import Verb, register_verb

from .point_to_cell import _AveragingFilter

__all__ = ["CellToPoint"]


class CellToPoint(_AveragingFilter):
    """Give each point the mean of the values of the cells that use it.

    Every cell counts once, whatever its size; a point that no cell uses gets
    0, as in VTK. Float fields keep their dtype; integer fields give float64.

    Parameters
    ----------
    field : str
        Input cell field.
    result : str, optional
        Output point field name (default: the input's name, as VTK does).
    association : {"cells"}, optional
        Where the input lives; only cell fields can be averaged onto points.
    backend : {"auto", "cpu", "cuda"}
        Where to run.
    nan_policy : {"propagate", "raise"}
        ``"propagate"`` (default): NaN and Inf flow to the outputs that read
        them. ``"raise"``: a NaN or Inf in an input field raises
        :class:`~daxpy.errors.NaNPolicyError` naming the field.

    Raises
    ------
    FieldError
        If ``association`` is not ``"cells"``.

    See Also
    --------
    daxpy.filters.PointToCell : the opposite direction.

    Notes
    -----
    A point that a NaN cell uses gets NaN (Inf gives Inf or NaN); see the
    NaN rule in the README.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 3), cell_data={"c": np.array([2.0, 4.0])})
    >>> CellToPoint("c", result="cp", backend="cpu")(g).point_data["cp"].tolist()
    [2.0, 2.0, 3.0, 3.0, 4.0, 4.0]
    """

    _worklet, _source, _target = "cell_to_point", "cells", "points"


def cell_to_point(node, result: str | None = None):
    """Average of this cell field over the cells around each point.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), cell_data={"c": np.zeros(2)})
    >>> daxpy.pipeline(g).field("c").cell_to_point().name
    'cell_to_point_1'
    """
    return node._then("cell_to_point",
                      lambda src, out: CellToPoint(src, result=out), result, "points")


register_verb(Verb("cell_to_point", cell_to_point, 40, "average of a cell field onto the points"))
