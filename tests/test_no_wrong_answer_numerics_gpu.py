"""No silent wrong answer from the CUDA kernels' numerics: CUDA gives the CPU
backend's answers (the CPU's are checked against VTK in
test_no_wrong_answer_numerics.py) where float's range is not enough.

- The NaN rule on every grid family: a NaN (Inf) value gives NaN (a
  non-finite value) at exactly the outputs where the CPU has one.
- Coordinate scales 1e-20..1e20 with float32 points (a float Jacobian
  determinant, a size cubed, leaves float's range), on unstructured grids and
  curvilinear ones.
- float32 values near float32's maximum, whose float sums and differences
  overflow, in averages and gradients on every grid family.

The kernels compute in float and redo the rare case (_wide.cuh); these cases
are that rare case. No VTK needed: the GPU machine has none.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.engine.dispatch import execute

from numerics_cases import (AVERAGES, FLOAT32_MAX, hexahedra, near_float32_max, scaled,
                            size_of, with_specials)
from strategies import (_lattice_points, curvilinear_grids, field_arrays, rectilinear_grids, uniform_grids,
                        unstructured_grids)

pytestmark = [pytest.mark.gpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

GRADIENTS = ("cell_gradient", "point_gradient")
DIMS = (6, 5, 4)
BOXES = {"uniform": lambda: daxpy.UniformGrid(dims=DIMS),
         "rectilinear": lambda: daxpy.RectilinearGrid(*(np.cumsum(np.arange(1.0, n + 1))
                                                        for n in DIMS)),
         "curvilinear": lambda: daxpy.CurvilinearGrid(
             DIMS, _lattice_points(np.random.default_rng(0), DIMS, 0.04))}
FAMILIES = {"uniform": uniform_grids, "rectilinear": rectilinear_grids,
            "curvilinear": curvilinear_grids, "unstructured": unstructured_grids}


def assert_close(got, expected, dtype):
    """Close in ``dtype``'s precision, relative to the largest expected value."""
    rtol = 1e-4 if dtype == np.float32 else 1e-9
    scale = float(np.abs(expected).max(initial=0.0))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale)


def cuda_matches_cpu(name, grid, values, association="points", nans=True):
    """Non-finite values where the CPU has them (NaNs too, with ``nans``), the
    finite ones close. An Inf corner value gives NaN cell derivatives on the
    CPU, NaN or Inf on CUDA (as VTK's full product with the inverse Jacobian)."""
    cupy = pytest.importorskip("cupy")
    expected = execute(name, grid, values, association, backend="cpu")
    got = cupy.asnumpy(execute(name, grid, values, association, backend="cuda"))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if nans:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=f"{name}: NaN")
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(expected), err_msg=name)
    finite = np.isfinite(expected)
    assert_close(got[finite], expected[finite], values.dtype)
    return got


def _association(name):
    return AVERAGES.get(name, "points")


# ------------------------------------------------------------------ NaN rule
@pytest.mark.parametrize("special", [np.nan, np.inf])
@pytest.mark.parametrize("name", GRADIENTS + tuple(AVERAGES))
@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_cuda_nans_and_infs_are_the_cpus_on_every_grid_family(family, name, special, data):
    grid = data.draw(FAMILIES[family]())
    association = _association(name)
    values = with_specials(data.draw(field_arrays(size_of(grid, association))), data, special)
    cuda_matches_cpu(name, grid, values, association,
                     nans=bool(np.isnan(special)) or name in AVERAGES)


# ------------------------------------------------------- extreme magnitudes
@pytest.mark.parametrize("family", ["curvilinear", "unstructured"])
@pytest.mark.parametrize("name", GRADIENTS)
@settings(max_examples=30, deadline=None)
@given(data=st.data(), exponent=st.integers(-20, 20),
       points=st.sampled_from([np.float32, np.float64]))
def test_cuda_gradients_at_coordinate_scales_are_the_cpus(family, name, data, exponent, points):
    grid = scaled(data.draw(FAMILIES[family]()), 10.0 ** exponent, points)
    values = data.draw(field_arrays(grid.n_points, dtype=data.draw(st.sampled_from(
        [np.float32, np.dtype(points).type]))))
    got = cuda_matches_cpu(name, grid, values)
    assert np.isfinite(got).all()


@pytest.mark.parametrize("scale", [1e-20, 1e-13, 1e-7, 1e7, 1e13, 1e20])
@pytest.mark.parametrize("name", GRADIENTS)
def test_cuda_float32_hexahedra_have_the_exact_linear_gradient_at_any_scale(name, scale):
    grid = hexahedra(scale=scale, dtype=np.float32)
    x = np.asarray(grid.points(), np.float64)
    values = (x @ [1.0, -2.0, 0.5] / scale).astype(np.float32)
    got = cuda_matches_cpu(name, grid, values)
    n = grid.n_points if name == "point_gradient" else grid.n_cells
    np.testing.assert_allclose(got, np.tile([1.0, -2.0, 0.5], (n, 1)) / scale, rtol=1e-4)


@pytest.mark.parametrize("name", GRADIENTS + tuple(AVERAGES))
@pytest.mark.parametrize("family", sorted(FAMILIES))
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_cuda_float32_values_near_the_maximum_are_the_cpus(family, name, data):
    grid = data.draw(FAMILIES[family]())
    if name in GRADIENTS:
        # Cells 100 times larger keep the gradients themselves inside float's
        # range (where one rounding could tip a value over).
        grid = scaled(grid, 100.0, np.float32)
    association = _association(name)
    cuda_matches_cpu(name, grid, near_float32_max(data, size_of(grid, association)), association)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("family", sorted(BOXES))
@pytest.mark.parametrize("name", GRADIENTS)
def test_cuda_structured_differences_that_overflow_float_are_the_cpus(name, family, axis):
    # +-0.9 max alternating along one axis: the one-sided differences at its
    # borders and every cell's edge differences along it overflow float.
    grid = scaled(BOXES[family](), 100.0, np.float32)
    index = np.indices(grid.dims)[axis].ravel(order="F")
    values = np.where(index % 2 == 0, 0.9, -0.9).astype(np.float32) * np.float32(FLOAT32_MAX)
    got = cuda_matches_cpu(name, grid, values)
    assert np.isfinite(got).all() and (np.abs(got) > 1e36).any()


def test_cuda_float32_max_averages_to_itself():
    grid = hexahedra()
    for name, association in AVERAGES.items():
        values = np.full(size_of(grid, association), FLOAT32_MAX, np.float32)
        assert (cuda_matches_cpu(name, grid, values, association) == FLOAT32_MAX).all()
