"""Arrays and sizes as VTK can hold them, checked before a dataset is exported.

VTK wraps a NumPy array by its raw bytes: it takes them in the machine's own
byte order, knows no float16, bfloat16, long double or complex type, and counts
structured extents in C ``int``. :func:`vtk_ready` returns an array VTK reads
correctly (the array itself whenever it already is one, so exports stay
zero-copy) or refuses it; :func:`check_vtk_dims` refuses dims VTK cannot count.

Examples
--------
>>> import numpy as np
>>> from daxpy.io.vtk_export import vtk_ready
>>> big_endian = np.array([1.0, 2.0, 3.0], dtype=">f8")
>>> vtk_ready(big_endian, "point field 't'", ValueError).dtype.byteorder
'='
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.arrays import to_host
from ..errors import InvalidDataSetError
from ..data.memory_budget import require_bytes

__all__ = ["VTK_INT_MAX", "check_vtk_dims", "vtk_ready"]

VTK_INT_MAX = 2**31 - 1
"""Largest number of points along one axis of a structured VTK dataset: VTK
stores extents as C ``int`` (the last index is ``dims - 1``, but
``SetDimensions`` takes the dims themselves as ``int``)."""

# VTK 9.7 allocates about 16 bytes per point along each axis of a structured
# dataset as soon as its dims are set (implicit per-axis coordinates): a single
# axis of 2**31 - 1 points takes 32 GiB before any field is added.
_VTK_BYTES_PER_AXIS_POINT = 16

# Dtypes VTK has an array class for, exported as they are.
_VTK_DTYPES = frozenset(np.dtype(name) for name in (
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float32", "float64"))
# Narrower floats VTK lacks: float32 holds every one of their values exactly.
_WIDENED = frozenset(("float16", "bfloat16"))


def _native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=")


def _export_dtype(dtype: np.dtype, what: str, error: type) -> np.dtype:
    """The native dtype VTK gets for ``dtype``, or ``error`` naming ``what``."""
    native = _native(dtype)
    if native in _VTK_DTYPES:
        return native
    if dtype.name in _WIDENED:
        return np.dtype(np.float32)
    hint = ("cast it to float64 (which rounds it) or keep it out of the export"
            if dtype.kind == "f" else
            "store the real and imaginary parts as separate fields or components"
            if dtype.kind == "c" else "convert it to an integer or floating-point dtype")
    raise error(f"{what} has dtype {dtype}, which VTK cannot hold; {hint}")


def vtk_ready(values: Any, what: str, error: type) -> np.ndarray:
    """``values`` as a host array VTK can wrap: native byte order, contiguous,
    of a dtype VTK has.

    Parameters
    ----------
    values : array-like
        A field, points, coordinates or topology array (NumPy or device).
    what : str
        What the array is, for the error message (``"point field 't' of grid"``).
    error : type
        The exception class to raise (``FieldError`` for fields,
        ``InvalidDataSetError`` for geometry and topology).

    Returns
    -------
    numpy.ndarray
        ``values`` itself when it is a contiguous native-order NumPy array of a
        VTK dtype (int8 to uint64, float32, float64); otherwise a copy:
        byte-swapped from a non-native order, made contiguous, or widened from
        float16 or bfloat16 to float32 (exact: VTK has no 16-bit float).
        Device arrays are copied to the host.

    Raises
    ------
    error
        If the dtype has no VTK equivalent that holds its values exactly (long
        double, complex, bool, datetime, object, structured...).
    ResourceError
        If the copy needs more memory than is available (an array broadcast
        from a few values, say); raised before allocating.

    Examples
    --------
    >>> import numpy as np
    >>> from daxpy.io.vtk_export import vtk_ready
    >>> values = np.arange(4.0)
    >>> vtk_ready(values, "point field 't'", ValueError) is values
    True
    >>> vtk_ready(np.ones(2, np.float16), "point field 'h'", ValueError).dtype
    dtype('float32')
    >>> vtk_ready(np.ones(2, np.complex64), "point field 'z'", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: point field 'z' has dtype complex64, which VTK cannot hold; store the real and imaginary parts as separate fields or components
    """
    host = to_host(values)
    dtype = _export_dtype(np.dtype(host.dtype), what, error)
    if host.dtype == dtype and host.flags.c_contiguous:
        return host
    # A zero-stride (broadcast) array may be far larger once copied.
    require_bytes(int(host.size) * dtype.itemsize, f"exporting {what} to VTK")
    return np.ascontiguousarray(host, dtype=dtype)


def check_vtk_dims(dims: tuple, owner: str) -> None:
    """Refuse structured dims VTK cannot count (``VTK_INT_MAX`` per axis), or
    whose per-axis structures VTK could not allocate here.

    Parameters
    ----------
    dims : tuple of int
        Points along x, y and z.
    owner : str
        The dataset's name, for the message.

    Raises
    ------
    InvalidDataSetError
        Naming the first axis with more than ``VTK_INT_MAX`` points.
    ResourceError
        If VTK's per-axis structures need more memory than is available
        (checked before VTK allocates them, which would end the process).

    Examples
    --------
    >>> from daxpy.io.vtk_export import check_vtk_dims
    >>> check_vtk_dims((2**31, 1, 1), "grid")
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: grid has 2147483648 points along x; VTK holds at most 2147483647 per axis (its extents are C int), so it cannot be exported to VTK or written
    """
    for axis, n in zip("xyz", dims):
        if n > VTK_INT_MAX:
            raise InvalidDataSetError(
                f"{owner} has {n} points along {axis}; VTK holds at most {VTK_INT_MAX} "
                f"per axis (its extents are C int), so it cannot be exported to VTK or "
                f"written")
    require_bytes(_VTK_BYTES_PER_AXIS_POINT * sum(dims),
                  f"VTK's dataset for the {'x'.join(map(str, dims))} {owner}")
