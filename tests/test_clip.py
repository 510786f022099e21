"""Clip against vtkTableBasedClipDataSet on random grids, fields and implicit
functions; crinkle, both, errors (CPU == CUDA: test_geometry_gpu.py)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.errors import ArgumentError, FieldError
from daxpy.filters import Clip

from strategies import seeds, simple_surfaces, structured_grids, unstructured_grids
from surface_measure import surface_measure

vtk = pytest.importorskip("vtk")
from vtk.util.numpy_support import vtk_to_numpy  # noqa: E402


def _sizes(data):
    sizes = vtk.vtkCellSizeFilter()
    sizes.SetInputData(data)
    sizes.Update()
    cells = sizes.GetOutput().GetCellData()
    return sum(float(np.abs(vtk_to_numpy(cells.GetArray(n))).sum())
               for n in ("Length", "Area", "Volume"))


def _types(data):
    if data.GetNumberOfCells() == 0:
        return {}
    kinds, counts = np.unique([data.GetCellType(i) for i in range(data.GetNumberOfCells())],
                              return_counts=True)
    return dict(zip(kinds.tolist(), counts.tolist()))


def _vtk_clip(grid, function=None, value=0.0, invert=False):
    flt = vtk.vtkTableBasedClipDataSet()
    data = grid.to_vtk()
    if grid.family in ("uniform", "rectilinear", "curvilinear") and min(grid.dims) == 1:
        # On 2-D structured grids VTK's own structured path cuts pixels into
        # triangles only; daxpy cuts their quads as VTK's unstructured path does
        # (the same area): compared with that path.
        append = vtk.vtkAppendFilter()
        # The image's points as VTK holds them (double), not rounded to float.
        append.SetOutputPointsPrecision(vtk.vtkAlgorithm.DOUBLE_PRECISION)
        append.SetInputData(data)
        append.Update()
        data = append.GetOutput()
    if function is None:
        data.GetPointData().SetActiveScalars("s")
    else:
        flt.SetClipFunction(function)
    flt.SetInputData(data)
    flt.SetValue(value)
    flt.SetInsideOut(invert)
    flt.Update()
    # A copy that owns its arrays (see test_threshold._vtk_threshold).
    output = vtk.vtkUnstructuredGrid()
    output.DeepCopy(flt.GetOutput())
    return output


def _compare(ours, theirs):
    """The same cells (by type), points and volume."""
    mine = ours.to_vtk()
    assert _types(mine) == _types(theirs)
    assert ours.n_points == theirs.GetNumberOfPoints()
    np.testing.assert_allclose(_sizes(mine), _sizes(theirs), rtol=1e-5, atol=1e-9)


def _between(values, rng):
    ordered = np.unique(values)
    i = int(rng.integers(0, max(ordered.size - 1, 1)))
    return float((ordered[i] + ordered[min(i + 1, ordered.size - 1)]) / 2)


ANY_GRID = st.one_of(structured_grids(max_side=5), unstructured_grids())


def _scalars(grid, seed):
    rng = np.random.default_rng(seed)
    return rng, rng.uniform(-1, 1, grid.n_points)


@settings(max_examples=40, deadline=None)
@given(grid=ANY_GRID, seed=seeds, invert=st.booleans())
def test_scalar_clips_match_vtk(grid, seed, invert):
    rng, values = _scalars(grid, seed)
    grid = grid.with_fields(point_data={"s": values, "w": rng.random((grid.n_points, 2))},
                            cell_data={"c": rng.random(grid.n_cells)})
    value = _between(values, rng)
    ours = Clip("s", value, invert=invert, backend="cpu")(grid)
    theirs = _vtk_clip(grid, value=value, invert=invert)
    _compare(ours, theirs)
    if theirs.GetNumberOfPoints():
        np.testing.assert_allclose(np.sort(ours.point_data["s"]),
                                   np.sort(vtk_to_numpy(theirs.GetPointData().GetArray("s"))),
                                   rtol=1e-6, atol=1e-9)
        np.testing.assert_array_equal(np.sort(ours.cell_data["c"]),
                                      np.sort(vtk_to_numpy(theirs.GetCellData().GetArray("c"))))


@settings(max_examples=30, deadline=None)
@given(grid=ANY_GRID, seed=seeds, invert=st.booleans())
def test_kept_points_keep_their_values_as_they_are(grid, seed, invert):
    # VTK copies a kept point's values: integers past 2^53 and infinities too (a
    # weighted sum of the point with itself rounded the one and made NaN of the other).
    rng, values = _scalars(grid, seed)
    ids = np.arange(grid.n_points)
    big = 2**60 + ids
    infinite = np.where(ids % 2, np.inf, -np.inf).astype(np.float32)
    grid = grid.with_fields(point_data={"s": values, "big": big, "inf": infinite})
    ours = Clip("s", _between(values, rng), invert=invert, backend="cpu")(grid)
    # The kept points: those whose scalar is an input point's (a cut point's is the
    # clip value, between two of them).
    kept = np.isin(ours.point_data["s"], values)
    found = ours.point_data["big"][kept] - 2**60
    assert ours.point_data["big"].dtype == np.int64 and ((found >= 0) & (found < ids.size)).all()
    np.testing.assert_array_equal(ours.point_data["s"][kept], values[found])
    np.testing.assert_array_equal(ours.point_data["inf"][kept], infinite[found])
    np.testing.assert_array_equal(ours.points()[kept], grid.points()[found].astype(
        ours.points().dtype))


@settings(max_examples=30, deadline=None)
@given(grid=st.one_of(structured_grids(min_dimension=3, max_side=5),
                      unstructured_grids(lower_dimensional=False)), seed=seeds,
       kind=st.sampled_from(["plane", "sphere", "box"]), invert=st.booleans())
def test_implicit_functions_match_vtk(grid, seed, kind, invert):
    rng = np.random.default_rng(seed)
    points = grid.points()
    centre = points.mean(axis=0) + rng.uniform(-0.2, 0.2, 3)
    if kind == "plane":
        normal = rng.normal(size=3)
        function = vtk.vtkPlane()
        function.SetOrigin(*centre)
        function.SetNormal(*(normal / np.linalg.norm(normal)))
        options = {"plane": (centre, normal)}
    elif kind == "sphere":
        radius = float(np.ptp(points, axis=0).max() * rng.uniform(0.2, 0.6)) + 0.1
        function = vtk.vtkSphere()
        function.SetCenter(*centre)
        function.SetRadius(radius)
        options = {"sphere": (centre, radius)}
    else:
        half = np.ptp(points, axis=0) * rng.uniform(0.1, 0.4, 3) + 0.05
        bounds = np.ravel(np.stack([centre - half, centre + half], axis=1))
        function = vtk.vtkBox()
        function.SetBounds(*bounds)
        options = {"box": bounds}
    ours = Clip(**options, invert=invert, backend="cpu")(grid)
    theirs = _vtk_clip(grid, function, invert=invert)
    _compare(ours, theirs)


@settings(max_examples=40, deadline=None)
@given(surface=simple_surfaces(), seed=seeds, invert=st.booleans())
def test_polydata_clips_match_vtk(surface, seed, invert):
    # vtkTableBasedClipDataSet on a surface: its cells clipped into an unstructured grid.
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, surface.n_points)
    surface = surface.with_fields(point_data={"s": values},
                                  cell_data={"c": rng.random(surface.n_cells)})
    value = _between(values, rng)
    ours = Clip("s", value, invert=invert, backend="cpu")(surface)
    theirs = _vtk_clip(surface, value=value, invert=invert)
    assert isinstance(ours, daxpy.UnstructuredGrid)
    assert _types(ours.to_vtk()) == _types(theirs)
    assert ours.n_points == theirs.GetNumberOfPoints()
    np.testing.assert_allclose(surface_measure(ours), surface_measure(theirs), rtol=1e-5,
                               atol=1e-9)
    if theirs.GetNumberOfCells():
        np.testing.assert_array_equal(np.sort(ours.cell_data["c"]),
                                      np.sort(vtk_to_numpy(theirs.GetCellData().GetArray("c"))))


def test_both_halves_make_the_whole_and_crinkle_keeps_whole_cells():
    grid = daxpy.UniformGrid(dims=(6, 5, 4), point_data={"s": np.arange(120.0)})
    kept, away = Clip("s", 47.5, both=True, backend="cpu")(grid)
    whole = _sizes(grid.to_vtk())
    np.testing.assert_allclose(_sizes(kept.to_vtk()) + _sizes(away.to_vtk()), whole)
    crinkled = Clip("s", 47.5, crinkle=True, backend="cpu")(grid)
    assert set(crinkled.cell_types.tolist()) == {12}
    cut_or_kept = Clip("s", 47.5, crinkle=True, invert=True, backend="cpu")(grid)
    # Every cell is whole on one side or cut (then on both).
    assert crinkled.n_cells + cut_or_kept.n_cells >= grid.n_cells


def test_bad_input_is_refused_clearly():
    grid = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"v": np.ones((27, 3))})
    with pytest.raises(ArgumentError, match="exactly one"):
        Clip()
    with pytest.raises(ArgumentError, match="exactly one"):
        Clip("v", plane=((0, 0, 0), (1, 0, 0)))
    with pytest.raises(ArgumentError, match="zero"):
        Clip(plane=((0, 0, 0), (0, 0, 0)))
    with pytest.raises(ArgumentError, match="radius"):
        Clip(sphere=((0, 0, 0), -1))
    with pytest.raises(ArgumentError, match="min <= max"):
        Clip(box=(1, 0, 0, 1, 0, 1))
    with pytest.raises(FieldError, match="3 components"):
        Clip("v", backend="cpu")(grid)
    empty = Clip(plane=((10, 0, 0), (1, 0, 0)), backend="cpu")(grid)
    assert empty.n_cells == 0 and empty.n_points == 0
