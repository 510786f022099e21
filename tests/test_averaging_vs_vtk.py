"""Point-to-cell and cell-to-point against VTK on every grid family (both directions)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.worklets import _averaging  # noqa: E402

from averaging_reference import DEGENERATE, DIRECTIONS, assert_matches_vtk, size  # noqa: E402
from strategies import field_arrays, structured_grids, unstructured_grids  # noqa: E402


@pytest.mark.parametrize("direction", DIRECTIONS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_structured_grids_match_vtk(direction, data):
    grid = data.draw(structured_grids())
    source = DIRECTIONS[direction][1]
    assert_matches_vtk(direction, grid, data.draw(field_arrays(size(grid, source))))


@pytest.mark.parametrize("direction", DIRECTIONS)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_unstructured_grids_match_vtk(direction, data):
    grid = data.draw(unstructured_grids())
    source = DIRECTIONS[direction][1]
    assert_matches_vtk(direction, grid, data.draw(field_arrays(size(grid, source))))


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("grid", DEGENERATE, ids=lambda g: f"{g.topology_name}-{g.n_points}")
@pytest.mark.parametrize("ncomp", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_degenerate_grids_match_vtk(direction, grid, ncomp, dtype):
    rng = np.random.default_rng(ncomp)
    n = size(grid, DIRECTIONS[direction][1])
    shape = (n,) if ncomp == 1 else (n, ncomp)
    assert_matches_vtk(direction, grid, rng.uniform(-10, 10, shape).astype(dtype))


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("dims", [(7, 5, 9), (9, 6), (11,)])
def test_one_plane_slabs_on_several_threads_match_vtk(monkeypatch, direction, dims):
    monkeypatch.setattr(_averaging, "SLAB_BYTES", 1)
    monkeypatch.setattr(_averaging, "THREADS", 3)
    grid = daxpy.UniformGrid(dims=dims)
    n = size(grid, DIRECTIONS[direction][1])
    assert_matches_vtk(direction, grid, np.random.default_rng(0).uniform(-1, 1, (n, 2)))
