"""Reading and writing .vti/.vtr/.vts/.vtu and legacy .vtk files through VTK."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.errors import ArgumentError, DataFileError  # noqa: E402
from daxpy.io import read, write  # noqa: E402

from strategies import (curvilinear_grids, mixed_grid_all_shapes,  # noqa: E402
                        rectilinear_grids, uniform_grids, unstructured_grids)

XML_EXTENSION = {"uniform": ".vti", "rectilinear": ".vtr", "curvilinear": ".vts",
                 "unstructured": ".vtu"}
FAMILIES = {"uniform": uniform_grids(), "rectilinear": rectilinear_grids(),
            "curvilinear": curvilinear_grids(), "unstructured": unstructured_grids()}


def with_fields(grid):
    """Point and cell fields of several dtypes and component counts."""
    rng = np.random.default_rng(0)
    grid.point_data["f32"] = rng.uniform(-1, 1, grid.n_points).astype(np.float32)
    grid.point_data["f64x3"] = rng.uniform(-1, 1, (grid.n_points, 3))
    grid.point_data["i32x2"] = rng.integers(-50, 50, (grid.n_points, 2), dtype=np.int32)
    grid.cell_data["i64"] = rng.integers(0, 2**40, grid.n_cells, dtype=np.int64)
    grid.cell_data["f64x2"] = rng.uniform(-1, 1, (grid.n_cells, 2))
    return grid


def assert_same(expected, actual, atol=1e-12):
    assert type(actual) is type(expected)
    assert (actual.n_points, actual.n_cells) == (expected.n_points, expected.n_cells)
    assert getattr(actual, "dims", None) == getattr(expected, "dims", None)
    np.testing.assert_allclose(np.asarray(actual.points(), dtype=np.float64),
                               np.asarray(expected.points(), dtype=np.float64),
                               rtol=0, atol=atol)
    if isinstance(expected, daxpy.UnstructuredGrid):
        np.testing.assert_array_equal(actual.connectivity, expected.connectivity)
        np.testing.assert_array_equal(actual.offsets, expected.offsets)
        np.testing.assert_array_equal(actual.cell_types, expected.cell_types)
    for association in ("points", "cells"):
        written, read_back = expected.fields(association), actual.fields(association)
        assert sorted(read_back) == sorted(written)
        for name, values in written.items():
            assert read_back[name].dtype == values.dtype, name
            np.testing.assert_array_equal(read_back[name], values)


@pytest.mark.parametrize("legacy", [False, True], ids=["xml", "legacy"])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_round_trip(family, legacy, tmp_path):
    @settings(max_examples=10, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(FAMILIES[family])
    def check(grid):
        path = tmp_path / ("grid.vtk" if legacy else "grid" + XML_EXTENSION[family])
        write(with_fields(grid), path)
        # Legacy files store origin and spacing as text with 6 significant
        # digits: a point origin + i * spacing (|origin| <= 10, i * spacing <= 15
        # in these grids) can be off by 5e-6 * 25.
        assert_same(grid, read(path), atol=1.25e-4 if legacy else 1e-12)

    check()


@pytest.mark.parametrize("extension", [".vtu", ".vtk"])
def test_mixed_unstructured_round_trip(extension, tmp_path):
    grid = with_fields(mixed_grid_all_shapes())
    write(grid, tmp_path / f"mixed{extension}")
    back = read(str(tmp_path / f"mixed{extension}"))
    assert back.topology_name == "unstructured_mixed"
    assert_same(grid, back)


def test_read_wraps_reader_arrays(tmp_path):
    grid = daxpy.UniformGrid(dims=(4, 4), point_data={"t": np.arange(16.0)})
    write(grid, tmp_path / "g.vti")
    values = read(tmp_path / "g.vti").point_data["t"]
    # A view of the reader's VTK array ends in the buffer VTK exports, not in
    # NumPy-owned memory.
    owner = values
    while isinstance(owner, np.ndarray):
        owner = owner.base
    assert isinstance(owner, memoryview)


def test_unknown_extension(tmp_path):
    grid = daxpy.UniformGrid(dims=(2, 2))
    with pytest.raises(ArgumentError,
                       match=r"'\.png'.*\.vti, \.vtr, \.vts, \.vtu, \.vtp, \.vtk, \.ply, \.stl"):
        write(grid, tmp_path / "grid.png")
    with pytest.raises(ArgumentError, match="'\\(none\\)'"):
        read(tmp_path / "grid")


def test_extension_must_suit_family(tmp_path):
    with pytest.raises(ArgumentError, match="holds rectilinear grids.*use .vts or .vtk"):
        write(daxpy.CurvilinearGrid((1,), np.zeros((1, 3))), tmp_path / "grid.vtr")


def test_missing_file_names_path(tmp_path):
    path = tmp_path / "missing.vtu"
    with pytest.raises(FileNotFoundError, match="missing.vtu") as info:
        read(path)
    assert info.value.filename == str(path)


@pytest.mark.parametrize("extension", [".vti", ".vtk"])
def test_corrupt_file(extension, tmp_path):
    path = tmp_path / f"bad{extension}"
    path.write_text("this is not a VTK file")
    # Refused by the checks before VTK reads it, naming the file and the problem.
    with pytest.raises(DataFileError, match=rf"bad\{extension}' (is not well-formed XML"
                                            r"|does not start with '# vtk DataFile Version')"):
        read(path)


def test_unwritable_path(tmp_path):
    # Refused before VTK is asked to write, naming the path and the missing folder.
    with pytest.raises(DataFileError, match=r"g\.vti.*folder .*no_such_folder' does not exist"):
        write(daxpy.UniformGrid(dims=(2,)), tmp_path / "no_such_folder" / "g.vti")


def test_legacy_polydata_is_read(tmp_path):
    import vtk

    sphere = vtk.vtkSphereSource()
    writer = vtk.vtkPolyDataWriter()
    writer.SetInputConnection(sphere.GetOutputPort())
    writer.SetFileName(str(tmp_path / "sphere.vtk"))
    writer.Write()
    surface = read(tmp_path / "sphere.vtk")
    sphere.Update()
    assert isinstance(surface, daxpy.PolyData)
    assert (surface.n_points, surface.n_cells_of("polys")) == \
        (sphere.GetOutput().GetNumberOfPoints(), sphere.GetOutput().GetNumberOfPolys())
