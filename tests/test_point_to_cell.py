"""Point-to-cell average against vtkPointDataToCellData on every grid family."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

vtk = pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.celltypes import HEXAHEDRON, TETRA  # noqa: E402
from daxpy.errors import ArgumentError, FieldError, UnknownFieldError  # noqa: E402
from daxpy.filters import PointToCell  # noqa: E402
from daxpy.interop import from_vtk, to_vtk  # noqa: E402
from daxpy.worklets import _averaging, point_to_cell  # noqa: E402
from daxpy.worklets.point_to_cell import (corner_rows, point_to_cell_structured,  # noqa: E402
                                          point_to_cell_unstructured)

from strategies import (field_arrays, mixed_grid_all_shapes, structured_grids,  # noqa: E402
                        unstructured_grids)

DEGENERATE = [
    daxpy.UniformGrid(dims=(2,)),
    daxpy.UniformGrid(dims=(5,)),
    daxpy.UniformGrid(dims=(1, 4)),
    daxpy.UniformGrid(dims=(1, 1, 3)),
    daxpy.UniformGrid(dims=(4, 1, 3)),
    daxpy.UniformGrid(dims=(2, 2, 2)),
    daxpy.UniformGrid(dims=(1, 1, 1)),
    daxpy.RectilinearGrid([0, 1, 3], None, [0, 2]),
    daxpy.CurvilinearGrid((1, 3, 1), np.array([[0, 0, 0], [0, 1, 0], [0, 3, 1.0]])),
    daxpy.UnstructuredGrid.from_blocks(np.eye(8, 3) + np.arange(8)[:, None],
                                       {HEXAHEDRON: [np.arange(8)]}),
    daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {TETRA: [[0, 1, 2, 3]]}),
    mixed_grid_all_shapes(),
]


def vtk_point_to_cell(grid, values):
    """vtkPointDataToCellData's cell field for ``values`` at the points of ``grid``."""
    algorithm = vtk.vtkPointDataToCellData()
    algorithm.SetInputData(to_vtk(grid.with_fields(point_data={"f": values})))
    algorithm.Update()
    return from_vtk(algorithm.GetOutput()).cell_data["f"]


def assert_matches_vtk(grid, values):
    result = daxpy.dispatch.execute("point_to_cell", grid, values, "points", backend="cpu")
    expected = vtk_point_to_cell(grid, values)
    assert result.dtype == values.dtype
    assert result.shape == (grid.n_cells,) + values.shape[1:]
    tol = 2e-6 if values.dtype == np.float32 else 1e-13
    np.testing.assert_allclose(result, expected, rtol=tol, atol=tol * 10)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_structured_grids_match_vtk(data):
    grid = data.draw(structured_grids())
    assert_matches_vtk(grid, data.draw(field_arrays(grid.n_points)))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_unstructured_grids_match_vtk(data):
    grid = data.draw(unstructured_grids())
    assert_matches_vtk(grid, data.draw(field_arrays(grid.n_points)))


@pytest.mark.parametrize("grid", DEGENERATE, ids=lambda g: f"{g.topology_name}-{g.n_points}")
@pytest.mark.parametrize("ncomp", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_degenerate_grids_match_vtk(grid, ncomp, dtype):
    rng = np.random.default_rng(ncomp)
    shape = (grid.n_points,) if ncomp == 1 else (grid.n_points, ncomp)
    assert_matches_vtk(grid, rng.uniform(-10, 10, shape).astype(dtype))


@pytest.mark.parametrize("dims", [(7, 5, 9), (9, 6), (11,)])
def test_one_plane_slabs_on_several_threads_match_vtk(monkeypatch, dims):
    monkeypatch.setattr(_averaging, "SLAB_BYTES", 1)
    monkeypatch.setattr(_averaging, "THREADS", 3)
    grid = daxpy.UniformGrid(dims=dims)
    values = np.random.default_rng(0).uniform(-1, 1, (grid.n_points, 2))
    assert_matches_vtk(grid, values)


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_small_cell_blocks_on_several_threads_match_vtk(data):
    grid = data.draw(unstructured_grids(max_side=6))
    values = data.draw(field_arrays(grid.n_points))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(point_to_cell, "CELL_BLOCK", 5)
        patch.setattr(_averaging, "THREADS", 3)
        assert_matches_vtk(grid, values)


def test_corner_ids_are_cached_corner_major_and_narrow():
    grid = mixed_grid_all_shapes()
    for block in grid.cell_blocks().values():
        rows = corner_rows(grid, block)
        assert rows.dtype == np.int32 and rows.flags.c_contiguous
        np.testing.assert_array_equal(rows, block.corners.T)
        assert corner_rows(grid, block) is rows


def test_grid_without_cells_gives_an_empty_field():
    grid = daxpy.UnstructuredGrid(np.eye(3), np.zeros(0, np.int64), [0], np.zeros(0, np.uint8))
    assert point_to_cell_unstructured(grid, np.ones((3, 2))).shape == (0, 2)


def test_integer_field_averages_in_float64():
    grid = daxpy.UniformGrid(dims=(3, 2))
    result = point_to_cell_structured(grid, np.array([0, 1, 2, 3, 4, 6], dtype=np.int16))
    assert result.dtype == np.float64
    assert result.tolist() == [2.0, 3.25]
    mixed = mixed_grid_all_shapes()
    ints = np.arange(mixed.n_points, dtype=np.int32)
    np.testing.assert_allclose(point_to_cell_unstructured(mixed, ints),
                               vtk_point_to_cell(mixed, ints.astype(np.float64)))


@pytest.mark.parametrize("grid", [daxpy.UniformGrid(dims=(3, 3)), mixed_grid_all_shapes()],
                         ids=["structured", "unstructured"])
def test_out_is_filled_and_returned(grid):
    values = np.arange(grid.n_points, dtype=np.float32)
    out = np.full(grid.n_cells, np.nan, dtype=np.float32)
    impl = daxpy.worklet.get_worklet("point_to_cell").numpy_impl(grid.family)
    assert impl(grid, values, out=out) is out
    np.testing.assert_allclose(out, vtk_point_to_cell(grid, values), rtol=1e-6)


def test_out_of_wrong_shape_raises():
    grid = daxpy.UniformGrid(dims=(3, 3))
    with pytest.raises(ArgumentError, match="out must be"):
        point_to_cell_structured(grid, np.zeros(9), out=np.zeros(3))


@pytest.mark.parametrize("impl, grid", [(point_to_cell_structured, daxpy.UniformGrid(dims=(3,))),
                                        (point_to_cell_unstructured, mixed_grid_all_shapes())],
                         ids=["structured", "unstructured"])
def test_values_of_wrong_size_raise(impl, grid):
    with pytest.raises(FieldError, match=f"for the {grid.n_points} points"):
        impl(grid, np.zeros(grid.n_points + 1))


def test_filter_writes_cell_field_of_same_name_and_keeps_input():
    values = np.arange(8.0).reshape(4, 2)
    grid = daxpy.UniformGrid(dims=(2, 2), point_data={"v": values})
    result = PointToCell("v", backend="cpu")(grid)
    np.testing.assert_allclose(result.cell_data["v"], [[3.0, 4.0]])
    assert "v" not in grid.cell_data
    assert result.point_data["v"] is values


def test_filter_result_name():
    grid = daxpy.UniformGrid(dims=(2,), point_data={"t": np.array([1.0, 2.0])})
    assert PointToCell("t", result="tc", backend="cpu")(grid).cell_data["tc"].tolist() == [1.5]


def test_filter_rejects_cell_association():
    with pytest.raises(FieldError, match="PointToCell reads point fields.*'cells'"):
        PointToCell("t", association="cells")


def test_filter_reports_missing_point_field():
    grid = daxpy.UniformGrid(dims=(2, 2), cell_data={"c": np.ones(1)})
    with pytest.raises(UnknownFieldError, match="no point field 'c'"):
        PointToCell("c", backend="cpu")(grid)
