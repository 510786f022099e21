"""Magnitude against NumPy's norm on every grid family and association, and its errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.errors import ArgumentError, FieldError, UnknownFieldError
from daxpy.filters import Magnitude
from daxpy.worklets.magnitude import magnitude

from strategies import field_arrays, located_grids, with_fields_at


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_filter_on_any_grid_and_association_matches_numpy(data):
    grid, association, size = data.draw(located_grids())
    values = data.draw(field_arrays(size))
    result = Magnitude("v", backend="cpu")(with_fields_at(grid, association, {"v": values}))
    norm = result.fields(association)["v_magnitude"]
    expected = np.linalg.norm(values.reshape(size, -1).astype(np.float64), axis=1)
    assert norm.dtype == values.dtype and norm.shape == (size,)
    np.testing.assert_allclose(norm, expected, rtol=2e-6 if values.dtype == np.float32 else 1e-14)


def test_one_component_gives_absolute_value():
    assert magnitude(None, np.array([[-2.0], [3.0]])).tolist() == [2.0, 3.0]


def test_integer_field_gives_float64():
    result = magnitude(None, np.array([[3, 4], [-128, 0]], dtype=np.int8))
    assert result.dtype == np.float64 and result.tolist() == [5.0, 128.0]


def test_out_is_filled_and_returned():
    out = np.empty(1, np.float32)
    assert magnitude(None, np.array([[1, 2, 2]], np.float32), out=out) is out
    assert out.tolist() == [3.0]


def test_wrong_out_raises():
    with pytest.raises(ArgumentError, match=r"out must be a C-contiguous float32 array of shape"):
        magnitude(None, np.zeros((2, 3), np.float32), out=np.zeros((2, 3), np.float32))


def test_field_of_wrong_rank_raises():
    with pytest.raises(FieldError, match=r"shape \(n,\) or \(n, components\), got \(2, 2, 2\)"):
        magnitude(None, np.zeros((2, 2, 2)))


def test_default_name_and_association_follow_the_input():
    grid = daxpy.UniformGrid(dims=(2, 2), cell_data={"c": np.array([[6.0, 8.0]])})
    result = Magnitude("c", backend="cpu")(grid)
    assert result.cell_data["c_magnitude"].tolist() == [10.0]
    assert "c_magnitude" not in grid.cell_data


def test_unknown_field_raises():
    grid = daxpy.UniformGrid(dims=(2,), point_data={"t": np.zeros(2)})
    with pytest.raises(UnknownFieldError, match="no point field 'u'"):
        Magnitude("u", association="points", backend="cpu")(grid)
