"""FieldMap: a new field from an expression over existing ones.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import FieldMap
>>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.array([1.0, 4.0, 9.0])})
>>> FieldMap("sqrt(t) + 1", result="s", backend="cpu")(g).point_data["s"].tolist()
[2.0, 3.0, 4.0]
"""

from __future__ import annotations

from daxpy.worklets.field_map import as_expression

from daxpy.engine.dispatch import execute
from daxpy.data.fields import check_association

from ._base import Filter, result_name

__all__ = ["FieldMap"]


class FieldMap(Filter):
    """Evaluate an elementwise expression over fields of one association.

    The expression is parsed once, when the filter is made, against a
    whitelist (see :func:`daxpy.data.expressions.parse`): numbers, field names,
    ``+ - * / ** %``, comparisons, ``and``/``or``/``not``, ``where(c, a, b)``,
    ``clip`` and math functions (``sin``, ``sqrt``, ``atan2``, ``hypot``...).
    Fields must have the same number of tuples; a one-component field
    broadcasts over the components of the others. The result has the fields'
    common float dtype: float32 fields give float32, integers float64.

    Parameters
    ----------
    expression : str
        The expression; it must read at least one field.
    result : str
        Output field name.
    association : {"points", "cells"}
        Where the fields it reads live, and where the result goes.
    backend : {"auto", "cpu", "cuda"}
        Where to run.
    nan_policy : {"propagate", "raise"}
        ``"propagate"`` (default): NaN and Inf flow to the outputs that read
        them. ``"raise"``: a NaN or Inf in an input field raises
        :class:`~daxpy.errors.NaNPolicyError` naming the field.

    Raises
    ------
    ExpressionError
        If the expression uses anything outside the whitelist or reads no field.
    FieldError
        If ``association`` is neither ``"points"`` nor ``"cells"``.
    UnknownFieldError
        When run, if the expression reads a field the dataset lacks there.

    See Also
    --------
    daxpy.filters.BiasAdd, daxpy.filters.Magnitude : common maps with their own filter.

    Notes
    -----
    NaN follows IEEE 754, as in NumPy: arithmetic and functions give NaN
    for a NaN argument (``minimum``, ``maximum`` and ``clip`` too, unlike C's
    ``fmin``/``fmax``); a comparison with NaN is false and NaN counts as true,
    so ``where``, ``and``, ``or`` and ``not`` may select away from a NaN on
    purpose. Both backends give the same NaNs.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2), cell_data={"a": np.array([2.0]),
    ...                                               "b": np.array([-3.0])})
    >>> FieldMap("where(a > b, a, b) * 2", association="cells",
    ...          backend="cpu")(g).cell_data["result"].tolist()
    [4.0]
    """

    def __init__(self, expression: str, result: str = "result", *,
                 association: str = "points", backend: str = "auto",
                 nan_policy: str = "propagate"):
        super().__init__(backend=backend, nan_policy=nan_policy)
        self.expression = as_expression(expression)
        self.result = result_name(result, "result")
        self.association = check_association(association)

    def compute(self, dataset):
        arrays = {name: self.checked(name, dataset.field(name, self.association)[0])
                  for name in self.expression.fields}
        first = arrays[self.expression.fields[0]]
        mapped = execute("field_map", dataset, first, self.association, backend=self.backend,
                         expression=self.expression, fields=arrays)
        return {self.association: {self.result: mapped}}
