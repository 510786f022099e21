"""Magnitude: the Euclidean norm of each tuple of a field.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import Magnitude
>>> g = daxpy.UniformGrid(dims=(2,), point_data={"v": np.array([[3.0, 4.0], [1.0, 0.0]])})
>>> Magnitude("v", backend="cpu")(g).point_data["v_magnitude"].tolist()
[5.0, 1.0]
"""

from __future__ import annotations

from daxpy.data.verbs import Verb, register_verb

from ._base import TupleMapFilter

__all__ = ["Magnitude"]


class Magnitude(TupleMapFilter):
    """Compute ``sqrt(sum of squares)`` over the components of each tuple.

    A one-component field gives its absolute value. Float fields keep their
    dtype; integer fields give float64.

    Parameters
    ----------
    field : str
        Input field, at points or cells.
    result : str, optional
        Output field name (default ``"<field>_magnitude"``), at the input's association.
    association : {"points", "cells"}, optional
        Where to find the field; by default points, then cells.
    backend : {"auto", "cpu", "cuda"}
        Where to run.
    nan_policy : {"propagate", "raise"}
        ``"propagate"`` (default): NaN and Inf flow to the outputs that read
        them. ``"raise"``: a NaN or Inf in an input field raises
        :class:`~daxpy.errors.NaNPolicyError` naming the field.

    See Also
    --------
    daxpy.filters.Gradient : gives the vector fields this is often applied to.

    Notes
    -----
    A tuple with a NaN component has a NaN magnitude; one with an Inf
    component (and no NaN) an Inf one.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2), cell_data={"c": np.array([-2.0])})
    >>> Magnitude("c", result="m", backend="cpu")(g).cell_data["m"].tolist()
    [2.0]
    """

    worklet = "magnitude"
    suffix = "magnitude"


def magnitude(node, result: str | None = None):
    """Euclidean norm over this field's components.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"v": np.ones((3, 3))})
    >>> daxpy.pipeline(g).field("v").magnitude("m").name
    'm'
    """
    return node._then("magnitude", lambda src, out: Magnitude(src, result=out), result)


register_verb(Verb("magnitude", magnitude, 20, "Euclidean norm of each tuple"))
