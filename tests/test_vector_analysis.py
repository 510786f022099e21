"""Divergence, vorticity and Q-criterion: against vtkGradientFilter and a NumPy reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

vtk = pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.errors import FieldError  # noqa: E402
from daxpy.filters import Gradient  # noqa: E402
from daxpy.io.interop import from_vtk, to_vtk  # noqa: E402
from daxpy.worklets.vector_analysis import divergence, qcriterion, vorticity  # noqa: E402

from strategies import any_grids, field_arrays, mixed_grid_all_shapes  # noqa: E402


def reference(gradient):
    """Divergence, vorticity, Q from the 3x3 velocity gradient tensor, in float64."""
    tensor = gradient.astype(np.float64).reshape(-1, 3, 3)  # tensor[n, i, j] = du_i/dx_j
    div = np.trace(tensor, axis1=1, axis2=2)
    curl = np.stack([tensor[:, 2, 1] - tensor[:, 1, 2], tensor[:, 0, 2] - tensor[:, 2, 0],
                     tensor[:, 1, 0] - tensor[:, 0, 1]], axis=1)
    strain = 0.5 * (tensor + tensor.transpose(0, 2, 1))
    spin = 0.5 * (tensor - tensor.transpose(0, 2, 1))
    q = 0.5 * (np.sum(spin ** 2, axis=(1, 2)) - np.sum(strain ** 2, axis=(1, 2)))
    return div, curl, q


def vtk_derived(grid, values):
    """vtkGradientFilter's divergence, vorticity and Q-criterion at the points."""
    algorithm = vtk.vtkGradientFilter()
    algorithm.SetInputData(to_vtk(grid.with_fields(point_data={"v": values})))
    algorithm.SetInputScalars(vtk.vtkDataObject.FIELD_ASSOCIATION_POINTS, "v")
    algorithm.ComputeDivergenceOn()
    algorithm.ComputeVorticityOn()
    algorithm.ComputeQCriterionOn()
    algorithm.Update()
    out = from_vtk(algorithm.GetOutput()).point_data
    return out["Divergence"], out["Vorticity"], out["Q-criterion"]


def tolerance(dtype):
    return 1e-4 if dtype == np.float32 else 1e-9


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_worklets_match_numpy_reference(data):
    n = data.draw(st.integers(1, 50))
    gradient = data.draw(field_arrays(n, 9))
    rtol = tolerance(gradient.dtype)
    div, curl, q = reference(gradient)
    for function, expected in ((divergence, div), (vorticity, curl), (qcriterion, q)):
        result = function(None, gradient)
        assert result.dtype == gradient.dtype
        assert result.shape == expected.shape
        np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol * 100)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_point_filter_matches_vtk(data):
    grid = data.draw(any_grids())
    values = data.draw(field_arrays(grid.n_points, 3))
    out = Gradient("v", divergence=True, vorticity=True, qcriterion=True,
                   backend="cpu")(grid.with_fields(point_data={"v": values})).point_data
    rtol = tolerance(values.dtype)
    for name, expected in zip(("Divergence", "Vorticity", "QCriterion"), vtk_derived(grid, values)):
        assert out[name].dtype == values.dtype
        scale = max(float(np.abs(expected).max(initial=0.0)), 1.0)
        np.testing.assert_allclose(out[name], expected, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cell_filter_derives_from_cell_gradient(dtype):
    grid = mixed_grid_all_shapes()
    values = np.random.default_rng(0).uniform(-1, 1, (grid.n_points, 3)).astype(dtype)
    out = Gradient("v", kind="cell", divergence="d", vorticity=True, qcriterion="q",
                   backend="cpu")(grid.with_fields(point_data={"v": values})).cell_data
    expected = reference(out["Gradient"])
    for name, want in zip(("d", "Vorticity", "q"), expected):
        assert out[name].shape == want.shape
        np.testing.assert_allclose(out[name], want, rtol=tolerance(dtype), atol=tolerance(dtype))


def test_solid_body_rotation():
    grid = daxpy.UniformGrid(dims=(3, 3, 3))
    x, y, _ = grid.points().T
    velocity = np.stack([-y, x, np.zeros_like(x)], axis=1)
    out = Gradient("v", divergence=True, vorticity=True, qcriterion=True, backend="cpu")(
        grid.with_fields(point_data={"v": velocity})).point_data
    np.testing.assert_allclose(out["Divergence"], 0, atol=1e-15)
    np.testing.assert_allclose(out["Vorticity"], np.tile([0, 0, 2.0], (27, 1)))
    np.testing.assert_allclose(out["QCriterion"], 1.0)


@pytest.mark.parametrize("option", ["divergence", "vorticity", "qcriterion"])
def test_filter_needs_three_components(option):
    grid = daxpy.UniformGrid(dims=(2, 2), point_data={"t": np.zeros((4, 2))})
    with pytest.raises(FieldError, match=f"{option} needs a 3-component field; field 't' has 2"):
        Gradient("t", backend="cpu", **{option: True})(grid)


@pytest.mark.parametrize("function", [divergence, vorticity, qcriterion])
def test_worklets_reject_other_shapes(function):
    with pytest.raises(FieldError, match=r"gradient of 'u' must be the gradient of a "
                                         r"3-component field, shape \(n, 9\); got shape \(4, 3\)"):
        function(None, np.zeros((4, 3)), field_name="gradient of 'u'")
    with pytest.raises(FieldError, match="must be float32 or float64, got int64"):
        function(None, np.zeros((4, 9), dtype=np.int64))


def test_worklets_are_registered_for_any_association():
    grid = daxpy.UniformGrid(dims=(2, 2))
    gradient = np.arange(9.0)[None].repeat(grid.n_cells, axis=0)
    result = daxpy.engine.dispatch.execute("divergence", grid, gradient, "cells", backend="cpu")
    assert result.tolist() == [12.0]
