"""The compiled classification of unstructured cells and the compiled plane
distances (a slice's, a clip's) give the array programs' results (NaN and Inf corners, float32 values
next to the cut value, every grid family a slice measures, any thread count)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.filters import Clip
from daxpy.filters._implicit import _array_distance, coordinate_columns, implicit_function
from daxpy.filters.slice import _array_axis_distance
from daxpy.worklets import _numba
from daxpy.worklets._cases_cpu import MIN_CELLS, cell_cases
from daxpy.worklets._plane_cpu import MIN_POINTS, axis_plane_distance, plane_distance
from daxpy.worklets.contour import _array_cases

pytest.importorskip("numba")


@settings(max_examples=30, deadline=None)
@given(corners=st.sampled_from([2, 3, 4, 5, 6, 8]), n_points=st.integers(1, 500),
       dtype=st.sampled_from([np.float32, np.float64]), threads=st.sampled_from([1, 2, 4]),
       seed=st.integers(0, 2 ** 16))
def test_compiled_cases_are_the_array_programs(corners, n_points, dtype, threads, seed):
    rng = np.random.default_rng(seed)
    scalars = rng.normal(size=n_points).astype(dtype)
    scalars[rng.random(n_points) < 0.05] = np.nan
    scalars[rng.random(n_points) < 0.02] = np.inf
    value = float(scalars[0]) if np.isfinite(scalars[0]) else 0.1
    # Values one float32 step either side of the value: compared as in float64.
    scalars[rng.random(n_points) < 0.1] = np.nextafter(dtype(value), dtype(np.inf))
    ids = rng.integers(0, n_points, (MIN_CELLS + 13, corners))
    _numba.set_threads(threads)
    try:
        ours = cell_cases(ids, scalars, value + 1e-12)
    finally:
        _numba.set_threads(None)
    assert ours.dtype == np.int64
    np.testing.assert_array_equal(ours, _array_cases(ids, scalars, value + 1e-12))


def test_a_corner_id_out_of_range_is_refused():
    ids = np.zeros((MIN_CELLS, 4), np.int64)
    ids[7, 2] = 3
    with pytest.raises(IndexError, match="out of range"):
        cell_cases(ids, np.zeros(3), 0.5)


@settings(max_examples=20, deadline=None)
@given(dims=st.tuples(st.integers(2, 40), st.integers(2, 40), st.integers(2, 40)),
       rectilinear=st.booleans(), threads=st.sampled_from([1, 2, 4]),
       seed=st.integers(0, 2 ** 16))
def test_compiled_plane_distances_are_the_array_programs(dims, rectilinear, threads, seed):
    rng = np.random.default_rng(seed)
    if rectilinear:
        grid = daxpy.RectilinearGrid(*[np.cumsum(rng.uniform(0.1, 1, d)) for d in dims])
    else:
        grid = daxpy.UniformGrid(dims=dims, spacing=tuple(rng.uniform(0.1, 2, 3)))
    origin, normal = rng.normal(size=3), rng.normal(size=3)
    parts = [(grid.axis_coordinates(a) - origin[a]) * normal[a] for a in range(3)]
    points = grid.points()
    _numba.set_threads(threads)
    try:
        by_axes = axis_plane_distance(parts, grid.n_points) \
            if grid.n_points >= MIN_POINTS else _array_axis_distance(parts, grid.n_points)
        by_points = plane_distance(np.repeat(points, 1 + MIN_POINTS // len(points), axis=0),
                                   origin, normal)
    finally:
        _numba.set_threads(None)
    assert by_axes.tobytes() == _array_axis_distance(parts, grid.n_points).tobytes()
    many = np.repeat(points, 1 + MIN_POINTS // len(points), axis=0)
    assert by_points.tobytes() == _array_distance(many, origin.tolist(),
                                                  normal.tolist()).tobytes()


@settings(max_examples=15, deadline=None)
@given(n_points=st.integers(1, 3 * MIN_POINTS), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 2 ** 16))
def test_a_clip_planes_values_on_host_points_are_the_array_programs(n_points, dtype, seed):
    from daxpy.data.celltypes import VERTEX

    rng = np.random.default_rng(seed)
    points = (rng.normal(size=(n_points, 3)) * 10).astype(dtype)
    grid = daxpy.UnstructuredGrid.from_blocks(points, {VERTEX: np.arange(n_points)[:, None]})
    plane = (tuple(rng.normal(size=3)), tuple(rng.normal(size=3)))
    clip = Clip(plane=plane, backend="cpu")
    want = implicit_function(plane, None, None)(*coordinate_columns(grid, "cpu"))
    assert clip._scalars(grid).tobytes() == want.tobytes()
