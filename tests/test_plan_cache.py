"""Kernel plans made once (daxpy.cuda.plan_cache): shared by uniform grids of one shape,
kept by other grids with their device topology and dropped with it; built each time
where the call's parameters are not hashable. No GPU needed: plans are stand-ins."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.cuda import plan_cache
from daxpy.cuda.device import forget


def _counter():
    made = itertools.count()
    return lambda: next(made)


@settings(max_examples=30, deadline=None)
@given(dims=st.tuples(st.integers(2, 6), st.integers(2, 6)),
       spacing=st.floats(0.5, 2.0), origin=st.floats(-5, 5))
def test_uniform_grids_of_one_shape_share_a_plan_and_others_do_not(dims, spacing, origin):
    build, token = _counter(), object()  # a call of this example's own
    what = ("test", token)
    a = daxpy.UniformGrid(dims=dims, spacing=(spacing, spacing))
    b = daxpy.UniformGrid(dims=dims, spacing=(spacing, spacing), origin=(origin, origin))
    first = plan_cache.reused_plan(a, what, (token,), build)
    assert plan_cache.reused_plan(b, what, (token,), build) == first
    other = daxpy.UniformGrid(dims=(dims[0] + 1, dims[1]), spacing=(spacing, spacing))
    assert plan_cache.reused_plan(other, what, (token,), build) != first


def test_other_grids_keep_their_own_plan_until_forgotten():
    build = _counter()
    grid = daxpy.RectilinearGrid([0.0, 1.0, 3.0], [0.0, 2.0])
    twin = daxpy.RectilinearGrid([0.0, 1.0, 3.0], [0.0, 2.0])
    kept = plan_cache.reused_plan(grid, ("test",), (), build)
    assert plan_cache.reused_plan(grid, ("test",), (), build) == kept
    # Another grid's arrays are its own: its plan is its own.
    assert plan_cache.reused_plan(twin, ("test",), (), build) != kept
    # A dataset derived from the grid shares its topology's cache, and so its plan.
    derived = grid.with_fields(point_data={"f": np.zeros(grid.n_points)})
    assert plan_cache.reused_plan(derived, ("test",), (), build) == kept
    forget(grid)
    assert plan_cache.reused_plan(grid, ("test",), (), build) != kept


def test_unhashable_calls_are_planned_every_time():
    build = _counter()
    grid = daxpy.UniformGrid(dims=(3, 3))
    what = ("test", plan_cache.frozen_params({"bias": [1.0, 2.0]}))
    assert plan_cache.reused_plan(grid, what, (), build) != plan_cache.reused_plan(
        grid, what, (), build)
