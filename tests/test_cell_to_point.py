"""Cell-to-point average against vtkCellDataToPointData on every grid family."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

vtk = pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.celltypes import HEXAHEDRON, LINE, TETRA, VERTEX  # noqa: E402
from daxpy.errors import ArgumentError, FieldError, UnknownFieldError  # noqa: E402
from daxpy.filters import CellToPoint  # noqa: E402
from daxpy.interop import from_vtk, to_vtk  # noqa: E402
from daxpy.worklets import _averaging, cell_to_point  # noqa: E402
from daxpy.worklets.cell_to_point import (cell_to_point_structured,  # noqa: E402
                                          cell_to_point_unstructured, point_cells)

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


def vtk_cell_to_point(grid, values):
    """vtkCellDataToPointData's point field for ``values`` at the cells of ``grid``."""
    algorithm = vtk.vtkCellDataToPointData()
    algorithm.SetInputData(to_vtk(grid.with_fields(cell_data={"f": values})))
    algorithm.Update()
    return from_vtk(algorithm.GetOutput()).point_data["f"]


def assert_matches_vtk(grid, values):
    result = daxpy.dispatch.execute("cell_to_point", grid, values, "cells", backend="cpu")
    expected = vtk_cell_to_point(grid, values)
    assert result.dtype == values.dtype
    assert result.shape == (grid.n_points,) + values.shape[1:]
    tol = 2e-6 if values.dtype == np.float32 else 1e-13
    np.testing.assert_allclose(result, expected, rtol=tol, atol=tol * 10)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_structured_grids_match_vtk(data):
    grid = data.draw(structured_grids())
    assert_matches_vtk(grid, data.draw(field_arrays(grid.n_cells)))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_unstructured_grids_match_vtk(data):
    grid = data.draw(unstructured_grids())
    assert_matches_vtk(grid, data.draw(field_arrays(grid.n_cells)))


@pytest.mark.parametrize("grid", DEGENERATE, ids=lambda g: f"{g.topology_name}-{g.n_points}")
@pytest.mark.parametrize("ncomp", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_degenerate_grids_match_vtk(grid, ncomp, dtype):
    rng = np.random.default_rng(ncomp)
    shape = (grid.n_cells,) if ncomp == 1 else (grid.n_cells, ncomp)
    assert_matches_vtk(grid, rng.uniform(-10, 10, shape).astype(dtype))


@pytest.mark.parametrize("dims", [(7, 5, 9), (9, 6), (11,)])
def test_one_plane_slabs_on_several_threads_match_vtk(monkeypatch, dims):
    monkeypatch.setattr(_averaging, "SLAB_BYTES", 1)
    monkeypatch.setattr(_averaging, "THREADS", 3)
    grid = daxpy.UniformGrid(dims=dims)
    values = np.random.default_rng(0).uniform(-1, 1, (grid.n_cells, 2))
    assert_matches_vtk(grid, values)


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
    impl = daxpy.worklet.get_worklet("cell_to_point").numpy_impl(grid.family)
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
