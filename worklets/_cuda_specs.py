"""CUDA declarations (:class:`daxpy.cuda.spec.CudaSpec`) of the worklet families.

Each worklet module attaches its entry as ``Worklet(..., cuda=CUDA["name"])``;
the device code is in the ``.cuh`` file beside that module.

Examples
--------
>>> CUDA["point_to_cell"].domain
'cells'
"""

from __future__ import annotations

import numpy as np

from daxpy.cuda.codegen import ctype
from daxpy.errors import FieldError, UnknownFieldError
from daxpy.cuda.spec import CudaSpec, KernelOptions


def _pass_through_dtype(dtype: np.dtype, params: dict) -> np.dtype:
    """Output dtype of pass-through: ``dtype=`` if given, else the input's.

    Examples
    --------
    >>> _pass_through_dtype(np.dtype("float32"), {"dtype": "float64"})
    dtype('float64')
    """
    wanted = params.get("dtype")
    return np.dtype(wanted) if wanted is not None else dtype


def _gradient_tail(tail: tuple, params: dict) -> tuple:
    """A gradient has three derivatives per input component (VTK's layout).

    Examples
    --------
    >>> _gradient_tail((2,), {})
    (6,)
    """
    return (3 * int(np.prod(tail)),)


def _same_dtype(dtype: np.dtype, params: dict) -> np.dtype:
    """The output keeps the input's dtype.

    Examples
    --------
    >>> _same_dtype(np.dtype("int16"), {})
    dtype('int16')
    """
    return dtype


def _bias_options(params: dict, in_dtype, out_dtype, components: int,
                  n_values: int, prefix: str = "") -> KernelOptions:
    """The bias, in the field's dtype, as a device array argument.

    Examples
    --------
    >>> _bias_options({"bias": [1, 2]}, np.dtype("float32"), None, 2, 4).params[0]
    ('const float* __restrict__', 'bias')
    """
    from .bias_add import fit_bias

    # A zero-stride stand-in for the field: fit_bias checks size and dtype only.
    bias = fit_bias(params.get("bias"), np.broadcast_to(np.zeros((), in_dtype), (n_values,)))

    def upload():
        from daxpy.cuda.device import constant

        return constant(bias)

    names = [f"{prefix}bias", f"{prefix}n_bias"]
    return KernelOptions(params=[(f"const {ctype(in_dtype)}* __restrict__", names[0]),
                                 ("const long long", names[1])],
                         values=[upload, np.int64(bias.size)], members=names)


def _no_tail(tail: tuple, params: dict) -> tuple:
    """One value per tuple.

    Examples
    --------
    >>> _no_tail((3,), {})
    ()
    """
    return ()


def _velocity_gradient_dtype(dtype: np.dtype, params: dict) -> np.dtype:
    """Vector analysis reads float gradients and keeps their dtype.

    Examples
    --------
    >>> _velocity_gradient_dtype(np.dtype("float64"), {})
    dtype('float64')
    """
    if dtype.kind != "f":
        raise FieldError(f"the gradient must be float32 or float64, got {dtype}")
    return dtype


def _from_gradient(out_tail: tuple):
    """Output tail of a map from a 3x3 gradient (``(n, 9)`` input, checked).

    Examples
    --------
    >>> _from_gradient((3,))((9,), {})
    (3,)
    """
    def tail(in_tail: tuple, params: dict) -> tuple:
        if tuple(in_tail) != (9,):
            raise FieldError(
                "the input must be the gradient of a 3-component field, shape (n, 9); "
                f"got (n,) + {tuple(in_tail)}"
            )
        return out_tail
    return tail


def _vector_analysis(function: str, out_tail: tuple, map_name: str) -> CudaSpec:
    return CudaSpec("vector_analysis.cuh", function, "tuples",
                    out_dtype=_velocity_gradient_dtype, out_tail=_from_gradient(out_tail),
                    accepted_params=("field_name",), map=map_name)


def _map_inputs(params: dict) -> tuple:
    """(parsed expression, the other fields it reads in argument order).

    Examples
    --------
    >>> expr, others = _map_inputs({"expression": "a + b", "fields": {"b": np.ones(2)}})
    >>> expr.fields, [a.shape for a in others]
    (('a', 'b'), [(2,)])
    """
    from .field_map import as_expression

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
    from daxpy.expressions import working_dtype

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


CUDA = {
    "pass_through": CudaSpec("pass_through.cuh", "pass_through", "flat",
                             out_dtype=_pass_through_dtype, accepted_params=("dtype",),
                             map="PassThroughMap"),
    "point_to_cell": CudaSpec("point_to_cell.cuh", "point_to_cell", "cells",
                              march="point_to_cell_march"),
    "bias_add": CudaSpec("bias_add.cuh", "bias_add", "flat", out_dtype=_same_dtype,
                         options=_bias_options, accepted_params=("bias",), map="BiasAddMap"),
    "divergence": _vector_analysis("divergence", (), "DivergenceMap"),
    "vorticity": _vector_analysis("vorticity", (3,), "VorticityMap"),
    "qcriterion": _vector_analysis("qcriterion", (), "QCriterionMap"),
    "field_map": CudaSpec("field_map.cuh", "field_map", "tuples", out_dtype=_map_dtype,
                          out_tail=_map_tail, options=_map_options,
                          accepted_params=("expression", "fields"), map="ExpressionMap"),
    "magnitude": CudaSpec("magnitude.cuh", "magnitude", "tuples", out_tail=_no_tail,
                          map="MagnitudeMap"),
    "cell_to_point": CudaSpec("cell_to_point.cuh", "cell_to_point", "points",
                              march="cell_to_point_march"),
    "point_gradient": CudaSpec("gradient.cuh", "point_gradient", "points",
                               out_tail=_gradient_tail, uses_coordinates=True,
                               point_links="corners", march="point_gradient_march"),
    "cell_gradient": CudaSpec("gradient.cuh", "cell_gradient", "cells",
                              out_tail=_gradient_tail, uses_coordinates=True),
}
"""CUDA spec of each worklet family, by worklet name."""
