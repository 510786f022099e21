"""The gradient of a cell field, at the cells, as vtkGradientFilter computes it: on
structured grids between neighbouring cell centres, on unstructured grids as each
cell's derivative of the field averaged to the points."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.filters import Gradient

from strategies import seeds, structured_grids, unstructured_grids

vtk = pytest.importorskip("vtk")
from vtk.util.numpy_support import vtk_to_numpy  # noqa: E402

_VTK_NAMES = {"Gradient": "Gradients", "Divergence": "Divergence", "Vorticity": "Vorticity",
              "QCriterion": "Q-criterion"}


@settings(max_examples=40, deadline=None)
@given(grid=st.one_of(structured_grids(max_side=5), unstructured_grids()), seed=seeds,
       components=st.sampled_from([1, 3]))
def test_cell_field_gradients_match_vtk(grid, seed, components):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, (grid.n_cells, components) if components > 1 else grid.n_cells)
    grid = grid.with_fields(cell_data={"c": values})
    derived = dict(divergence=True, vorticity=True, qcriterion=True) if components == 3 else {}
    ours = Gradient("c", backend="cpu", **derived)(grid)
    flt = vtk.vtkGradientFilter()
    flt.SetInputData(grid.to_vtk())
    flt.SetInputArrayToProcess(0, 0, 0, 1, "c")
    flt.SetComputeDivergence(components == 3)
    flt.SetComputeVorticity(components == 3)
    flt.SetComputeQCriterion(components == 3)
    flt.Update()
    theirs = flt.GetOutput().GetCellData()
    for name in ["Gradient"] + (list(_VTK_NAMES)[1:] if components == 3 else []):
        assert name in ours.cell_data and name not in ours.point_data
        expected = vtk_to_numpy(theirs.GetArray(_VTK_NAMES[name]))
        np.testing.assert_allclose(ours.cell_data[name].reshape(expected.shape), expected,
                                   rtol=1e-9, atol=1e-9, err_msg=name)


def test_cell_fields_are_differentiated_in_pipelines_too():
    grid = daxpy.UniformGrid(dims=(5, 4, 3), cell_data={"c": np.arange(24.0) ** 1.5})
    pipe = daxpy.pipeline(grid)
    node = pipe.field("c").gradient()
    ran = pipe.run(backend="cpu", outputs=[node]).cell_data[node.name]
    np.testing.assert_array_equal(ran, Gradient("c", backend="cpu")(grid).cell_data["Gradient"])
