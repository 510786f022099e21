"""Page-locked blocks for downloads (daxpy.stream.host_blocks): size classes, and on
the GPU registered blocks reused once every view of an array is gone, never before."""

import gc

import numpy as np
import pytest

from daxpy.stream.host_blocks import REGISTERED_MIN_BYTES, size_class


def test_size_classes_hold_the_request_within_a_quarter():
    for n in [1, 4095, 4096, 4097, 10**5, 3 << 20, (4 << 20) + 1, 10**9, 5_600_000_000]:
        size = size_class(n)
        assert size >= n and size % 4096 == 0
        assert n <= 4096 or size <= 1.25 * n + 4096


@pytest.mark.gpu
def test_registered_blocks_are_reused_after_every_view_is_gone():
    from daxpy.stream import host_blocks, transfer

    transfer.release_pool()
    n = REGISTERED_MIN_BYTES // 4 + 1000
    a = transfer.pinned_empty((n,), np.float32)
    assert transfer.is_pinned(a)
    a[:] = 1.0
    first = a.ctypes.data
    view = a[10:20]          # a view alone keeps the block leased
    del a
    gc.collect()
    b = transfer.pinned_empty((n,), np.float32)
    assert b.ctypes.data != first and view.tolist() == [1.0] * 10
    del view
    gc.collect()
    c = transfer.pinned_empty((n + 5000,), np.float32)   # the same size class
    assert c.ctypes.data == first
    del b, c
    gc.collect()
    transfer.release_pool()
    assert not any(host_blocks._free.values())


@pytest.mark.gpu
def test_downloads_of_varying_sizes_come_back_equal():
    import cupy

    from daxpy.stream import transfer

    rng = np.random.default_rng(1)
    for n in rng.integers(1, 3_000_000, 12):
        values = rng.random(int(n))
        back = transfer.download(cupy.asarray(values))
        assert np.array_equal(back, values)
