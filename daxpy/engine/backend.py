"""Backend selection: ``"cpu"`` (compiled, threaded kernels) or ``"cuda"`` (generated
CUDA via CuPy), and the CPU backend's thread count.

``"auto"`` picks CUDA when CuPy imports and sees a GPU; the environment
variable ``DAXPY_BACKEND`` overrides what ``"auto"`` means.

Examples
--------
>>> resolve_backend("cpu")
'cpu'
"""

from __future__ import annotations

import functools
import os

from ..data.extras import install_command
from ..errors import ArgumentError, BackendError

BACKENDS = ("auto", "cpu", "cuda")


@functools.lru_cache(maxsize=1)
def cuda_available() -> bool:
    """True when CuPy imports and at least one CUDA device is visible.

    Examples
    --------
    >>> isinstance(cuda_available(), bool)
    True
    """
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, or no device: all mean "no CUDA"
        return False


def configure_cpu(threads: int | None = None) -> None:
    """Set how many threads the CPU backend's compiled kernels use.

    Parameters
    ----------
    threads : int or None
        At most this many threads (capped by ``NUMBA_NUM_THREADS``, the cores
        by default). None goes back to the default: ``DAXPY_CPU_THREADS`` if
        it is set, else every core. Results do not depend on it.

    Raises
    ------
    ArgumentError
        For a count that is not a positive integer.

    Examples
    --------
    >>> import daxpy
    >>> daxpy.configure_cpu(threads=1)
    >>> daxpy.configure_cpu(threads=None)
    """
    # Imported here: importing the worklets package loads every worklet module.
    from ..worklets._numba import set_threads

    set_threads(threads)


def resolve_backend(backend: str | None = "auto") -> str:
    """Turn a user's backend choice into ``"cpu"`` or ``"cuda"``.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"} or None
        None and ``"auto"`` consult ``DAXPY_BACKEND``, then the hardware.

    Raises
    ------
    ArgumentError
        For an unknown backend name.
    BackendError
        If ``"cuda"`` is asked for and no GPU is usable.

    Examples
    --------
    >>> resolve_backend("cpu")
    'cpu'
    """
    choice = "auto" if backend is None else backend
    if choice == "auto":
        choice = os.environ.get("DAXPY_BACKEND", "auto").lower() or "auto"
        if choice not in BACKENDS:
            raise ArgumentError(
                f"DAXPY_BACKEND must be one of {BACKENDS}, got {choice!r}"
            )
    if choice not in BACKENDS:
        raise ArgumentError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if choice == "auto":
        return "cuda" if cuda_available() else "cpu"
    if choice == "cuda" and not cuda_available():
        raise BackendError(
            f"backend='cuda' needs CuPy ({install_command('cuda')}, or "
            f"{install_command('cuda13')} for CUDA 13) and a visible GPU"
        )
    return choice



def backend_for(dataset, backend: str | None = "auto") -> str | None:
    """The backend to ask :func:`resolve_backend` for, for work on ``dataset``:
    ``backend`` itself, except that ``"auto"`` stays on the CPU for a dataset
    the CUDA kernels do not take (``dataset.cuda_ready`` is False).

    Raises
    ------
    BackendError
        If CUDA is asked for (by ``backend`` or ``DAXPY_BACKEND``) on such a dataset.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> backend_for(daxpy.PolyData(np.eye(3)), "auto")
    'cpu'
    >>> backend_for(daxpy.PolyData(np.eye(3)), "cuda")
    Traceback (most recent call last):
    ...
    daxpy.errors.BackendError: the CUDA backend does not take PolyData yet (its polygons, polylines and strips have no CUDA topology); use backend='cpu' or 'auto'
    """
    if getattr(dataset, "cuda_ready", True):
        return backend
    choice = "auto" if backend is None else backend
    if choice == "auto":
        choice = os.environ.get("DAXPY_BACKEND", "auto").lower() or "auto"
    if choice == "cuda":
        raise BackendError(
            f"the CUDA backend does not take {type(dataset).__name__} yet (its polygons, "
            "polylines and strips have no CUDA topology); use backend='cpu' or 'auto'")
    return "cpu" if choice == "auto" else choice
