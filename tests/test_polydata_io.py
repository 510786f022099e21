"""PolyData to and from VTK and PyVista (zero copy) and through files: .vtp,
legacy .vtk, .ply and .stl, with corrupt and hostile files read in a child
process (a crash there fails the test, not the run)."""

import os
import struct

import numpy as np
import pytest
from hypothesis import given, settings

pv = pytest.importorskip("pyvista")

import daxpy  # noqa: E402
from daxpy.errors import ArgumentError  # noqa: E402
from daxpy.io import read, write  # noqa: E402
from daxpy.io.interop import from_vtk, to_pyvista, to_vtk  # noqa: E402

from read_in_child import failures, read_all  # noqa: E402
from strategies import polydata_surfaces  # noqa: E402

KINDS = ("verts", "lines", "polys", "strips")


def _vtk_cell_arrays(obj):
    from vtkmodules.util.numpy_support import vtk_to_numpy

    cells = (obj.GetVerts(), obj.GetLines(), obj.GetPolys(), obj.GetStrips())
    return [(vtk_to_numpy(c.GetOffsetsArray()), vtk_to_numpy(c.GetConnectivityArray()))
            for c in cells]


def _assert_same(a, b):
    """Same points, cells of each kind and fields."""
    np.testing.assert_array_equal(a.points(), b.points())
    for kind in KINDS:
        for x, y in zip(a.cell_array(kind), b.cell_array(kind)):
            np.testing.assert_array_equal(x, y)
    for association in ("points", "cells"):
        assert sorted(a.fields(association)) == sorted(b.fields(association))
        for name, values in a.fields(association).items():
            np.testing.assert_array_equal(values, b.fields(association)[name])


def test_pyvista_surfaces_are_wrapped_without_copies():
    sphere = pv.Sphere()
    sphere.cell_data["c"] = np.arange(sphere.n_cells, dtype=np.float32)
    surface = from_vtk(sphere)
    assert isinstance(surface, daxpy.PolyData)
    assert (surface.n_points, surface.n_cells) == (sphere.n_points, sphere.n_cells)
    offsets, ids = _vtk_cell_arrays(sphere)[2]
    assert np.shares_memory(surface.cell_array("polys")[1], ids)
    assert np.shares_memory(surface.cell_array("polys")[0], offsets)
    assert np.shares_memory(surface.points(), sphere.points)
    assert np.shares_memory(surface.cell_data["c"], sphere.cell_data["c"])
    assert np.shares_memory(surface.point_data["Normals"], sphere.point_data["Normals"])


@settings(max_examples=30, deadline=None)
@given(surface=polydata_surfaces())
def test_round_trips_through_vtk_share_every_array(surface):
    rng = np.random.default_rng(0)
    surface = surface.with_fields(point_data={"t": rng.random(surface.n_points)},
                                  cell_data={"c": rng.random((surface.n_cells, 3))})
    mesh = to_pyvista(surface)
    assert isinstance(mesh, pv.PolyData)
    assert (mesh.n_points, mesh.n_cells) == (surface.n_points, surface.n_cells)
    for kind, (offsets, ids) in zip(KINDS, _vtk_cell_arrays(mesh)):
        assert np.shares_memory(offsets, surface.cell_array(kind)[0])
        if ids.size:
            assert np.shares_memory(ids, surface.cell_array(kind)[1])
    back = from_vtk(mesh)
    _assert_same(back, surface)
    assert np.shares_memory(back.points(), surface.points())
    assert np.shares_memory(back.point_data["t"], surface.point_data["t"])
    if surface.n_cells:  # empty arrays share no memory
        assert np.shares_memory(back.cell_data["c"], surface.cell_data["c"])


def test_int32_cells_stay_shared_and_other_dtypes_are_cast_once():
    ids32 = np.array([0, 1, 2], np.int32)
    shared = to_vtk(daxpy.PolyData(np.eye(3), polys=(np.array([0, 3], np.int32), ids32)))
    assert np.shares_memory(_vtk_cell_arrays(shared)[2][1], ids32)
    ids8 = np.array([0, 1, 2], np.uint8)
    cast = to_vtk(daxpy.PolyData(np.eye(3), polys=(np.array([0, 3], np.uint8), ids8)))
    assert _vtk_cell_arrays(cast)[2][1].dtype == np.int64
    assert cast.GetNumberOfPolys() == 1


@pytest.mark.parametrize("extension", [".vtp", ".vtk"])
@settings(max_examples=15, deadline=None)
@given(surface=polydata_surfaces())
def test_vtp_and_legacy_files_hold_every_kind_and_field(tmp_path_factory, extension, surface):
    path = tmp_path_factory.mktemp("surface") / f"s{extension}"
    rng = np.random.default_rng(1)
    # Legacy files hold no empty cell section (as for unstructured grids).
    cells = {"c": rng.random((surface.n_cells, 2))} if surface.n_cells else {}
    surface = surface.with_fields(point_data={"t": rng.random(surface.n_points)},
                                  cell_data=cells)
    write(surface, path)
    _assert_same(read(path), surface)


@pytest.mark.parametrize("extension", [".ply", ".stl"])
def test_ply_and_stl_hold_triangle_surfaces(tmp_path, extension):
    sphere = from_vtk(pv.Sphere()).with_fields()
    del sphere.point_data["Normals"]
    write(sphere, tmp_path / f"s{extension}")
    back = read(tmp_path / f"s{extension}")
    assert back.n_cells == sphere.n_cells
    corners = back.points()[back.cell_array("polys")[1]]
    np.testing.assert_allclose(corners, sphere.points()[sphere.cell_array("polys")[1]],
                               atol=1e-6)


@pytest.mark.parametrize("extension, what", [
    (".ply", r"\.ply holds points and polygons and no fields; polydata has 1 lines and "
             r"point fields \['t'\]"),
    (".stl", r"\.stl holds triangles .* polydata has 1 verts and 1 lines")])
def test_ply_and_stl_refuse_what_they_would_drop_and_keep_the_old_file(tmp_path, extension,
                                                                       what):
    path = tmp_path / f"s{extension}"
    path.write_bytes(b"old")
    rich = daxpy.PolyData(np.eye(3), verts=([0, 1], [0]) if extension == ".stl" else None,
                          lines=([0, 2], [0, 1]), polys=([0, 3], [0, 1, 2]),
                          point_data={"t": np.zeros(3)} if extension == ".ply" else None)
    with pytest.raises(ArgumentError, match=what):
        write(rich, path)
    assert path.read_bytes() == b"old"


def test_a_vtp_file_cannot_hold_a_grid_nor_a_vti_a_surface(tmp_path):
    with pytest.raises(ArgumentError, match="holds polydata grids, but the dataset is a "
                                            "uniform grid"):
        write(daxpy.UniformGrid(dims=(2, 2)), tmp_path / "g.vtp")
    with pytest.raises(ArgumentError, match="holds uniform grids"):
        write(daxpy.PolyData(np.eye(3)), tmp_path / "s.vti")


def _hostile_files(folder):
    """Corrupt surface files: counts the file cannot hold, lists past their end."""
    files = {
        "stl_huge_count.stl": b"\0" * 80 + struct.pack("<I", 2**31),
        "stl_short.stl": b"\0" * 80 + struct.pack("<I", 2) + b"\0" * 60,
        "stl_text_garbage.stl": b"solid x\nfacet normal 0 0 0\nouter loop\nvertex 1 2\n",
        "stl_no_header.stl": b"\x01\x02",
        # Text VTK cannot parse: its reader then tries binary, with a count of "zzzz".
        "stl_text_then_binary.stl": b"solid x\n" + b"facet normal zzzz\n" * 30,
        "ply_huge_vertices.ply": b"ply\nformat binary_little_endian 1.0\nelement vertex "
                                 b"4000000000\nproperty float x\nproperty float y\n"
                                 b"property float z\nend_header\n" + b"\0" * 12,
        "ply_long_list.ply": b"ply\nformat binary_little_endian 1.0\nelement vertex 3\n"
                             b"property float x\nproperty float y\nproperty float z\n"
                             b"element face 1\nproperty list int int vertex_indices\n"
                             b"end_header\n" + b"\0" * 36 + struct.pack("<i", 2**30),
        "ply_negative_list.ply": b"ply\nformat binary_little_endian 1.0\nelement vertex 3\n"
                                 b"property float x\nproperty float y\nproperty float z\n"
                                 b"element face 1\nproperty list int int vertex_indices\n"
                                 b"end_header\n" + b"\0" * 36 + struct.pack("<i", -5),
        "ply_ascii_short_line.ply": b"ply\nformat ascii 1.0\nelement vertex 3\n"
                                    b"property float x\nproperty float y\nproperty float z\n"
                                    b"element face 1\nproperty list uchar int vertex_indices"
                                    b"\nend_header\n0 0 0\n1 0 0\n0 1 0\n250 0 1 2\n",
        "ply_bad_ids.ply": b"ply\nformat ascii 1.0\nelement vertex 3\n"
                           b"property float x\nproperty float y\nproperty float z\n"
                           b"element face 1\nproperty list uchar int vertex_indices\n"
                           b"end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n",
        "ply_unknown_type.ply": b"ply\nformat ascii 1.0\nelement vertex 1\n"
                                b"property quad x\nend_header\n0\n",
        "ply_no_end.ply": b"ply\nformat ascii 1.0\nelement vertex 1\n",
        "vtp_huge_polys.vtp": b'<VTKFile type="PolyData" version="1.0"><PolyData>'
                              b'<Piece NumberOfPoints="0" NumberOfPolys="900000000000">'
                              b'<Polys><DataArray type="Int64" Name="offsets" '
                              b'format="ascii">3</DataArray></Polys></Piece></PolyData>'
                              b'</VTKFile>',
        "vtk_polygons_past_end.vtk": b"# vtk DataFile Version 5.1\nx\nASCII\nDATASET "
                                     b"POLYDATA\nPOINTS 3 float\n0 0 0 1 0 0 0 1 0\n"
                                     b"POLYGONS 2 300000000000\nOFFSETS vtktypeint64\n0 3\n",
    }
    paths = {}
    for name, content in files.items():
        paths[name] = str(folder / name)
        with open(paths[name], "wb") as stream:
            stream.write(content)
    return paths


def test_corrupt_surface_files_are_refused_in_a_child(tmp_path):
    paths = _hostile_files(tmp_path)
    outcomes = read_all(list(paths.values()), tmp_path)
    assert failures(outcomes, allowed=("refused ",)) == {}
    by_name = {os.path.basename(p): o for p, o in outcomes.items()}
    assert "declares 2147483648 triangles" in by_name["stl_huge_count.stl"]
    assert "list of 250 entries but only 4 words" in by_name["ply_ascii_short_line.ply"]
    assert "refused DataFileError" in by_name["ply_bad_ids.ply"]
    assert "point id 7" in by_name["ply_bad_ids.ply"]
