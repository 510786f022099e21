"""The GPU's exclusive scan of int32 counts (daxpy.cuda.scan) gives NumPy's cumsum,
with the asked-for starts written into host memory: sizes around its tiles of
4096, empty and one-count inputs, starts asked at 0 and at the end, counts up to
2^31 - 1 (sums past 32 bits), several threads at once."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from daxpy.cuda.scan import AT_MOST, TILE


def _check(counts, at):
    import cupy

    from daxpy.cuda.scan import scan_counts

    starts = cupy.full(counts.shape[0] + 1, -7, cupy.int64)
    got = scan_counts(cupy.asarray(counts), starts, at)
    want = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    assert cupy.asnumpy(starts).tolist() == want.tolist()
    assert got == [int(want[i]) for i in at]


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(n=st.one_of(st.integers(0, 3), st.sampled_from([TILE - 1, TILE, TILE + 1,
                                                       3 * TILE + 5, 1025 * TILE + 3]),
                   st.integers(0, 5 * TILE)),
       seed=st.integers(0, 2**31), big=st.booleans())
def test_scan_is_cumsum(n, seed, big):
    rng = np.random.default_rng(seed)
    high = 2**31 - 1 if big else 40
    counts = rng.integers(0, high, n, dtype=np.int64).astype(np.int32)
    # Up to every place a scan may write back, in any order.
    at = [0, n, *rng.integers(0, n + 1, int(rng.integers(0, AT_MOST - 1)))][:AT_MOST]
    _check(counts, at)


@pytest.mark.gpu
def test_bad_arguments_are_refused():
    import cupy

    from daxpy.cuda.scan import scan_counts

    counts = cupy.zeros(5, cupy.int32)
    with pytest.raises(ValueError):
        scan_counts(counts, cupy.empty(5, cupy.int64), [0])
    with pytest.raises(ValueError):
        scan_counts(counts, cupy.empty(6, cupy.int64), [0] * (AT_MOST + 1))
    with pytest.raises(ValueError):
        scan_counts(counts, cupy.empty(6, cupy.int64), [6])
    with pytest.raises(ValueError):
        scan_counts(counts, cupy.empty(12, cupy.int64)[::2], [0])


@pytest.mark.gpu
def test_threads_scan_at_once():
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(3)
    inputs = [rng.integers(0, 100, int(n)).astype(np.int32) for n in (10, 5000, 70000, 123456)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda c: _check(c, [0, c.shape[0]]), inputs * 3))
