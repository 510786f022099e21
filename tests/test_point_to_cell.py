"""Point-to-cell average against vtkPointDataToCellData on every grid family."""

import numpy as np
import pytest

pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.errors import ArgumentError  # noqa: E402
from daxpy.filters import PointToCell  # noqa: E402
from daxpy.worklets.point_to_cell import (corner_rows, point_to_cell_structured,  # noqa: E402
                                          point_to_cell_unstructured)

from strategies import mixed_grid_all_shapes  # noqa: E402


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


def test_out_of_wrong_shape_raises():
    grid = daxpy.UniformGrid(dims=(3, 3))
    with pytest.raises(ArgumentError, match="out must be"):
        point_to_cell_structured(grid, np.zeros(9), out=np.zeros(3))


def test_filter_writes_cell_field_of_same_name_and_keeps_input():
    values = np.arange(8.0).reshape(4, 2)
    grid = daxpy.UniformGrid(dims=(2, 2), point_data={"v": values})
    result = PointToCell("v", backend="cpu")(grid)
    np.testing.assert_allclose(result.cell_data["v"], [[3.0, 4.0]])
    assert "v" not in grid.cell_data
    assert result.point_data["v"] is values
