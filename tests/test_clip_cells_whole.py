"""The compiled unstructured clip's cells kept whole (worklets/_clip_cells_cpu.py
copies them without its tables): the array program's output bit for bit, on
grids of every shape where most cells keep every corner, or all do."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from daxpy.worklets import clip as array_clip
from daxpy.worklets._clip_cells_cpu import clip_unstructured

from strategies import mixed_grid_all_shapes, seeds, unstructured_grids
from four_threads import four_thread_report

pytest.importorskip("numba")

PARTS = ("kept", "ids", "weights", "centre_rows", "centre_ids", "centre_weights", "connectivity",
         "offsets", "cell_types", "source")


def _assert_same(grid, scalars, value, invert):
    ours = clip_unstructured(grid, scalars, value, invert)
    reference = array_clip.clip_cells(grid, scalars, value, invert)
    for name in PARTS:
        a, b = getattr(ours, name), getattr(reference, name)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name


@settings(max_examples=60, deadline=None)
@given(grid=unstructured_grids(max_side=5), seed=seeds, kept=st.sampled_from([0.8, 0.95, 1.0]),
       dtype=st.sampled_from([np.float32, np.float64]), invert=st.booleans())
def test_cells_kept_whole_match_the_array_program(grid, seed, kept, dtype, invert):
    # A share ``kept`` of the points on the kept side: most cells whole, a few cut.
    rng = np.random.default_rng(seed)
    side = rng.random(grid.n_points) < kept
    scalars = np.where(side != invert, 1.0, -1.0) * (0.5 + rng.random(grid.n_points))
    _assert_same(grid, scalars.astype(dtype), 0.0, invert)


@pytest.mark.parametrize("invert", [False, True])
def test_a_mixed_grid_kept_whole_is_itself(invert):
    grid = mixed_grid_all_shapes()
    scalars = np.full(grid.n_points, -1.0 if invert else 1.0)
    _assert_same(grid, scalars, 0.0, invert)
    made = clip_unstructured(grid, scalars, 0.0, invert)
    assert made.cell_types.tolist() == grid.cell_types.tolist()


_FOUR_THREADS = """
import json, numpy as np
from daxpy.worklets._numba import threads
from test_clip_cells_whole import PARTS, _big
grid, scalars = _big()
from daxpy.worklets._clip_cells_cpu import clip_unstructured
made = clip_unstructured(grid, scalars, 0.0)
print(json.dumps({"threads": threads(), "made": [getattr(made, p).tobytes().hex()
                                                 for p in PARTS]}))
"""


def _big():
    """Hexahedra with more points than two blocks of the kept points' scan (so that
    it runs on every thread), a plane's distance cutting them."""
    from test_clip_cpu import _hexes

    grid = _hexes(52)
    return grid, grid.points() @ np.array([1.0, 0.7, 0.3]) - 40.0


def test_thread_counts_1_2_4_give_the_array_programs_bits():

    import daxpy
    from daxpy.worklets._scan_cpu import _ROWS

    grid, scalars = _big()
    assert grid.n_points > 2 * _ROWS
    made = []
    try:
        for count in (1, 2):
            daxpy.configure_cpu(threads=count)
            made.append(clip_unstructured(grid, scalars, 0.0))
            _assert_same(grid, scalars, 0.0, False)
    finally:
        daxpy.configure_cpu(threads=None)
    assert [getattr(made[0], p).tobytes() for p in PARTS] == \
        [getattr(made[1], p).tobytes() for p in PARTS]
    # Numba's pool size is fixed per process: a child gets 4 threads.
    report = four_thread_report(_FOUR_THREADS)
    assert report["threads"] == 4
    assert report["made"] == [getattr(made[0], p).tobytes().hex() for p in PARTS]
