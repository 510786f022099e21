"""The chunk planner's threaded passes over corner ids give NumPy's results."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from daxpy.worklets._chunk_ids_cpu import (_BLOCK, cell_corner_bounds, mark_meeting,
                                         running_bounds, shifted_ids)


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(1, 9), min_size=1, max_size=300),
       dtype=st.sampled_from([np.int32, np.int64]), seed=st.integers(0, 2**31))
def test_cell_bounds_are_numpys_reduceat(sizes, dtype, seed):
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    conn = rng.integers(0, 1000, offsets[-1]).astype(dtype)
    low, high = cell_corner_bounds(conn, offsets)
    assert low.dtype == high.dtype == np.int64
    assert low.tolist() == np.minimum.reduceat(conn, offsets[:-1]).tolist()
    assert high.tolist() == np.maximum.reduceat(conn, offsets[:-1]).tolist()


def test_bounds_and_shifts_across_many_blocks():
    # More cells and ids than one block, so several threads take ranges.
    rng = np.random.default_rng(5)
    conn = rng.integers(0, 1 << 40, 8 * (3 * _BLOCK + 17))
    offsets = np.arange(0, conn.size + 1, 8)
    low, high = cell_corner_bounds(conn, offsets)
    assert np.array_equal(low, conn.reshape(-1, 8).min(axis=1))
    assert np.array_equal(high, conn.reshape(-1, 8).max(axis=1))
    shifted = shifted_ids(conn.reshape(-1, 8), 12345)
    assert shifted.shape == (conn.size // 8, 8)
    assert np.array_equal(shifted, conn.reshape(-1, 8) - 12345)


def test_shifted_int32_ids_widen_as_numpy_does():
    ids = np.array([2**31 - 1, -5, 0], np.int32)
    got = shifted_ids(ids, -(2**31))
    assert got.dtype == np.int64 and got.tolist() == (ids.astype(np.int64) + 2**31).tolist()


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 400), seed=st.integers(0, 2**31), start=st.integers(0, 50),
       points=st.tuples(st.integers(0, 1200), st.integers(0, 1200)))
def test_running_bounds_and_meeting_cells_are_numpys(n, seed, start, points):
    rng = np.random.default_rng(seed)
    lowest = rng.integers(0, 1000, n)
    highest = lowest + rng.integers(0, 200, n)
    high_so_far, low_from_here = running_bounds(lowest, highest)
    assert np.array_equal(high_so_far, np.maximum.accumulate(highest))
    assert np.array_equal(low_from_here, np.minimum.accumulate(lowest[::-1])[::-1])
    start = min(start, n - 1)
    keep = rng.integers(0, 2, n - start).astype(bool)
    want = keep | ((lowest[start:] < points[1]) & (highest[start:] >= points[0]))
    mark_meeting(lowest, highest, start, points, keep)
    assert np.array_equal(keep, want)


def test_the_planner_cuts_the_same_chunks_on_threads_as_with_numpy(monkeypatch):
    # Below THREADED_IDS the planner's passes are NumPy's: the same chunks either way.
    import daxpy
    from daxpy.stream import chunk_ids
    from daxpy.stream.chunks import unstructured_chunks

    rng = np.random.default_rng(11)
    conn = np.concatenate([rng.permutation(40)[:4] for _ in range(60)]).astype(np.int32)
    grid = daxpy.UnstructuredGrid(rng.random((40, 3)), conn, np.arange(0, 241, 4),
                                  np.full(60, 10, np.uint8))   # tetrahedra

    def cut():
        grid._cache.clear()
        return [(c.point_ids, c.cell_ids, c.grid.connectivity, c.owned_points, c.owned_cells)
                for c in unstructured_chunks(grid, 1, 7)]

    with_numpy = cut()
    monkeypatch.setattr(chunk_ids, "THREADED_IDS", 0)
    on_threads = cut()
    for a, b in zip(with_numpy, on_threads):
        for x, y in zip(a, b):
            if isinstance(x, np.ndarray):
                assert x.dtype == y.dtype and np.array_equal(x, y)
            else:
                assert x == y
