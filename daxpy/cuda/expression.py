"""Translate a parsed FieldMap expression (:mod:`daxpy.data.expressions` IR) into CUDA.

The translation walks the IR: every operation maps to a fixed C++ template,
constants are printed from their float value, and fields become the
arguments ``a0, a1, ...`` in order of first use. No text from the user's
expression ever reaches the generated source.

Examples
--------
>>> from daxpy.data.expressions import parse
>>> to_cuda(parse("where(t > 0, sqrt(t), -t)").root, "float")
'fm_where<float>(fm_truth<float>((a0 > float(0.0))), sqrt(a0), (-a0))'
"""

from __future__ import annotations

import hashlib
import math

from ..errors import ExpressionError
from ..data.expressions import Const, Expression, FieldRef, Op

_TEMPLATES = {
    "neg": "(-{0})", "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
    "div": "({0} / {1})", "pow": "pow({0}, {1})", "mod": "fm_mod<{T}>({0}, {1})",
    "lt": "fm_truth<{T}>(({0} < {1}))", "le": "fm_truth<{T}>(({0} <= {1}))",
    "gt": "fm_truth<{T}>(({0} > {1}))", "ge": "fm_truth<{T}>(({0} >= {1}))",
    "eq": "fm_truth<{T}>(({0} == {1}))", "ne": "fm_truth<{T}>(({0} != {1}))",
    "and": "fm_truth<{T}>(fm_true({0}) && fm_true({1}))",
    "or": "fm_truth<{T}>(fm_true({0}) || fm_true({1}))",
    "not": "fm_truth<{T}>(!fm_true({0}))",
    "sin": "sin({0})", "cos": "cos({0})", "tan": "tan({0})", "asin": "asin({0})",
    "acos": "acos({0})", "atan": "atan({0})", "sinh": "sinh({0})", "cosh": "cosh({0})",
    "tanh": "tanh({0})", "exp": "exp({0})", "log": "log({0})", "log10": "log10({0})",
    "log2": "log2({0})", "sqrt": "sqrt({0})", "abs": "fabs({0})", "floor": "floor({0})",
    "ceil": "ceil({0})", "atan2": "atan2({0}, {1})", "hypot": "hypot({0}, {1})",
    "minimum": "fm_min<{T}>({0}, {1})", "maximum": "fm_max<{T}>({0}, {1})",
    "where": "fm_where<{T}>({0}, {1}, {2})",
    "clip": "fm_min<{T}>(fm_max<{T}>({0}, {1}), {2})",
}


_SPECIAL_BITS = {"float": ("__int_as_float", "0x7f800000", "0x7fc00000"),
                 "double": ("__longlong_as_double", "0x7ff0000000000000LL",
                            "0x7ff8000000000000LL")}


def _constant(value: float, ctype: str) -> str:
    """A literal of ``ctype``; infinities and NaN from their bit patterns.

    Examples
    --------
    >>> _constant(float("-inf"), "float")
    '(-__int_as_float(0x7f800000))'
    """
    if math.isfinite(value):
        return f"{ctype}({value!r})"
    cast, inf, nan = _SPECIAL_BITS[ctype]
    if math.isnan(value):
        return f"{cast}({nan})"
    return f"{cast}({inf})" if value > 0 else f"(-{cast}({inf}))"


def to_cuda(node, ctype: str, fields: tuple = ()) -> str:
    """C++ expression computing ``node`` in type ``ctype``.

    Parameters
    ----------
    node : Const, FieldRef or Op
        IR node.
    ctype : str
        C++ floating type of every value.
    fields : tuple of str
        Field names in argument order (default: first use order of ``node``).

    Raises
    ------
    ExpressionError
        For an operation the CUDA backend does not know.

    Examples
    --------
    >>> from daxpy.data.expressions import parse
    >>> to_cuda(parse("u * 2").root, "double")
    '(a0 * double(2.0))'
    """
    order = list(fields)

    def walk(n) -> str:
        if isinstance(n, Const):
            return _constant(float(n.value), ctype)
        if isinstance(n, FieldRef):
            if n.name not in order:
                order.append(n.name)
            return f"a{order.index(n.name)}"
        if not isinstance(n, Op) or n.op not in _TEMPLATES:
            raise ExpressionError(f"the CUDA backend cannot translate IR node {n!r}")
        if n.op == "pow" and isinstance(n.args[1], Const) and float(n.args[1].value) == 0.5:
            # NumPy takes the square root for a scalar exponent of 0.5: its
            # bits, and NaN at -inf, -0 kept.
            return _TEMPLATES["sqrt"].format(walk(n.args[0]), T=ctype)
        return _TEMPLATES[n.op].format(*(walk(a) for a in n.args), T=ctype)

    return walk(node)


def expression_struct(expression: Expression, ctype: str) -> tuple[str, str]:
    """(struct name, struct source) evaluating ``expression`` for one tuple element.

    The name carries a digest of the IR, so equal expressions share kernels.

    Examples
    --------
    >>> from daxpy.data.expressions import parse
    >>> expression_struct(parse("a + b"), "float")[0].startswith("Expr_")
    True
    """
    body = to_cuda(expression.root, ctype, expression.fields)
    digest = hashlib.sha256(repr(expression.root).encode()).hexdigest()[:10]
    name = f"Expr_{digest}_{ctype}"
    args = ", ".join(f"{ctype} a{i}" for i in range(len(expression.fields)))
    source = (f"#ifndef DAXPY_{name.upper()}\n#define DAXPY_{name.upper()}\n"
              f"// FieldMap expression, generated from its parsed IR\n"
              f"struct {name} {{\n"
              f"  __device__ static __forceinline__ {ctype} eval({args}) {{\n"
              f"    using namespace dax;\n"
              f"    return {body};\n"
              f"  }}\n"
              f"}};\n#endif\n")
    return name, source
