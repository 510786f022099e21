"""No silent wrong answer from the worklets' numerics, checked against VTK.

- The NaN rule: a NaN (Inf) value gives NaN (a non-finite value) at exactly the
  gradient and average outputs where VTK gives one, on every grid family and
  cell shape, with NaNs drawn at random places.
- Extreme magnitudes: gradients at coordinate scales 1e-20..1e20 with float32
  and float64 points, and gradients and averages of float32 values near
  float32's maximum, agree with VTK (which computes in double).

VTK refuses to invert the Jacobian of a cell smaller than about 1e-12 and then
writes 0: at tiny scales the reference is VTK's answer for the same grid
scaled by a power of two (exact in binary), scaled back. vtkCellDataToPointData
clamps its results to +-1e38 (VTK_FLOAT_MAX), Inf included: the average's
reference is VTK's average of the values scaled by a power of two, with the
Infs placed where VTK's stencil puts them (see vtk_average_exact).
VTK's cell derivatives are doubles: they are compared in the field's dtype.
The CUDA backend is checked against the CPU on the same cases in
test_no_wrong_answer_numerics_gpu.py (which needs no VTK).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

vtk = pytest.importorskip("vtk")

from daxpy.engine.dispatch import execute  # noqa: E402

from averaging_reference import vtk_average  # noqa: E402
from numerics_cases import (AVERAGES, FLOAT32_MAX, hexahedra, near_float32_max,  # noqa: E402
                            scaled, size_of as _size, with_specials as _with_specials)
from strategies import any_grids, field_arrays  # noqa: E402
from test_gradient import assert_close, vtk_cell_gradient, vtk_point_gradient  # noqa: E402

GRADIENTS = {"point_gradient": vtk_point_gradient, "cell_gradient": vtk_cell_gradient}

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf - inf, 0 * inf


def vtk_gradient_at_any_scale(name, grid, values):
    """VTK's gradient of ``grid``, computed on the grid scaled by a power of two
    that brings its coordinates near 1 (exact), then scaled back (exact)."""
    extent = float(np.ptp(np.asarray(grid.points(), np.float64), axis=0).max(initial=0.0))
    power = -int(np.floor(np.log2(extent))) if extent > 0 else 0
    factor = 2.0 ** power
    reference = GRADIENTS[name](scaled(grid, factor), values)
    return (reference.astype(np.float64) * factor).astype(reference.dtype)


def vtk_average_exact(name, grid, values):
    """VTK's average without VTK's clamp to +-1e38 (see the module's docstring)."""
    shrink = 2.0 ** -8
    finite = np.where(np.isinf(values), 0, values * shrink).astype(values.dtype)
    reference = vtk_average(name, grid, finite).astype(np.float64) / shrink
    for sign in (1, -1):
        reached = vtk_average(name, grid, (values == sign * np.inf).astype(np.float64)) > 0
        reference[reached] += sign * np.inf  # +inf and -inf give NaN, as a sum does
    return reference.astype(values.dtype)


def check_special_values(name, grid, values, expected, nans=True):
    """Non-finite values where VTK has them (NaNs too, with ``nans``); finite
    values close to VTK's, in the field's dtype."""
    got = execute(name, grid, values, "cells" if name == "cell_to_point" else "points",
                  backend="cpu")
    expected = expected.astype(values.dtype)
    assert got.dtype == values.dtype and got.shape == expected.shape
    if nans:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=f"{name}: NaN")
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(expected),
                                  err_msg=f"{name}: non-finite values")
    finite = np.isfinite(expected)
    assert_close(got[finite], expected[finite], values.dtype)
    return got


# ------------------------------------------------------------------ NaN rule
def special_draws(names):
    """Parametrize a test over ``names`` and over NaN and Inf, on 30 drawn examples."""
    def mark(test):
        drawn = settings(max_examples=30, deadline=None)(given(data=st.data())(test))
        return pytest.mark.parametrize("special", [np.nan, np.inf])(
            pytest.mark.parametrize("name", sorted(names))(drawn))
    return mark


@special_draws(GRADIENTS)
def test_gradient_nans_and_infs_are_vtks(name, special, data):
    grid = data.draw(any_grids())
    values = _with_specials(data.draw(field_arrays(grid.n_points)), data, special)
    # Where VTK's Inf times a zero of its inverse Jacobian leaves some outputs
    # infinite and others NaN, the cell derivatives here are all NaN.
    check_special_values(name, grid, values, GRADIENTS[name](grid, values),
                         nans=bool(np.isnan(special)))


@special_draws(AVERAGES)
def test_average_nans_and_infs_are_vtks(name, special, data):
    grid = data.draw(any_grids())
    values = _with_specials(data.draw(field_arrays(_size(grid, AVERAGES[name]))), data, special)
    expected = vtk_average_exact(name, grid, values)
    got = check_special_values(name, grid, values, expected)
    infinite = np.isinf(got)
    np.testing.assert_array_equal(np.sign(got[infinite]), np.sign(expected[infinite]))


def test_one_nan_point_reaches_all_27_points_of_its_8_hexahedra():
    grid = hexahedra()
    values = np.linspace(-1, 1, grid.n_points)
    values[21] = np.nan  # an inner point: 8 cells, 27 points
    got = execute("point_gradient", grid, values, "points", backend="cpu")
    assert np.isnan(got).any(axis=1).sum() == 27
    np.testing.assert_array_equal(np.isnan(got), np.isnan(vtk_point_gradient(grid, values)))


# ------------------------------------------------------- extreme magnitudes
@pytest.mark.parametrize("name", sorted(GRADIENTS))
@settings(max_examples=40, deadline=None)
@given(data=st.data(), exponent=st.integers(-20, 20),
       points=st.sampled_from([np.float32, np.float64]))
def test_gradients_match_vtk_at_coordinate_scales_1e_minus20_to_1e20(name, data, exponent,
                                                                     points):
    grid = scaled(data.draw(any_grids()), 10.0 ** exponent, points)
    values = data.draw(field_arrays(grid.n_points))
    got = execute(name, grid, values, "points", backend="cpu")
    expected = vtk_gradient_at_any_scale(name, grid, values)
    assert np.isfinite(got).all()
    assert_close(got / 10.0 ** -exponent, expected / 10.0 ** -exponent, values.dtype)


@pytest.mark.parametrize("scale", [1e13, 1e20, 1e-13, 1e-20])
def test_float32_hexahedra_at_the_issues_scales_have_the_exact_linear_gradient(scale):
    grid = hexahedra(scale=scale, dtype=np.float32)
    x = np.asarray(grid.points(), np.float64)
    values = (x @ [1.0, -2.0, 0.5] / scale).astype(np.float32)
    got = execute("point_gradient", grid, values, "points", backend="cpu")
    np.testing.assert_allclose(got, np.tile([1.0, -2.0, 0.5], (grid.n_points, 1)) / scale,
                               rtol=1e-4)
    if scale > 1:  # VTK inverts these Jacobians itself
        assert_close(got * scale, vtk_point_gradient(grid, values) * scale, np.float32)


@pytest.mark.parametrize("name", sorted(AVERAGES))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_float32_averages_near_the_maximum_match_vtk(name, data):
    grid = data.draw(any_grids())
    values = near_float32_max(data, _size(grid, AVERAGES[name]))
    expected = vtk_average_exact(name, grid, values)
    assert np.isfinite(expected).all()
    got = execute(name, grid, values, AVERAGES[name], backend="cpu")
    np.testing.assert_allclose(got, expected, rtol=2e-6)


def test_float32_max_averages_to_itself():
    grid = hexahedra()
    for name, association in AVERAGES.items():
        values = np.full(_size(grid, association), FLOAT32_MAX, np.float32)
        got = execute(name, grid, values, association, backend="cpu")
        np.testing.assert_array_equal(got, vtk_average_exact(name, grid, values))
        assert (got == FLOAT32_MAX).all()


@pytest.mark.parametrize("name", sorted(GRADIENTS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_float32_gradients_of_values_near_the_maximum_match_vtk(name, data):
    # Differences overflow float32; cells 100 times larger keep the gradients
    # themselves well inside it (where a rounding could tip one over).
    grid = scaled(data.draw(any_grids()), 100.0)
    values = near_float32_max(data, grid.n_points)
    check_special_values(name, grid, values, GRADIENTS[name](grid, values))
