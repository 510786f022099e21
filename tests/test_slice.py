"""Slice against vtkCutter on random grids and planes; axis-aligned slices as grids."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.errors import ArgumentError
from daxpy.filters import Slice

from strategies import seeds, structured_grids, unstructured_grids
from test_contour import _compare, _same_interpolated, _scale

vtk = pytest.importorskip("vtk")


def _vtk_cut(grid, origin, normal):
    plane = vtk.vtkPlane()
    plane.SetOrigin(*origin)
    plane.SetNormal(*normal)
    cutter = vtk.vtkCutter()
    cutter.SetCutFunction(plane)
    cutter.SetInputData(grid.to_vtk())
    cutter.Update()
    return cutter.GetOutput()


@settings(max_examples=30, deadline=None)
@given(grid=st.one_of(structured_grids(min_dimension=3, max_side=5),
                      unstructured_grids(lower_dimensional=False)), seed=seeds)
def test_planes_cut_as_vtk_cutter_cuts(grid, seed):
    rng = np.random.default_rng(seed)
    grid = grid.with_fields(point_data={"w": rng.random(grid.n_points)})
    points = grid.points()
    origin = points.mean(axis=0) + rng.uniform(-0.3, 0.3, 3)
    normal = rng.normal(size=3)
    ours = Slice(normal=normal, origin=origin, backend="cpu")(grid)
    poly = _vtk_cut(grid, origin, normal / np.linalg.norm(normal))
    _compare(ours, poly, _scale(grid))
    _same_interpolated(ours, poly, "w")


@settings(max_examples=20, deadline=None)
@given(grid=structured_grids(min_dimension=3, max_side=6), seed=seeds,
       axis=st.integers(0, 2))
def test_axis_planes_give_grids_with_the_cutters_points_and_values(grid, seed, axis):
    if grid.family == "curvilinear":
        return
    rng = np.random.default_rng(seed)
    grid = grid.with_fields(point_data={"w": rng.random(grid.n_points)})
    along = grid.axis_coordinates(axis)
    at = float(rng.uniform(along[0], along[-1]))
    normal = np.eye(3)[axis]
    origin = grid.points().mean(axis=0)
    origin[axis] = at
    flat = Slice(normal=normal, origin=origin, backend="cpu")(grid)
    assert flat.family == grid.family and flat.dims[axis] == 1
    poly = Slice(normal=normal, origin=origin, structured=False, backend="cpu")(grid)
    theirs = _vtk_cut(grid, origin, normal)
    _compare(poly, theirs, _scale(grid))
    # The grid's points are the surface's, with the same values.
    order_flat = np.lexsort(np.round(flat.points(), 6).T)
    order_poly = np.lexsort(np.round(poly.points().astype(np.float64), 6).T)
    np.testing.assert_allclose(flat.points()[order_flat],
                               poly.points()[order_poly].astype(np.float64), atol=1e-5)
    np.testing.assert_allclose(flat.point_data["w"][order_flat],
                               poly.point_data["w"][order_poly], rtol=1e-12)


def test_several_planes_make_one_surface():
    grid = daxpy.UniformGrid(dims=(5, 5, 5), point_data={"t": np.arange(125.0)})
    planes = [((1.5, 0, 0), (1, 0, 0)), ((0, 2.5, 0), (0, 1, 0))]
    both = Slice(planes=planes, backend="cpu")(grid)
    one = Slice(planes=planes[:1], structured=False, backend="cpu")(grid)
    two = Slice(planes=planes[1:], structured=False, backend="cpu")(grid)
    assert both.n_cells == one.n_cells + two.n_cells


def test_bad_planes_are_refused():
    with pytest.raises(ArgumentError, match="zero"):
        Slice(normal=(0, 0, 0))
    with pytest.raises(ArgumentError, match="normal"):
        Slice(normal="w")
    with pytest.raises(ArgumentError, match="origin"):
        Slice(origin=(0, np.nan, 0))
    grid = daxpy.UniformGrid(dims=(3, 3, 3))
    with pytest.raises(ArgumentError, match="outside"):
        Slice("x", (7.0, 0, 0), backend="cpu")(grid)
    empty = Slice("x", (7.0, 0, 0), structured=False, backend="cpu")(grid)
    assert empty.n_points == 0
