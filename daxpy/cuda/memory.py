"""GPU out-of-memory: a :class:`~daxpy.errors.DeviceMemoryError` that says how
many bytes the call needed and how many were free, with what to do about it;
and nothing of the failed call left allocated.

Examples
--------
>>> print(memory_message("point_gradient", "mesh", 3 * 2**30, 2**30, 2**30, 80 * 2**30)[:76])
GPU out of memory in point_gradient on mesh: it needs at least 3,221,225,472
"""

from __future__ import annotations

import traceback
from typing import Any, Callable

from ..errors import DeviceMemoryError

_CUDA_ERROR_MEMORY_ALLOCATION = 2
_CACHE_PREFIX = "cuda:"

ADVICE = ("run it in chunks, which keeps each piece within the GPU's memory: "
          "daxpy.dask.apply(filter, grid, chunks='auto') or daxpy.dask.pipeline(grid); "
          "or free device memory first")
"""What a DeviceMemoryError suggests."""


def is_out_of_memory(exc: BaseException) -> bool:
    """True for CuPy's out-of-memory error and CUDA's allocation failure.

    Examples
    --------
    >>> callable(is_out_of_memory)
    True
    """
    import cupy
    from cupy_backends.cuda.api.runtime import CUDARuntimeError

    if isinstance(exc, cupy.cuda.memory.OutOfMemoryError):
        return True
    return isinstance(exc, CUDARuntimeError) and exc.status == _CUDA_ERROR_MEMORY_ALLOCATION


def requested_bytes(exc: BaseException) -> int:
    """Size of the allocation that failed (0 when the error does not say).

    Examples
    --------
    >>> requested_bytes(MemoryError())
    0
    """
    return int(getattr(exc, "_size", 0) or 0)


def device_memory() -> tuple[int, int]:
    """``(free, total)`` bytes of the current device, as the driver reports them.

    Examples
    --------
    >>> callable(device_memory)
    True
    """
    import cupy

    free, total = cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)


def pool_used() -> int:
    """Bytes of CuPy's default memory pool held by live arrays.

    Examples
    --------
    >>> callable(pool_used)
    True
    """
    import cupy

    return int(cupy.get_default_memory_pool().used_bytes())


def release_cached() -> None:
    """Give the memory pool's unused blocks back to the driver.

    Examples
    --------
    >>> callable(release_cached)
    True
    """
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()


def memory_message(what: str, owner: str, needed: int, requested: int, free: int,
                   total: int) -> str:
    """Text of a DeviceMemoryError.

    Examples
    --------
    >>> "chunks='auto'" in memory_message("pass_through", "grid", 10, 10, 5, 100)
    True
    """
    failed = f" (the allocation that failed asked for {requested:,})" if requested else ""
    return (f"GPU out of memory in {what} on {owner}: it needs at least {needed:,} bytes"
            f"{failed}, and {free:,} bytes of {total:,} were free on the device; {ADVICE}")


def guarded(run: Callable[..., Any], dataset: Any, what: str, /, *args, **kwargs) -> Any:
    """Call ``run(*args, **kwargs)``; turn a GPU out-of-memory into DeviceMemoryError.

    On that error the call leaves nothing allocated: device copies it cached
    on ``dataset`` are dropped, the local arrays of its frames are released
    (the traceback would otherwise keep them alive as long as the error), and
    the memory pool's free blocks go back to the driver. Other errors pass
    through untouched.

    Parameters
    ----------
    run : callable
        The device work (for example :func:`daxpy.cuda.dispatch.execute_cuda`).
    dataset : DataSet
        Whose cache holds the call's device copies; named in the message.
    what : str
        What ran (a worklet name), for the message.

    Raises
    ------
    DeviceMemoryError
        Naming the bytes needed and the bytes free, with the advice to chunk.

    Examples
    --------
    >>> callable(guarded)
    True
    """
    cache = getattr(dataset, "_cache", None)
    cached_before = set(cache) if cache is not None else set()
    used_before = pool_used()
    failure = None
    try:
        return run(*args, **kwargs)
    except DeviceMemoryError:
        # A guarded call inside this one ran out (a worklet of a pipeline run):
        # what this call cached before it goes too.
        _drop_new(cache, cached_before)
        release_cached()
        raise
    except Exception as exc:  # noqa: BLE001 - anything else is re-raised at once
        if not is_out_of_memory(exc):
            raise
        requested = requested_bytes(exc)
        free, total = device_memory()
        failure = (max(pool_used() - used_before, 0) + requested, requested, free, total)
        traceback.clear_frames(exc.__traceback__)
    # Outside the except block, so the new error carries no reference to the old one.
    _drop_new(cache, cached_before)
    release_cached()
    owner = getattr(dataset, "name", "the dataset")
    raise DeviceMemoryError(memory_message(what, owner, *failure))


def _drop_new(cache, cached_before: set) -> None:
    """Drop the device copies cached on a dataset since ``cached_before``."""
    if cache is not None:
        # Keys copied first, dropped if present: other threads share the grid's cache.
        for key in [k for k in list(cache) if k not in cached_before
                    and isinstance(k, str) and k.startswith(_CACHE_PREFIX)]:
            cache.pop(key, None)
