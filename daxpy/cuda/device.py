"""Device arrays without copies: CuPy, ``__cuda_array_interface__``, DLPack.

Device inputs (CuPy, PyTorch, JAX, Numba) are viewed in place. A host array is
copied to the device once and the copy is cached on the dataset's ``_cache``
(shared with every dataset derived from it), keyed by the host array's
identity: assigning a new array to a field makes a new copy. A host array
modified in place must be re-assigned (or :func:`forget` called) to be seen.

Examples
--------
>>> import numpy as np
>>> is_c_contiguous(np.zeros((3, 2)))
True
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from ..data.arrays import as_field_array, is_device_array

_PREFIX = "cuda:"


def is_c_contiguous(array: Any) -> bool:
    """True when ``array`` (NumPy or CuPy) is C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> is_c_contiguous(np.zeros((4, 3))[:, 0])
    False
    """
    return bool(array.flags.c_contiguous)


def cached(dataset: Any, key: str, build: Callable[[], Any]) -> Any:
    """Return ``dataset._cache[key]``, building it once with ``build()``.

    Datasets without a cache (``None``) just build.

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.UniformGrid(dims=(2,))
    >>> cached(g, "answer", lambda: 42), cached(g, "answer", lambda: 0)
    (42, 42)
    """
    cache = getattr(dataset, "_cache", None)
    if cache is None:
        return build()
    full = _PREFIX + key
    if full not in cache:
        cache[full] = build()
    return cache[full]


def to_device(array: Any, dataset: Any = None, dtype=None) -> Any:
    """A C-contiguous CuPy view or copy of ``array`` (of ``dtype`` if given).

    Device arrays that already fit are used in place. Host arrays are copied
    once per dataset and cached there (with the host array kept alive, so its
    ``id`` cannot be reused by another array while the entry exists).

    Parameters
    ----------
    array : array-like
        NumPy array, CuPy array, or any ``__cuda_array_interface__`` /
        ``__dlpack__`` exporter.
    dataset : DataSet, optional
        Whose cache keeps host copies.
    dtype : dtype-like, optional
        Wanted dtype (converted on the device, also cached).

    Examples
    --------
    >>> callable(to_device)
    True
    """
    import cupy

    view = as_field_array(array)
    target = np.dtype(dtype) if dtype is not None else np.dtype(view.dtype)
    # CuPy reads every array in native byte order: swap big-endian input here.
    target = target.newbyteorder("=")
    if is_device_array(view):
        if view.dtype == target and view.flags.c_contiguous:
            return view
        return cupy.ascontiguousarray(view, dtype=target)
    key = f"host:{id(view)}:{target.str}"

    def upload():
        if (target.itemsize > view.dtype.itemsize and target.kind == view.dtype.kind
                and view.dtype.isnative):
            # Widened on the device (exact for ints and floats): half the bytes cross.
            return view, cupy.asarray(np.ascontiguousarray(view)).astype(target)
        return view, cupy.asarray(np.ascontiguousarray(view, dtype=target))

    return cached(dataset, key, upload)[1]


def narrow_ids(array: Any, dataset: Any) -> Any:
    """Point ids of ``dataset`` (its cells' corners) on the device as int32 where every
    id fits (fewer than 2**31 points), int64 otherwise: the geometry kernels read a
    grid's corners once or twice a call, 640 MB as int64 for 10M hexahedra. Host ids
    are uploaded as they are and narrowed on the device (the wide copy is not
    kept); the narrow copy is cached with the dataset. Device ids are used as they
    are (the kernels take both widths).

    Examples
    --------
    >>> callable(narrow_ids)
    True
    """
    view = as_field_array(array)
    if int(dataset.n_points) >= 2**31 or is_device_array(view):
        # Device ids as they are: narrowing them would cost a pass a call.
        return to_device(array, dataset, None if is_device_array(view) else np.int64)
    import cupy

    return cached(dataset, f"host:{id(view)}:narrow-ids",
                  lambda: (view, cupy.asarray(np.ascontiguousarray(view)).astype(cupy.int32)))[1]


def forget(dataset: Any) -> None:
    """Drop every device copy and device topology cached on ``dataset``.

    Examples
    --------
    >>> import daxpy
    >>> forget(daxpy.UniformGrid(dims=(2,)))
    """
    cache = getattr(dataset, "_cache", None)
    if cache:
        # list() copies the keys in one step: another thread may add or drop
        # entries of a shared grid meanwhile.
        for key in [k for k in list(cache) if isinstance(k, str) and k.startswith(_PREFIX)]:
            cache.pop(key, None)


def alignment(array: Any) -> int:
    """Largest power of two (up to 16) dividing the device pointer of ``array``.

    Examples
    --------
    >>> callable(alignment)
    True
    """
    pointer = int(array.data.ptr)
    for size in (16, 8, 4, 2):
        if pointer % size == 0:
            return size
    return 1


_CONSTANTS: "OrderedDict[tuple, Any]" = OrderedDict()
_CONSTANT_BYTES_LIMIT = 64 << 20
_constant_bytes = 0
_CONSTANTS_LOCK = threading.Lock()
"""Held while the table changes or is copied: threads launching kernels share it."""


def constants() -> dict:
    """The device parameter arrays :func:`constant` holds now, by key (a copy of the
    table: CUDA graphs that read them keep them alive, and a capture that fails
    drops the ones it made, which no copy ever filled).

    Examples
    --------
    >>> isinstance(constants(), dict)
    True
    """
    with _CONSTANTS_LOCK:
        return dict(_CONSTANTS)


def drop_constants(keys) -> None:
    """Forget the parameter arrays of ``keys`` (see :func:`constants`).

    Examples
    --------
    >>> drop_constants([])
    """
    global _constant_bytes
    with _CONSTANTS_LOCK:
        for key in keys:
            device = _CONSTANTS.pop(key, None)
            if device is not None:
                _constant_bytes -= device.nbytes


def constant(values: np.ndarray) -> Any:
    """A device copy of a small host parameter array (a bias), made once per content.

    A pageable host-to-device copy first waits for the current stream to
    drain, so uploading a parameter at every launch would serialize a
    pipeline; cached by device, dtype, shape and bytes, the upload happens on
    the first run only. Least recently used entries go past 64 MiB in all.

    Examples
    --------
    >>> callable(constant)
    True
    """
    import cupy

    global _constant_bytes
    host = np.ascontiguousarray(values)
    key = (cupy.cuda.Device().id, host.dtype.str, host.shape, host.tobytes())
    with _CONSTANTS_LOCK:
        device = _CONSTANTS.get(key)
        if device is not None:
            _CONSTANTS.move_to_end(key)
            return device
    made = cupy.asarray(host)
    with _CONSTANTS_LOCK:
        device = _CONSTANTS.get(key)
        if device is not None:  # another thread made it meanwhile
            return device
        _CONSTANTS[key] = made
        _constant_bytes += made.nbytes
        while _constant_bytes > _CONSTANT_BYTES_LIMIT and len(_CONSTANTS) > 1:
            _constant_bytes -= _CONSTANTS.popitem(last=False)[1].nbytes
    return made
