"""A surface's cell offsets written on every core (worklets/_offsets_cpu.py): the
same as NumPy's ``arange`` for any count, across its blocks and on any thread count."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

import numba  # noqa: E402

from daxpy.worklets._offsets_cpu import _BLOCK, uniform_offsets  # noqa: E402


@pytest.mark.parametrize("threads", [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1])
@pytest.mark.parametrize("n_cells", [0, 1, _BLOCK - 2, _BLOCK - 1, _BLOCK, 3 * _BLOCK + 5])
def test_offsets_are_aranges_across_blocks(threads, n_cells):
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        for k in (1, 2, 3):
            offsets = uniform_offsets(n_cells, k)
            assert offsets.dtype == np.int64
            np.testing.assert_array_equal(offsets, np.arange(0, n_cells * k + 1, k))
    finally:
        numba.set_num_threads(before)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 4 * _BLOCK), st.integers(1, 8))
def test_offsets_of_any_count(n_cells, k):
    np.testing.assert_array_equal(uniform_offsets(n_cells, k),
                                  np.arange(0, n_cells * k + 1, k, dtype=np.int64))
