"""VTK / PyVista interop: round trips for every grid family, zero-copy proofs, errors."""

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

vtk = pytest.importorskip("vtk")
pv = pytest.importorskip("pyvista")
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy  # noqa: E402

import daxpy  # noqa: E402
from daxpy.errors import ArgumentError, InvalidDataSetError  # noqa: E402
from daxpy.io.interop import from_pyvista, from_vtk, to_pyvista, to_vtk  # noqa: E402

from strategies import any_grids, mixed_grid_all_shapes, seeds  # noqa: E402

FIELD_DTYPES = (np.float32, np.float64, np.int32, np.int64, np.uint8)
VTK_CLASS = {"uniform": "vtkImageData", "rectilinear": "vtkRectilinearGrid",
             "curvilinear": "vtkStructuredGrid", "unstructured": "vtkUnstructuredGrid"}
PYVISTA_CLASS = {"uniform": pv.ImageData, "rectilinear": pv.RectilinearGrid,
                 "curvilinear": pv.StructuredGrid, "unstructured": pv.UnstructuredGrid}


@st.composite
def grids_with_fields(draw):
    """A random grid with point and cell fields of every dtype and 1..3 components."""
    grid = draw(any_grids())
    rng = np.random.default_rng(draw(seeds))
    for fields, size in ((grid.point_data, grid.n_points), (grid.cell_data, grid.n_cells)):
        for dtype in FIELD_DTYPES:
            ncomp = draw(st.integers(1, 3))
            shape = (size,) if ncomp == 1 else (size, ncomp)
            fields[f"{np.dtype(dtype).name}_{ncomp}"] = (
                rng.uniform(0, 100, shape).astype(dtype))
    return grid


def assert_same_geometry(a, b):
    assert type(a) is type(b)
    assert getattr(a, "dims", None) == getattr(b, "dims", None)
    assert (a.n_points, a.n_cells) == (b.n_points, b.n_cells)
    np.testing.assert_array_equal(np.asarray(a.points()), np.asarray(b.points()))
    if isinstance(a, daxpy.UnstructuredGrid):
        np.testing.assert_array_equal(a.connectivity, b.connectivity)
        np.testing.assert_array_equal(a.offsets, b.offsets)
        np.testing.assert_array_equal(a.cell_types, b.cell_types)


def assert_round_trip(grid, held, back):
    """Each array the wrapper holds (``held``, by association and name) is
    ``grid``'s own memory, and ``back`` is ``grid`` again, its fields shared."""
    for (association, name), array in held.items():
        assert np.shares_memory(array, grid.fields(association)[name])
    assert_same_geometry(grid, back)
    assert_fields_shared(grid, back)


def assert_fields_shared(original, converted):
    """Same names, dtypes, shapes and values, and the very same memory."""
    for association in ("points", "cells"):
        before, after = original.fields(association), converted.fields(association)
        assert sorted(before) == sorted(after)
        for name, values in before.items():
            assert after[name].dtype == values.dtype
            assert after[name].shape == values.shape
            np.testing.assert_array_equal(after[name], values)
            assert np.shares_memory(after[name], values), name


@settings(max_examples=40, deadline=None)
@given(grids_with_fields())
def test_vtk_round_trip_wraps_fields(grid):
    vtk_obj = to_vtk(grid)
    assert vtk_obj.GetClassName() == VTK_CLASS[grid.family]
    assert (vtk_obj.GetNumberOfPoints(), vtk_obj.GetNumberOfCells()) == (
        grid.n_points, grid.n_cells)
    held = {("points", name): vtk_to_numpy(vtk_obj.GetPointData().GetArray(name))
            for name in grid.point_data}
    held.update({("cells", name): vtk_to_numpy(vtk_obj.GetCellData().GetArray(name))
                 for name in grid.cell_data})
    assert_round_trip(grid, held, from_vtk(vtk_obj))


@settings(max_examples=25, deadline=None)
@given(grids_with_fields())
def test_pyvista_round_trip_wraps_fields(grid):
    mesh = to_pyvista(grid)
    assert isinstance(mesh, PYVISTA_CLASS[grid.family])
    held = {("points", name): mesh.point_data[name] for name in grid.point_data}
    assert_round_trip(grid, held, from_pyvista(mesh))


@settings(max_examples=25, deadline=None)
@given(any_grids())
def test_points_match_vtk(grid):
    vtk_obj = to_vtk(grid)
    vtk_points = np.array([vtk_obj.GetPoint(i) for i in range(vtk_obj.GetNumberOfPoints())])
    np.testing.assert_allclose(vtk_points, np.asarray(grid.points(), dtype=np.float64),
                               rtol=1e-6, atol=1e-6)


def test_structured_geometry_is_shared():
    points = np.random.default_rng(0).uniform(size=(24, 3))
    curvilinear = daxpy.CurvilinearGrid((4, 3, 2), points)
    assert np.shares_memory(from_vtk(to_vtk(curvilinear)).points(), points)
    x = np.array([0.0, 0.5, 2.0])
    rectilinear = daxpy.RectilinearGrid(x, [0.0, 1.0])
    assert np.shares_memory(from_vtk(to_vtk(rectilinear)).coordinates[0], x)


def test_unstructured_topology_is_shared():
    grid = mixed_grid_all_shapes()
    back = from_vtk(to_vtk(grid))
    assert back.topology_name == "unstructured_mixed"
    assert set(back.cell_blocks()) == set(grid.cell_blocks())
    assert np.shares_memory(back.connectivity, grid.connectivity)
    assert np.shares_memory(back.offsets, grid.offsets)
    assert np.shares_memory(back.points(), grid.points())


def test_vtk_keeps_wrapped_numpy_memory_alive():
    values = np.arange(8.0) * 3
    vtk_obj = to_vtk(daxpy.UniformGrid(dims=(2, 2, 2), point_data={"t": values}))
    del values
    gc.collect()
    np.testing.assert_array_equal(vtk_to_numpy(vtk_obj.GetPointData().GetArray("t")),
                                  np.arange(8.0) * 3)


def test_wrapped_vtk_memory_outlives_the_vtk_object():
    mesh = pv.ImageData(dimensions=(3, 3, 3))
    mesh.point_data["v"] = np.arange(27 * 3, dtype=np.float32).reshape(27, 3)
    mesh.cell_data["c"] = np.arange(8)
    grid = from_vtk(mesh)
    del mesh
    gc.collect()
    np.testing.assert_array_equal(grid.point_data["v"].ravel(), np.arange(81))
    np.testing.assert_array_equal(grid.cell_data["c"], np.arange(8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int64])
@pytest.mark.parametrize("ncomp", [1, 2, 3])
def test_pyvista_fields_are_wrapped(dtype, ncomp):
    image = pv.ImageData(dimensions=(4, 3, 2), spacing=(0.5, 1, 2), origin=(1, 2, 3))
    shape = (image.n_points,) if ncomp == 1 else (image.n_points, ncomp)
    values = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    image.point_data["v"] = values
    image.cell_data["c"] = np.arange(image.n_cells, dtype=dtype)
    grid = from_vtk(image)
    assert (grid.dims, grid.origin, grid.spacing) == ((4, 3, 2), (1, 2, 3), (0.5, 1, 2))
    assert grid.point_data["v"].shape == shape
    assert np.shares_memory(grid.point_data["v"], image.point_data["v"])
    assert np.shares_memory(grid.cell_data["c"], image.cell_data["c"])


def test_vtk_allocated_arrays_are_wrapped():
    source = vtk.vtkRTAnalyticSource()
    source.SetWholeExtent(-4, 4, -3, 3, -2, 2)
    source.Update()
    image = source.GetOutput()
    grid = from_vtk(image)
    assert grid.dims == (9, 7, 5)
    assert grid.origin == (-4.0, -3.0, -2.0)
    scalars = vtk_to_numpy(image.GetPointData().GetArray("RTData"))
    assert np.shares_memory(grid.point_data["RTData"], scalars)


def test_cast_unstructured_voxels_become_hexahedra():
    mesh = pv.ImageData(dimensions=(3, 3, 3)).cast_to_unstructured_grid()
    mesh.point_data["t"] = np.arange(mesh.n_points, dtype=np.float32)
    grid = from_vtk(mesh)
    assert grid.topology_name == "unstructured_hex"
    assert np.shares_memory(grid.point_data["t"], mesh.point_data["t"])
    assert np.shares_memory(grid.points(), mesh.points)


def test_unnamed_arrays_get_unique_names_and_strings_are_skipped():
    image = vtk.vtkImageData()
    image.SetDimensions(2, 2, 1)
    unnamed = numpy_to_vtk(np.arange(4.0), deep=1)
    image.GetPointData().AddArray(unnamed)
    named = numpy_to_vtk(np.ones(4), deep=1)
    named.SetName("point_array_0")
    image.GetPointData().AddArray(named)
    labels = vtk.vtkStringArray()
    labels.SetName("labels")
    labels.SetNumberOfValues(4)
    image.GetPointData().AddArray(labels)
    grid = from_vtk(image)
    assert sorted(grid.point_data) == ["point_array_0", "point_array_0_1"]
    np.testing.assert_array_equal(grid.point_data["point_array_0_1"], np.arange(4.0))


def test_image_extent_and_flat_axis_spacing():
    image = vtk.vtkImageData()
    image.SetExtent(2, 5, 1, 3, 0, 0)
    image.SetOrigin(1.0, 0.0, 0.0)
    image.SetSpacing(0.5, 2.0, 0.0)
    grid = from_vtk(image)
    assert grid.dims == (4, 3, 1)
    assert grid.origin == (2.0, 2.0, 0.0)
    assert grid.spacing == (0.5, 2.0, 1.0)
    np.testing.assert_allclose(grid.points()[0], image.GetPoint(0))


def test_rotated_image_is_rejected():
    image = pv.ImageData(dimensions=(2, 2, 2))
    image.direction_matrix = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]])
    with pytest.raises(InvalidDataSetError, match="direction matrix"):
        from_vtk(image)


@pytest.mark.parametrize("cell_type, n_corners", [
    (vtk.VTK_QUADRATIC_TETRA, 10), (vtk.VTK_POLYGON, 5), (vtk.VTK_POLYHEDRON, 4),
])
def test_unsupported_cell_types_are_rejected(cell_type, n_corners):
    points = np.random.default_rng(1).uniform(size=(n_corners, 3))
    mesh = pv.UnstructuredGrid(np.r_[n_corners, np.arange(n_corners)],
                               np.array([cell_type], np.uint8), points) \
        if cell_type != vtk.VTK_POLYHEDRON else _tetra_polyhedron(points)
    with pytest.raises(InvalidDataSetError, match=f"unsupported VTK cell type {cell_type}"):
        from_vtk(mesh)


def _tetra_polyhedron(points):
    faces = [[0, 1, 2], [0, 1, 3], [1, 2, 3], [0, 2, 3]]
    face_stream = [len(faces)] + [v for f in faces for v in [len(f), *f]]
    ugrid = vtk.vtkUnstructuredGrid()
    ugrid.SetPoints(vtk.vtkPoints())
    ugrid.GetPoints().SetData(numpy_to_vtk(points, deep=1))
    ids = vtk.vtkIdList()
    for value in face_stream:
        ids.InsertNextId(value)
    ugrid.InsertNextCell(vtk.VTK_POLYHEDRON, ids)
    return ugrid


@pytest.mark.parametrize("obj", [vtk.vtkMultiBlockDataSet(), "grid.vti", np.zeros(3)])
def test_from_vtk_rejects_other_objects(obj):
    with pytest.raises(ArgumentError, match="vtkImageData"):
        from_vtk(obj)


def test_to_vtk_rejects_other_objects():
    with pytest.raises(ArgumentError, match="daxpy dataset"):
        to_vtk(pv.ImageData(dimensions=(2, 2, 2)))


def test_dataset_methods_delegate():
    grid = daxpy.UniformGrid(dims=(3, 3), point_data={"t": np.arange(9.0)})
    assert grid.to_vtk().GetClassName() == "vtkImageData"
    assert isinstance(grid.to_pyvista(), pv.ImageData)
