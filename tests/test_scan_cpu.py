"""The compiled CPU scans and sorts of the topology-generating kernels
(daxpy.worklets._scan_cpu) against NumPy's, on tables long enough for several
blocks per thread."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

pytest.importorskip("numba")

from daxpy.worklets import _scan_cpu as scans  # noqa: E402


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(0, 3 * scans._ROWS + 5), columns=st.integers(1, 5),
       seed=st.integers(0, 2**31))
def test_exclusive_rows_are_numpys_cumulative_sums(rows, columns, seed):
    counts = np.random.default_rng(seed).integers(0, 9, (rows, columns))
    want = np.concatenate([np.zeros((1, columns), np.int64), np.cumsum(counts, axis=0)])
    assert scans.exclusive_rows(counts).tolist() == want.tolist()


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(0, 3 * scans._ROWS + 5), seed=st.integers(0, 2**31),
       dtype=st.sampled_from([np.int64, np.int32, np.uint8]))
def test_exclusive_of_one_column_is_numpys_cumulative_sum(rows, seed, dtype):
    # The row counts of the contour and threshold kernels: past a block, on threads.
    counts = np.random.default_rng(seed).integers(0, 9, rows).astype(dtype)
    got = scans.exclusive(counts)
    assert got.dtype == np.int64 and got.shape == (rows + 1,)
    assert got.tolist() == [0] + np.cumsum(counts, dtype=np.int64).tolist()


@settings(max_examples=30, deadline=None)
@given(size=st.integers(0, 4 * scans._SMALL), seed=st.integers(0, 2**31),
       named=st.sampled_from([1, 4]), bunched=st.booleans())
def test_sorted_unique_is_numpys_unique(size, seed, named, bunched):
    # Keys each named once or about four times (a cut's edges, made distinct through
    # a table before their sort); bunched, some buckets outgrow the table (sorted whole).
    rng = np.random.default_rng(seed)
    top = int(rng.integers(1, 2**40))
    pool = (rng.integers(top // 3, top // 3 + max(1, top // 2000), max(1, size // named))
            if bunched else rng.integers(0, top, max(1, size // named)))
    keys = pool[rng.integers(0, pool.shape[0], size)]
    assert scans.sorted_unique(keys, top).tolist() == np.unique(keys).tolist()


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(0, 3 * scans._ROWS + 5), share=st.floats(0, 1),
       seed=st.integers(0, 2**31))
def test_a_uint8_mask_is_scanned_as_it_is(rows, share, seed):
    # The clip numbers its kept points by the scan of their mask, not widened first.
    mask = (np.random.default_rng(seed).random((rows, 1)) < share).astype(np.uint8)
    want = np.concatenate([[0], np.cumsum(mask[:, 0], dtype=np.int64)])
    got = scans.exclusive_rows(mask)
    assert got.dtype == np.int64 and got[:, 0].tolist() == want.tolist()


@settings(max_examples=20, deadline=None)
@given(size=st.integers(0, 4 * scans._SMALL), seed=st.integers(0, 2**31),
       bunched=st.booleans())
def test_ranks_index_each_bucket_as_numpys_search_does(size, seed, bunched):
    # The clip's index of its cut edges' keys: past one block of keys, on threads.
    rng = np.random.default_rng(seed)
    top = int(rng.integers(1, 2**40))
    # Bunched keys leave long runs of buckets empty, before, between and after them.
    keys = (rng.integers(top // 3, top // 3 + max(1, top // 50), size) if bunched
            else rng.integers(0, top, size))
    unique = np.unique(np.minimum(keys, top - 1))
    shift, first = scans.ranks(unique, top)
    buckets = np.arange(first.shape[0], dtype=np.int64) << shift
    assert first.dtype == np.int64
    assert first.tolist() == np.searchsorted(unique, buckets).tolist()
    for key in unique[:: max(1, unique.shape[0] // 50)]:
        assert unique[scans.rank(unique, shift, first, key)] == key
