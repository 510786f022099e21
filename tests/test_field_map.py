"""FieldMap against NumPy references on every grid family, and its errors."""

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.errors import ArgumentError, ExpressionError, FieldError, UnknownFieldError
from daxpy.data.expressions import parse
from daxpy.data.worklet import get_worklet
from daxpy.filters import FieldMap
from daxpy.worklets.field_map import field_map
from daxpy.worklets.field_map import field_map as numpy_field_map
from daxpy.worklets.field_map_cpu import kernel_source

from strategies import SPECIAL, expressions, field_arrays, located_grids, with_fields_at

CASES = [
    ("a * b + 2.5", lambda a, b: a * b + 2.5),
    ("sqrt(abs(a)) - b ** 2 / 3", lambda a, b: np.sqrt(np.abs(a)) - b ** 2 / 3),
    ("where(a > b, a, -b) + (a <= 0) * 4", lambda a, b: np.where(a > b, a, -b) + (a <= 0) * 4),
    ("atan2(a, b) + hypot(a, b) + clip(a, -1, 1)",
     lambda a, b: np.arctan2(a, b) + np.hypot(a, b) + np.clip(a, -1, 1)),
    ("maximum(a, b) % 3 + exp(minimum(a, 1))",
     lambda a, b: np.maximum(a, b) % 3 + np.exp(np.minimum(a, 1))),
]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_filter_on_any_grid_matches_numpy(data):
    grid, association, size = data.draw(located_grids())
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    a = data.draw(field_arrays(size, dtype=dtype))
    b = data.draw(field_arrays(size, ncomp=1, dtype=dtype))
    source, reference = data.draw(st.sampled_from(CASES))
    dataset = with_fields_at(grid, association, {"a": a, "b": b})
    result = FieldMap(source, result="r", association=association,
                      backend="cpu")(dataset).fields(association)["r"]
    wide_b = b[:, None] if a.ndim == 2 else b
    # Computed in the fields' dtype, so that % and comparisons cut at the same places.
    expected = reference(a, wide_b)
    assert result.dtype == dtype and result.shape == a.shape
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(result, expected, rtol=tol, atol=tol)


def test_one_component_broadcasts_over_the_components_of_another():
    v = np.arange(6.0).reshape(3, 2)
    s = np.array([1.0, 10.0, 100.0])
    assert field_map(None, v, "v * s", fields={"s": s}).tolist() == [[0, 1], [20, 30],
                                                                     [400, 500]]


def test_float32_fields_with_float_literals_stay_float32():
    a = np.ones(3, np.float32)
    assert field_map(None, a, "a * 0.1 + where(a > 0, 1.5, 2.5)").dtype == np.float32


def test_integer_fields_give_float64():
    a = np.array([1, 2, 3], np.int32)
    result = field_map(None, a, "a / 2 - a ** -1")
    assert result.dtype == np.float64
    np.testing.assert_allclose(result, [-0.5, 0.5, 1.5 - 1 / 3])


def test_mixed_precision_promotes_like_numpy():
    a, b = np.ones(2, np.float32), np.ones(2, np.float64)
    assert field_map(None, a, "a + b", fields={"b": b}).dtype == np.float64


def test_result_never_aliases_an_input():
    a = np.arange(3.0)
    result = field_map(None, a, "a")
    assert not np.shares_memory(result, a)
    result[0] = 7
    assert a[0] == 0


def test_constant_branch_is_broadcast_to_every_tuple():
    v = np.zeros((2, 3), np.float32)
    assert field_map(None, v, "v * 0 + 1").tolist() == [[1, 1, 1], [1, 1, 1]]


def test_cell_fields():
    grid = daxpy.UniformGrid(dims=(3, 2), cell_data={"c": np.array([1.0, 2.0])})
    result = FieldMap("c * 2", result="d", association="cells", backend="cpu")(grid)
    assert result.cell_data["d"].tolist() == [2.0, 4.0]
    assert "d" not in grid.cell_data


def test_components_that_do_not_line_up_raise():
    with pytest.raises(FieldError, match=r"different numbers of components.*'a': 2.*'b': 3"):
        field_map(None, np.zeros((4, 2)), "a + b", fields={"b": np.zeros((4, 3))})


def test_fields_of_different_tuple_counts_raise():
    with pytest.raises(FieldError, match=r"field 'b' has shape \(3,\).*\(4,\)"):
        field_map(None, np.zeros(4), "a + b", fields={"b": np.zeros(3)})


def test_field_not_given_to_the_worklet_raises():
    with pytest.raises(UnknownFieldError, match=r"reads field 'b'.*given fields: \['a'\]"):
        field_map(None, np.zeros(4), "a + b")


def test_unknown_field_lists_the_available_ones():
    grid = daxpy.UniformGrid(dims=(2,), point_data={"t": np.zeros(2), "u": np.zeros(2)})
    with pytest.raises(UnknownFieldError, match=r"no point field 'x'; it has \['t', 'u'\]"):
        FieldMap("t + x", backend="cpu")(grid)


def test_field_at_the_other_association_is_not_found():
    grid = daxpy.UniformGrid(dims=(2, 2), cell_data={"c": np.ones(1)})
    with pytest.raises(UnknownFieldError, match="no point field 'c'"):
        FieldMap("c + 1", backend="cpu")(grid)


REFUSED = {
    # Expression errors are raised when the filter is made, not when it runs.
    "expression_error": ("a.__class__", {}, ExpressionError, "attribute access 'a.__class__'"),
    "expression_without_fields": ("1 + 2", {}, ExpressionError, "reads no field"),
    "wrong_association": ("a", {"association": "edges"}, FieldError,
                          "association must be 'points' or 'cells', got 'edges'"),
    "empty_result_name": ("a", {"result": ""}, ArgumentError,
                          "result must be a non-empty field name"),
}


@pytest.mark.parametrize("source, options, error, message", list(REFUSED.values()),
                         ids=list(REFUSED))
def test_bad_arguments_are_refused_when_the_filter_is_made(source, options, error, message):
    with pytest.raises(error, match=message):
        FieldMap(source, **options)


@settings(max_examples=60, deadline=None)
@given(source=expressions(), dtype=st.sampled_from([np.float32, np.float64]),
       wide=st.booleans(), seed=st.integers(0, 2**32 - 1))
# NumPy takes a scalar exponent of 0.5 as a square root: NaN at -inf (found by CI).
@example(source="(a ** 0.5)", dtype=np.float32, wide=False, seed=0)
def test_compiled_map_matches_numpy_special_values_included(source, dtype, wide, seed):
    # The compiled kernel's sin, exp, ... are LLVM's, NumPy's its own: equal
    # within rounding; NaN and infinities at the same places.
    assume(parse(source).fields)
    rng = np.random.default_rng(seed)
    a = rng.choice(SPECIAL, (64, 3) if wide else 64).astype(dtype)
    b = rng.choice(SPECIAL, 64).astype(dtype)
    given_fields = {"a": a, "b": b}
    first = given_fields[parse(source).fields[0]]
    compiled = get_worklet("field_map").cpu_impl("uniform")
    with np.errstate(all="ignore"):
        expected = numpy_field_map(None, first, source, fields=given_fields)
    got = compiled(None, first, expression=source, fields=given_fields)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=source)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected), err_msg=source)
    np.testing.assert_array_equal(np.sign(got[np.isinf(got)]),
                                  np.sign(expected[np.isinf(expected)]), err_msg=source)
    finite = np.isfinite(expected)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    scale = max(float(np.abs(expected[finite]).max(initial=0.0)), 1.0)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=tolerance,
                               atol=tolerance * scale, err_msg=source)


def test_compiled_map_source_holds_no_user_text():
    parsed = parse("zqspeed * 2 + sin(zqother)")
    source = kernel_source(parsed, np.dtype(np.float32), (False, False), 1)
    assert "zq" not in source
    assert "np.sin(x1)" in source
