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
from ._names import result_only_verb

__all__ = ["Magnitude"]


class Magnitude(TupleMapFilter):
    """Compute ``sqrt(sum of squares)`` over the components of each tuple.

    A one-component field gives its absolute value. Float fields keep their
    dtype; integer fields give float64.

    Parameters
    ----------
    field, association, backend, nan_policy
        As for every one-field filter (:class:`~daxpy.filters.FieldFilter`).
    result : str, optional
        Output field name (default ``"<field>_magnitude"``), at the input's association.

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


magnitude = result_only_verb("magnitude", Magnitude, "Euclidean norm over this field's components.")


register_verb(Verb("magnitude", magnitude, 20, "Euclidean norm of each tuple"))
