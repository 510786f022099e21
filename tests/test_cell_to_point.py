"""Cell-to-point average against vtkCellDataToPointData on every grid family."""

import numpy as np
import pytest

pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.data.celltypes import HEXAHEDRON, LINE, VERTEX  # noqa: E402
from daxpy.errors import ArgumentError  # noqa: E402
from daxpy.filters import CellToPoint  # noqa: E402
from daxpy.worklets import _averaging, cell_to_point  # noqa: E402
from daxpy.worklets.cell_to_point import (cell_to_point_structured,  # noqa: E402
                                          cell_to_point_unstructured, point_cells)

from averaging_reference import vtk_average  # noqa: E402
from strategies import mixed_grid_all_shapes  # noqa: E402


def vtk_cell_to_point(grid, values):
    return vtk_average("cell_to_point", grid, values)


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


def test_out_of_wrong_dtype_raises():
    grid = daxpy.UniformGrid(dims=(3, 3))
    with pytest.raises(ArgumentError, match="out must be a C-contiguous float64"):
        cell_to_point_structured(grid, np.zeros(4), out=np.zeros(9, np.float32))


def test_filter_writes_point_field_of_same_name_and_keeps_input():
    values = np.array([1.0, 3.0])
    grid = daxpy.UniformGrid(dims=(3,), cell_data={"c": values})
    result = CellToPoint("c", backend="cpu")(grid)
    assert result.point_data["c"].tolist() == [1.0, 2.0, 3.0]
    assert "c" not in grid.point_data
    assert result.cell_data["c"] is values
