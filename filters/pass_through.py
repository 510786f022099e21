"""PassThrough: copy a field under a new name, optionally changing its dtype.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import PassThrough
>>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.arange(3, dtype=np.float32)})
>>> PassThrough("t", dtype="float64", backend="cpu")(g).point_data["t_copy"].dtype
dtype('float64')
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from daxpy.data.dataset import DataSet

from daxpy.data.arrays import all_finite, array_module
from daxpy.data.verbs import Verb, register_verb
from daxpy.engine.dispatch import execute
from daxpy.errors import ArgumentError

__all__ = ["PassThrough"]

from ._base import FieldFilter
from ._names import result_name


class PassThrough(FieldFilter):
    """Copy a field, optionally converting it (seed 004's float32 to float64 test).

    Parameters
    ----------
    field : str
        Input field.
    result : str, optional
        Output field name (default ``"<field>_copy"``).
    dtype : dtype-like, optional
        Output dtype (default: the input's): a real integer or floating-point
        dtype. Floats become integers by truncation toward zero; a field holding
        NaN, Inf or a value outside the integer range is refused rather than
        converted to a meaningless integer.
    association : {"points", "cells"}, optional
        Where to find the field.
    backend, nan_policy
        As for every filter (:class:`~daxpy.filters.Filter`).

    Raises
    ------
    ArgumentError
        For a ``dtype`` that is not a real number type, or (when run) a float
        field that has no exact integer conversion.

    See Also
    --------
    daxpy.filters.FieldMap : elementwise expressions over fields.

    Notes
    -----
    NaN and Inf are copied as they are between float dtypes; into an
    integer dtype they are refused (see Raises).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2), cell_data={"c": np.array([7], np.int32)})
    >>> PassThrough("c", result="c2", backend="cpu")(g).cell_data["c2"].tolist()
    [7]
    """

    def __init__(self, field: str, result: str | None = None, dtype: DTypeLike | None = None, *,
                 association: str | None = None, backend: str = "auto",
                 nan_policy: str = "propagate"):
        super().__init__(field, association=association, backend=backend,
                         nan_policy=nan_policy)
        self.result = result_name(result, f"{field}_copy")
        self.dtype = None if dtype is None else _output_dtype(dtype)

    verb = "pass_through"

    def fusion_steps(self, association: str, dataset: DataSet) -> list[tuple[str, dict]] | None:
        return [("pass_through", {"dtype": self.dtype})]

    def compute(self, dataset: DataSet) -> dict[str, dict[str, Any]]:
        values, association = self.input_field(dataset)
        if self.dtype is not None and self.dtype.kind in "iu" \
                and np.dtype(values.dtype).kind == "f":
            _check_integral(values, self.dtype, self.field)
        copied = execute("pass_through", dataset, values, association,
                         backend=self.backend, dtype=self.dtype)
        return {association: {self.result: copied}}


def _output_dtype(dtype) -> np.dtype:
    """``dtype`` as a NumPy dtype if it is a real integer or float type."""
    try:
        wanted = np.dtype(dtype)
    except (TypeError, ValueError, SyntaxError):  # NumPy parses strings like "01" with ast
        wanted = None
    if wanted is None or wanted.kind not in "fiu":
        raise ArgumentError(
            f"dtype must be a real integer or floating-point dtype, got {dtype!r}"
        )
    return wanted


def _check_integral(values, dtype: np.dtype, name: str) -> None:
    """Refuse float values that no ``dtype`` integer stands for (checked where they live)."""
    if not values.size:
        return
    if not all_finite(values):
        raise ArgumentError(
            f"field {name!r} holds NaN or Inf, which no {dtype} value stands for; "
            "keep a float dtype or replace them first"
        )
    xp, info = array_module(values), np.iinfo(dtype)
    low, high = float(xp.min(values)), float(xp.max(values))
    if low <= float(info.min) - 1.0 or high >= float(info.max) + 1.0:
        raise ArgumentError(
            f"field {name!r} holds values in [{low}, {high}], outside the range of "
            f"{dtype} [{info.min}, {info.max}]"
        )


def pass_through(node: Any, dtype: DTypeLike | None = None, result: str | None = None) -> Any:
    """A copy of this field, optionally converted to ``dtype``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"p": np.zeros(2)})
    >>> daxpy.pipeline(g).field("p").pass_through("float64").name
    'pass_through_1'
    """
    return node._then("pass_through",
                      lambda src, out: PassThrough(src, result=out, dtype=dtype), result)


def _parse_dtype(step: str, argument: str) -> dict:
    """The step's dtype (None: keep the field's); the filter checks it.

    Examples
    --------
    >>> _parse_dtype("pass_through", "")
    {'dtype': None}
    """
    return {"dtype": argument or None}


register_verb(Verb("pass_through", pass_through, 70, "a copy of the field, converted to DTYPE "
                   "if given", argument="DTYPE", parse=_parse_dtype))
