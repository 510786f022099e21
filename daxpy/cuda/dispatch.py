"""Run a worklet through its generated CUDA kernels.

:func:`execute_cuda` is what :func:`daxpy.engine.dispatch.execute` calls on the CUDA
backend; :func:`run` is the same for a worklet name (benchmarks use it), and
:func:`kernel_source` prints what would run, without a GPU.

Examples
--------
>>> import daxpy
>>> src = kernel_source("pass_through", daxpy.UniformGrid(dims=(8,)), "float32",
...                     dtype="float64")
>>> "pass_through__f32__f64__v2(" in src
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import FieldError
from ..data.worklet import get_worklet
from .compile import kernel_of
from .device import alignment, to_device
from .plan import make_plan
from .plan_cache import frozen_params, reused_plan


def empty_output(shape: tuple, dtype) -> Any:
    """Allocate a kernel output (tests replace this to poison outputs with NaN).

    Examples
    --------
    >>> callable(empty_output)
    True
    """
    import cupy

    return cupy.empty(shape, dtype=dtype)


def launch(plan, values, out) -> None:
    """Launch every kernel of ``plan`` on the current stream.

    Examples
    --------
    >>> callable(launch)
    True
    """
    for step in plan.launches:
        if step.n_items == 0:
            continue
        args = tuple(step.values(values, out))
        for source, grid, block in step.sequence():
            kernel_of(source)(grid, block, args)


def device_field(name: str, dataset, values: Any, association: str) -> tuple[Any, bool]:
    """``values`` on the device, checked against the grid, and whether it and
    a fresh output allocation are 16-byte aligned (vector access).

    Raises
    ------
    FieldError
        If the field does not have one tuple per point (cell) of ``dataset``.

    Examples
    --------
    >>> callable(device_field)
    True
    """
    field = to_device(values, dataset)
    expected = dataset.n_points if association == "points" else dataset.n_cells
    if field.ndim not in (1, 2) or field.shape[0] != expected:
        raise FieldError(
            f"{name}: the {association[:-1]} field must have shape ({expected},) "
            f"or ({expected}, components), got {tuple(field.shape)}"
        )
    out_probe = empty_output((0,), np.float32)  # alignment of a fresh allocation
    return field, alignment(field) >= 16 and alignment(out_probe) >= 16


def run_plan(plan, field) -> Any:
    """Allocate the plan's output and launch its kernels over ``field``.

    Examples
    --------
    >>> callable(run_plan)
    True
    """
    out = empty_output(plan.out_shape, plan.out_dtype)
    if plan.zero_fill:
        out.fill(0)
    launch(plan, field, out)
    return out


def execute_cuda(worklet, dataset, values: Any, association: str, **params) -> Any:
    """Apply ``worklet`` to ``values`` on the GPU; return a CuPy array.

    Parameters
    ----------
    worklet : Worklet
        Declaration with a ``cuda`` spec.
    dataset : DataSet
        The grid.
    values : array-like
        Field at ``association``: NumPy (copied once and cached on the dataset),
        or CuPy / ``__cuda_array_interface__`` / DLPack (used in place).
    association : {"points", "cells"}
        Where ``values`` lives.
    **params
        Static worklet parameters.

    Returns
    -------
    cupy.ndarray

    Examples
    --------
    >>> callable(execute_cuda)
    True
    """
    field, aligned = device_field(worklet.name, dataset, values, association)
    dtype, tail = np.dtype(field.dtype), tuple(field.shape[1:])
    what = (id(worklet), association, dtype.str, tail, frozen_params(params), bool(aligned))
    plan = reused_plan(dataset, what, (worklet,),
                       lambda: make_plan(worklet, dataset, association, dtype, tail, params,
                                         aligned=aligned))
    return run_plan(plan, field)


def run(name: str, dataset, values: Any, association: str = "points", **params) -> Any:
    """Run worklet ``name`` on the GPU (:func:`execute_cuda` by name).

    Examples
    --------
    >>> callable(run)
    True
    """
    return execute_cuda(get_worklet(name), dataset, values, association, **params)


def kernel_source(name: str, dataset, field_dtype="float32", components: int = 1,
                  association: str | None = None, **params) -> str:
    """Generated CUDA source of every kernel worklet ``name`` runs on ``dataset``.

    Parameters
    ----------
    name : str
        Worklet name (``point_gradient``, ``pass_through``...).
    dataset : DataSet
        The grid (its type, dimension and cell shapes choose the kernels).
    field_dtype : dtype-like
        Input field dtype.
    components : int
        Input components (1 means a ``(n,)`` field).
    association : {"points", "cells"}, optional
        Where the input lives (default: what the worklet reads, else points).
    **params
        Static worklet parameters.

    Returns
    -------
    str
        The sources, one after the other (one per kernel launched).

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.UniformGrid(dims=(4, 4))
    >>> "void __launch_bounds__(256) magnitude__f64__c3__v4(" in kernel_source(
    ...     "magnitude", g, "float64", components=3)
    True
    """
    worklet = get_worklet(name)
    if association is None:
        wanted = worklet.input_association
        association = wanted if wanted != "any" else "points"
    tail = () if components == 1 else (int(components),)
    plan = make_plan(worklet, dataset, association, np.dtype(field_dtype), tail, params)
    return "\n".join(step.source() for step in plan.launches)
