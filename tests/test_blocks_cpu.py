"""Ranges of blocks dealt to threads (worklets/_blocks_cpu.py): every block runs
once, on any number of threads, and a kernel's error reaches the caller."""

import numpy as np
import pytest

pytest.importorskip("numba")

import numba  # noqa: E402

from daxpy.worklets._blocks_cpu import block_kernel, over_blocks  # noqa: E402


@block_kernel()
def _visit(seen, first, last):
    for b in range(first, last):
        seen[b] += 1


@block_kernel()
def _refuse(limit, first, last):
    for b in range(first, last):
        if b >= limit:
            raise ValueError("block out of range")


def _threads():
    return [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1]


@pytest.mark.parametrize("threads", _threads())
@pytest.mark.parametrize("n_blocks", [0, 1, 3, 31, 1000])
def test_every_block_runs_once(threads, n_blocks):
    seen = np.zeros(n_blocks, np.int64)
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        over_blocks(_visit, n_blocks, seen)
    finally:
        numba.set_num_threads(before)
    assert seen.tolist() == [1] * n_blocks


@pytest.mark.parametrize("threads", _threads())
def test_a_kernels_error_reaches_the_caller(threads):
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        with pytest.raises(ValueError, match="block out of range"):
            over_blocks(_refuse, 100, 90)
    finally:
        numba.set_num_threads(before)
