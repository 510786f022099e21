"""Compiled CPU kernel of FieldMap: the parsed expression, translated into a
Numba kernel node by node.

As for CUDA (:mod:`daxpy.cuda.expression`), the translation walks the IR of
:mod:`daxpy.data.expressions`: every operation maps to a fixed template,
constants are printed from their float value, and the fields become the
arguments ``a0, a1, ...``; no text of the user's expression reaches the
source. One kernel per (expression, dtype, which fields have components,
components): a parallel loop over tuples with the component loop unrolled.

The generated module is written to the daxpy cache directory
(``~/.cache/daxpy/cpu``, or ``$DAXPY_CACHE_DIR/cpu``) under a name that is a
hash of its source, so Numba's disk cache (``cache=True``) serves the next
process. Values are computed in the fields' working dtype as the NumPy
evaluation computes them; transcendental functions are LLVM's, equal to
NumPy's within rounding. :func:`field_map_tuple` writes the same translation
for one tuple, in fused kernels.

Examples
--------
>>> import numpy as np
>>> field_map(None, np.array([1.0, 2.0]), "t * 10 + 1").tolist()
[11.0, 21.0]
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from daxpy.data.arrays import to_host
from daxpy.data.expressions import Const, Expression, FieldRef, Op
from daxpy.errors import ExpressionError, FieldError, UnknownFieldError

from ._fork_safe_cpu import fork_safe_generated
from ._generated_cpu import load_generated
from ._numba import KERNEL_DTYPES, CompiledUnavailable
from ._tuple_code import Slots, TupleCode, TupleType, suffix
from .field_map import _map_dtype, _map_tail, as_expression, bound_fields

# {S} ends the names of the working dtype and its one and zero: empty in a
# FieldMap kernel, the dtype's (``_float32``) in a fused one.
_TRUTH = "(ONE{{S}} if {} else ZERO{{S}})"
_TEMPLATES = {
    "neg": "(-{0})", "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
    "div": "({0} / {1})", "pow": "T{S}({0} ** {1})", "mod": "T{S}({0} % {1})",
    "lt": _TRUTH.format("{0} < {1}"), "le": _TRUTH.format("{0} <= {1}"),
    "gt": _TRUTH.format("{0} > {1}"), "ge": _TRUTH.format("{0} >= {1}"),
    "eq": _TRUTH.format("{0} == {1}"), "ne": _TRUTH.format("{0} != {1}"),
    # NumPy's truth: anything but zero, NaN included.
    "and": _TRUTH.format("({0} != 0) and ({1} != 0)"),
    "or": _TRUTH.format("({0} != 0) or ({1} != 0)"),
    "not": _TRUTH.format("{0} == 0"),
    "sin": "np.sin({0})", "cos": "np.cos({0})", "tan": "np.tan({0})",
    "asin": "np.arcsin({0})", "acos": "np.arccos({0})", "atan": "np.arctan({0})",
    "sinh": "np.sinh({0})", "cosh": "np.cosh({0})", "tanh": "np.tanh({0})",
    "exp": "np.exp({0})", "log": "np.log({0})", "log10": "np.log10({0})",
    "log2": "np.log2({0})", "sqrt": "np.sqrt({0})", "abs": "np.abs({0})",
    "floor": "np.floor({0})", "ceil": "np.ceil({0})", "atan2": "np.arctan2({0}, {1})",
    "hypot": "np.hypot({0}, {1})", "minimum": "np.minimum({0}, {1})",
    "maximum": "np.maximum({0}, {1})", "where": "({1} if {0} != 0 else {2})",
    "clip": "np.minimum(np.maximum({0}, {1}), {2})",
}


def _constant(value: float, suffix: str = "") -> str:
    """A literal of the working dtype ``T<suffix>``; infinities and NaN by name.

    Examples
    --------
    >>> _constant(0.5), _constant(float("-inf"), "_float32")
    ('T(0.5)', 'T_float32(-np.inf)')
    """
    if math.isnan(value):
        return f"T{suffix}(np.nan)"
    if math.isinf(value):
        return f"T{suffix}(np.inf)" if value > 0 else f"T{suffix}(-np.inf)"
    return f"T{suffix}({float(value)!r})"


def to_python(node, fields: tuple, prefix: str = "x", suffix: str = "") -> str:
    """Python (Numba) expression computing ``node``; field ``fields[i]`` is
    ``<prefix><i>``, the working dtype ``T<suffix>`` (its one and zero
    ``ONE<suffix>`` and ``ZERO<suffix>``). An operation this backend does not
    know raises :class:`~daxpy.errors.ExpressionError`.

    Examples
    --------
    >>> from daxpy.data.expressions import parse
    >>> to_python(parse("where(t > 0, sqrt(t), -t)").root, ("t",))
    '(np.sqrt(x0) if (ONE if x0 > T(0.0) else ZERO) != 0 else (-x0))'
    >>> to_python(parse("t > 1").root, ("t",), "s2_x", "_float64")
    '(ONE_float64 if s2_x0 > T_float64(1.0) else ZERO_float64)'
    """
    def walk(n) -> str:
        if isinstance(n, Const):
            return _constant(float(n.value), suffix)
        if isinstance(n, FieldRef):
            return f"{prefix}{fields.index(n.name)}"
        if not isinstance(n, Op) or n.op not in _TEMPLATES:
            raise ExpressionError(f"the compiled CPU backend cannot translate IR node {n!r}")
        if n.op == "pow" and isinstance(n.args[1], Const) and float(n.args[1].value) == 0.5:
            # NumPy takes the square root for a scalar exponent of 0.5: its
            # bits, and NaN at -inf, -0 kept.
            return _TEMPLATES["sqrt"].format(walk(n.args[0]), S=suffix)
        return _TEMPLATES[n.op].format(*(walk(a) for a in n.args), S=suffix)

    return walk(node)


def kernel_source(expression: Expression, dtype: np.dtype, wide: tuple, components: int
                  ) -> str:
    """Source of the module whose ``field_map`` kernel evaluates ``expression``.

    Parameters
    ----------
    expression : Expression
        The parsed expression.
    dtype : numpy.dtype
        The working dtype (float32 or float64).
    wide : tuple of bool
        For each field in ``expression.fields`` order, whether it has
        ``components`` components (else one, broadcast over them).
    components : int
        Components of the result.

    Examples
    --------
    >>> from daxpy.data.expressions import parse
    >>> src = kernel_source(parse("u * 2"), np.dtype("float32"), (False,), 1)
    >>> "out[i, 0] = (x0 * T(2.0))" in src
    True
    """
    names = [f"a{i}" for i in range(len(wide))]
    body = to_python(expression.root, expression.fields)
    lines = [
        "# FieldMap kernel generated by daxpy from a parsed expression's IR.",
        "import numpy as np",
        "from numba import njit, prange",
        f"T = np.{np.dtype(dtype).name}",
        "ONE, ZERO = T(1), T(0)",
        "",
        "@njit(parallel=True, cache=True, error_model='numpy')",
        f"def field_map(out, {', '.join(names)}):",
        "    for i in prange(out.shape[0]):",
    ]
    for k in range(components):
        for j, name in enumerate(names):
            lines.append(f"        x{j} = {name}[i, {k if wide[j] else 0}]")
        lines.append(f"        out[i, {k}] = {body}")
    return "\n".join(lines) + "\n"


def field_map(grid, values: np.ndarray, expression: str | Expression,
              fields: Mapping[str, Any] | None = None) -> np.ndarray:
    """The compiled form of :func:`daxpy.worklets.field_map.field_map` (float fields).

    Examples
    --------
    >>> import numpy as np
    >>> field_map(None, np.array([1.0, 4.0], np.float32), "sqrt(t) + 1")
    array([2., 3.], dtype=float32)
    """
    parsed = as_expression(expression)
    aligned, shape = bound_fields(parsed, values, fields)
    tables = [np.ascontiguousarray(aligned[name].reshape(
        shape[0], aligned[name].shape[1] if aligned[name].ndim == 2 else 1))
        for name in parsed.fields]
    dtype = tables[0].dtype
    if dtype not in KERNEL_DTYPES:
        raise CompiledUnavailable(f"no kernel for {dtype}")
    components = shape[1] if len(shape) == 2 else 1
    wide = tuple(t.shape[1] == components and components > 1 for t in tables)
    kernel = fork_safe_generated(load_generated(
        kernel_source(parsed, dtype, wide, components), "field_map", "field_map"))
    out = np.empty((shape[0], components), dtype)
    kernel(out, *tables)
    return out.reshape(shape)


def field_map_tuple(kind: TupleType, params: dict, slots: Slots) -> TupleCode | None:
    """Per-tuple code of the expression, as :func:`kernel_source` writes it:
    the chain's tuple is its first field, the other fields are arrays in the
    working dtype, and each result component is the translated tree over
    that component of the wide fields (the first of the others). None where
    the fields do not line up or the dtype has no kernel (the filter then
    runs, and raises its own errors).

    Examples
    --------
    >>> from daxpy.data.expressions import parse
    >>> kind = TupleType(np.dtype("float32"), (), 4)
    >>> code = field_map_tuple(kind, {"expression": parse("t * 2")}, Slots(kind, 1))
    >>> code.lines
    ['s1_x0 = T_float32(v1_0)', 's1_r0 = (s1_x0 * T_float32(2.0))']
    """
    try:
        dtype, tail = _map_dtype(kind.dtype, params), _map_tail(kind.tail, params)
        expression = as_expression(params["expression"])
        others = [to_host(params["fields"][name]) for name in expression.fields[1:]]
    except (ExpressionError, FieldError, UnknownFieldError):
        return None
    if dtype not in KERNEL_DTYPES or any(a.ndim not in (1, 2) or a.shape[0] != kind.n
                                         for a in others):
        return None
    c = tail[0] if tail else 1
    # Others in the working dtype, as tables (n, components): as the FieldMap kernel reads them.
    tables = [np.ascontiguousarray(a.astype(dtype, copy=False).reshape(
        kind.n, a.shape[1] if a.ndim == 2 else 1)) for a in others]
    x, s = slots.tmp("x"), suffix(dtype)
    try:
        body = to_python(expression.root, expression.fields, x, s)
    except ExpressionError:
        return None
    wide = [kind.components == c > 1] + [t.shape[1] == c > 1 for t in tables]
    lines = []
    for k in range(c):
        lines.append(f"{x}0 = T{s}({slots.x[k if wide[0] else 0]})")
        lines += [f"{x}{j + 1} = {slots.arg(j)}[{slots.i}, {k if w else 0}]"
                  for j, w in enumerate(wide[1:])]
        lines.append(f"{slots.tmp('r')}{k} = {body}")
    return TupleCode(TupleType(dtype, tail, kind.n), [f"{slots.tmp('r')}{k}" for k in range(c)],
                     lines, tables, tag="field_map")
