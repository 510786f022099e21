"""The kept points' numbers on the GPU (daxpy.cuda.kept_numbers; its kernels compile
without a GPU in test_geometry_kernels_cuda): NumPy's exclusive count of the flags, and
the total after the last point, for every length around the words' edges."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from strategies import seeds


def _numbers(flags):
    import cupy

    from daxpy.cuda.kept_numbers import kept_numbers

    return kept_numbers(cupy.asarray(flags)).get()


def _expected(flags):
    return np.concatenate([[0], np.cumsum(flags, dtype=np.int64)])


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 3000), share=st.floats(0.0, 1.0), seed=seeds)
def test_numbers_are_numpys_exclusive_count(n, share, seed):
    flags = np.random.default_rng(seed).random(n) < share
    numbers = _numbers(flags)
    assert numbers.dtype == np.int64 and np.array_equal(numbers, _expected(flags))


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 31, 32, 33, 255, 256, 257, 4096 * 32 + 5])
def test_lengths_at_the_words_and_tiles_edges(n):
    flags = np.random.default_rng(n).random(n) < 0.5
    assert np.array_equal(_numbers(flags), _expected(flags))
    assert np.array_equal(_numbers(np.ones(n, bool)), np.arange(n + 1))


@pytest.mark.gpu
def test_uint8_flags_count_as_bools():
    flags = np.array([0, 3, 1, 0, 255], np.uint8)
    assert _numbers(flags).tolist() == [0, 0, 1, 2, 2, 3]
