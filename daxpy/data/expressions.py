"""FieldMap expressions: a safe parser into a small typed IR, and its NumPy evaluator.

An expression such as ``"sqrt(u**2 + v**2) * where(t > 0, 1, -1)"`` is parsed
with Python's :mod:`ast` against a whitelist and turned into three node types:
:class:`Const` (a number), :class:`FieldRef` (a field name) and :class:`Op`
(an operation from :data:`OPS` applied to argument nodes). Subtrees without
fields are folded into constants. The NumPy evaluator here and the CUDA code
generator walk the same tree; every value is of one floating-point dtype, and
comparisons and logical operations give 1 or 0 in that dtype.

Examples
--------
>>> import numpy as np
>>> e = parse("a * (1 + cos(0))")
>>> e.root
Op(op='mul', args=(FieldRef(name='a'), Const(value=2.0)))
>>> evaluate(e, {"a": np.array([1.0, 2.0], np.float32)}).tolist()
[2.0, 4.0]
"""

from __future__ import annotations

import ast
import functools
import math
from dataclasses import dataclass
from typing import Callable, Mapping, Union

import numpy as np

from ..errors import ExpressionError, UnknownFieldError
from .expression_text import check_text, shorten

MAX_NODES = 256
"""Most syntax-tree nodes accepted; bounds parse and evaluation work and depth."""


@dataclass(frozen=True)
class Const:
    """A numeric literal, or a folded constant subtree (held as a Python float)."""

    value: float


@dataclass(frozen=True)
class FieldRef:
    """A reference to a field by name."""

    name: str


@dataclass(frozen=True)
class Op:
    """An operation from :data:`OPS` applied to ``args`` (nodes)."""

    op: str
    args: tuple


Node = Union[Const, FieldRef, Op]


@dataclass(frozen=True)
class OpSpec:
    """What one IR operation is.

    Attributes
    ----------
    arity : int
        Number of arguments.
    numpy : callable
        The NumPy function that computes it elementwise.
    logical : bool
        True when the result is a truth value (1 or 0 in the working dtype).
    """

    arity: int
    numpy: Callable
    logical: bool = False


def _where(condition, a, b):
    return np.where(condition != 0, a, b)


OPS: dict[str, OpSpec] = {
    # arithmetic; "mod" is floor modulo (sign of the divisor), as in Python and NumPy
    "neg": OpSpec(1, np.negative), "add": OpSpec(2, np.add),
    "sub": OpSpec(2, np.subtract), "mul": OpSpec(2, np.multiply),
    "div": OpSpec(2, np.true_divide), "pow": OpSpec(2, np.power),
    "mod": OpSpec(2, np.remainder),
    # comparisons and logic
    "lt": OpSpec(2, np.less, True), "le": OpSpec(2, np.less_equal, True),
    "gt": OpSpec(2, np.greater, True), "ge": OpSpec(2, np.greater_equal, True),
    "eq": OpSpec(2, np.equal, True), "ne": OpSpec(2, np.not_equal, True),
    "and": OpSpec(2, np.logical_and, True), "or": OpSpec(2, np.logical_or, True),
    "not": OpSpec(1, np.logical_not, True),
    # functions callable by name in expressions
    "sin": OpSpec(1, np.sin), "cos": OpSpec(1, np.cos), "tan": OpSpec(1, np.tan),
    "asin": OpSpec(1, np.arcsin), "acos": OpSpec(1, np.arccos), "atan": OpSpec(1, np.arctan),
    "sinh": OpSpec(1, np.sinh), "cosh": OpSpec(1, np.cosh), "tanh": OpSpec(1, np.tanh),
    "exp": OpSpec(1, np.exp), "log": OpSpec(1, np.log), "log10": OpSpec(1, np.log10),
    "log2": OpSpec(1, np.log2), "sqrt": OpSpec(1, np.sqrt), "abs": OpSpec(1, np.absolute),
    "floor": OpSpec(1, np.floor), "ceil": OpSpec(1, np.ceil),
    "atan2": OpSpec(2, np.arctan2), "hypot": OpSpec(2, np.hypot),
    "minimum": OpSpec(2, np.minimum), "maximum": OpSpec(2, np.maximum),
    "where": OpSpec(3, _where), "clip": OpSpec(3, np.clip),
}
"""Every operation of the IR, by name."""

FUNCTIONS = frozenset(OPS) - {"neg", "add", "sub", "mul", "div", "mod", "lt", "le", "gt",
                              "ge", "eq", "ne", "and", "or", "not"}
"""Names that an expression may call (``pow`` is also ``**``)."""

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div",
           ast.Pow: "pow", ast.Mod: "mod"}
_COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq",
            ast.NotEq: "ne"}
_OPERATOR_TEXT = {ast.FloorDiv: "//", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
                  ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.Invert: "~",
                  ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_CONSTRUCTS = {ast.Attribute: "attribute access", ast.Subscript: "subscript",
               ast.Lambda: "lambda", ast.ListComp: "comprehension",
               ast.SetComp: "comprehension", ast.DictComp: "comprehension",
               ast.GeneratorExp: "comprehension", ast.IfExp: "conditional expression "
               "(use where(condition, a, b))", ast.NamedExpr: "assignment expression",
               ast.JoinedStr: "f-string", ast.List: "list", ast.Tuple: "tuple",
               ast.Dict: "dict", ast.Set: "set", ast.Starred: "starred argument"}


@dataclass(frozen=True)
class Expression:
    """A parsed expression.

    Attributes
    ----------
    source : str
        The text it was parsed from.
    root : Const, FieldRef or Op
        The IR tree.
    fields : tuple of str
        Names of the fields it reads, in order of first appearance.
    """

    source: str
    root: Node
    fields: tuple


class _Converter:
    """Turns a Python syntax tree into IR nodes, rejecting everything else."""

    def __init__(self, source: str):
        self.source = source
        self.fields: dict[str, None] = {}

    def error(self, node: ast.AST, what: str) -> ExpressionError:
        column = getattr(node, "col_offset", 0) + 1
        return ExpressionError(f"{what} is not allowed in expression "
                               f"{shorten(self.source)} (column {column})")

    def bad_operator(self, node: ast.AST, operator: ast.AST) -> ExpressionError:
        return self.error(node, f"operator {_OPERATOR_TEXT.get(type(operator), '?')!r}")

    def text(self, node: ast.AST) -> str:
        return shorten(ast.get_source_segment(self.source, node) or type(node).__name__)

    def convert(self, node: ast.AST) -> Node:
        handler = getattr(self, f"_{type(node).__name__}", None)
        if handler is None:
            what = _CONSTRUCTS.get(type(node), type(node).__name__)
            raise self.error(node, f"{what} {self.text(node)}")
        return handler(node)

    def op(self, name: str, args: list) -> Node:
        if all(isinstance(a, Const) for a in args):
            return _fold(name, args)
        return Op(name, tuple(args))

    def _Constant(self, node: ast.Constant) -> Node:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            kind = "boolean" if isinstance(value, bool) else type(value).__name__
            raise self.error(node, f"{kind} literal {self.text(node)}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise self.error(node, f"literal {self.text(node)} (too large)")
        return Const(number)

    def _Name(self, node: ast.Name) -> Node:
        if node.id.startswith("__"):
            raise self.error(node, f"dunder name {node.id!r}")
        self.fields.setdefault(node.id)
        return FieldRef(node.id)

    def _UnaryOp(self, node: ast.UnaryOp) -> Node:
        operand = self.convert(node.operand)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.USub):
            return self.op("neg", [operand])
        if isinstance(node.op, ast.Not):
            return self.op("not", [operand])
        raise self.bad_operator(node, node.op)

    def _BinOp(self, node: ast.BinOp) -> Node:
        name = _BINARY.get(type(node.op))
        if name is None:
            raise self.bad_operator(node, node.op)
        return self.op(name, [self.convert(node.left), self.convert(node.right)])

    def _BoolOp(self, node: ast.BoolOp) -> Node:
        name = "and" if isinstance(node.op, ast.And) else "or"
        values = [self.convert(v) for v in node.values]
        return functools.reduce(lambda a, b: self.op(name, [a, b]), values)

    def _Compare(self, node: ast.Compare) -> Node:
        # a < b < c means (a < b) and (b < c), as in Python.
        left, tests = self.convert(node.left), []
        for operator, comparator in zip(node.ops, node.comparators):
            name = _COMPARE.get(type(operator))
            if name is None:
                raise self.bad_operator(node, operator)
            right = self.convert(comparator)
            tests.append(self.op(name, [left, right]))
            left = right
        return functools.reduce(lambda a, b: self.op("and", [a, b]), tests)

    def _Call(self, node: ast.Call) -> Node:
        if not isinstance(node.func, ast.Name):
            what = _CONSTRUCTS.get(type(node.func), "call of a computed value")
            raise self.error(node.func, f"{what} {self.text(node.func)}")
        name = node.func.id
        if name not in FUNCTIONS:
            raise self.error(node, f"call to {name!r} (allowed: {', '.join(sorted(FUNCTIONS))})")
        if node.keywords:
            keyword = node.keywords[0]
            raise self.error(keyword, f"keyword argument {keyword.arg or '**'!r} in {name}()")
        arity = OPS[name].arity
        if len(node.args) != arity:
            raise ExpressionError(
                f"{name}() takes {arity} argument{'s' if arity > 1 else ''}, got "
                f"{len(node.args)}, in expression {shorten(self.source)} "
                f"(column {node.col_offset + 1})"
            )
        return self.op(name, [self.convert(a) for a in node.args])


def _fold(name: str, args: list) -> Const:
    with np.errstate(all="ignore"):
        value = apply_op(name, [np.float64(a.value) for a in args], np.dtype(np.float64))
    return Const(float(value))


def parse(source: str) -> Expression:
    """Parse a FieldMap expression into the IR.

    Parameters
    ----------
    source : str
        Arithmetic (``+ - * / ** %``, unary ``-``), comparisons, ``and``/``or``/
        ``not``, numbers, field names, and calls to :data:`FUNCTIONS`
        (``where(condition, a, b)``, ``clip(x, lo, hi)``, ``sin(x)``...).

    Returns
    -------
    Expression

    Raises
    ------
    ExpressionError
        For anything outside that set (attribute access, subscripts, lambdas,
        other calls, keyword arguments, strings, dunder names...), for syntax
        errors, and for expressions longer than :data:`~daxpy.data.expression_text.MAX_LENGTH` characters
        or :data:`MAX_NODES` nodes; the message names the construct and column.

    Examples
    --------
    >>> parse("a < b < 1").fields
    ('a', 'b')
    >>> parse("hypot(u, v)").root
    Op(op='hypot', args=(FieldRef(name='u'), FieldRef(name='v')))
    """
    if not isinstance(source, str):
        raise ExpressionError(f"an expression must be a string, got {type(source).__name__}")
    return _parse(source)


@functools.lru_cache(maxsize=256)
def _parse(source: str) -> Expression:
    # Cached apart from parse(): an unhashable argument must reach the type check.
    check_text(source)
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as err:
        column = f" (column {err.offset})" if err.offset else ""
        raise ExpressionError(
            f"invalid syntax in expression {shorten(source)}: {err.msg}{column}"
        ) from None
    except (ValueError, MemoryError, RecursionError) as err:  # null bytes, deep nesting
        raise ExpressionError(
            f"expression {shorten(source)} cannot be parsed: {err}"
        ) from None
    count = sum(1 for _ in ast.walk(tree))
    if count > MAX_NODES:
        raise ExpressionError(
            f"expression has {count} syntax nodes; at most {MAX_NODES} are allowed"
        )
    converter = _Converter(source.strip())
    root = converter.convert(tree.body)
    return Expression(source, root, tuple(converter.fields))


def apply_op(name: str, args: list, dtype: np.dtype):
    """Apply one IR operation with NumPy; truth values become 1 or 0 in ``dtype``.

    Examples
    --------
    >>> import numpy as np
    >>> apply_op("gt", [np.array([1.0, 3.0]), np.float64(2)], np.dtype(np.float64)).tolist()
    [0.0, 1.0]
    """
    spec = OPS[name]
    result = spec.numpy(*args)
    return result.astype(dtype) if spec.logical else result


def working_dtype(arrays) -> np.dtype:
    """The dtype an expression over ``arrays`` is computed in: their common
    dtype if it is floating point (float32 with float32 stays float32), else
    float64.

    Examples
    --------
    >>> import numpy as np
    >>> working_dtype([np.zeros(2, np.float32), np.zeros(2, np.int8)])
    dtype('float32')
    >>> working_dtype([np.zeros(2, np.int32)])
    dtype('float64')
    """
    common = np.result_type(*arrays) if len(arrays) else np.dtype(np.float64)
    return common if common.kind == "f" else np.dtype(np.float64)


def evaluate(expression: Expression, fields: Mapping[str, np.ndarray],
             dtype: np.dtype | None = None) -> np.ndarray:
    """Evaluate a parsed expression elementwise with NumPy.

    Parameters
    ----------
    expression : Expression
        From :func:`parse`.
    fields : mapping of str to numpy.ndarray
        Every field the expression reads, already of ``dtype`` and of shapes
        that broadcast together.
    dtype : dtype-like, optional
        The floating-point dtype every value is computed in; constants take
        it too, so they never widen float32 fields. Default: the fields'
        common dtype.

    Returns
    -------
    numpy.ndarray or numpy scalar
        A scalar only when the expression reads no field. Division by zero
        and invalid operations give inf and NaN, without warnings.

    Raises
    ------
    UnknownFieldError
        If the expression reads a field that ``fields`` does not hold.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([-1.0, 4.0], np.float32)
    >>> r = evaluate(parse("where(a > 0, sqrt(a), 0.1)"), {"a": a})
    >>> r.dtype, r.tolist()
    (dtype('float32'), [0.10000000149011612, 2.0])
    """
    missing = [name for name in expression.fields if name not in fields]
    if missing:
        raise UnknownFieldError(
            f"expression {expression.source!r} reads field {missing[0]!r}, which is not "
            f"available; available fields: {sorted(fields)}"
        )
    dtype = working_dtype([fields[n] for n in expression.fields]) if dtype is None \
        else np.dtype(dtype)

    def walk(node: Node):
        if isinstance(node, Const):
            return dtype.type(node.value)
        if isinstance(node, FieldRef):
            return fields[node.name]
        return apply_op(node.op, [walk(arg) for arg in node.args], dtype)

    with np.errstate(all="ignore"):
        return walk(expression.root)
