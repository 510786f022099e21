"""PolyData in the data model: validation, cell order and blocks, caches, and
the filters that run on surfaces (averages against VTK, maps), with the
gradient and the CUDA backend refused by name."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.engine.backend import backend_for
from daxpy.engine.dispatch import execute
from daxpy.errors import ArgumentError, BackendError, FieldError, InvalidDataSetError
from daxpy.filters import (BiasAdd, CellToPoint, FieldMap, Gradient, Magnitude, Normalize,
                           PassThrough, PointToCell)
from daxpy.worklets import cell_to_point, point_to_cell

from strategies import field_arrays, polydata_surfaces

SQUARE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0.5]])


def _every_kind(**fields):
    """One cell of each kind plus a pentagon: 5 cells, in VTK's order."""
    return daxpy.PolyData(SQUARE, verts=([0, 2], [4, 1]), lines=([0, 3], [0, 1, 2]),
                          polys=([0, 3, 8], [0, 1, 2, 0, 1, 4, 2, 3]),
                          strips=([0, 4], [0, 1, 3, 2]), **fields)


def test_cells_follow_vtk_order_in_blocks_by_kind_and_corner_count():
    surface = _every_kind()
    assert (surface.n_points, surface.n_cells, surface.family, surface.topology_name) == \
        (5, 5, "polydata", "polydata")
    assert [surface.n_cells_of(k) for k in ("verts", "lines", "polys", "strips")] == [1, 1, 2, 1]
    blocks = surface.cell_blocks()
    assert {name: b.cell_ids.tolist() for name, b in blocks.items()} == {
        "polyvertex2": [0], "polyline3": [1], "tri": [2], "polygon5": [3], "strip4": [4]}
    assert blocks["polygon5"].corners.tolist() == [[0, 1, 4, 2, 3]]
    assert surface.dimension == 2
    assert surface.offsets.tolist() == [0, 2, 5, 8, 13, 17]
    assert "PolyData(polydata, n_points=5, n_cells=5" in repr(surface)


def test_one_kind_shares_the_callers_arrays_read_only():
    offsets, ids = np.array([0, 3, 6]), np.array([0, 1, 2, 1, 2, 3])
    surface = daxpy.PolyData(SQUARE, polys=(offsets, ids))
    assert np.shares_memory(surface.connectivity, ids)
    assert np.shares_memory(surface.cell_blocks()["tri"].corners, ids)
    assert np.shares_memory(surface.points(), SQUARE)
    assert not surface.points().flags.writeable
    assert not surface.cell_array("polys")[1].flags.writeable
    assert ids.flags.writeable


def test_with_fields_and_field_lookup():
    surface = _every_kind(cell_data={"c": np.arange(5.0)})
    more = surface.with_fields(point_data={"t": np.zeros(5)})
    assert more.field("t")[1] == "points" and "t" not in surface.point_data
    assert more.field("c")[1] == "cells"
    with pytest.raises(FieldError, match="expected 5"):
        surface.with_fields(cell_data={"bad": np.zeros(4)})


@pytest.mark.parametrize("arrays, message", [
    ({"polys": ([0, 3], [0, 1, 9])}, r"connectivity of polys of polydata holds point id 9"),
    ({"lines": ([0, 2, 1], [0, 1])}, r"offsets of lines of polydata decrease at position 2"),
    ({"lines": ([0, 2], [0, 1, 2])}, r"last offset of lines of polydata is 2"),
    ({"polys": ([0, 3, 5], [0, 1, 2, 3, 4])}, r"cell 1 of polys of polydata has 2 points; "
                                               r"polys need at least 3"),
    ({"verts": ([0, 0], [])}, r"cell 0 of verts of polydata has 0 points"),
    ({"polys": [0, 1, 2]}, r"polys of polydata must be a pair \(offsets, connectivity\)"),
    ({"polys": ([0, 3.0], [0, 1, 2])}, r"offsets of polys of polydata must hold integers"),
])
def test_bad_cells_are_refused_by_name(arrays, message):
    with pytest.raises(InvalidDataSetError, match=message):
        daxpy.PolyData(SQUARE, **arrays)


def test_bad_points_are_refused():
    with pytest.raises(InvalidDataSetError, match=r"shape \(n_points, 3\)"):
        daxpy.PolyData(np.zeros((3, 2)))
    with pytest.raises(InvalidDataSetError, match="NaN or Inf"):
        daxpy.PolyData(np.full((3, 3), np.nan))


def test_cells_may_list_a_point_twice_as_vtk_strippers_make_them():
    import pyvista as pv

    stripped = pv.Sphere().strip()  # strips around the poles come back to their start
    surface = daxpy.io.interop.from_vtk(stripped)
    assert surface.n_cells_of("strips") == stripped.n_cells
    loop = daxpy.PolyData(SQUARE, lines=([0, 5], [0, 1, 2, 3, 0]),
                          point_data={"t": np.arange(5.0)}, cell_data={"c": [4.0]})
    # Each listing counts, as in vtkPointDataToCellData and vtkCellDataToPointData.
    assert PointToCell("t", backend="cpu")(loop).cell_data["t"].tolist() == [6 / 5]
    assert CellToPoint("c", backend="cpu")(loop).point_data["c"].tolist() == [4, 4, 4, 4, 0]


def test_empty_cell_arrays_mean_no_cells():
    surface = daxpy.PolyData(SQUARE, verts=([], []))
    assert surface.n_cells == 0 and surface.cell_blocks() == {} and surface.dimension == 0


def test_a_change_to_the_ids_is_seen_before_any_kernel_reads_them():
    ids = np.array([0, 1, 2])
    surface = daxpy.PolyData(SQUARE, polys=([0, 3], ids), point_data={"t": np.ones(5)})
    PointToCell("t", backend="cpu")(surface)
    ids[2] = 7
    with pytest.raises(InvalidDataSetError, match="changed after it was built.*point id 7"):
        PointToCell("t", backend="cpu")(surface)


@pytest.mark.parametrize("direction, vtk_class, source", [
    ("point_to_cell", "vtkPointDataToCellData", "points"),
    ("cell_to_point", "vtkCellDataToPointData", "cells")])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_averages_match_vtk_on_random_surfaces(direction, vtk_class, source, data):
    import vtk

    surface = data.draw(polydata_surfaces())
    n = surface.n_points if source == "points" else surface.n_cells
    values = data.draw(field_arrays(n))
    algorithm = getattr(vtk, vtk_class)()
    key = "point_data" if source == "points" else "cell_data"
    algorithm.SetInputData(surface.with_fields(**{key: {"f": values}}).to_vtk())
    algorithm.Update()
    target = "cells" if source == "points" else "points"
    compiled = execute(direction, surface, values, source, backend="cpu")
    expected = daxpy.io.interop.from_vtk(algorithm.GetOutput()).fields(target).get("f")
    if expected is None:  # VTK drops the array of a surface without cells
        assert surface.n_cells == 0
        expected = np.zeros_like(compiled)
    reference = {"point_to_cell": point_to_cell.point_to_cell_unstructured,
                 "cell_to_point": cell_to_point.cell_to_point_unstructured}[direction]
    assert compiled.dtype == values.dtype
    np.testing.assert_array_equal(compiled, reference(surface, values))
    tol = 2e-6 if values.dtype == np.float32 else 1e-13
    np.testing.assert_allclose(compiled, expected, rtol=tol, atol=10 * tol)


def test_averaging_filters_write_new_fields_at_the_other_association():
    values = np.arange(5.0)
    surface = _every_kind(point_data={"t": values}, cell_data={"c": values})
    cells = PointToCell("t", backend="cpu")(surface).cell_data["t"]
    # The strip 0 1 3 2 is one cell: the mean of its four points, as VTK's.
    assert cells.tolist() == [2.5, 1.0, 1.0, 2.0, 1.5]
    points = CellToPoint("c", backend="cpu")(surface).point_data["c"]
    assert points[3] == 3.5  # the pentagon (cell 3) and the strip (cell 4)


@pytest.mark.parametrize("make", [
    lambda: Magnitude("v"), lambda: Normalize("v"), lambda: BiasAdd("v", bias=[1.0]),
    lambda: FieldMap("v", "v * 2"), lambda: PassThrough("v")])
def test_maps_and_pipelines_run_on_polydata(make):
    v = np.random.default_rng(0).uniform(-1, 1, (5, 3))
    surface = _every_kind(point_data={"v": v})
    step = make()
    step.backend = "cpu"
    out = step(surface)
    assert isinstance(out, daxpy.PolyData) and out.n_cells == surface.n_cells
    # A map reads one tuple at a time: the same as on any grid of 5 points.
    line = step(daxpy.UniformGrid(dims=(5,), point_data={"v": v}))
    assert list(out.point_data) == list(line.point_data)
    for name in line.point_data:
        np.testing.assert_array_equal(out.point_data[name], line.point_data[name])


def test_a_pipeline_of_averages_and_maps_runs_on_polydata():
    surface = _every_kind(point_data={"v": np.ones((5, 3))})
    pipe = daxpy.pipeline(surface)
    out = pipe.field("v").magnitude().point_to_cell()
    result = pipe.run(backend="cpu", outputs=[out])
    np.testing.assert_allclose(result.cell_data[out.name], np.sqrt(3))


def test_gradient_refuses_cells_it_does_not_differentiate_yet_by_name():
    # Vertices, lines, triangles and quads are differentiated (test_gradient_surfaces.py).
    surface = _every_kind(point_data={"t": np.arange(5.0)})
    with pytest.raises(ArgumentError, match="Gradient runs on PolyData of vertices"):
        Gradient("t", backend="cpu")(surface)
    with pytest.raises(ArgumentError, match="Gradient runs on PolyData of vertices"):
        pipe = daxpy.pipeline(surface)
        pipe.run(backend="cpu", outputs=[pipe.gradient("t")])


def test_cuda_is_refused_and_auto_runs_on_the_cpu(monkeypatch):
    surface = _every_kind(point_data={"t": np.arange(5.0)})
    with pytest.raises(BackendError, match="CUDA backend does not take PolyData"):
        PointToCell("t", backend="cuda")(surface)
    with pytest.raises(BackendError, match="CUDA backend does not take PolyData"):
        execute("point_to_cell", surface, np.zeros(5), "points", backend="cuda")
    monkeypatch.setattr("daxpy.engine.backend.cuda_available", lambda: True)
    assert backend_for(surface, "auto") == "cpu"
    assert PointToCell("t")(surface).cell_data["t"].shape == (5,)
    monkeypatch.setenv("DAXPY_BACKEND", "cuda")
    with pytest.raises(BackendError, match="CUDA backend does not take PolyData"):
        backend_for(surface, "auto")


def test_dask_refuses_polydata_by_name():
    dask = pytest.importorskip("daxpy.dask")
    with pytest.raises(ArgumentError, match="daxpy.dask does not take PolyData yet"):
        dask.DaskGrid(_every_kind())
