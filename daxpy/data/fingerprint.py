"""Fingerprints of the arrays a dataset validated, so that nothing derived from
them (shape partitions, links, corner tables, device copies) outlives a change.

Topology arrays are shared with the caller, not copied, so the caller can still
write into them after the dataset checked them. The dataset takes a fingerprint
when it validates them, and compares it each time a derived cache is read:
on any difference the caches are dropped and the arrays validated again.

A fingerprint holds each array's identity, memory address, shape, strides and
dtype, and a CRC-32 of its contents: all of them up to :data:`FULL_BYTES`,
beyond that :data:`SAMPLE_ROWS` rows evenly spread plus the last one. Reading
all of a large array at every call would cost as much as the call itself (the
CRC-32 of a 10M-hexahedra connectivity, 640 MB, takes 0.27 s on 2 cores, where
point-to-cell on that grid takes 0.07 s; the sample takes 0.01 ms), so a change
confined to unsampled rows of a larger array is not seen: after writing into
such arrays, call the dataset's ``validate()``. Device arrays are fingerprinted
by address, shape and dtype only: nothing derived from them is cached.

Examples
--------
>>> import numpy as np
>>> from daxpy.data.fingerprint import fingerprint
>>> ids = np.arange(6)
>>> before = fingerprint([ids])
>>> ids[2] = 7
>>> fingerprint([ids]) == before
False
"""

from __future__ import annotations

import weakref
import zlib
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterable, Iterator

import numpy as np

from .arrays import as_field_array, is_device_array

FULL_BYTES = 64 << 10
"""Arrays up to this size are checksummed whole (about 0.02 ms)."""

SAMPLE_ROWS = 1024
"""Rows checksummed in a larger array (about 0.01 ms in a 640 MB one)."""


def _crc(array: np.ndarray, start: int = 0) -> int:
    return zlib.crc32(np.ascontiguousarray(array).reshape(-1).view(np.uint8), start)


def _content(array: np.ndarray) -> int:
    if array.nbytes <= FULL_BYTES or array.shape[0] <= SAMPLE_ROWS:
        return _crc(array)
    step = array.shape[0] // SAMPLE_ROWS
    return _crc(array[::step][:SAMPLE_ROWS], _crc(array[-1:]))


def array_fingerprint(array: Any) -> tuple:
    """What identifies one array and its contents (see the module's docstring).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros(3)
    >>> array_fingerprint(a) == array_fingerprint(a[:])
    False
    """
    if array is None:
        return ()
    if is_device_array(array):
        view = as_field_array(array)
        return ("device", id(array), int(view.data.ptr), view.shape, view.strides,
                view.dtype.str)
    host = np.asarray(array)
    if host.ndim == 0:
        host = host.reshape(1)
    return (id(array), host.__array_interface__["data"][0], host.shape, host.strides,
            host.dtype.str, _content(host))


def fingerprint(arrays: Iterable[Any]) -> tuple:
    """Fingerprints of ``arrays``, in order.

    Examples
    --------
    >>> import numpy as np
    >>> fingerprint([np.zeros(2), None])[1]
    ()
    """
    return tuple(array_fingerprint(a) for a in arrays)


class DerivedCache:
    """What a dataset derived from its validated arrays, and their fingerprint then.

    Shared (not copied) between a dataset and the datasets derived from it, so
    that clearing it clears it for all of them.

    Attributes
    ----------
    entries : dict
        Derived topology, by key (``cell_blocks``, ``cuda:links:int``...).
    fingerprint : tuple
        :func:`fingerprint` of the arrays when they were last validated.

    Examples
    --------
    >>> DerivedCache(()).entries
    {}
    """

    __slots__ = ("entries", "fingerprint")

    def __init__(self, taken: tuple):
        self.entries: dict[str, Any] = {}
        self.fingerprint = taken


_CHECKED_IN_RUN: ContextVar[dict | None] = ContextVar("daxpy_checked_in_run", default=None)
"""The datasets checked in the run under way on this thread (weak references by id:
a streamed run's chunks are datasets too, and holding them would hold their device
arrays past their turn), or None outside a run."""


@contextmanager
def one_check_per_run() -> Iterator[None]:
    """A filter's or pipeline's run: each dataset's arrays are fingerprinted at its
    first check in the run only (:func:`checked_in_run`). A run looks its grid's
    caches up several times (device copies, links, corner tables), each a check:
    nine fingerprints in a slice of 10M hexahedra, about a quarter of its host time.
    Arrays that another thread writes during a run were a race before too; a change
    between runs is still seen. Nested runs keep the outer run's record; threads
    the run starts check as before (a new thread starts outside any run).

    Examples
    --------
    >>> import daxpy
    >>> grid = daxpy.UniformGrid(dims=(2,))
    >>> with one_check_per_run():
    ...     checked_in_run(grid)
    ...     checked_in_run(grid)
    False
    True
    >>> checked_in_run(grid)
    False
    """
    if _CHECKED_IN_RUN.get() is not None:
        yield
        return
    token = _CHECKED_IN_RUN.set({})
    try:
        yield
    finally:
        _CHECKED_IN_RUN.reset(token)


def checked_in_run(dataset: Any) -> bool:
    """Whether ``dataset`` was checked earlier in this run; records that it is being
    checked now (False outside a run: every check fingerprints).

    Examples
    --------
    >>> checked_in_run(object())
    False
    """
    checked = _CHECKED_IN_RUN.get()
    if checked is None:
        return False
    seen = checked.get(id(dataset))
    if seen is not None and seen() is dataset:
        return True
    checked[id(dataset)] = weakref.ref(dataset)  # a freed dataset's id may come again
    return False
