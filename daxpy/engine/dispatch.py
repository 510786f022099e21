"""Run one worklet on one dataset: pick the backend and the implementation once.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.engine.dispatch import execute
>>> g = daxpy.UniformGrid(dims=(3,))
>>> execute("pass_through", g, np.arange(3, dtype=np.float32), "points",
...         backend="cpu", dtype=np.float64).dtype
dtype('float64')
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

from ..data.arrays import native_order, to_host
from .backend import backend_for, resolve_backend
from ..data.dataset import DataSet
from ..errors import FieldError, ResourceError
from ..data.worklet import GENERATING_KIND, Worklet, get_worklet
from .geometry_chunks import cells_now, run_chunked

_TRACE: ContextVar[list | None] = ContextVar("daxpy_dispatch_trace", default=None)


@contextmanager
def traced() -> Iterator[list[Worklet]]:
    """Record the worklets that :func:`execute` runs inside the block, in order.

    Partitioned runs use it to learn the halo of a filter without naming its
    worklets.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> with traced() as seen:
    ...     _ = execute("pass_through", daxpy.UniformGrid(dims=(2,)), np.ones(2), "points",
    ...                 backend="cpu")
    >>> [w.name for w in seen]
    ['pass_through']
    """
    seen: list[Worklet] = []
    token = _TRACE.set(seen)
    try:
        yield seen
    finally:
        _TRACE.reset(token)


def execute(name: str, dataset: DataSet, values: Any, association: str, *,
            backend: str | None = "auto", **params) -> Any:
    """Apply worklet ``name`` to a field of ``dataset``.

    Parameters
    ----------
    name : str
        Registered worklet name.
    dataset : DataSet
        The grid that gives the topology.
    values : array-like
        Field values, at ``association``.
    association : {"points", "cells"}
        Where ``values`` lives; checked against the worklet's declaration.
    backend : {"auto", "cpu", "cuda"}
        Where to run.
    **params
        Static parameters of the worklet (dtype, bias, expression...).

    Returns
    -------
    numpy.ndarray or cupy.ndarray
        NumPy on the CPU backend, CuPy on the CUDA backend.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,))
    >>> execute("pass_through", g, np.ones(2), "points", backend="cpu").tolist()
    [1.0, 1.0]
    """
    worklet = get_worklet(name)
    seen = _TRACE.get()
    if seen is not None:
        seen.append(worklet)
    wanted = worklet.input_association
    if wanted != "any" and wanted != association:
        raise FieldError(
            f"worklet {name!r} reads {wanted[:-1]} fields, but the field given is "
            f"associated with {association}"
        )
    # The grid's arrays are shared with the caller: never compute on a change.
    dataset.check_unchanged()
    on_gpu = resolve_backend(backend_for(dataset, backend)) == "cuda"
    if worklet.kind == GENERATING_KIND and cells_now() is not None:
        # Slab by slab (chunked or out of core), with the array programs, whose
        # results carry what the merge needs.
        impl = worklet.cuda_impl(dataset.family) if on_gpu else \
            worklet.numpy_impl(dataset.family)
        made = run_chunked(impl, dataset, values, association, params)
        if made is not None:
            return made
    if on_gpu and worklet.kind == GENERATING_KIND:
        from ..cuda.memory import guarded

        return guarded(worklet.cuda_impl(dataset.family), dataset, name, dataset, values,
                       **params)
    if on_gpu:
        from ..cuda.dispatch import execute_cuda
        from ..cuda.memory import guarded

        return guarded(execute_cuda, dataset, name, worklet, dataset, values, association,
                       **params)
    impl = worklet.cpu_impl(dataset.family)
    try:
        return impl(dataset, native_order(to_host(values)), **params)
    except IndexError:
        # An id out of range: the grid's arrays were written into after it was
        # built, where their fingerprint does not look (see daxpy.data.fingerprint).
        dataset.revalidate_changed()
        raise
    except MemoryError as err:
        # NumPy refuses an allocation before making it: nothing half-written.
        raise ResourceError(
            f"worklet {name!r} on {dataset.name} ({dataset.n_points:,} points, "
            f"{dataset.n_cells:,} cells) needs more host memory than this process may "
            f"allocate ({err}); run it on Dask (daxpy.dask) or on a machine with more "
            "memory"
        ) from None
