"""Data model: construction, derived sizes, and one test per validation error."""

import numpy as np
import pytest
from hypothesis import given

import daxpy
from daxpy.data.celltypes import HEXAHEDRON, LINE, PIXEL, QUAD, TETRA, TRIANGLE, VOXEL
from daxpy.errors import FieldError, InvalidDataSetError, UnknownFieldError

from strategies import any_grids, mixed_grid_all_shapes


@pytest.mark.parametrize("dims, topology, n_cells", [
    ((5,), "uniform1d", 4), ((4, 3), "uniform2d", 6), ((4, 3, 2), "uniform3d", 6),
    ((1, 1, 1), "uniform1d", 1), ((3, 1, 4), "uniform2d", 6),
])
def test_uniform_sizes(dims, topology, n_cells):
    grid = daxpy.UniformGrid(dims=dims)
    assert grid.topology_name == topology
    assert grid.n_cells == n_cells


@given(any_grids())
def test_random_grids_are_consistent(grid):
    assert grid.n_points > 0 and grid.n_cells > 0
    grid.point_data["p"] = np.zeros(grid.n_points)
    grid.cell_data["c"] = np.zeros((grid.n_cells, 2))
    assert grid.field("c")[1] == "cells"


def test_mixed_grid_partitions_by_shape_once():
    grid = mixed_grid_all_shapes()
    blocks = grid.cell_blocks()
    assert len(blocks) == 8 and grid.topology_name == "unstructured_mixed"
    assert grid.cell_blocks() is blocks
    ids = np.sort(np.concatenate([b.cell_ids for b in blocks.values()]))
    assert np.array_equal(ids, np.arange(grid.n_cells))


def test_with_fields_leaves_input_alone():
    grid = daxpy.UniformGrid(dims=(2, 2))
    out = grid.with_fields(point_data={"a": np.ones(4)})
    assert "a" in out.point_data and "a" not in grid.point_data


def test_voxel_and_pixel_are_renumbered():
    pts = np.array([[x, y, z] for z in (0, 1) for y in (0, 1) for x in (0, 1)], float)
    grid = daxpy.UnstructuredGrid(pts, list(range(8)) + [0, 1, 2, 3], [0, 8, 12],
                                  [VOXEL, PIXEL])
    assert grid.cell_types.tolist() == [HEXAHEDRON, QUAD]
    assert grid.connectivity[:8].tolist() == [0, 1, 3, 2, 4, 5, 7, 6]
    assert grid.connectivity[8:].tolist() == [0, 1, 3, 2]


@pytest.mark.parametrize("kwargs, message", [
    (dict(dims=(0, 2)), "dims"),
    (dict(dims=(2, 2, 2, 2)), "1 to 3"),
    (dict(dims=(2.5, 2)), "integers"),
    (dict(dims=(2, 2), spacing=(0, 1)), "spacing"),
    (dict(dims=(2, 2), spacing=(-1, 1)), "spacing"),
    (dict(dims=(2, 2), spacing=(np.nan, 1)), "spacing"),
    (dict(dims=(2, 2), origin=(np.inf, 0)), "origin"),
])
def test_uniform_validation(kwargs, message):
    with pytest.raises(InvalidDataSetError, match=message):
        daxpy.UniformGrid(**kwargs)


@pytest.mark.parametrize("x, message", [
    ([0, 1, 1], "strictly increasing"), ([0, np.nan], "NaN"), ([[0, 1]], "1-D"),
    ([], "non-empty"),
])
def test_rectilinear_validation(x, message):
    with pytest.raises(InvalidDataSetError, match=message):
        daxpy.RectilinearGrid(x)


def test_curvilinear_validation():
    with pytest.raises(InvalidDataSetError, match="shape"):
        daxpy.CurvilinearGrid((2, 2), np.zeros((3, 3)))
    with pytest.raises(InvalidDataSetError, match="NaN"):
        daxpy.CurvilinearGrid((2,), np.array([[0, 0, 0], [np.nan, 0, 0]]))
    with pytest.raises(InvalidDataSetError, match="float"):
        daxpy.CurvilinearGrid((2,), np.zeros((2, 3), dtype=np.int32))


TET_POINTS = np.eye(4, 3)


@pytest.mark.parametrize("conn, offsets, types, message", [
    ([0, 1, 2, 4], [0, 4], [TETRA], "outside"),
    ([0, 1, 2, -1], [0, 4], [TETRA], "outside"),
    ([0, 1, 2, 3], [0, 3], [TETRA], "last offset"),
    ([0, 1, 2, 3], [1, 4], [TETRA], "start at 0"),
    ([0, 1, 2, 3], [0, 4, 2], [TETRA, LINE], "must not decrease"),
    ([0, 1, 2, 3], [0, 4], [TETRA, TETRA], "n_cells"),
    ([0, 1, 2, 3], [0, 4], [42], "unsupported VTK cell type 42"),
    ([0, 1, 2, 3], [0, 4], [TRIANGLE], "expected 3"),
    ([0, 1, 2, 2], [0, 4], [TETRA], "repeats a point"),
    ([0.0, 1, 2, 3], [0, 4], [TETRA], "integers"),
])
def test_unstructured_validation(conn, offsets, types, message):
    with pytest.raises(InvalidDataSetError, match=message):
        daxpy.UnstructuredGrid(TET_POINTS, conn, offsets, types)


def test_unstructured_points_validation():
    with pytest.raises(InvalidDataSetError, match="shape"):
        daxpy.UnstructuredGrid(np.zeros((4, 2)), [0], [0, 1], [1])
    with pytest.raises(InvalidDataSetError, match="NaN"):
        daxpy.UnstructuredGrid(np.full((1, 3), np.nan), [0], [0, 1], [1])


@pytest.mark.parametrize("values, message", [
    (np.zeros(5), "has 5 tuples, expected 4"),
    (np.zeros((4, 2, 2)), "shape"),
    (np.array(["a"] * 4), "dtype"),
    (np.zeros((4, 0)), "zero components"),
])
def test_field_validation(values, message):
    grid = daxpy.UniformGrid(dims=(2, 2))
    with pytest.raises(FieldError, match=message):
        grid.point_data["f"] = values


def test_field_lookup_errors():
    grid = daxpy.UniformGrid(dims=(2, 2), point_data={"a": np.zeros(4)},
                             cell_data={"a": np.zeros(1)})
    with pytest.raises(FieldError, match="both a point and a cell"):
        grid.field("a")
    with pytest.raises(UnknownFieldError, match="no field 'b'"):
        grid.field("b")
    with pytest.raises(FieldError, match="'points' or 'cells'"):
        grid.field("a", "vertices")
