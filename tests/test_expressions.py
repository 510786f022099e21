"""The expression parser: its IR, constant folding, dtype rules, and every rejection."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daxpy.errors import ExpressionError, UnknownFieldError
from daxpy.data.expression_text import MAX_LENGTH
from daxpy.data.expressions import (FUNCTIONS, MAX_NODES, OPS, Const, FieldRef, Op,
                                    evaluate, parse, working_dtype)


def test_ir_of_arithmetic_follows_python_precedence():
    assert parse("a + b * -c").root == Op("add", (FieldRef("a"), Op("mul", (
        FieldRef("b"), Op("neg", (FieldRef("c"),))))))


def test_fields_in_order_of_first_appearance():
    assert parse("b * a + b").fields == ("b", "a")


def test_constant_subtrees_fold_to_python_floats():
    root = parse("a * (2 ** 3 + sqrt(4)) - where(1 > 2, 5, 6)").root
    assert root == Op("sub", (Op("mul", (FieldRef("a"), Const(10.0))), Const(6.0)))
    assert type(root.args[1].value) is float


def test_chained_comparison_is_a_conjunction():
    assert parse("a < b <= 3").root == Op("and", (Op("lt", (FieldRef("a"), FieldRef("b"))),
                                                  Op("le", (FieldRef("b"), Const(3.0)))))


def test_unary_plus_is_dropped():
    assert parse("+a").root == FieldRef("a")


def test_every_function_has_an_op_of_its_arity():
    assert FUNCTIONS <= set(OPS)
    for name in FUNCTIONS:
        args = ", ".join(["a"] * OPS[name].arity)
        assert parse(f"{name}({args})").root.op == name


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(sorted(FUNCTIONS)), st.sampled_from([np.float32, np.float64]),
       st.integers(0, 2**32 - 1))
def test_functions_match_numpy_and_keep_float32(name, dtype, seed):
    rng = np.random.default_rng(seed)
    arity = OPS[name].arity
    arrays = {f"x{i}": rng.uniform(0.1, 0.9, 16).astype(dtype) for i in range(arity)}
    result = evaluate(parse(f"{name}({', '.join(arrays)})"), arrays)
    expected = OPS[name].numpy(*arrays.values())
    assert result.dtype == dtype
    np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_literals_do_not_widen_float32():
    a = np.array([1.0, 2.0], np.float32)
    assert evaluate(parse("a * 0.1 + 1e10 - where(a > 1, 2.5, a)"), {"a": a}).dtype == np.float32


def test_comparisons_and_logic_give_one_or_zero_in_the_working_dtype():
    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([3.0, 2.0, 1.0], np.float32)
    result = evaluate(parse("(a < b) + 2 * (a == b) + 4 * (not a > 2) - (a >= 3 or b > 2)"),
                      {"a": a, "b": b})
    assert result.dtype == np.float32
    assert result.tolist() == [4.0, 6.0, -1.0]


def test_mod_is_floor_modulo_like_python():
    assert evaluate(parse("a % 3"), {"a": np.array([-1.0, 4.0])}).tolist() == [2.0, 1.0]


def test_division_by_zero_gives_inf_without_warnings():
    a = np.array([0.0, 1.0])
    with np.errstate(all="raise"):
        assert evaluate(parse("1 / a"), {"a": a}).tolist() == [np.inf, 1.0]
        assert evaluate(parse("log(a * 0)"), {"a": a}).tolist() == [-np.inf, -np.inf]


def test_working_dtype_rules():
    f32, f64 = np.zeros(1, np.float32), np.zeros(1, np.float64)
    i8, i32 = np.zeros(1, np.int8), np.zeros(1, np.int32)
    assert working_dtype([f32, f32]) == np.float32
    assert working_dtype([f32, f64]) == np.float64
    assert working_dtype([f32, i8]) == np.float32
    assert working_dtype([i32]) == np.float64


def test_evaluate_reports_a_missing_field_with_the_available_ones():
    with pytest.raises(UnknownFieldError, match=r"'b'.*available fields: \['a'\]"):
        evaluate(parse("a + b"), {"a": np.zeros(2)})


REJECTED = [
    ("a.real", "attribute access 'a.real'"),
    ("a[0]", "subscript 'a\\[0\\]'"),
    ("(lambda x: x)(a)", "lambda"),
    ("[x for x in a]", "comprehension"),
    ("sum(x for x in a)", "call to 'sum'"),
    ("__import__('os')", "call to '__import__'"),
    ("eval('1')", "call to 'eval'"),
    ("sin(a)(a)", "call of a computed value"),
    ("np.sin(a)", "attribute access 'np.sin'"),
    ("sin(x=a)", "keyword argument 'x' in sin\\(\\)"),
    ("sin(*a)", "starred argument"),
    ("'text'", "str literal"),
    ("b'x'", "bytes literal"),
    ("True + a", "boolean literal 'True'"),
    ("None", "NoneType literal"),
    ("1j * a", "complex literal"),
    ("1e400 * a", "literal '1e400' \\(too large\\)"),
    ("__class__", "dunder name '__class__'"),
    ("a if a > 0 else 0", "conditional expression"),
    ("(b := a)", "assignment expression"),
    ("f'{a}'", "f-string"),
    ("[a, a]", "list"),
    ("(a, a)", "tuple"),
    ("{'k': a}", "dict"),
    ("a // 2", "operator '//'"),
    ("a @ a", "operator '@'"),
    ("a & a", "operator '&'"),
    ("~a", "operator '~'"),
    ("a in a", "operator 'in'"),
    ("a is a", "operator 'is'"),
]


@pytest.mark.parametrize("source, message", REJECTED, ids=[s for s, _ in REJECTED])
def test_constructs_outside_the_whitelist_are_rejected_by_name(source, message):
    with pytest.raises(ExpressionError, match=message + ".* is not allowed"):
        parse(source)


REFUSED = {
    "rejection_names_the_column": ("a + b.c", r"attribute access 'b\.c'.*\(column 5\)"),
    "wrong_number_of_arguments": ("atan2(a)", r"atan2\(\) takes 2 arguments, got 1"),
    "syntax_error": ("a +", "invalid syntax in expression 'a \\+'"),
    "empty_expression": ("   ", "expression is empty"),
    "expression_must_be_a_string": (3, "must be a string, got int"),
    "too_long_expression": ("a" + " + a" * MAX_LENGTH, f"at most {MAX_LENGTH} are allowed"),
    "too_many_nodes": ("-" * 300 + "a", f"at most {MAX_NODES} are allowed"),
}


@pytest.mark.parametrize("source, message", list(REFUSED.values()), ids=list(REFUSED))
def test_malformed_expressions_are_refused_with_their_reason(source, message):
    with pytest.raises(ExpressionError, match=message):
        parse(source)


def test_deep_nesting_is_an_expression_error():
    with pytest.raises(ExpressionError):
        parse("(" * 300 + "a" + ")" * 300)


def test_null_byte_is_an_expression_error():
    with pytest.raises(ExpressionError, match="null bytes"):
        parse("a\x00")
