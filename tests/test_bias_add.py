"""BiasAdd against a NumPy reference (TensorFlow BiasAdd semantics), and its errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.errors import ArgumentError, UnknownFieldError
from daxpy.filters import BiasAdd
from daxpy.worklets.bias_add import bias_add

from strategies import field_arrays, located_grids, seeds, with_fields_at


def reference(values, bias):
    flat = values.reshape(-1)
    bias = np.asarray(bias).astype(values.dtype)
    return (flat + bias[np.arange(flat.size) % bias.size]).reshape(values.shape)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_filter_on_any_grid_and_association_matches_reference(data):
    grid, association, size = data.draw(located_grids())
    values = data.draw(field_arrays(size))
    per_tuple = values.size // size
    length = data.draw(st.sampled_from([d for d in (1, per_tuple, 2 * per_tuple, values.size)
                                        if values.size % d == 0]))
    bias = np.random.default_rng(data.draw(seeds)).uniform(-5, 5, length)
    dataset = with_fields_at(grid, association, {"f": values})
    result = BiasAdd("f", bias, backend="cpu")(dataset).fields(association)["f_biased"]
    assert result.dtype == values.dtype and result.shape == values.shape
    np.testing.assert_array_equal(result, reference(values, bias))


def test_bias_per_component():
    values = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert bias_add(None, values, bias=[10, 100]).tolist() == [[10, 101], [12, 103], [14, 105]]


def test_bias_longer_than_a_tuple_wraps_along_the_flat_axis():
    values = np.zeros((4, 2))
    assert bias_add(None, values, bias=[1, 2, 3, 4]).ravel().tolist() == [1, 2, 3, 4] * 2


def test_bias_is_cast_to_the_field_dtype():
    result = bias_add(None, np.array([1, 2], np.int16), bias=np.array([1.9]))
    assert result.dtype == np.int16 and result.tolist() == [2, 3]


def test_non_contiguous_field_and_out():
    values = np.arange(12.0).reshape(3, 4)[:, ::2]
    out = np.empty((3, 2))
    assert bias_add(None, values, bias=[1, -1], out=out) is out
    np.testing.assert_array_equal(out, reference(values, [1, -1]))


def test_input_is_not_modified():
    grid = daxpy.UniformGrid(dims=(3,), point_data={"t": np.zeros(3)})
    BiasAdd("t", [1.0], result="t", backend="cpu")(grid)
    assert grid.point_data["t"].tolist() == [0.0, 0.0, 0.0]


def test_bias_that_does_not_divide_the_values_raises():
    with pytest.raises(ArgumentError, match=r"bias has 4 entries.*6 values \(shape \(3, 2\)\)"):
        bias_add(None, np.zeros((3, 2)), bias=[1, 2, 3, 4])


def test_bias_of_wrong_shape_raises():
    with pytest.raises(ArgumentError, match=r"non-empty 1-D array, got shape \(2, 2\)"):
        BiasAdd("t", [[1, 2], [3, 4]])


def test_empty_bias_raises():
    with pytest.raises(ArgumentError, match=r"non-empty 1-D array, got shape \(0,\)"):
        BiasAdd("t", [])


def test_non_numeric_bias_raises():
    with pytest.raises(ArgumentError, match="bias must hold real numbers"):
        BiasAdd("t", ["a"])


def test_wrong_out_raises():
    with pytest.raises(ArgumentError, match="out must be"):
        bias_add(None, np.zeros(4), bias=[1.0], out=np.zeros(4, np.float32))


def test_unknown_field_raises():
    grid = daxpy.UniformGrid(dims=(2,), point_data={"t": np.zeros(2)})
    with pytest.raises(UnknownFieldError, match="no field 'u'"):
        BiasAdd("u", [1.0], backend="cpu")(grid)
