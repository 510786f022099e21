"""The compiled host assembly of surface points (coordinates, interpolated fields)
gives the array programs' bits, on every grid family and thread count."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.filters._surface import _array_coordinates
from daxpy.worklets import _numba
from daxpy.worklets._edge_cut import EdgeCut, _array_interpolate
from daxpy.worklets._edge_points_cpu import MIN_POINTS, edge_coordinates, edge_values

pytest.importorskip("numba")


def _grid(family, dims, dtype, rng):
    if family == "uniform":
        return daxpy.UniformGrid(dims=dims, spacing=tuple(rng.uniform(0.1, 2.0, 3)),
                                 origin=tuple(rng.uniform(-5, 5, 3)))
    if family == "rectilinear":
        axes = [np.cumsum(rng.uniform(0.1, 1.0, d)).astype(dtype) for d in dims]
        return daxpy.RectilinearGrid(*axes)
    points = rng.normal(size=(int(np.prod(dims)), 3)).astype(dtype)
    return daxpy.CurvilinearGrid(dims, points)


def _cut(dims, rng):
    """Random pairs of points, and pairs a step apart along x, y or z (or none):
    grid edges, with those that would wrap past a row's or plane's end."""
    n_points = int(np.prod(dims))
    lo = rng.integers(0, n_points, MIN_POINTS + 7)
    steps = np.array([0, 1, dims[0], dims[0] * dims[1]])[rng.integers(0, 4, lo.shape[0])]
    hi = np.where(rng.random(lo.shape[0]) < 0.5, rng.integers(0, n_points, lo.shape[0]),
                  np.minimum(lo + steps, n_points - 1))
    return EdgeCut(lo, hi, rng.uniform(0, 1, lo.shape[0]), {}, {})


@settings(max_examples=25, deadline=None)
@given(family=st.sampled_from(["uniform", "rectilinear", "curvilinear"]),
       dims=st.tuples(*[st.integers(1, 9)] * 3), dtype=st.sampled_from([np.float32, np.float64]),
       components=st.sampled_from([0, 1, 3]), threads=st.sampled_from([1, 2, 4]),
       seed=st.integers(0, 2 ** 16))
def test_compiled_surface_points_are_the_array_programs_bits(family, dims, dtype, components,
                                                             threads, seed):
    rng = np.random.default_rng(seed)
    grid = _grid(family, dims, dtype, rng)
    cut = _cut(dims, rng)
    shape = (grid.n_points,) + ((components,) if components else ())
    values = (rng.normal(size=shape) * 1e3).astype(dtype)
    values.ravel()[:: 11] = np.nan
    _numba.set_threads(threads)
    try:
        ours_points, ours_values = edge_coordinates(grid, cut), edge_values(values, cut)
    finally:
        _numba.set_threads(None)
    want_points, want_values = _array_coordinates(grid, cut), _array_interpolate(values, cut)
    assert ours_points.dtype == want_points.dtype and ours_values.dtype == want_values.dtype
    assert ours_points.tobytes() == want_points.tobytes()
    assert ours_values.shape == want_values.shape
    assert ours_values.tobytes() == want_values.tobytes()
