"""FieldMap: an elementwise expression over one or more fields.

The expression is parsed by :mod:`daxpy.data.expressions` into its IR; this module
lines the fields up (same tuple count; one-component fields broadcast over
the components of the others) and evaluates the IR with NumPy in one
floating-point dtype (:func:`daxpy.data.expressions.working_dtype`).

Examples
--------
>>> import numpy as np
>>> field_map(None, np.array([1.0, 2.0]), "t * 10 + 1").tolist()
[11.0, 21.0]
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from daxpy.cuda.codegen import ctype
from daxpy.cuda.spec import CudaSpec, KernelOptions
from daxpy.data.arrays import to_host
from daxpy.data.expressions import Expression, evaluate, parse, working_dtype
from daxpy.data.worklet import ANY_FAMILY, Worklet, register
from daxpy.errors import ExpressionError, FieldError, UnknownFieldError

from ._numba import compiled


def as_expression(expression: str | Expression) -> Expression:
    """Parse ``expression`` unless it already is parsed; require it to read a field.

    Examples
    --------
    >>> as_expression("u + v").fields
    ('u', 'v')
    """
    parsed = expression if isinstance(expression, Expression) else parse(expression)
    if not parsed.fields:
        raise ExpressionError(
            f"expression {parsed.source!r} reads no field; a field map needs at least one"
        )
    return parsed


def aligned_fields(arrays: Mapping[str, Any], n_tuples: int) -> tuple[dict, tuple]:
    """Convert fields to their common float dtype and shapes that broadcast per tuple.

    Parameters
    ----------
    arrays : mapping of str to array
        The fields, each ``(n,)`` or ``(n, c)``.
    n_tuples : int
        The ``n`` every field must have.

    Returns
    -------
    fields : dict of str to numpy.ndarray
        One-component fields become ``(n, 1)`` when another has several components.
    shape : tuple
        Shape of the result: ``(n,)``, or ``(n, c)`` if any field is 2-D.

    Raises
    ------
    FieldError
        On a field with another tuple count, or two fields with different
        numbers of components (both above one).

    Examples
    --------
    >>> import numpy as np
    >>> fields, shape = aligned_fields({"a": np.zeros(2), "v": np.zeros((2, 3))}, 2)
    >>> fields["a"].shape, shape
    ((2, 1), (2, 3))
    """
    host = {name: to_host(a) for name, a in arrays.items()}
    components = {}
    for name, array in host.items():
        if array.ndim not in (1, 2) or array.shape[0] != n_tuples:
            raise FieldError(
                f"field {name!r} has shape {array.shape}; the expression needs every field "
                f"to be ({n_tuples},) or ({n_tuples}, components)"
            )
        components[name] = array.shape[1] if array.ndim == 2 else 1
    wide = {name: c for name, c in components.items() if c > 1}
    if len(set(wide.values())) > 1:
        raise FieldError(
            f"fields with different numbers of components cannot be combined: {wide}"
        )
    two_d = any(array.ndim == 2 for array in host.values())
    dtype = working_dtype(list(host.values()))
    fields = {name: array.astype(dtype, copy=False).reshape(n_tuples, -1) if two_d
              else array.astype(dtype, copy=False) for name, array in host.items()}
    shape = (n_tuples, max(components.values())) if two_d else (n_tuples,)
    return fields, shape


def bound_fields(parsed: Expression, values: np.ndarray, fields: Mapping[str, Any] | None
                 ) -> tuple[dict, tuple]:
    """The fields ``parsed`` reads, ``values`` being its first, lined up by
    :func:`aligned_fields`: (fields by name, shape of the result). A field it
    reads that is not given raises :class:`~daxpy.errors.UnknownFieldError`.

    Examples
    --------
    >>> aligned, shape = bound_fields(as_expression("a + b"), np.zeros(2), {"b": np.ones(2)})
    >>> sorted(aligned), shape
    (['a', 'b'], (2,))
    """
    given = {parsed.fields[0]: values, **(fields or {})}
    missing = [name for name in parsed.fields if name not in given]
    if missing:
        raise UnknownFieldError(
            f"expression {parsed.source!r} reads field {missing[0]!r}, which is not given; "
            f"given fields: {sorted(given)}"
        )
    return aligned_fields({name: given[name] for name in parsed.fields}, values.shape[0])


def field_map(grid, values: np.ndarray, expression: str | Expression,
              fields: Mapping[str, Any] | None = None) -> np.ndarray:
    """Evaluate ``expression`` for every tuple of the fields it reads.

    Parameters
    ----------
    grid : DataSet or None
        Unused: the map does not depend on the topology.
    values : numpy.ndarray
        The first field the expression reads (it also gives the tuple count).
    expression : str or Expression
        See :func:`daxpy.data.expressions.parse` for what it may hold.
    fields : mapping of str to array, optional
        The other fields the expression reads, by name.

    Returns
    -------
    numpy.ndarray
        A new array of the fields' common float dtype (float32 fields give
        float32; integers give float64), shaped ``(n,)`` or ``(n, c)``.

    Raises
    ------
    ExpressionError
        If the expression is not allowed or reads no field.
    UnknownFieldError
        If it reads a field that is not given.
    FieldError
        If the fields do not line up (see :func:`aligned_fields`).

    Examples
    --------
    >>> import numpy as np
    >>> v = np.array([[3.0, 4.0]], np.float32)
    >>> field_map(None, v, "v * s", fields={"s": np.array([2.0], np.float32)})
    array([[6., 8.]], dtype=float32)
    """
    parsed = as_expression(expression)
    aligned, shape = bound_fields(parsed, values, fields)
    result = evaluate(parsed, aligned)
    given = [values, *(fields or {}).values()]
    is_input = any(result is array for array in [*aligned.values(), *given])
    if isinstance(result, np.ndarray) and result.shape == shape and result.flags.owndata \
            and not is_input:
        return result
    out = np.empty(shape, dtype=result.dtype)
    np.copyto(out, result)  # broadcast, or copy a result that is an input field
    return out


def _map_inputs(params: dict) -> tuple:
    """(parsed expression, the other fields it reads in argument order).

    Examples
    --------
    >>> expr, others = _map_inputs({"expression": "a + b", "fields": {"b": np.ones(2)}})
    >>> expr.fields, [a.shape for a in others]
    (('a', 'b'), [(2,)])
    """
    expression = as_expression(params.get("expression"))
    given = params.get("fields") or {}
    missing = [name for name in expression.fields[1:] if name not in given]
    if missing:
        raise UnknownFieldError(
            f"expression {expression.source!r} reads field {missing[0]!r}, which is not "
            f"given; given fields: {sorted(given)}"
        )
    return expression, [given[name] for name in expression.fields[1:]]


def _map_dtype(dtype: np.dtype, params: dict) -> np.dtype:
    """The fields' common float dtype (integers compute in float64).

    Examples
    --------
    >>> _map_dtype(np.dtype("float32"), {"expression": "a * 2"})
    dtype('float32')
    """
    _, others = _map_inputs(params)
    return working_dtype([np.empty(0, dtype)] + [np.empty(0, a.dtype) for a in others])


def _map_tail(tail: tuple, params: dict) -> tuple:
    """``(c,)`` when any field is 2-D (c the most components), else ``()``.

    Examples
    --------
    >>> _map_tail((), {"expression": "a + b", "fields": {"b": np.ones((4, 3))}})
    (3,)
    """
    _, others = _map_inputs(params)
    tails = [tuple(tail)] + [tuple(a.shape[1:]) for a in others]
    wide = {t[0] for t in tails if t and t[0] > 1}
    if len(wide) > 1:
        raise FieldError(f"fields with different numbers of components cannot be combined: "
                         f"{sorted(wide)}")
    if not any(tails):
        return ()
    return (max(wide, default=1),)


def _map_options(params: dict, in_dtype, out_dtype, components: int,
                 n_values: int, prefix: str = "") -> KernelOptions:
    """The generated expression struct and the other fields as arguments.

    Examples
    --------
    >>> opts = _map_options({"expression": "a * 2"}, np.dtype("float32"),
    ...                     np.dtype("float32"), 1, 5)
    >>> opts.template_args[1:]
    ['false', '1']
    """
    from daxpy.cuda.device import to_device
    from daxpy.cuda.expression import expression_struct

    expression, others = _map_inputs(params)
    n_tuples = n_values // max(components, 1)
    for name, array in zip(expression.fields[1:], others):
        if array.ndim not in (1, 2) or array.shape[0] != n_tuples:
            raise FieldError(f"field {name!r} has shape {tuple(array.shape)}; the expression "
                             f"needs ({n_tuples},) or ({n_tuples}, components)")
    out_c = (_map_tail((components,) if components > 1 else (), params) or (1,))[0]
    struct, source = expression_struct(expression, ctype(out_dtype))
    wide = [components > 1] + [a.ndim == 2 and a.shape[1] > 1 for a in others]
    t = ctype(out_dtype)
    names = [f"{prefix}f{i + 1}" for i in range(len(others))]
    arg_types = [f"dax::FieldArg<{t}, {str(w).lower()}>" for w in wide[1:]]
    call = [f"{a}{{{n}}}" for a, n in zip(arg_types, names)]
    nested = "{}"
    for c in reversed(call):  # ArgList<A0, A1...>{head, tail}
        nested = f"{{{c}, {nested}}}"
    return KernelOptions(
        template_args=[struct, str(wide[0]).lower(), str(out_c)],
        tags=[struct.split("_")[1], "".join("w" if w else "s" for w in wide),
              f"o{out_c}"],
        params=[(f"const {t}* __restrict__", n) for n in names],
        values=[lambda a=a: to_device(a, None, out_dtype) for a in others],
        call=call, preamble=[source], member_types=arg_types, members=[nested])


CUDA_SPEC = CudaSpec("field_map.cuh", "field_map", "tuples", out_dtype=_map_dtype,
                     out_tail=_map_tail, options=_map_options,
                     accepted_params=("expression", "fields"), map="ExpressionMap")


FIELD_MAP = register(Worklet(
    name="field_map",
    aliases=("map",),
    input_association="any",
    output_association=None,
    halo=0,
    numpy={ANY_FAMILY: field_map},
    cpu={ANY_FAMILY: compiled("field_map_cpu", "field_map", field_map)},
    cpu_tuple=compiled("field_map_cpu", "field_map_tuple", None),
    cuda=CUDA_SPEC,
    doc="Elementwise expression over one or more fields (see daxpy.data.expressions).",
))
