"""Point-to-cell average against vtkPointDataToCellData on every grid family."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.errors import ArgumentError, FieldError, UnknownFieldError  # noqa: E402
from daxpy.filters import PointToCell  # noqa: E402
from daxpy.worklets import _averaging, point_to_cell  # noqa: E402
from daxpy.worklets.point_to_cell import (corner_rows, point_to_cell_structured,  # noqa: E402
                                          point_to_cell_unstructured)

import averaging_reference  # noqa: E402
from averaging_reference import vtk_average  # noqa: E402
from strategies import (field_arrays, mixed_grid_all_shapes, unstructured_grids)


def vtk_point_to_cell(grid, values):
    return vtk_average("point_to_cell", grid, values)


def assert_matches_vtk(grid, values):
    averaging_reference.assert_matches_vtk("point_to_cell", grid, values)


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
    impl = daxpy.data.worklet.get_worklet("point_to_cell").numpy_impl(grid.family)
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
