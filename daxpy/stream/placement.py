"""Where a new dataset's arrays go: left on the device, or brought to the host.

A geometry filter makes its dataset inside :func:`results_on_device`, set by
the run from ``to=`` (or from where the input lives), and places each array
with :func:`placed`, so the worklets need not know where the caller wants it.

Examples
--------
>>> with results_on_device(False):
...     placed([1, 2]).tolist()
[1, 2]
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator

from .transfer import download

_RESULTS_ON_DEVICE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "daxpy_results_on_device", default=False)


@contextlib.contextmanager
def results_on_device(on: bool) -> Iterator[None]:
    """Within it, :func:`placed` leaves a new dataset's arrays on the device (``on``)
    or brings them to the host; a context variable, so threads and tasks keep
    their own setting.

    Examples
    --------
    >>> with results_on_device(False):
    ...     placed([1, 2]).tolist()
    [1, 2]
    """
    token = _RESULTS_ON_DEVICE.set(bool(on))
    try:
        yield
    finally:
        _RESULTS_ON_DEVICE.reset(token)


def placed(array: Any) -> Any:
    """``array`` where the new dataset being made goes: on the device within
    ``results_on_device(True)`` (a device array as it is, a host one uploaded),
    else on the host (:func:`download`).

    Examples
    --------
    >>> placed([3]).tolist()
    [3]
    """
    if not _RESULTS_ON_DEVICE.get():
        return download(array)
    import cupy

    return cupy.asarray(array)
