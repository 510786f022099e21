"""Host memory for transfers: lower-precision storage (CPU), pinned pool and
page-locking in place (GPU)."""

import gc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from daxpy.stream import transfer
from daxpy.errors import ArgumentError
from daxpy.stream.movers import make_mover


# -- lower-precision storage (NumPy) ---------------------------------------------
@settings(max_examples=50, deadline=None)
@given(hnp.arrays(np.float32, st.integers(0, 64),
                  elements=st.floats(width=32)))
def test_bfloat16_rounds_to_nearest_even(values):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    stored = transfer.to_storage(np, values, "bfloat16")
    expected = values.astype(ml_dtypes.bfloat16).view(np.uint16)
    nan = np.isnan(values)
    np.testing.assert_array_equal(stored[~nan], expected[~nan])
    assert np.all(np.isnan(transfer.from_storage(np, stored[nan], "bfloat16")))


def test_bfloat16_bits_without_ml_dtypes():
    values = np.array([1.0, 1.00390625, 1.01171875, -2.5, np.inf, 3.4e38, np.nan], np.float32)
    stored = transfer.to_storage(np, values, "bfloat16")
    # 1 + 2^-8 ties to even (down), 1 + 3 * 2^-8 ties to even (up); the largest
    # float32 values round up to inf; NaN stays a quiet NaN.
    assert stored.tolist() == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x7F80, 0x7F80, 0x7FC0]
    back = transfer.from_storage(np, stored, "bfloat16")
    assert back[:4].tolist() == [1.0, 1.0, 1.015625, -2.5] and np.isnan(back[-1])


@settings(max_examples=50, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 64), elements=st.floats(-6e4, 6e4)),
       st.sampled_from(["float16", "bfloat16"]))
def test_storage_error_is_within_half_an_ulp(values, kind):
    stored = transfer.to_storage(np, values, kind)
    error, top = transfer.storage_error(np, values, stored, kind)
    bits = 11 if kind == "float16" else 8
    # Relative to the largest value: subnormal and tiny values round absolutely.
    assert float(error) <= max(float(top) * 2.0 ** -bits, 2.0 ** -24) * (1 + 1e-12)
    assert float(top) == np.abs(values).max()


def test_storage_kinds_are_checked():
    assert transfer.storage_dtype("float16") == np.float16
    with pytest.raises(ArgumentError, match="storage must be one of"):
        transfer.storage_dtype("float8")


def test_staging_policies_are_checked():
    with pytest.raises(ArgumentError, match="staging must be one of"):
        make_mover("cpu", 2, "zero-copy")
    assert make_mover("cpu", 2, "pool").staging == "pool"


# -- pinned and registered memory (GPU) -------------------------------------------
@pytest.mark.gpu
def test_gpu_pinned_outputs_come_back_to_the_pool():
    a = transfer.pinned_empty((1000, 3), np.float32)
    assert transfer.is_pinned(a) and a.shape == (1000, 3) and a.flags.writeable
    pointer = a.__array_interface__["data"][0]
    del a
    gc.collect()
    b = transfer.pinned_empty((1000, 3), np.float32)
    assert b.__array_interface__["data"][0] == pointer


@pytest.mark.gpu
def test_gpu_page_lock_in_place_and_unregister_when_freed():
    values = np.random.default_rng(0).random(2_000_000)
    pointer = values.__array_interface__["data"][0]
    assert not transfer.is_pinned(values)
    assert transfer.page_lock(values) and transfer.page_lock(values[10:])
    assert transfer.is_pinned(values) and transfer.is_pinned(values[100:200])
    assert values.__array_interface__["data"][0] == pointer
    assert pointer in transfer._registered
    del values
    gc.collect()
    assert pointer not in transfer._registered


@pytest.mark.gpu
def test_gpu_small_or_strided_arrays_are_not_registered():
    assert not transfer.page_lock(np.ones(10))
    big = np.ones((2_000_000, 2))
    assert not transfer.page_lock(big[:, 0])


@pytest.mark.gpu
def test_gpu_copies_round_trip_through_pinned_memory():
    import cupy

    values = np.random.default_rng(1).random(3_000_000).astype(np.float32)
    assert transfer.page_lock(values)
    stream = cupy.cuda.Stream(non_blocking=True)
    back = transfer.pinned_empty(values.shape, values.dtype)
    # Every step on the one stream: a non-blocking stream does not wait for the
    # default stream's work, nor it for the stream's (the doubling ran on the default
    # stream once, racing the upload before it and the download after it).
    with stream:
        device = cupy.empty(values.shape, values.dtype)
        transfer.copy_to_device(values, device, stream)
        transfer.copy_to_host(device * 2, back, stream)
    stream.synchronize()
    np.testing.assert_array_equal(back, values * 2)


@pytest.mark.gpu
def test_gpu_staging_buffer_gathers_and_kernels_read_mapped_memory():
    import cupy

    values = np.arange(50.0)
    staging = transfer.StagingBuffer()
    view = staging.fill(values, np.array([3, 1, 4]))
    assert view.tolist() == [3.0, 1.0, 4.0] and transfer.is_pinned(view)
    host = transfer.pinned_empty((5_000_000,), np.float32)
    host[:] = 1.5
    mapped = transfer.device_view(host)
    assert float(cupy.sum(mapped)) == 1.5 * host.size
    mapped *= 2
    cupy.cuda.Device().synchronize()
    assert host[-1] == 3.0


@pytest.mark.gpu
def test_gpu_storage_conversion_matches_numpy():
    import cupy

    values = np.random.default_rng(2).standard_normal(10_000).astype(np.float32) * 100
    for kind in ("float16", "bfloat16"):
        on_device = transfer.to_storage(cupy, cupy.asarray(values), kind)
        np.testing.assert_array_equal(cupy.asnumpy(on_device).view(np.uint16),
                                      transfer.to_storage(np, values, kind).view(np.uint16))
