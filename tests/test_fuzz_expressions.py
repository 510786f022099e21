"""Fuzzing expressions, filter arguments and the code generator (no GPU needed).

Hostile constructs are spliced at random places into valid expressions; length
bombs of every shape are generated; random identifiers stand in for unknown
fields; every filter's constructor gets arbitrary arguments; and user text
(field names, dataset names, expressions) must never reach generated CUDA.
"""

import gc
import keyword
import time

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.cuda.dispatch import kernel_source
from daxpy.errors import (ArgumentError, ExpressionError, FieldError, UnknownFieldError)
from daxpy.data.expression_text import MAX_LENGTH
from daxpy.data.expressions import FUNCTIONS, MAX_NODES, parse
from daxpy.filters import (BiasAdd, CellToPoint, FieldMap, Gradient, Magnitude, PassThrough,
                           PointToCell)

from strategies import mixed_grid_all_shapes

# Valid expressions over the field f, with one hole {} for an operand.
TEMPLATES = ["{}", "f + {}", "sin({}) * f", "where(f > 0, {}, f)", "clip({}, -1, 1)",
             "-({}) ** 2", "hypot(f, {}) % 3", "f < {} < 2 and not f"]
# Constructs outside the whitelist, each valid Python in an operand position.
HOSTILE = ["f.real", "f.__class__", "f[0]", "f[1:2]", "(lambda: f)()", "lambda x: x",
           "__import__('os')", "open('/etc/passwd')", "eval('1')", "exec('x=1')",
           "getattr(f, 'x')", "globals()", "f.__dict__", "__builtins__", "__f__",
           "[f for f in f]", "{f: 1}", "{f}", "[f]", "(f, f)", "f'{f}'", "'text'", "b'x'",
           "None", "True", "...", "3j", "(x := f)", "f if f else 1", "f // 2", "f @ f",
           "f & 1", "f | 1", "f ^ 1", "f << 1", "~f", "f in f", "f is f", "sin(f, x=1)",
           "sin(*f)", "sin(**f)", "1e999", "9" * 400, "(yield f)", "(await f)", "f()",
           "sin()", "where(f)", "f.sin(1)", "np.sin(f)", "math.pi", "print(f)"]


@settings(max_examples=400)
@given(template=st.sampled_from(TEMPLATES), hostile=st.sampled_from(HOSTILE))
def test_hostile_construct_anywhere_is_refused(template, hostile):
    with pytest.raises(ExpressionError):
        FieldMap(template.format(hostile), backend="cpu")


# Names, not Python's keywords (the hand-made list missed 'as', which Hypothesis found).
identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True).filter(
    lambda s: s not in FUNCTIONS and not keyword.iskeyword(s))


@settings(max_examples=200)
@given(name=identifiers, template=st.sampled_from(TEMPLATES))
def test_calls_outside_the_whitelist_are_refused(name, template):
    with pytest.raises(ExpressionError, match="not allowed|syntax"):
        parse(template.format(f"{name}(f)"))


@settings(max_examples=200)
@given(name=identifiers.filter(lambda s: s != "f"), template=st.sampled_from(TEMPLATES))
def test_unknown_fields_are_named(name, template):
    grid = daxpy.UniformGrid(dims=(3,), point_data={"f": np.arange(3.0)}, name="probe grid")
    source = template.format(name)
    try:
        flt = FieldMap(source, backend="cpu")
    except ExpressionError:
        event("refused: ExpressionError (dunder)")
        assert name.startswith("__")
        return
    with pytest.raises(UnknownFieldError, match=repr(name)):
        flt(grid)
    event("refused: UnknownFieldError")


BOMBS = {
    "sum": lambda k: "f" + "+f" * k,
    "unary": lambda k: "-" * k + "f",
    "not": lambda k: "not " * k + "f",
    "parentheses": lambda k: "(" * k + "f" + ")" * k,
    "power tower": lambda k: "f" + "**2" * k,
    "nested calls": lambda k: "sin(" * k + "f" + ")" * k,
    "chained comparison": lambda k: "f" + "<f" * k,
    "literal digits": lambda k: "f+" + "9" * k,
    "constant tower": lambda k: "9" + "**9" * k + "+f",
    "whitespace": lambda k: " " * k + "f",
}


@settings(max_examples=300)
@given(shape=st.sampled_from(sorted(BOMBS)), k=st.integers(0, 3 * MAX_LENGTH))
def test_length_bombs_are_refused_quickly(shape, k):
    source = BOMBS[shape](k)
    # This thread's CPU time, not the wall clock nor the process's: a parse that
    # blows up spends this thread's CPU, while the wall clock also counts other
    # processes (a fresh clone's CI once saw 1 s pass on a parse of a few
    # milliseconds), and the process's time counts its other threads too (a fresh
    # clone's CI saw over 1 s of it pass on a parse of about 1 ms, most likely the
    # CPU kernels' threads that earlier tests left running). Nor a garbage collection:
    # one that a parse's allocations set off walks every object the process holds,
    # earlier tests' and compilers' (a fresh clone's CI saw 1.9 s of this thread's
    # time pass on a parse, most likely such a collection), so it runs before the
    # clock starts and not during it.
    gc.collect()
    gc.disable()
    start = time.thread_time()
    try:
        expression = parse(source)
    except ExpressionError as err:
        assert "at most" in str(err) or "syntax" in str(err) or "too large" in str(err) \
            or "cannot be parsed" in str(err), err
        event(f"refused: {shape}")
    else:
        assert len(source) <= MAX_LENGTH
        assert expression.fields == ("f",)
        event("accepted")
    finally:
        spent = time.thread_time() - start
        gc.enable()
    assert spent < 1.0, f"{shape} x{k} took too long"


@pytest.mark.parametrize("source", [None, 3, 2.5, b"f", ["f"], {"f": 1}, ("f",), {"f"},
                                    np.array(["f"]), object()])
def test_non_string_expressions(source):
    with pytest.raises(ExpressionError, match="must be a string"):
        FieldMap(source, backend="cpu")


@settings(max_examples=100)
@given(name=st.text(min_size=1, max_size=12), expression=st.sampled_from(
    ["x * 2", "sin(x) + x", "where(x > 0, x, -x)", "x + other"]))
def test_pipeline_map_binds_any_field_name_safely(name, expression):
    # The field name is bound in the parsed tree: 'p+q' or 'x' or "__import__('os')"
    # read the field of that name, never the text as an expression.
    values = np.arange(4.0) - 1.5
    grid = daxpy.UniformGrid(dims=(4,), point_data={name: values, "other": np.ones(4)})
    if name != "other":
        # Decoys that a pasted 'p+q' would read; never the field under test itself.
        grid = grid.with_fields(point_data={k: np.zeros(4) for k in ("p", "q") if k != name})
    pipe = daxpy.pipeline(grid)
    node = pipe.field(name).map(expression)
    got = pipe.run(backend="cpu").point_data[node.name]
    x = values if name != "other" else np.ones(4)
    expected = {"x * 2": x * 2, "sin(x) + x": np.sin(x) + x,
                "where(x > 0, x, -x)": np.abs(x), "x + other": x + 1}[expression]
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=100)
@given(expression=st.sampled_from(HOSTILE + [BOMBS["sum"](MAX_NODES)]))
def test_pipeline_map_refuses_hostile_expressions(expression):
    grid = daxpy.UniformGrid(dims=(4,), point_data={"p": np.zeros(4)})
    with pytest.raises(ExpressionError):
        daxpy.pipeline(grid).field("p").map(expression)


# Anything a caller might pass as an argument.
garbage = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(),
                    st.text(max_size=6), st.binary(max_size=2),
                    st.lists(st.one_of(st.integers(-2, 2), st.floats(), st.text(max_size=2)),
                             max_size=3),
                    st.sampled_from(["points", "cells", "cpu", "cuda", "point", "cell", "f",
                                     "float32", "int8", "complex64", "bool", "f * 2"]))
CONSTRUCTORS = {
    "Gradient": lambda a: Gradient(a[0], a[1], kind=a[2], divergence=a[3], vorticity=a[4],
                                   qcriterion=a[5], association=a[6], backend="cpu"),
    "PointToCell": lambda a: PointToCell(a[0], a[1], association=a[2], backend="cpu"),
    "CellToPoint": lambda a: CellToPoint(a[0], a[1], association=a[2], backend="cpu"),
    "PassThrough": lambda a: PassThrough(a[0], a[1], a[2], association=a[3], backend="cpu"),
    "BiasAdd": lambda a: BiasAdd(a[0], a[1], a[2], association=a[3], backend="cpu"),
    "Magnitude": lambda a: Magnitude(a[0], a[1], association=a[2], backend="cpu"),
    "FieldMap": lambda a: FieldMap(a[0], a[1], association=a[2], backend="cpu"),
}


@settings(max_examples=500)
@given(name=st.sampled_from(sorted(CONSTRUCTORS)), field=st.one_of(
    st.sampled_from(["f", "c", "f * 2"]), garbage), args=st.lists(
        st.one_of(st.none(), garbage), min_size=6, max_size=6))
def test_filter_arguments(name, field, args):
    args = [field] + args
    grid = daxpy.UniformGrid(dims=(3, 3), point_data={"f": np.arange(9.0)},
                             cell_data={"c": np.arange(4.0)})
    try:
        flt = CONSTRUCTORS[name](args)
    except (ArgumentError, FieldError, ExpressionError) as err:
        assert str(err)
        event(f"refused when made: {type(err).__name__}")
        return
    try:
        flt(grid)
    except (ArgumentError, FieldError, ExpressionError) as err:  # UnknownFieldError too
        assert str(err)
        event(f"refused when run: {type(err).__name__}")
        return
    event("accepted")


@settings(max_examples=100)
@given(names=st.lists(identifiers.map(lambda s: "zq" + s), min_size=1, max_size=4,
                      unique=True),
       owner=st.text(max_size=30).map(lambda t: f"zqowner{t}"), ncomp=st.sampled_from([1, 3]))
def test_user_text_never_reaches_generated_code(names, owner, ncomp):
    grid = daxpy.UniformGrid(dims=(4, 3), name=owner)
    fields = {n: np.zeros((grid.n_points, ncomp)) for n in names[1:]}
    expression = " + ".join(f"sin({n})" for n in names) + " * 2"
    source = kernel_source("field_map", grid, "float64", components=ncomp,
                           expression=expression, fields=fields)
    for text in names:
        assert text not in source, f"field name {text!r} reached the generated source"
    assert "zqowner" not in source


@pytest.mark.parametrize("name", ["point_to_cell", "cell_to_point", "point_gradient",
                                  "cell_gradient"])
def test_dataset_name_never_reaches_generated_code(name):
    grid = mixed_grid_all_shapes()
    grid.name = '*/ asm("trap;"); /* evil"); system("rm -rf /'
    assert "trap" not in kernel_source(name, grid, "float32")
