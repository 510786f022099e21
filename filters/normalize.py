"""Normalize: unit vectors, each tuple of a field divided by its Euclidean norm.

Examples
--------
>>> import numpy as np, daxpy
>>> v = np.array([[3.0, 4.0], [0.0, 2.0]])
>>> out = Normalize("v", backend="cpu")(daxpy.UniformGrid(dims=(2,), point_data={"v": v}))
>>> out.point_data["v_normalized"].tolist()
[[0.6, 0.8], [0.0, 1.0]]
"""

from __future__ import annotations

from daxpy.data.verbs import Verb, register_verb

from ._base import TupleMapFilter
from ._names import result_only_verb

__all__ = ["Normalize"]


class Normalize(TupleMapFilter):
    """Divide each tuple of a field by its Euclidean norm.

    Float fields keep their dtype; integer fields give float64. The result has
    the input's shape and association; its name is ``result``, by default
    ``"<field>_normalized"``. The parameters are those of
    :class:`~daxpy.filters.Magnitude`.

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


normalize = result_only_verb("normalize", Normalize,
                             "This field's tuples divided by their Euclidean norm.")


register_verb(Verb("normalize", normalize, 25, "each tuple divided by its Euclidean norm"))
