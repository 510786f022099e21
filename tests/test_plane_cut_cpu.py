"""The host's slice and clip of an image or rectilinear grid from its plane's axes'
terms (daxpy.worklets._plane_cpu: the distance made where the rows read it) give the
bits of the cut and the clip of the distance field, which the filters made before: the
slice on the fast path and on the careful one (planes through grid points)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.filters import Slice

pytest.importorskip("numba")

from daxpy.worklets._plane_cpu import plane_clip, plane_cut  # noqa: E402
from daxpy.worklets.clip_cpu import clip_structured  # noqa: E402
from daxpy.worklets.contour_cpu import contour_structured  # noqa: E402

_FIELDS = ("lo", "hi", "t")


def _grid(kind, dims, dtype, rng):
    if kind == "integer":   # planes through grid points cut through many of them
        return daxpy.UniformGrid(dims=dims)
    if kind == "uniform":
        return daxpy.UniformGrid(dims=dims, spacing=tuple(rng.uniform(0.2, 2.0, 3)),
                                 origin=tuple(rng.uniform(-3, 3, 3)))
    axes = [np.cumsum(rng.uniform(0.1, 2.0, d)).astype(dtype) - 2 for d in dims]
    return daxpy.RectilinearGrid(*axes)


def _terms(grid, origin, normal):
    return [(grid.axis_coordinates(a) - float(origin[a])) * float(normal[a]) for a in range(3)]


def _same_cut(got, want):
    for name in _FIELDS:
        assert getattr(got, name).tobytes() == getattr(want, name).tobytes(), name
    assert sorted(got.cells) == sorted(want.cells)
    for size in want.cells:
        assert np.array_equal(got.cells[size], want.cells[size])
        assert np.array_equal(got.source[size], want.source[size])


_PLANES = dict(kind=st.sampled_from(["integer", "uniform", "rectilinear"]),
               dims=st.tuples(*[st.integers(2, 12)] * 3),
               dtype=st.sampled_from(["float32", "float64"]), through_point=st.booleans(),
               zeros=st.sampled_from([(), (0,), (1,), (2,), (0, 1)]),
               scale=st.integers(-8, 2), seed=st.integers(0, 2**31))
"""A grid and a plane: whole normals through rows of grid points, tiny ones that
round rows flat, zero components."""


def _plane(kind, dims, dtype, through_point, zeros, scale, seed):
    rng = np.random.default_rng(seed)
    grid = _grid(kind, dims, dtype, rng)
    points = grid.points()
    origin = (points[rng.integers(0, grid.n_points)].astype(np.float64) if through_point
              else rng.uniform(points.min(axis=0), points.max(axis=0)))
    normal = (rng.integers(-1, 3, 3).astype(np.float64) if kind == "integer"
              else rng.normal(size=3) * 10.0 ** scale)
    normal[list(zeros)] = 0.0
    if not normal.any():
        normal[2] = 1.0
    return grid, _terms(grid, origin, normal), rng


@settings(max_examples=100, deadline=None)
@given(**_PLANES)
def test_the_cut_from_terms_is_the_cut_of_the_distance_field(**plane):
    grid, terms, _ = _plane(**plane)
    field = ((terms[2][:, None, None] + terms[1][None, :, None]) + terms[0][None, None, :]).ravel()
    _same_cut(plane_cut(grid, terms), contour_structured(grid, field, 0.0))


@settings(max_examples=60, deadline=None)
@given(**_PLANES)
def test_a_cut_from_terms_without_edges_or_sources_has_the_same_points_and_cells(**plane):
    grid, terms, _ = _plane(**plane)
    whole, lean = plane_cut(grid, terms), plane_cut(grid, terms, edges=False, sources=False)
    assert lean.lo is None and lean.t is None and lean.source == {}
    assert lean.points.tobytes() == whole.points.tobytes()
    assert sorted(lean.cells) == sorted(whole.cells)
    for size, cells in whole.cells.items():
        assert lean.cells[size].tobytes() == cells.tobytes()


@pytest.mark.parametrize("origin", [(2.0, 3.0, 4.5), (2.1, 3.3, 4.2)])
@pytest.mark.parametrize("interpolate", [False, ["c"], ["w"]])
def test_the_slice_filter_reading_fewer_fields_makes_the_same_surface(origin, interpolate):
    # Without point fields the cut writes no edges, without cell fields no sources.
    grid = daxpy.UniformGrid(dims=(9, 8, 7), spacing=(0.5, 1.0, 1.5),
                             point_data={"w": np.arange(504, dtype=np.float32)},
                             cell_data={"c": np.arange(336, dtype=np.float64)})
    slicing = dict(normal=(1.0, 1.0, 1.0), origin=origin, backend="cpu")
    full = Slice(**slicing)(grid)
    part = Slice(interpolate=interpolate, **slicing)(grid)
    assert part.points().tobytes() == full.points().tobytes() and part.n_points > 0
    for a, b in zip(part.cell_array("polys"), full.cell_array("polys")):
        assert np.array_equal(a, b)
    assert sorted(part.point_data) + sorted(part.cell_data) == ([] if not interpolate
                                                                else interpolate)
    for data, whole in ((part.point_data, full.point_data), (part.cell_data, full.cell_data)):
        for name, values in data.items():
            assert np.asarray(values).tobytes() == np.asarray(whole[name]).tobytes(), name


@settings(max_examples=100, deadline=None)
@given(invert=st.booleans(), at_zero=st.booleans(), **_PLANES)
def test_the_clip_from_terms_is_the_clip_of_the_implicit_planes_field(invert, at_zero, **plane):
    grid, terms, rng = _plane(**plane)
    # The clip's implicit plane adds the x term first (vtkPlane's order).
    field = ((terms[0][None, None, :] + terms[1][None, :, None]) + terms[2][:, None, None]).ravel()
    value = 0.0 if at_zero else float(rng.normal())
    got, want = plane_clip(grid, terms, value, invert), clip_structured(grid, field, value, invert)
    for name, kept in vars(want).items():
        mine = getattr(got, name)
        assert (mine.tobytes() == kept.tobytes() if isinstance(kept, np.ndarray)
                else mine == kept), name


@pytest.mark.parametrize("origin", [(2.0, 3.0, 4.5), (2.1, 3.3, 4.2)])
def test_the_slice_filter_cuts_an_image_from_its_terms_with_the_fields_bits(origin):
    grid = daxpy.UniformGrid(dims=(9, 8, 7), spacing=(0.5, 1.0, 1.5),
                             point_data={"w": np.arange(504, dtype=np.float32)})
    normal = np.ones(3) / np.linalg.norm(np.ones(3))   # the filter's unit normal
    made = Slice(normal=(1.0, 1.0, 1.0), origin=origin, backend="cpu")(grid)
    terms = _terms(grid, origin, normal)
    field = ((terms[2][:, None, None] + terms[1][None, :, None]) + terms[0][None, None, :]).ravel()
    want = contour_structured(grid, field, 0.0)
    assert made.n_points == want.n_points and made.n_points > 0
    w = grid.point_data["w"]
    t = want.t.astype(np.float32)
    assert np.asarray(made.point_data["w"]).tobytes() == (
        w[want.lo] + t * (w[want.hi] - w[want.lo])).tobytes()


def test_the_clip_filter_clips_an_image_from_its_terms_with_the_fields_bits():
    grid = daxpy.UniformGrid(dims=(9, 8, 7), spacing=(0.5, 1.0, 1.5),
                             point_data={"w": np.arange(504, dtype=np.float32)})
    normal = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    made = daxpy.filters.Clip(plane=((2.0, 3.0, 4.5), (1.0, -2.0, 0.5)), backend="cpu")(grid)
    terms = _terms(grid, (2.0, 3.0, 4.5), normal)
    field = ((terms[0][None, None, :] + terms[1][None, :, None]) + terms[2][:, None, None]).ravel()
    want = clip_structured(grid, field, 0.0)
    assert made.n_cells == want.cell_types.shape[0] > 0
    assert np.asarray(made.connectivity).tobytes() == want.connectivity.tobytes()


@pytest.mark.parametrize("make", [plane_cut, plane_clip])
def test_grids_not_3d_are_left_to_the_field(make):
    from daxpy.worklets._numba import CompiledUnavailable

    grid = daxpy.UniformGrid(dims=(4, 5, 1))
    with pytest.raises(CompiledUnavailable):
        make(grid, _terms(grid, (1.0, 1.0, 0.0), (1.0, 1.0, 0.0)))
