"""BiasAdd: add a bias to a field, repeated along its flat last axis (TensorFlow's BiasAdd).

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import BiasAdd
>>> g = daxpy.UniformGrid(dims=(2,), point_data={"v": np.zeros((2, 2))})
>>> BiasAdd("v", [1, 2], backend="cpu")(g).point_data["v_biased"].tolist()
[[1.0, 2.0], [1.0, 2.0]]
"""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from daxpy.data.dataset import DataSet

from daxpy.worklets.bias_add import as_bias

from daxpy.engine.dispatch import execute
from daxpy.errors import ArgumentError
from daxpy.data.verbs import Verb, register_verb

from ._base import FieldFilter
from ._names import result_name

__all__ = ["BiasAdd"]


class BiasAdd(FieldFilter):
    """Add ``bias[i % len(bias)]`` to the ``i``-th value of the flattened field.

    For a field of ``c`` components and a bias of ``c`` entries, each component
    gets its own bias. The result keeps the field's dtype and shape.

    Parameters
    ----------
    field : str
        Input field, at points or cells.
    bias : array-like, 1-D
        Bias, cast to the field's dtype; its length must divide the number of
        values of the field.
    result : str, optional
        Output field name (default ``"<field>_biased"``), at the input's association.
    association : {"points", "cells"}, optional
        Where to find the field; by default points, then cells.
    backend, nan_policy
        As for every filter (:class:`~daxpy.filters.Filter`).

    Raises
    ------
    ArgumentError
        If the bias is not a non-empty 1-D array of numbers, or (when run) if
        its length does not divide the number of values or a value has no
        value of the field's dtype (NaN or 1e30 for an integer field, 1e300
        for float32); fractions added to an integer field truncate.

    See Also
    --------
    daxpy.filters.FieldMap : any elementwise expression over fields.

    Notes
    -----
    NaN values stay NaN, and a NaN bias makes every value it is added to NaN.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2), cell_data={"c": np.array([1], np.int32)})
    >>> BiasAdd("c", [5], result="c5", backend="cpu")(g).cell_data["c5"].tolist()
    [6]
    """

    def __init__(self, field: str, bias: ArrayLike, result: str | None = None, *,
                 association: str | None = None, backend: str = "auto",
                 nan_policy: str = "propagate"):
        super().__init__(field, association=association, backend=backend,
                         nan_policy=nan_policy)
        self.bias = as_bias(bias)
        self.result = result_name(result, f"{field}_biased")

    verb = "bias_add"

    def fusion_steps(self, association: str, dataset: DataSet) -> list[tuple[str, dict]] | None:
        return [("bias_add", {"bias": self.bias})]

    def position_free(self, components: int) -> bool:
        # A bias spanning several tuples adds by position in the whole field.
        return components % len(self.bias) == 0

    def compute(self, dataset: DataSet) -> dict[str, dict[str, Any]]:
        values, association = self.input_field(dataset)
        biased = execute("bias_add", dataset, values, association, backend=self.backend,
                         bias=self.bias)
        return {association: {self.result: biased}}


def bias_add(node: Any, bias: ArrayLike, result: str | None = None) -> Any:
    """This field plus ``bias`` repeated along its flattened last axis.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"p": np.zeros(2)})
    >>> daxpy.pipeline(g).field("p").bias_add([1.0]).name
    'bias_add_1'
    """
    return node._then("bias_add", lambda src, out: BiasAdd(src, bias, result=out), result)


def _parse_bias(step: str, argument: str) -> dict:
    """The step's biases, numbers separated by commas.

    Examples
    --------
    >>> _parse_bias("bias_add=1,2.5", "1,2.5")
    {'bias': [1.0, 2.5]}
    """
    try:
        return {"bias": [float(value) for value in argument.split(",")]}
    except ValueError:
        raise ArgumentError(f"step {step!r}: bias_add takes numbers separated by commas "
                            "(bias_add=1 or bias_add=1,2,3)") from None


register_verb(Verb("bias_add", bias_add, 60, "the field plus a bias repeated along its last "
                   "axis", argument="B1[,B2...]", required=True, parse=_parse_bias))
