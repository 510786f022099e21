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
NumPy's within rounding.

Examples
--------
>>> import numpy as np
>>> field_map(None, np.array([1.0, 2.0]), "t * 10 + 1").tolist()
[11.0, 21.0]
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import sys
import threading
from typing import Any, Mapping

import numpy as np

from daxpy.cuda.compile import cache_dir, write_atomically
from daxpy.data.expressions import Const, Expression, FieldRef, Op
from daxpy.errors import ExpressionError

from ._numba import KERNEL_DTYPES, CompiledUnavailable
from .field_map import as_expression, bound_fields

_TRUTH = "(ONE if {} else ZERO)"
_TEMPLATES = {
    "neg": "(-{0})", "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})",
    "div": "({0} / {1})", "pow": "T({0} ** {1})", "mod": "T({0} % {1})",
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

_KERNELS: dict[str, Any] = {}
_LOCK = threading.Lock()


def _constant(value: float) -> str:
    """A literal of the working dtype ``T``; infinities and NaN by name.

    Examples
    --------
    >>> _constant(0.5), _constant(float("-inf"))
    ('T(0.5)', 'T(-np.inf)')
    """
    if math.isnan(value):
        return "T(np.nan)"
    if math.isinf(value):
        return "T(np.inf)" if value > 0 else "T(-np.inf)"
    return f"T({float(value)!r})"


def to_python(node, fields: tuple) -> str:
    """Python (Numba) expression computing ``node``; field ``fields[i]`` is ``x{i}``.
    An operation this backend does not know raises
    :class:`~daxpy.errors.ExpressionError`.

    Examples
    --------
    >>> from daxpy.data.expressions import parse
    >>> to_python(parse("where(t > 0, sqrt(t), -t)").root, ("t",))
    '(np.sqrt(x0) if (ONE if x0 > T(0.0) else ZERO) != 0 else (-x0))'
    """
    def walk(n) -> str:
        if isinstance(n, Const):
            return _constant(float(n.value))
        if isinstance(n, FieldRef):
            return f"x{fields.index(n.name)}"
        if not isinstance(n, Op) or n.op not in _TEMPLATES:
            raise ExpressionError(f"the compiled CPU backend cannot translate IR node {n!r}")
        return _TEMPLATES[n.op].format(*(walk(a) for a in n.args))

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


def _load_kernel(source: str):
    """The ``field_map`` kernel of ``source``, from a module file in the cache
    directory named by the source's hash (Numba caches beside it)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    with _LOCK:
        if digest in _KERNELS:
            return _KERNELS[digest]
        path = cache_dir().parent / "cpu" / f"daxpy_field_map_{digest}.py"
        # Rewritten only when missing or different: a new file time would void
        # the Numba cache entries beside it.
        if not path.exists() or path.read_text() != source:
            write_atomically(path, source.encode())
        name = f"daxpy_field_map_{digest}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _KERNELS[digest] = module.field_map
        return module.field_map


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
    kernel = _load_kernel(kernel_source(parsed, dtype, wide, components))
    out = np.empty((shape[0], components), dtype)
    kernel(out, *tables)
    return out.reshape(shape)
