"""Cell-to-point average against vtkCellDataToPointData on every grid family."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.data.celltypes import HEXAHEDRON, LINE, VERTEX  # noqa: E402
from daxpy.errors import ArgumentError, FieldError, UnknownFieldError  # noqa: E402
from daxpy.filters import CellToPoint  # noqa: E402
from daxpy.worklets import _averaging, cell_to_point  # noqa: E402
from daxpy.worklets.cell_to_point import (cell_to_point_structured,  # noqa: E402
                                          cell_to_point_unstructured, point_cells)

import averaging_reference  # noqa: E402
from averaging_reference import vtk_average  # noqa: E402
from strategies import (field_arrays, mixed_grid_all_shapes, unstructured_grids)


def vtk_cell_to_point(grid, values):
    return vtk_average("cell_to_point", grid, values)


def assert_matches_vtk(grid, values):
    averaging_reference.assert_matches_vtk("cell_to_point", grid, values)


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_small_point_blocks_on_several_threads_match_vtk(data):
    grid = data.draw(unstructured_grids(max_side=6))
    values = data.draw(field_arrays(grid.n_cells))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cell_to_point, "LINKS_BLOCK", 5)
        patch.setattr(_averaging, "THREADS", 3)
        assert_matches_vtk(grid, values)


def test_groups_and_blocks_of_points_on_several_threads_match_vtk(monkeypatch):
    monkeypatch.setattr(cell_to_point, "LINKS_BLOCK", 2)
    monkeypatch.setattr(_averaging, "THREADS", 3)
    # Unused points first, last and between; groups of 1 and 2 cells per point.
    grid = daxpy.UnstructuredGrid.from_blocks(np.eye(10, 3) + np.arange(10)[:, None],
                                              {VERTEX: [[8], [2]], LINE: [[3, 4], [4, 5]]})
    values = np.array([[7.0, 1.0], [2.0, -4.0], [6.0, 0.5], [1.0, 3.0]], dtype=np.float32)
    result = cell_to_point_unstructured(grid, values)
    expected = np.zeros((10, 2), dtype=np.float32)
    expected[[2, 3, 4, 5, 8]] = [[2.0, -4.0], [6.0, 0.5], [3.5, 1.75], [1.0, 3.0], [7.0, 1.0]]
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(result, vtk_cell_to_point(grid, values))


def test_point_cells_are_cached_grouped_ascending_and_narrow():
    grid = mixed_grid_all_shapes()
    groups = point_cells(grid)
    assert point_cells(grid) is groups
    seen = np.concatenate([group.points for group in groups])
    assert sorted(seen.tolist()) == list(range(grid.n_points))
    for group in groups:
        assert group.cells.dtype == np.int32
        assert group.cells.shape == (group.n_cells, group.points.size)
        for point, cells in zip(group.points, group.cells.T):
            using = [c for c in range(grid.n_cells)
                     if point in grid.connectivity[grid.offsets[c]:grid.offsets[c + 1]]]
            assert cells.tolist() == using


def test_points_no_cell_uses_get_zero_as_in_vtk():
    grid = daxpy.UnstructuredGrid.from_blocks(np.eye(5, 3), {VERTEX: [[4]], LINE: [[0, 1]]})
    values = np.array([[5.0, -5.0], [2.0, 4.0]])
    result = cell_to_point_unstructured(grid, values)
    assert result.tolist() == [[2.0, 4.0], [2.0, 4.0], [0.0, 0.0], [0.0, 0.0], [5.0, -5.0]]
    np.testing.assert_array_equal(result, vtk_cell_to_point(grid, values))


def test_grid_without_cells_gives_zeros():
    grid = daxpy.UnstructuredGrid(np.eye(3), np.zeros(0, np.int64), [0], np.zeros(0, np.uint8))
    assert cell_to_point_unstructured(grid, np.zeros((0, 2))).tolist() == [[0.0, 0.0]] * 3


def test_each_cell_counts_once_whatever_its_size():
    grid = daxpy.UnstructuredGrid.from_blocks(
        np.eye(8, 3) + np.arange(8)[:, None], {HEXAHEDRON: [np.arange(8)], VERTEX: [[0]]})
    result = cell_to_point_unstructured(grid, np.array([8.0, 2.0]))
    assert result[0] == 5.0 and result[1] == 8.0


def test_integer_field_averages_in_float64():
    grid = daxpy.UniformGrid(dims=(3, 2))
    result = cell_to_point_structured(grid, np.array([1, 2], dtype=np.int16))
    assert result.dtype == np.float64
    assert result.tolist() == [1.0, 1.5, 2.0, 1.0, 1.5, 2.0]
    mixed = mixed_grid_all_shapes()
    ints = np.arange(mixed.n_cells, dtype=np.int32)
    np.testing.assert_allclose(cell_to_point_unstructured(mixed, ints),
                               vtk_cell_to_point(mixed, ints.astype(np.float64)))


@pytest.mark.parametrize("grid", [daxpy.UniformGrid(dims=(3, 3)), mixed_grid_all_shapes()],
                         ids=["structured", "unstructured"])
def test_out_is_filled_and_returned(grid):
    values = np.arange(grid.n_cells, dtype=np.float32)
    out = np.full(grid.n_points, np.nan, dtype=np.float32)
    impl = daxpy.data.worklet.get_worklet("cell_to_point").numpy_impl(grid.family)
    assert impl(grid, values, out=out) is out
    np.testing.assert_allclose(out, vtk_cell_to_point(grid, values), rtol=1e-6)


def test_out_of_wrong_dtype_raises():
    grid = daxpy.UniformGrid(dims=(3, 3))
    with pytest.raises(ArgumentError, match="out must be a C-contiguous float64"):
        cell_to_point_structured(grid, np.zeros(4), out=np.zeros(9, np.float32))


@pytest.mark.parametrize("impl, grid", [(cell_to_point_structured, daxpy.UniformGrid(dims=(3,))),
                                        (cell_to_point_unstructured, mixed_grid_all_shapes())],
                         ids=["structured", "unstructured"])
def test_values_of_wrong_size_raise(impl, grid):
    with pytest.raises(FieldError, match=f"for the {grid.n_cells} cells"):
        impl(grid, np.zeros(grid.n_cells + 1))


def test_filter_writes_point_field_of_same_name_and_keeps_input():
    values = np.array([1.0, 3.0])
    grid = daxpy.UniformGrid(dims=(3,), cell_data={"c": values})
    result = CellToPoint("c", backend="cpu")(grid)
    assert result.point_data["c"].tolist() == [1.0, 2.0, 3.0]
    assert "c" not in grid.point_data
    assert result.cell_data["c"] is values


def test_filter_result_name():
    grid = daxpy.UniformGrid(dims=(2,), cell_data={"c": np.array([4.0])})
    assert CellToPoint("c", result="cp", backend="cpu")(grid).point_data["cp"].tolist() == [4, 4]


def test_filter_rejects_point_association():
    with pytest.raises(FieldError, match="CellToPoint reads cell fields.*'points'"):
        CellToPoint("c", association="points")


def test_filter_reports_missing_cell_field():
    grid = daxpy.UniformGrid(dims=(2, 2), point_data={"p": np.ones(4)})
    with pytest.raises(UnknownFieldError, match="no cell field 'p'"):
        CellToPoint("p", backend="cpu")(grid)
