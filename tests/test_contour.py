"""Contour against VTK (vtkFlyingEdges3D/2D on image data, vtkContourFilter on every
grid type), on random grids and fields; errors; pipelines (CPU == CUDA: test_geometry_gpu.py)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.errors import ArgumentError, FieldError, NaNPolicyError
from daxpy.filters import Contour, Gradient

from strategies import (curvilinear_grids, polydata_surfaces, rectilinear_grids, seeds,
                        uniform_grids, unstructured_grids, value_between)

vtk = pytest.importorskip("vtk")
from vtk.util.numpy_support import vtk_to_numpy  # noqa: E402


def _vtk_output(dataset, name, values, algorithm):
    flt = algorithm()
    flt.SetInputData(dataset.to_vtk())
    flt.SetInputArrayToProcess(0, 0, 0, 0, name)
    for i, value in enumerate(values):
        flt.SetValue(i, value)
    flt.Update()
    return flt.GetOutput()


def _cells(poly, kind, k):
    cells = getattr(poly, f"Get{kind.capitalize()}")()
    if cells.GetNumberOfCells() == 0:
        return np.zeros((0, k), np.int64)
    return vtk_to_numpy(cells.GetConnectivityArray()).reshape(-1, k)


def _points(poly):
    if poly.GetNumberOfPoints() == 0:
        return np.zeros((0, 3))
    return vtk_to_numpy(poly.GetPoints().GetData()).astype(np.float64)


def _same_points(ours, theirs, scale):
    assert ours.shape == theirs.shape
    if len(ours):
        distance = np.linalg.norm(ours[:, None, :] - theirs[None, :, :], axis=2)
        tol = 1e-5 * scale
        assert distance.min(axis=1).max() <= tol and distance.min(axis=0).max() <= tol


def _measure(points, cells):
    p = points.astype(np.float64)
    if cells.shape[1] == 3:
        a, b, c = (p[cells[:, i]] for i in range(3))
        return 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1).sum()
    if cells.shape[1] == 2:
        return np.linalg.norm(p[cells[:, 1]] - p[cells[:, 0]], axis=1).sum()
    return float(len(cells))


def _compare(ours, poly, scale, lengths=True):
    """Same counts per kind, same points, same area (and length) to 1e-5 (the points
    of cells that collapse stay, unused, as in VTK)."""
    theirs = _points(poly)
    _same_points(ours.points().astype(np.float64), theirs, scale)
    for kind, k in (("polys", 3), ("lines", 2), ("verts", 1)):
        mine = ours.cell_array(kind)[1].reshape(-1, k)
        other = _cells(poly, kind, k)
        assert len(mine) == len(other), kind
        if k == 3 or lengths:
            np.testing.assert_allclose(_measure(ours.points(), mine), _measure(theirs, other),
                                       rtol=1e-5, atol=1e-9 * scale ** k)


def _scale(grid):
    p = grid.points()
    return float(np.abs(p).max()) + 1.0 if len(p) else 1.0


@settings(max_examples=30, deadline=None)
@given(grid=uniform_grids(min_dimension=2, max_side=6), seed=seeds,
       dtype=st.sampled_from([np.float32, np.float64]))
def test_image_data_matches_flying_edges(grid, seed, dtype):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, grid.n_points).astype(dtype)
    grid = grid.with_fields(point_data={"s": values, "w": rng.random((grid.n_points, 2))})
    value = value_between(values, rng)
    ours = Contour("s", values=[value], backend="cpu")(grid)
    three_d = min(grid.dims) > 1
    algorithm = vtk.vtkFlyingEdges3D if three_d else vtk.vtkFlyingEdges2D
    poly = _vtk_output(grid, "s", [value], algorithm)
    _compare(ours, poly, _scale(grid))
    assert ours.point_data["s"].dtype == dtype
    np.testing.assert_array_equal(ours.point_data["s"], np.full(ours.n_points, dtype(value)))


@settings(max_examples=30, deadline=None)
@given(grid=st.one_of(rectilinear_grids(min_dimension=2, max_side=5),
                      curvilinear_grids(min_dimension=3, max_side=5)), seed=seeds)
def test_rectilinear_and_curvilinear_match_vtk_contour_filter(grid, seed):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, grid.n_points)
    grid = grid.with_fields(point_data={"s": values, "w": rng.random(grid.n_points)})
    value = value_between(values, rng)
    ours = Contour("s", values=[value], backend="cpu")(grid)
    poly = _vtk_output(grid, "s", [value], vtk.vtkContourFilter)
    # On 2-D grids vtkContourFilter resolves one saddle case the other way than
    # vtkFlyingEdges2D (whose choice daxpy follows): same points and counts.
    _compare(ours, poly, _scale(grid), lengths=min(grid.dims) > 1)
    _same_interpolated(ours, poly, "w")


def _same_interpolated(ours, poly, name):
    theirs = vtk_to_numpy(poly.GetPointData().GetArray(name)) if poly.GetNumberOfPoints() \
        else np.zeros(0)
    order_ours = np.lexsort(np.round(ours.points().astype(np.float64), 4).T)
    order_theirs = np.lexsort(np.round(_points(poly), 4).T)
    np.testing.assert_allclose(ours.point_data[name][order_ours], theirs[order_theirs],
                               rtol=1e-5, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(grid=unstructured_grids(lower_dimensional=False), seed=seeds)
def test_unstructured_grids_match_vtk_contour_filter(grid, seed):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, grid.n_points)
    grid = grid.with_fields(point_data={"s": values}, cell_data={"c": rng.random(grid.n_cells)})
    value = value_between(values, rng)
    ours = Contour("s", values=[value], backend="cpu")(grid)
    poly = _vtk_output(grid, "s", [value], vtk.vtkContourFilter)
    _compare(ours, poly, _scale(grid))
    # Each triangle carries its cell's value, as vtkContourFilter passes cell data.
    theirs = vtk_to_numpy(poly.GetCellData().GetArray("c")) if poly.GetNumberOfCells() \
        else np.zeros(0)
    np.testing.assert_array_equal(np.sort(ours.cell_data["c"]), np.sort(theirs))


@settings(max_examples=30, deadline=None)
@given(surface=polydata_surfaces(), seed=seeds)
def test_surfaces_give_the_lines_vtk_gives(surface, seed):
    rng = np.random.default_rng(seed)
    keep = {kind: surface.cell_array(kind) for kind in ("polys", "strips")}
    polys = keep["polys"]
    if np.diff(polys[0]).size and np.diff(polys[0]).max() > 4:
        with pytest.raises(ArgumentError, match="polygon of"):
            Contour("s", values=[0.0], backend="cpu")(
                surface.with_fields(point_data={"s": rng.random(surface.n_points)}))
        return
    values = rng.uniform(-1, 1, surface.n_points)
    surface = surface.with_fields(point_data={"s": values})
    value = value_between(values, rng)
    ours = Contour("s", values=[value], backend="cpu")(surface)
    poly = _vtk_output(surface, "s", [value], vtk.vtkContourFilter)
    _compare(ours, poly, 2.0)


def test_closed_surfaces_are_watertight():
    grid = daxpy.UniformGrid(dims=(24, 20, 22), origin=(-1.2, -1.0, -1.1), spacing=(0.1,) * 3)
    p = grid.points()
    grid.point_data["r"] = np.sqrt((p ** 2).sum(axis=1))
    surface = Contour("r", values=[0.77], backend="cpu")(grid)
    triangles = surface.cell_array("polys")[1].reshape(-1, 3)
    edges = np.sort(np.concatenate([triangles[:, [0, 1]], triangles[:, [1, 2]],
                                    triangles[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    assert len(triangles) > 100 and (counts == 2).all()


def test_normals_point_down_the_gradient_as_vtks():
    grid = daxpy.UniformGrid(dims=(9, 8, 7), spacing=(0.25, 0.3, 0.35))
    p = grid.points()
    grid.point_data["s"] = (p ** 2).sum(axis=1) + 0.3 * p[:, 0]
    ours = Contour("s", values=[2.0], compute_normals=True, backend="cpu")(grid)
    flt = vtk.vtkFlyingEdges3D()
    flt.SetInputData(grid.to_vtk())
    flt.SetInputArrayToProcess(0, 0, 0, 0, "s")
    flt.SetValue(0, 2.0)
    flt.SetComputeNormals(True)
    flt.Update()
    poly = flt.GetOutput()
    theirs = vtk_to_numpy(poly.GetPointData().GetArray("Normals"))
    order_ours = np.lexsort(np.round(ours.points().astype(np.float64), 4).T)
    order_theirs = np.lexsort(np.round(_points(poly), 4).T)
    assert ours.point_data["Normals"].dtype == np.float32
    np.testing.assert_allclose(ours.point_data["Normals"][order_ours], theirs[order_theirs],
                               atol=2e-2)


def test_several_values_and_n_values():
    grid = daxpy.UniformGrid(dims=(6, 6, 6), point_data={"t": np.arange(216.0)})
    both = Contour("t", values=[50.5, 150.5], backend="cpu")(grid)
    one = Contour("t", values=[50.5], backend="cpu")(grid)
    two = Contour("t", values=[150.5], backend="cpu")(grid)
    assert both.n_points == one.n_points + two.n_points
    assert both.n_cells == one.n_cells + two.n_cells
    spread = Contour("t", n_values=3, rng=(50.5, 150.5), backend="cpu")(grid)
    assert sorted(np.unique(spread.point_data["t"])) == [50.5, 100.5, 150.5]


def test_merge_points_false_gives_each_cell_its_points():
    grid = daxpy.UniformGrid(dims=(4, 4, 4), point_data={"t": np.arange(64.0)})
    merged = Contour("t", values=[31.5], backend="cpu")(grid)
    apart = Contour("t", values=[31.5], merge_points=False, backend="cpu")(grid)
    assert apart.n_points == 3 * apart.n_cells and apart.n_cells == merged.n_cells
    assert merged.n_points < apart.n_points


def test_cell_scalars_are_averaged_to_the_points_first():
    grid = daxpy.UniformGrid(dims=(4, 4, 4), cell_data={"c": np.arange(27.0)})
    from daxpy.filters import CellToPoint
    points = CellToPoint("c", result="p", backend="cpu")(grid)
    a = Contour("c", values=[13.2], backend="cpu")(grid)
    b = Contour("p", values=[13.2], backend="cpu")(points)
    np.testing.assert_array_equal(a.points(), b.points())


def test_bad_input_is_refused_clearly():
    grid = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0),
                                                          "v": np.ones((27, 3))})
    with pytest.raises(FieldError, match="3 components"):
        Contour("v", values=[1.0], backend="cpu")(grid)
    with pytest.raises(FieldError):
        Contour("nope", values=[1.0], backend="cpu")(grid)
    with pytest.raises(ArgumentError, match="not both"):
        Contour("t", values=[1.0], n_values=2)
    with pytest.raises(ArgumentError, match="finite"):
        Contour("t", values=[np.nan])
    empty = Contour("t", values=[1e9], backend="cpu")(grid)
    assert empty.n_points == 0 and empty.n_cells == 0


def test_nan_corners_make_no_surface_and_raise_on_request():
    values = np.arange(27.0)
    values[13] = np.nan
    grid = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": values})
    surface = Contour("t", values=[12.5], backend="cpu")(grid)
    assert np.isfinite(surface.points()).all()
    # Every cell touches the centre point: no cell can place its surface.
    assert surface.n_cells == 0
    with pytest.raises(NaNPolicyError):
        Contour("t", values=[12.5], nan_policy="raise", backend="cpu")(grid)


def test_qcriterion_isosurface_in_a_pipeline_equals_the_filters():
    grid = daxpy.UniformGrid(dims=(12, 11, 10), spacing=(0.5,) * 3)
    p = grid.points()
    grid.point_data["v"] = np.stack([np.sin(p[:, 0]) * np.cos(p[:, 1]),
                                     -np.cos(p[:, 0]) * np.sin(p[:, 1]), 0 * p[:, 2]], axis=1)
    pipe = daxpy.pipeline(grid)
    pipe.gradient("v", qcriterion=True, compute_gradient=False).contour(values=[0.1])
    ran = pipe.run(backend="cpu")
    q = Gradient("v", qcriterion=True, compute_gradient=False, backend="cpu")(grid)
    direct = Contour("QCriterion", values=[0.1], backend="cpu")(q)
    np.testing.assert_array_equal(ran.points(), direct.points())
    with pytest.raises(ArgumentError, match="ends at"):
        pipe.field("QCriterion").magnitude()
