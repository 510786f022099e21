"""The gradient on PolyData (vertices, lines, triangles, quads) against
vtkGradientFilter, point and cell fields, on random surfaces; other cells refused."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.errors import ArgumentError
from daxpy.filters import Gradient

from strategies import seeds, simple_surfaces

vtk = pytest.importorskip("vtk")
from vtk.util.numpy_support import vtk_to_numpy  # noqa: E402

_VTK_NAMES = {"Gradient": "Gradients", "Divergence": "Divergence", "Vorticity": "Vorticity",
              "QCriterion": "Q-criterion"}


@settings(max_examples=60, deadline=None)
@given(surface=simple_surfaces(), seed=seeds, association=st.sampled_from(["points", "cells"]),
       components=st.sampled_from([1, 3]))
def test_surface_gradients_match_vtk(surface, seed, association, components):
    rng = np.random.default_rng(seed)
    n = surface.n_points if association == "points" else surface.n_cells
    values = rng.uniform(-1, 1, (n, components) if components > 1 else n)
    surface = surface.with_fields(**{f"{association[:-1]}_data": {"f": values}})
    derived = dict(divergence=True, vorticity=True, qcriterion=True) if components == 3 else {}
    ours = Gradient("f", backend="cpu", **derived)(surface)
    assert isinstance(ours, daxpy.PolyData)
    if surface.n_cells == 0:  # VTK writes no gradient array then; daxpy's is zero
        assert not np.asarray(ours.point_data["Gradient"] if association == "points"
                              else ours.cell_data["Gradient"]).any()
        return
    flt = vtk.vtkGradientFilter()
    flt.SetInputData(surface.to_vtk())
    flt.SetInputArrayToProcess(0, 0, 0, 0 if association == "points" else 1, "f")
    flt.SetComputeDivergence(components == 3)
    flt.SetComputeVorticity(components == 3)
    flt.SetComputeQCriterion(components == 3)
    flt.Update()
    out = flt.GetOutput()
    theirs = out.GetPointData() if association == "points" else out.GetCellData()
    mine = ours.point_data if association == "points" else ours.cell_data
    for name in ["Gradient"] + (list(_VTK_NAMES)[1:] if components == 3 else []):
        expected = vtk_to_numpy(theirs.GetArray(_VTK_NAMES[name]))
        np.testing.assert_allclose(np.asarray(mine[name]).reshape(expected.shape), expected,
                                   rtol=1e-9, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("cells, what", [
    ({"polys": ([0, 5], [0, 1, 2, 3, 4])}, "polys of 5 points"),
    ({"lines": ([0, 3], [0, 1, 2])}, "lines of 3 points"),
    ({"strips": ([0, 4], [0, 1, 2, 3])}, "strips of 4 points"),
    ({"polys": ([0, 3], [0, 1, 1])}, "polys that repeat a point"),
])
def test_cells_no_unstructured_grid_holds_are_refused_by_name(cells, what):
    surface = daxpy.PolyData(np.random.default_rng(1).random((5, 3)), **cells,
                             point_data={"f": np.arange(5.0)})
    with pytest.raises(ArgumentError, match=what):
        Gradient("f", backend="cpu")(surface)
