"""Host memory the GPU can copy from and to at full speed, without extra host copies.

Copies between the GPU and *pageable* host memory run at a fraction of the
bus's speed (the driver stages them through its own pinned buffers, one
more host copy) and cannot overlap kernels. daxpy avoids that two ways:

- **Inputs are page-locked in place** (:func:`page_lock`, ``cudaHostRegister``
  through CuPy's runtime): the user's NumPy array, or the NumPy view of a VTK
  or PyVista array, is registered once, and every later copy reads it directly.
  The registration lasts as long as the memory's owner and is dropped just
  before that owner frees it. Arrays that cannot be registered (small,
  strided or refused) are copied chunk by chunk through a reusable pinned
  staging buffer (:class:`StagingBuffer`) instead: one host copy, never two.
  ``benchmarks/NOTES-streaming.md`` records the measurements behind the choice.
- **Outputs land in page-locked memory kept for reuse** (:func:`pinned_empty`,
  :mod:`daxpy.stream.host_blocks`): the NumPy array handed back to the user *is*
  the buffer the GPU wrote into. When the array is freed its block returns to
  its size class, so the next run of a similar size allocates nothing.

Optional lower-precision storage (:func:`to_storage`) halves or quarters the
bytes that come back, on request only.

Examples
--------
>>> STAGING_POLICIES
('auto', 'register', 'pool', 'pageable')
>>> storage_dtype("float16")
dtype('float16')
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..errors import ArgumentError
# Where outputs land (re-exported: callers allocate and release through this module).
from .host_blocks import HOST_REGISTER_PORTABLE_MAPPED, pinned_empty, release_pool  # noqa: F401

STAGING_POLICIES = ("auto", "register", "pool", "pageable")
"""How host inputs reach the device: ``register`` page-locks them in place,
``pool`` copies each chunk into a pinned staging buffer, ``pageable`` copies
from pageable memory (the naive baseline), ``auto`` registers what can be
registered and stages the rest."""

REGISTER_MIN_BYTES = 1 << 22
"""Arrays smaller than this (4 MiB) are staged, not registered: registration
costs a system call and pins whole pages that may hold other data."""

_HOST_REGISTER_READ_ONLY = 8                # cudaHostRegisterReadOnly
_MEMORY_TYPE_HOST = 1                       # cudaMemoryTypeHost
_H2D, _D2H = 1, 2                           # cudaMemcpyHostToDevice / DeviceToHost

_registered: dict[int, int] = {}           # start pointer -> bytes, ours to unregister


def _runtime():
    from cupy.cuda import runtime

    return runtime


def download(array: Any) -> np.ndarray:
    """``array`` on the host: a device array copied into pinned memory from
    :func:`pinned_empty` (device to host at the bus's rate, where a fresh pageable
    array is written at the rate its pages fault in), a host array as it is.

    Examples
    --------
    >>> download([1, 2]).tolist()
    [1, 2]
    """
    from ..data.arrays import is_device_array

    if not is_device_array(array) or array.nbytes < DOWNLOAD_PINNED_BYTES:
        from ..data.arrays import to_host

        return to_host(array)
    import cupy

    host = pinned_empty(array.shape, array.dtype)
    cupy.ascontiguousarray(array).get(out=host)
    return host


DOWNLOAD_PINNED_BYTES = 1 << 20
"""Below this, a device array comes back through CuPy's own copy (no pool block)."""


def _pointer(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def is_pinned(array: np.ndarray) -> bool:
    """Whether ``array``'s memory is page-locked (pinned or registered) for CUDA.

    Examples
    --------
    >>> callable(is_pinned)
    True
    """
    if array.nbytes == 0:
        return True
    try:
        return _runtime().pointerGetAttributes(_pointer(array)).type == _MEMORY_TYPE_HOST
    except Exception:  # CUDA reports unknown host pointers as errors on old drivers
        return False


def _owner(array: np.ndarray):
    """The outermost ndarray whose memory ``array`` views (the registration's owner)."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return owner


def _unregister(start: int) -> None:
    if _registered.pop(start, None) is None:
        return
    try:
        _runtime().hostUnregister(start)
    except Exception:  # the CUDA context may already be gone at interpreter exit
        pass


def page_lock(array: np.ndarray) -> bool:
    """Page-lock ``array``'s memory in place; True when it is (or already was) pinned.

    The whole buffer of the outermost NumPy array that ``array`` views is
    registered, so every view of it shares one registration, dropped when
    that array is freed. Small, non-contiguous or unregistrable memory gives
    False (the caller stages it instead).

    Examples
    --------
    >>> callable(page_lock)
    True
    """
    if is_pinned(array):
        return True
    owner = _owner(array)
    if (owner.nbytes < REGISTER_MIN_BYTES or not owner.flags.c_contiguous
            or not array.flags.c_contiguous):
        return False
    start, size = _pointer(owner), int(owner.nbytes)
    flags = HOST_REGISTER_PORTABLE_MAPPED
    if not owner.flags.writeable:
        flags |= _HOST_REGISTER_READ_ONLY
    try:
        _runtime().hostRegister(start, size, flags)
    except Exception:  # refused (already registered elsewhere, read-only pages...)
        return False
    _registered[start] = size
    # Runs when the owner is freed, before NumPy frees its memory.
    weakref.finalize(owner, _unregister, start)
    return True


def device_view(array: np.ndarray):
    """A CuPy array over pinned host memory, read and written by kernels through
    the bus (mapped memory); ``array`` must be pinned (:func:`page_lock`).

    Examples
    --------
    >>> callable(device_view)
    True
    """
    import cupy

    pointer = _runtime().pointerGetAttributes(_pointer(array)).devicePointer
    memory = cupy.cuda.UnownedMemory(pointer, array.nbytes, array)
    return cupy.ndarray(array.shape, dtype=array.dtype,
                        memptr=cupy.cuda.MemoryPointer(memory, 0))


def copy_to_device(host: np.ndarray, device, stream) -> None:
    """Enqueue a copy of C-contiguous ``host`` into ``device`` on ``stream``.

    Asynchronous when ``host`` is pinned; from pageable memory the driver
    stages it (the naive path).

    Examples
    --------
    >>> callable(copy_to_device)
    True
    """
    if host.nbytes:
        _runtime().memcpyAsync(device.data.ptr, _pointer(host), host.nbytes, _H2D, stream.ptr)


def copy_to_host(device, host: np.ndarray, stream) -> None:
    """Enqueue a copy of C-contiguous ``device`` into pinned ``host`` on ``stream``.

    Examples
    --------
    >>> callable(copy_to_host)
    True
    """
    if host.nbytes:
        _runtime().memcpyAsync(_pointer(host), device.data.ptr, host.nbytes, _D2H, stream.ptr)


class StagingBuffer:
    """A pinned buffer reused for staging chunks, grown (from the pool) on demand.

    Examples
    --------
    >>> StagingBuffer().nbytes
    0
    """

    def __init__(self):
        self.block = np.empty(0, dtype=np.uint8)

    @property
    def nbytes(self) -> int:
        """Bytes held."""
        return self.block.nbytes

    def fill(self, values: np.ndarray, ids=None) -> np.ndarray:
        """Copy ``values`` (or ``values[ids]``) into the buffer; return that pinned view.

        The caller must know that no copy still reads the buffer.
        """
        rows = values.shape[0] if ids is None else len(ids)
        shape = (rows,) + tuple(values.shape[1:])
        nbytes = int(np.prod(shape, dtype=np.int64)) * values.dtype.itemsize
        if nbytes > self.block.nbytes:
            self.block = pinned_empty((nbytes,), np.uint8)
        view = self.block[:nbytes].view(values.dtype).reshape(shape)
        if ids is None:
            np.copyto(view, values)
        else:
            np.take(values, ids, axis=0, out=view)
        return view


# -- lower-precision storage ------------------------------------------------
STORAGE_KINDS = ("float16", "bfloat16")
"""Lower-precision storage types an output may be given, on request."""


def storage_dtype(kind: str) -> np.dtype:
    """NumPy dtype of a storage kind (``bfloat16`` needs the ml_dtypes package).

    Raises
    ------
    ArgumentError
        For an unknown kind, or bfloat16 without ml_dtypes.

    Examples
    --------
    >>> storage_dtype("float16").itemsize
    2
    """
    if kind == "float16":
        return np.dtype(np.float16)
    if kind == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise ArgumentError("storage 'bfloat16' needs the ml_dtypes package "
                                "(pip install ml_dtypes)") from None
        return np.dtype(ml_dtypes.bfloat16)
    raise ArgumentError(f"storage must be one of {STORAGE_KINDS}, got {kind!r}")


def to_storage(xp, values, kind: str):
    """``values`` rounded to the nearest ``kind`` value (ties to even), in an array
    of 2-byte items: float16, or uint16 holding bfloat16 bits.

    Works with NumPy and CuPy (``xp``); NaN stays NaN, overflow gives inf.

    Examples
    --------
    >>> to_storage(np, np.array([1.0, 1.00390625, -2.5]), "bfloat16").tolist()
    [16256, 16256, 49184]
    """
    if kind == "float16":
        return values.astype(xp.float16)
    bits = values.astype(xp.float32).view(xp.uint32)
    # Round to nearest even on the 16 bits that are dropped.
    rounded = (bits + xp.uint32(0x7FFF) + ((bits >> xp.uint32(16)) & xp.uint32(1)))
    out = (rounded >> xp.uint32(16)).astype(xp.uint16)
    return xp.where(xp.isnan(values), xp.uint16(0x7FC0), out)


def from_storage(xp, stored, kind: str):
    """Float32 values of an array made by :func:`to_storage`.

    Examples
    --------
    >>> from_storage(np, np.array([16256], dtype=np.uint16), "bfloat16").tolist()
    [1.0]
    """
    if kind == "float16":
        return stored.astype(xp.float32)
    return (stored.astype(xp.uint32) << xp.uint32(16)).view(xp.float32)


def storage_error(xp, values, stored, kind: str) -> tuple[Any, Any]:
    """Largest absolute rounding error and largest magnitude of finite ``values``
    (0-d arrays of ``xp``, so device results need no synchronization).

    Examples
    --------
    >>> err, top = storage_error(np, np.array([1.0, 3.0]), np.array([1.0, 3.0], np.float16),
    ...                          "float16")
    >>> float(err), float(top)
    (0.0, 3.0)
    """
    exact = values.astype(xp.float64)
    finite = xp.isfinite(exact)
    diff = xp.abs(from_storage(xp, stored, kind).astype(xp.float64) - exact)
    if exact.size == 0:
        zero = xp.zeros((), dtype=xp.float64)
        return zero, zero
    return (xp.where(finite, diff, 0.0).max(), xp.where(finite, xp.abs(exact), 0.0).max())
