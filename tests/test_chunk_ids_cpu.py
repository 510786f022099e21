"""The chunk planner's threaded passes over corner ids give NumPy's results."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daxpy.data.decomposition import as_selection
from daxpy.worklets._chunk_ids_cpu import (_BLOCK, cell_corner_bounds, held_cells,
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
    # Cells of one size, their offsets not read: the same bounds.
    even = rng.integers(0, 1000, len(sizes) * sizes[0]).astype(dtype)
    low, high = cell_corner_bounds(even, np.zeros(len(sizes) + 1, np.int64), sizes[0])
    assert low.tolist() == even.reshape(-1, sizes[0]).min(axis=1).tolist()
    assert high.tolist() == even.reshape(-1, sizes[0]).max(axis=1).tolist()


def test_bounds_and_shifts_across_many_blocks():
    # More cells and ids than one block, so several threads take ranges.
    rng = np.random.default_rng(5)
    conn = rng.integers(0, 1 << 40, 8 * (3 * _BLOCK + 17))
    offsets = np.arange(0, conn.size + 1, 8)
    for corners in (None, 8):
        low, high = cell_corner_bounds(conn, offsets, corners)
        assert np.array_equal(low, conn.reshape(-1, 8).min(axis=1))
        assert np.array_equal(high, conn.reshape(-1, 8).max(axis=1))
    shifted = shifted_ids(conn.reshape(-1, 8), 12345)
    assert shifted.shape == (conn.size // 8, 8)
    assert np.array_equal(shifted, conn.reshape(-1, 8) - 12345)


def test_shifted_int32_ids_widen_as_numpy_does():
    ids = np.array([2**31 - 1, -5, 0], np.int32)
    got = shifted_ids(ids, -(2**31))
    assert got.dtype == np.int64 and got.tolist() == (ids.astype(np.int64) + 2**31).tolist()


def _running_numpy(lowest, highest):
    return np.maximum.accumulate(highest), np.minimum.accumulate(lowest[::-1])[::-1]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 400), seed=st.integers(0, 2**31))
def test_running_bounds_are_numpys(n, seed):
    rng = np.random.default_rng(seed)
    lowest = rng.integers(0, 1000, n)
    highest = lowest + rng.integers(0, 200, n)
    for got, want in zip(running_bounds(lowest, highest), _running_numpy(lowest, highest)):
        assert np.array_equal(got, want)


@pytest.mark.parametrize("fall", [None, 0, _BLOCK - 1, _BLOCK, 2 * _BLOCK + 5])
def test_running_bounds_across_blocks(fall):
    # Bounds that never decrease come back as they are; one fall anywhere (first in
    # a block, last in one, or inside) and every block runs from the blocks before.
    n = 3 * _BLOCK + 11
    lowest = np.arange(n, dtype=np.int64) // 3
    highest = lowest + 7
    if fall is not None:
        lowest, highest = lowest.copy(), highest.copy()
        lowest[fall] -= 50
        highest[fall] += 10_000
    got = running_bounds(lowest, highest)
    for a, b in zip(got, _running_numpy(lowest, highest)):
        assert np.array_equal(a, b)
    assert (got[0] is highest and got[1] is lowest) == (fall is None)


def _held_numpy(lowest, highest, ranges):
    keep = np.zeros(lowest.shape[0], bool)
    for a, b, points in ranges:
        meets = np.ones(b - a, bool) if points is None else (
            (lowest[a:b] < points[1]) & (highest[a:b] >= points[0]))
        keep[a:b] |= meets
    held = np.flatnonzero(keep)
    span = (int(lowest[held].min()), int(highest[held].max()) + 1) if held.size else None
    return held, span


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 3 * _BLOCK), seed=st.integers(0, 2**31),
       count=st.integers(1, 4), data=st.data())
def test_held_cells_are_numpys(n, seed, count, data):
    rng = np.random.default_rng(seed)
    lowest = np.sort(rng.integers(0, n, n)) if data.draw(st.booleans()) else rng.integers(0, n, n)
    highest = lowest + rng.integers(0, 30, n)
    ranges = []
    for _ in range(count):
        a = data.draw(st.integers(0, n))
        b = data.draw(st.integers(a, n))
        first = data.draw(st.integers(0, n + 30))
        points = data.draw(st.sampled_from([None, (first, first + data.draw(st.integers(0, n)))]))
        ranges.append((a, b, points))
    held, span = held_cells(lowest, highest, ranges)
    want, want_span = _held_numpy(lowest, highest, ranges)
    # A run of cells (or none) as a slice, other cells by id.
    assert held == as_selection(want) if isinstance(held, slice) else (
        held.dtype == np.int64 and np.array_equal(held, want)
        and not isinstance(as_selection(want), slice))
    assert span == want_span


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
