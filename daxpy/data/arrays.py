"""Array helpers shared by the control layer: which library owns an array, and
how to view foreign arrays without copying.

Examples
--------
>>> import numpy as np
>>> from daxpy.data.arrays import is_device_array
>>> is_device_array(np.zeros(3))
False
"""

from __future__ import annotations

from typing import Any

import numpy as np

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def is_device_array(array: Any) -> bool:
    """Return True when ``array`` lives in GPU memory.

    Parameters
    ----------
    array : object
        Any array-like object.

    Returns
    -------
    bool
        True for CuPy arrays and for objects exposing ``__cuda_array_interface__``
        or a DLPack device of type CUDA.

    Examples
    --------
    >>> import numpy as np
    >>> is_device_array(np.arange(4))
    False
    """
    if isinstance(array, np.ndarray):
        return False
    if hasattr(array, "__cuda_array_interface__"):
        return True
    device = getattr(array, "__dlpack_device__", None)
    if device is not None:
        # DLPack device types 2 (kDLCUDA) and 13 (kDLCUDAManaged).
        return device()[0] in (2, 13)
    return False


def as_field_array(array: Any) -> Any:
    """View ``array`` as a NumPy or CuPy array without copying.

    Host objects (lists, VTK-backed NumPy views, memoryviews) become NumPy
    arrays; device objects (CuPy, PyTorch, JAX, Numba) become CuPy arrays that
    share their memory.

    Parameters
    ----------
    array : array-like
        The field values.

    Returns
    -------
    numpy.ndarray or cupy.ndarray
        A zero-copy view whenever the input already is an array.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.ones(4, dtype=np.float32)
    >>> as_field_array(a) is a
    True
    """
    if isinstance(array, np.ndarray):
        return array
    if is_device_array(array):
        import cupy

        if isinstance(array, cupy.ndarray):
            return array
        if hasattr(array, "__cuda_array_interface__"):
            return cupy.asarray(array)
        return cupy.from_dlpack(array)
    return np.asarray(array)


def checked_array(values: Any, what: str, error: type) -> Any:
    """:func:`as_field_array`, raising ``error`` that names ``what`` when
    ``values`` is not an array of numbers (ragged lists, masked arrays...).

    A masked array is refused rather than viewed: its mask would be dropped
    and the values under it used as if they were valid.

    Examples
    --------
    >>> try:
    ...     checked_array([[1, 2], [3]], "points of mesh", ValueError)
    ... except ValueError as err:
    ...     print(str(err)[:40])
    points of mesh must be a rectangular arr
    """
    if isinstance(values, np.ma.MaskedArray):
        raise error(f"{what} is a masked array; daxpy would ignore its mask, so fill the "
                    "masked values (for example with NaN) and pass a plain array")
    try:
        return as_field_array(values)
    except (TypeError, ValueError) as err:
        raise error(f"{what} must be a rectangular array of numbers, got "
                    f"{type(values).__name__} ({err})") from None


def all_finite(array: Any) -> bool:
    """True when no value of ``array`` is NaN or Inf; device arrays are checked
    on the device (one reduction, no copy to the host).

    Examples
    --------
    >>> import numpy as np
    >>> all_finite(np.array([1.0, np.inf]))
    False
    """
    xp = array_module(array)
    return bool(xp.isfinite(array).all())


def array_module(array: Any):
    """Return ``numpy`` or ``cupy``, whichever owns ``array``.

    Examples
    --------
    >>> import numpy as np
    >>> array_module(np.zeros(2)).__name__
    'numpy'
    """
    if isinstance(array, np.ndarray):
        return np
    import cupy

    return cupy.get_array_module(array)


def native_order(array: np.ndarray) -> np.ndarray:
    """``array`` in the machine's byte order: itself, or a byte-swapped copy.

    NumPy computes on big-endian data but refuses it in ``dtype=`` arguments
    and CuPy misreads it, so worklets only ever see native byte order.

    Examples
    --------
    >>> import numpy as np
    >>> native_order(np.arange(3, dtype=">f8")).dtype.isnative
    True
    """
    if array.dtype.isnative:
        return array
    return array.astype(array.dtype.newbyteorder("="))


def to_host(array: Any) -> np.ndarray:
    """Return a NumPy array holding ``array``'s values (copies only device data).

    Examples
    --------
    >>> import numpy as np
    >>> to_host([1, 2]).tolist()
    [1, 2]
    """
    if is_device_array(array):
        import cupy

        return cupy.asnumpy(as_field_array(array))
    return np.asarray(array)


def joined(parts: list) -> Any:
    """The arrays ``parts`` (NumPy or CuPy, at least one) end to end: the one part
    itself, not a copy (a surface's or a clip's arrays can be hundreds of MB).

    Examples
    --------
    >>> one = np.arange(3)
    >>> joined([one]) is one, joined([one, one]).tolist()
    (True, [0, 1, 2, 0, 1, 2])
    """
    return parts[0] if len(parts) == 1 else array_module(parts[0]).concatenate(parts)

