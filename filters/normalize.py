"""Normalize: unit vectors, each tuple of a field divided by its Euclidean norm.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import Normalize
>>> g = daxpy.UniformGrid(dims=(2,), point_data={"v": np.array([[3.0, 4.0], [0.0, 2.0]])})
>>> Normalize("v", backend="cpu")(g).point_data["v_normalized"].tolist()
[[0.6, 0.8], [0.0, 1.0]]
"""

from __future__ import annotations

from daxpy.data.verbs import Verb, register_verb

from ._base import TupleMapFilter

__all__ = ["Normalize"]


class Normalize(TupleMapFilter):
    """Divide each tuple of a field by its Euclidean norm.

    Float fields keep their dtype; integer fields give float64. The result has
    the input's shape and association.

    Parameters
    ----------
    field : str
        Input field, at points or cells.
    result : str, optional
        Output field name (default ``"<field>_normalized"``), at the input's association.
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
    daxpy.filters.Magnitude : the norm this divides by.

    Notes
    -----
    A zero tuple has no direction: it gives NaN in every component, as
    ``v / numpy.linalg.norm(v)`` and VTK's array calculator ``norm(v)``
    (default ExprTk parser) do. A tuple with a NaN component gives NaN; in one
    with an Inf component, Inf components give NaN and finite ones 0 (NumPy's
    ``inf / inf`` and ``x / inf``).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2), cell_data={"c": np.array([[0.0, -5.0]])})
    >>> Normalize("c", result="n", backend="cpu")(g).cell_data["n"].tolist()
    [[0.0, -1.0]]
    """

    worklet = "normalize"
    suffix = "normalized"


def normalize(node, result: str | None = None):
    """This field's tuples divided by their Euclidean norm.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"v": np.ones((3, 3))})
    >>> daxpy.pipeline(g).field("v").normalize().name
    'normalize_1'
    """
    return node._then("normalize", lambda src, out: Normalize(src, result=out), result)


register_verb(Verb("normalize", normalize, 25, "each tuple divided by its Euclidean norm"))
