"""Numba's parallel kernels in a forked child: run serially where GNU OpenMP would
end the process.

GNU OpenMP is not fork-safe, and Numba's OpenMP threading layer terminates a forked
child at its first parallel loop once the parent has started the layer (SIGTERM,
"fork() called from a process already using GNU OpenMP"). A child forked by
``multiprocessing`` (the default start method on Linux before Python 3.14), a
PyTorch data loader or a Dask process pool after the parent ran a daxpy filter
would die at its own first gradient or average. Here the child learns at the fork
whether its parent had started that layer, and each parallel kernel
(:func:`fork_safe`) runs a serial twin of itself there instead, compiled at its
first call in the child: the same loops with ``prange`` as ``range``, the same
results (every output element is written by one iteration, reductions are integer
counts).

Examples
--------
>>> openmp_forbidden()
False
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

_FORBIDDEN = [False]
"""Whether this process is a fork of one that had started Numba's OpenMP layer."""

_STARTING = [False]
"""Whether this process (or, after a fork, its parent) has begun to start Numba's
threads (:func:`threads_starting`)."""


def _after_fork_in_child() -> None:
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    started = parallel is not None and getattr(parallel, "_is_initialized", False)
    # Forked while another thread started the layer, the child cannot tell whether
    # GNU OpenMP had begun: it takes it that it had.
    if (started and getattr(parallel, "_threading_layer", None) == "omp") or (
            _STARTING[0] and not started):
        _FORBIDDEN[0] = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def threads_starting() -> None:
    """Record that this process is about to start Numba's threads (on a thread of its
    own, perhaps): a child forked before they are up is treated as one forked after
    GNU OpenMP started (:func:`openmp_forbidden`).

    Examples
    --------
    >>> threads_starting()   # (this process: nothing changes for itself)
    >>> openmp_forbidden()
    False
    """
    _STARTING[0] = True


def openmp_forbidden() -> bool:
    """Whether a parallel loop on Numba's OpenMP threads would end this process: it
    was forked from one that had started them (or from such a child).

    Examples
    --------
    >>> openmp_forbidden()
    False
    """
    return _FORBIDDEN[0]


class fork_safe:  # noqa: N801  (used as a decorator's result, like a function)
    """A Numba parallel kernel that a forked child (:func:`openmp_forbidden`) runs
    through a serial twin, compiled there at its first call.

    Parameters
    ----------
    dispatcher : numba dispatcher
        The kernel, compiled with ``parallel=True``.

    Examples
    --------
    >>> import numba, numpy as np
    >>> @fork_safe
    ... @numba.njit(parallel=True)
    ... def double(x):
    ...     for i in numba.prange(x.shape[0]):
    ...         x[i] *= 2
    >>> x = np.ones(3); double(x); x.tolist()
    [2.0, 2.0, 2.0]
    """

    def __init__(self, dispatcher: Any):
        self.parallel, self._serial = dispatcher, None
        functools.update_wrapper(self, dispatcher.py_func)

    def serial(self) -> Any:
        """The serial twin: the same function and options but ``parallel``, outside
        Numba's disk cache (whose entries the parallel kernel's options do not key).

        Examples
        --------
        >>> import numba
        >>> fork_safe(numba.njit(parallel=True)(lambda x: x)).serial()(3)
        3
        """
        if self._serial is None:
            from numba import njit

            options = {k: v for k, v in self.parallel.targetoptions.items()
                       if k not in ("parallel", "cache", "nopython")}
            self._serial = njit(**options)(self.parallel.py_func)
        return self._serial

    def __call__(self, *args: Any) -> Any:
        if _FORBIDDEN[0]:
            return self.serial()(*args)
        return self.parallel(*args)


_WRAPPED: dict[Any, fork_safe] = {}


def fork_safe_generated(dispatcher: Any) -> fork_safe:
    """:class:`fork_safe` of a generated parallel kernel
    (:func:`~daxpy.worklets._generated_cpu.load_generated`), one per kernel, so that
    a child compiles each serial twin once.

    Examples
    --------
    >>> import numba
    >>> f = numba.njit(parallel=True)(lambda x: x + 1)
    >>> fork_safe_generated(f) is fork_safe_generated(f)
    True
    """
    wrapped = _WRAPPED.get(dispatcher)
    if wrapped is None:
        wrapped = _WRAPPED[dispatcher] = fork_safe(dispatcher)
    return wrapped
