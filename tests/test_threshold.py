"""Threshold against vtkThreshold on random grids and fields; errors (CPU == CUDA: test_geometry_gpu.py)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.errors import ArgumentError, FieldError
from daxpy.filters import Threshold

from strategies import seeds, simple_surfaces, structured_grids, unstructured_grids
from surface_measure import surface_measure

vtk = pytest.importorskip("vtk")
from vtk.util.numpy_support import vtk_to_numpy  # noqa: E402

_FUNCTIONS = {"between": "THRESHOLD_BETWEEN", "lower": "THRESHOLD_LOWER",
              "upper": "THRESHOLD_UPPER", "outside": "THRESHOLD_BETWEEN"}


def _vtk_threshold(grid, name, association, lower, upper, method, all_scalars, continuous,
                   component):
    flt = vtk.vtkThreshold()
    data = grid.to_vtk()
    if grid.family == "polydata":
        # As an unstructured grid of the same cells: VTK 9.7's vtkThreshold, passing a
        # surface of vertices and polygons through whole, leaves an offset of its
        # output uninitialized (seen: offsets [0, 3, <garbage>, 7] for 3 cells).
        append = vtk.vtkAppendFilter()
        append.SetInputData(data)
        append.Update()
        data = append.GetOutput()
    flt.SetInputData(data)
    where = 0 if association == "points" else 1
    flt.SetInputArrayToProcess(0, 0, 0, where, name)
    flt.SetLowerThreshold(lower)
    flt.SetUpperThreshold(upper)
    flt.SetThresholdFunction(getattr(vtk.vtkThreshold, _FUNCTIONS[method]))
    flt.SetInvert(method == "outside")
    flt.SetAllScalars(all_scalars)
    flt.SetUseContinuousCellRange(continuous)
    if component == "any":
        flt.SetComponentModeToUseAny()
    elif component == "all":
        flt.SetComponentModeToUseAll()
    else:
        flt.SetComponentModeToUseSelected()
        flt.SetSelectedComponent(3 if component == "magnitude" else component)
    flt.Update()
    # A copy that owns its arrays: the output may share arrays with the input
    # wrapped from daxpy's (zero-copy), which dies with the filter.
    output = vtk.vtkUnstructuredGrid()
    output.DeepCopy(flt.GetOutput())
    return output


def _measure(dataset):
    """Total cell size (volume, area or length) through VTK's cell sizes."""
    sizes = vtk.vtkCellSizeFilter()
    sizes.SetInputData(dataset if hasattr(dataset, "GetNumberOfCells") else dataset.to_vtk())
    sizes.Update()
    data = sizes.GetOutput().GetCellData()
    return sum(float(vtk_to_numpy(data.GetArray(n)).sum()) for n in ("Length", "Area", "Volume"))


@settings(max_examples=40, deadline=None)
@given(grid=st.one_of(structured_grids(max_side=5), unstructured_grids()), seed=seeds,
       association=st.sampled_from(["points", "cells"]),
       method=st.sampled_from(["between", "lower", "upper", "outside"]),
       all_scalars=st.booleans(), continuous=st.booleans(),
       component=st.sampled_from([0, 1, "magnitude", "any", "all"]))
def test_cells_kept_match_vtk_threshold(grid, seed, association, method, all_scalars,
                                        continuous, component):
    rng = np.random.default_rng(seed)
    n = grid.n_points if association == "points" else grid.n_cells
    # VTK's continuous range differs from its documented meaning (see Threshold's
    # notes): compared where both agree, positive values between two thresholds.
    continuous = (continuous and association == "points" and not all_scalars
                  and method in ("between", "outside") and component not in ("magnitude",))
    vector = rng.uniform(0.01 if continuous else -1, 1, (n, 3))
    points, cells = {"w": rng.random(grid.n_points)}, {"c": rng.random(grid.n_cells)}
    (points if association == "points" else cells)["v"] = vector
    grid = grid.with_fields(point_data=points, cell_data=cells)
    lower, upper = np.sort(rng.uniform(-1, 1, 2))
    ours = Threshold("v", lower, upper, method=method, all_scalars=all_scalars,
                     continuous=continuous, component=component, original_ids=True,
                     association=association, backend="cpu")(grid)
    theirs = _vtk_threshold(grid, "v", association, lower, upper, method, all_scalars,
                            continuous, component)
    assert ours.n_cells == theirs.GetNumberOfCells()
    assert ours.n_points == theirs.GetNumberOfPoints()
    np.testing.assert_allclose(_measure(ours), _measure(theirs), rtol=1e-5, atol=1e-12)
    # Fields come along: the same values, VTK's points in first-use order.
    np.testing.assert_array_equal(np.sort(ours.cell_data["c"]),
                                  np.sort(vtk_to_numpy(theirs.GetCellData().GetArray("c")))
                                  if theirs.GetNumberOfCells() else [])
    np.testing.assert_array_equal(np.sort(ours.point_data["w"]),
                                  np.sort(vtk_to_numpy(theirs.GetPointData().GetArray("w")))
                                  if theirs.GetNumberOfPoints() else [])
    kept = ours.cell_data["vtkOriginalCellIds"]
    np.testing.assert_array_equal(ours.cell_data["c"], grid.cell_data["c"][kept])


@settings(max_examples=40, deadline=None)
@given(surface=simple_surfaces(), seed=seeds, association=st.sampled_from(["points", "cells"]),
       method=st.sampled_from(["between", "lower", "upper", "outside"]),
       all_scalars=st.booleans())
def test_polydata_thresholds_match_vtk_threshold(surface, seed, association, method,
                                                 all_scalars):
    # vtkThreshold on a surface: an unstructured grid of its kept cells.
    rng = np.random.default_rng(seed)
    n = surface.n_points if association == "points" else surface.n_cells
    fields = {"s": rng.uniform(-1, 1, n)}
    surface = surface.with_fields(point_data=fields if association == "points" else {},
                                  cell_data=fields if association == "cells" else
                                  {"c": rng.random(surface.n_cells)})
    lower, upper = np.sort(rng.uniform(-1, 1, 2))
    ours = Threshold("s", lower, upper, method=method, all_scalars=all_scalars,
                     association=association, backend="cpu")(surface)
    theirs = _vtk_threshold(surface, "s", association, lower, upper, method, all_scalars,
                            False, 0)
    assert isinstance(ours, daxpy.UnstructuredGrid)
    assert ours.n_cells == theirs.GetNumberOfCells()
    assert ours.n_points == theirs.GetNumberOfPoints()
    np.testing.assert_allclose(surface_measure(ours), surface_measure(theirs), rtol=1e-5,
                               atol=1e-12)
    kept = "s" if association == "cells" else "c"
    np.testing.assert_array_equal(np.sort(ours.cell_data[kept]),
                                  np.sort(vtk_to_numpy(theirs.GetCellData().GetArray(kept)))
                                  if theirs.GetNumberOfCells() else [])


def test_polydata_of_polygons_is_refused_by_name():
    square = daxpy.PolyData(np.eye(5, 3), polys=([0, 5], [0, 1, 2, 3, 4]),
                            point_data={"s": np.arange(5.0)})
    with pytest.raises(ArgumentError, match="Threshold .*polys of 5 points"):
        Threshold("s", 0.0, 10.0)(square)


def test_bad_input_is_refused_clearly():
    grid = daxpy.UniformGrid(dims=(3, 3), point_data={"t": np.arange(9.0)})
    with pytest.raises(ArgumentError, match="above upper"):
        Threshold("t", 2, 1)
    with pytest.raises(ArgumentError, match="needs a finite lower"):
        Threshold("t", upper=1)
    with pytest.raises(ArgumentError, match="method"):
        Threshold("t", 0, 1, method="inside")
    with pytest.raises(FieldError, match="component 2"):
        Threshold("t", 0, 1, component=2, backend="cpu")(grid)
    with pytest.raises(FieldError):
        Threshold("nope", 0, 1, backend="cpu")(grid)
    empty = Threshold("t", 100, 200, backend="cpu")(grid)
    assert empty.n_cells == 0 and empty.n_points == 0


@pytest.mark.parametrize("bounds", [(0.0, 2.0), (3.0, 4.0)])
def test_a_one_point_grid_is_one_vertex_cell_as_in_vtk(bounds):
    grid = daxpy.UniformGrid(dims=(1, 1, 1), point_data={"t": np.array([1.0])})
    ours = Threshold("t", *bounds, backend="cpu")(grid)
    theirs = _vtk_threshold(grid, "t", "points", *bounds, "between", True, False, 0)
    assert (ours.n_cells, ours.n_points) == (theirs.GetNumberOfCells(),
                                             theirs.GetNumberOfPoints())
    assert ours.cell_types.tolist() == [theirs.GetCellType(i)
                                        for i in range(theirs.GetNumberOfCells())]


def test_nan_is_in_no_range():
    values = np.arange(9.0)
    values[4] = np.nan
    grid = daxpy.UniformGrid(dims=(3, 3), point_data={"t": values})
    assert Threshold("t", -1, 100, backend="cpu")(grid).n_cells == 0
    assert Threshold("t", -1, 100, invert=True, backend="cpu")(grid).n_cells == 4


def test_to_device_needs_the_cuda_backend():
    grid = daxpy.UniformGrid(dims=(3, 3), point_data={"s": np.arange(9.0)})
    with pytest.raises(ArgumentError, match="CUDA"):
        Threshold("s", 1.0, 5.0, backend="cpu").execute(grid, to="device")
    with pytest.raises(ArgumentError, match="to must be"):
        Threshold("s", 1.0, 5.0, backend="cpu").execute(grid, to="gpu")
