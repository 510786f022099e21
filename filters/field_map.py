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

from typing import Any

from daxpy.data.dataset import DataSet

from daxpy.worklets.field_map import as_expression

from daxpy.engine.dispatch import execute
from daxpy.errors import ArgumentError
from daxpy.data.verbs import Verb, register_verb
from daxpy.data.expressions import Expression, FieldRef, Op, parse
from daxpy.data.fields import check_association

from ._base import Filter
from ._names import result_name

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
    backend, nan_policy
        As for every filter (:class:`~daxpy.filters.Filter`).

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

    def __init__(self, expression: str | Expression, result: str = "result", *,
                 association: str = "points", backend: str = "auto",
                 nan_policy: str = "propagate"):
        super().__init__(backend=backend, nan_policy=nan_policy)
        self.expression = as_expression(expression)
        self.result = result_name(result, "result")
        self.association = check_association(association)

    verb = "map"

    def reads(self) -> dict[str, str | None]:
        return {name: self.association for name in self.expression.fields}

    def fusion_steps(self, association: str, dataset: DataSet) -> list[tuple[str, dict]] | None:
        # The other fields must be there already (not outputs of unfinished stages).
        data = dataset.fields(association)
        others = self.expression.fields[1:]
        if association != self.association or any(name not in data for name in others):
            return None
        return [("field_map", {"expression": self.expression,
                               "fields": {name: data[name] for name in others}})]

    def compute(self, dataset: DataSet) -> dict[str, dict[str, Any]]:
        arrays = {name: self.checked(name, dataset.field(name, self.association)[0])
                  for name in self.expression.fields}
        first = arrays[self.expression.fields[0]]
        mapped = execute("field_map", dataset, first, self.association, backend=self.backend,
                         expression=self.expression, fields=arrays)
        return {self.association: {self.result: mapped}}


def map(node: Any, expression: str, result: str | None = None) -> Any:  # noqa: A001 (the verb's name)
    """An elementwise expression in which ``x`` names this field.

    Other fields (of the dataset or earlier outputs) may appear by name too;
    the stage then also waits for the stages that write them.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> pipe = daxpy.pipeline(daxpy.UniformGrid(dims=(2,), point_data={"p": np.zeros(2)}))
    >>> pipe.field("p").map("sin(x) ** 2").name
    'map_1'
    """
    pipe = node.pipeline
    bound = _bind_x(expression, node.name)
    others = tuple(n for n in bound.fields if n != node.name)
    for name in others:
        if name not in pipe._associations:
            pipe.field(name)

    def make(src, out):
        return FieldMap(bound, result=out, association=pipe._association(src))

    return pipe._add("map", make, (node.name,) + others, result, None)


def _bind_x(expression: str, field_name: str) -> Expression:
    """Parse ``expression`` and make its variable ``x`` read ``field_name``.

    The name is bound in the parsed tree, never pasted into the text, so any
    field name works and none can change what the expression computes.

    Examples
    --------
    >>> _bind_x("x + y", "p").fields
    ('p', 'y')
    """
    parsed = parse(expression)

    def rename(node):
        if isinstance(node, FieldRef) and node.name == "x":
            return FieldRef(field_name)
        if isinstance(node, Op):
            return Op(node.op, tuple(rename(arg) for arg in node.args))
        return node

    fields = tuple(dict.fromkeys(field_name if n == "x" else n for n in parsed.fields))
    return Expression(parsed.source, rename(parsed.root), fields)


def _parse_expression(step: str, argument: str) -> dict:
    """The step's expression (checked when the stage is built).

    Examples
    --------
    >>> _parse_expression("map=sin(x)", "sin(x)")
    {'expression': 'sin(x)'}
    """
    return {"expression": argument}


register_verb(Verb("map", map, 50, "an elementwise expression in x (the field)",
                   argument="EXPRESSION", required=True, parse=_parse_expression))


def combine(pipe: Any, expression: str, result: str | None = None) -> Any:
    """An elementwise expression over several fields or stage outputs, by name.

    Every name in ``expression`` must be a source field or an earlier
    output, all at one association. The stage waits for each stage it reads
    (seed 000's AddN over independent BiasAdds is the model).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"p": np.ones(2)})
    >>> pipe = daxpy.pipeline(g)
    >>> a, b = pipe.bias_add("p", [1.0]), pipe.bias_add("p", [2.0])
    >>> total = pipe.combine(f"{a.name} + {b.name}")
    >>> pipe.run(backend="cpu").point_data[total.name].tolist()
    [5.0, 5.0]
    """
    parsed = parse(expression)
    names = parsed.fields
    if not names:
        raise ArgumentError(f"combine's expression {expression!r} reads no field; it "
                            "must read source fields or earlier outputs (a constant "
                            "has no points or cells to live at)")
    for name in names:
        if name not in pipe._associations:
            pipe.field(name)
    where = {pipe._associations[name] for name in names}
    if len(where) != 1:
        raise ArgumentError(
            f"combine reads fields at both points and cells: {sorted(names)}"
        )
    (association,) = where
    return pipe._add("combine", lambda _, out: FieldMap(parsed, result=out,
                                                        association=association),
                     tuple(names), result, association)


register_verb(Verb("combine", combine, 55, "an elementwise expression over fields by name",
                   on="pipeline"))
