"""Where a geometry filter's arrays go: its input fields onto the device, and the
new dataset's arrays left there or brought to the host.

A GPU run of a geometry filter on host fields uploads them first with
:func:`uploaded` (from the page-locked array, at the bus's rate). The filter
makes its dataset inside :func:`results_on_device`, set by the run from ``to=``
(or from where the input lives), and places each array with :func:`placed`, so
the worklets need not know where the caller wants it.

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

import numpy as np

from .transfer import copy_to_device, download, page_lock

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


def results_to_device() -> bool:
    """Whether a new dataset's arrays stay on the device here (:func:`results_on_device`).

    Examples
    --------
    >>> with results_on_device(True):
    ...     results_to_device()
    True
    """
    return _RESULTS_ON_DEVICE.get()


def placed(array: Any) -> Any:
    """``array`` where the new dataset being made goes: on the device within
    ``results_on_device(True)`` (a device array as it is, a host one uploaded),
    else on the host (:func:`download`).

    Examples
    --------
    >>> placed([3]).tolist()
    [3]
    """
    if not results_to_device():
        return download(array)
    import cupy

    return cupy.asarray(array)


def uploaded(array: Any, staging: str = "auto") -> Any:
    """``array`` on the device: a device array as it is; a host array copied from its
    own memory page-locked in place (:func:`daxpy.stream.transfer.page_lock`, as the
    streamed runs copy, at the bus's rate where a pageable copy runs at a fraction
    of it), or through CuPy's own copy where it cannot be locked or ``staging``
    says ``"pageable"`` or ``"pool"``.

    Examples
    --------
    >>> callable(uploaded)
    True
    """
    import cupy

    from ..data.arrays import is_device_array

    if is_device_array(array):
        return array
    host = np.asarray(array)
    if not (host.flags.c_contiguous and host.dtype.isnative) or \
            staging not in ("auto", "register") or not page_lock(host):
        return cupy.asarray(host)
    device = cupy.empty(host.shape, host.dtype)
    # On the current stream, ahead of the kernels that read it; ``host`` stays alive
    # in its dataset while they run.
    copy_to_device(host, device, cupy.cuda.get_current_stream())
    return device
