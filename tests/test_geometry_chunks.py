"""Chunked equals whole: contour, slice, threshold and clip run chunk by chunk
(daxpy.engine.geometry_chunks, as a streamed or out-of-core run does: slabs of cell
layers of structured grids, ranges of cells of unstructured ones) give the whole
grid's dataset bit for bit, on random grids, fields, values and options, with
chunks of one cell and more. Also: the streaming settings choose chunks for a GPU
budget, and refuse bad counts."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.engine.geometry_chunks import chunk_cells
from daxpy.errors import ArgumentError
from daxpy.filters import Clip, Contour, Slice, Threshold
from daxpy.stream.streaming import configure

from strategies import seeds, structured_grids, unstructured_grids, value_between

CELLS = st.integers(1, 40)
GRIDS = st.one_of(structured_grids(min_dimension=1, max_side=7), unstructured_grids())
SOLIDS = st.one_of(structured_grids(min_dimension=2, max_side=7),
                   unstructured_grids(lower_dimensional=False))


def _same(whole, chunked):
    """Two datasets (or pairs of them) hold the same bits."""
    if isinstance(whole, tuple):
        for a, b in zip(whole, chunked):
            _same(a, b)
        return
    assert type(whole) is type(chunked)
    np.testing.assert_array_equal(chunked.points(), whole.points())
    if isinstance(whole, daxpy.PolyData):
        for kind in ("verts", "lines", "polys", "strips"):
            for a, b in zip(whole.cell_array(kind), chunked.cell_array(kind)):
                np.testing.assert_array_equal(b, a)
    else:
        np.testing.assert_array_equal(chunked.connectivity, whole.connectivity)
        np.testing.assert_array_equal(chunked.offsets, whole.offsets)
        np.testing.assert_array_equal(chunked.cell_types, whole.cell_types)
    for mine, theirs in ((chunked.point_data, whole.point_data),
                         (chunked.cell_data, whole.cell_data)):
        assert sorted(mine) == sorted(theirs)
        for name in theirs:
            np.testing.assert_array_equal(mine[name], theirs[name])


def _grid(grid, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, grid.n_points).astype(dtype)
    # Ties with the value cut exactly at points: snapped contour points, clipped
    # corners, thresholds at the ends of a range.
    values[rng.random(grid.n_points) < 0.1] = 0.25
    return grid.with_fields(point_data={"s": values, "w": rng.random((grid.n_points, 3))},
                            cell_data={"c": rng.integers(0, 9, grid.n_cells)}), rng


def _check(make, grid, cells):
    import daxpy.worklets._chunk_merge as merging

    whole = make(grid)
    merges = []
    real = merging.merged
    try:
        merging.merged = lambda parts, **kw: merges.append(len(parts)) or real(parts, **kw)
        with configure(geometry_cells=cells):
            chunked = make(grid)
    finally:
        merging.merged = real
    _same(whole, chunked)
    return merges


@settings(max_examples=40, deadline=None)
@given(grid=SOLIDS, seed=seeds, cells=CELLS, dtype=st.sampled_from([np.float32, np.float64]))
def test_contour_and_slice_in_chunks_are_the_whole_grids(grid, seed, cells, dtype):
    grid, rng = _grid(grid, seed, dtype)
    values = sorted({0.25, value_between(grid.point_data["s"], rng)})
    _check(lambda g: Contour("s", values=values, backend="cpu")(g), grid, cells)
    normal = rng.standard_normal(3)
    centre = grid.points().mean(axis=0)
    _check(lambda g: Slice(normal, centre, backend="cpu")(g), grid, cells)


@settings(max_examples=40, deadline=None)
@given(grid=GRIDS, seed=seeds, cells=CELLS, at=st.sampled_from(["points", "cells"]),
       rule=st.sampled_from(["all", "any", "range"]), invert=st.booleans())
def test_threshold_in_chunks_is_the_whole_grids(grid, seed, cells, at, rule, invert):
    grid, rng = _grid(grid, seed)
    if at == "cells":
        grid = grid.with_fields(cell_data={"t": rng.uniform(-1, 1, grid.n_cells)})
    field = "s" if at == "points" else "t"
    lower, upper = sorted(rng.uniform(-1, 1, 2))
    _check(lambda g: Threshold(field, lower, upper, all_scalars=rule == "all",
                               continuous=rule == "range", invert=invert,
                               backend="cpu")(g), grid, cells)


@settings(max_examples=40, deadline=None)
@given(grid=GRIDS, seed=seeds, cells=CELLS, by=st.sampled_from(["scalar", "plane", "sphere"]),
       invert=st.booleans(), crinkle=st.booleans())
def test_clip_in_chunks_is_the_whole_grids(grid, seed, cells, by, invert, crinkle):
    grid, rng = _grid(grid, seed)
    centre = grid.points().mean(axis=0)
    options = {"scalar": {"field": "s", "value": 0.25},
               "plane": {"plane": (centre, rng.standard_normal(3))},
               "sphere": {"sphere": (centre, 0.5 + rng.random())}}[by]
    _check(lambda g: Clip(**options, invert=invert, crinkle=crinkle, both=True,
                          backend="cpu")(g), grid, cells)


def test_chunk_cells_refuses_what_is_not_a_positive_count():
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ArgumentError, match="positive number of cells"):
            with chunk_cells(bad):
                pass


def test_a_streamed_run_under_a_device_budget_cuts_chunks_that_fit_it():
    from daxpy.stream.geometry_run import DEVICE_BYTES_PER_CELL, cells_for

    grid = daxpy.UniformGrid(dims=(11, 11, 40))
    layer = 100 * DEVICE_BYTES_PER_CELL
    assert cells_for(grid, on_gpu=True, to="host", max_device_bytes=5 * layer) == 500
    assert cells_for(grid, on_gpu=True, to="host", max_device_bytes=100) == 1
    # Whole grids where they fit, for the CPU, and for results kept on the device.
    assert cells_for(grid, on_gpu=True, to="host", max_device_bytes=40 * layer) is None
    assert cells_for(grid, on_gpu=False, to="host", max_device_bytes=layer) is None
    assert cells_for(grid, on_gpu=True, to="device", max_device_bytes=layer) is None
    assert cells_for(grid, on_gpu=True, to="host", max_device_bytes=None) is None


def test_the_geometry_cells_setting_runs_pipelines_in_chunks():
    grid, _ = _grid(daxpy.UniformGrid(dims=(6, 5, 9)), 3)
    pipe = daxpy.pipeline(grid)
    pipe.field("s").magnitude().contour(values=[0.5])
    whole = pipe.run(backend="cpu")
    with configure(geometry_cells=40):
        _same(whole, pipe.run(backend="cpu"))
    with pytest.raises(ArgumentError, match="geometry_cells must be a positive integer"):
        with configure(geometry_cells=0):
            pass


def test_chunks_are_run_and_merged_for_every_grid_family():
    from benchmarks.datasets import cube_dims, hex_grid

    hexes = hex_grid(cube_dims(2000))
    for grid in (daxpy.UniformGrid(dims=(9, 8, 7)), hexes):
        grid, _ = _grid(grid, 1)
        for make in (lambda g: Contour("s", values=[0.25], backend="cpu")(g),
                     lambda g: Threshold("s", 0.0, 0.5, backend="cpu")(g),
                     lambda g: Clip("s", 0.1, backend="cpu")(g)):
            assert len(_check(make, grid, grid.n_cells // 5)) == 1
