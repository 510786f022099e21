"""CUDA declarations (:class:`daxpy.cuda.spec.CudaSpec`) of the worklet families.

Each worklet module attaches its entry as ``Worklet(..., cuda=CUDA["name"])``;
the device code is in the ``.cuh`` file beside that module.

Examples
--------
>>> CUDA["point_to_cell"].domain
'cells'
"""

from __future__ import annotations

import numpy as np

from daxpy.cuda.codegen import ctype
from daxpy.cuda.spec import CudaSpec, KernelOptions


def _pass_through_dtype(dtype: np.dtype, params: dict) -> np.dtype:
    """Output dtype of pass-through: ``dtype=`` if given, else the input's.

    Examples
    --------
    >>> _pass_through_dtype(np.dtype("float32"), {"dtype": "float64"})
    dtype('float64')
    """
    wanted = params.get("dtype")
    return np.dtype(wanted) if wanted is not None else dtype


def _gradient_tail(tail: tuple, params: dict) -> tuple:
    """A gradient has three derivatives per input component (VTK's layout).

    Examples
    --------
    >>> _gradient_tail((2,), {})
    (6,)
    """
    return (3 * int(np.prod(tail)),)


def _same_dtype(dtype: np.dtype, params: dict) -> np.dtype:
    """The output keeps the input's dtype.

    Examples
    --------
    >>> _same_dtype(np.dtype("int16"), {})
    dtype('int16')
    """
    return dtype


def _bias_options(params: dict, in_dtype, out_dtype, components: int,
                  n_values: int) -> KernelOptions:
    """The bias, in the field's dtype, as a device array argument.

    Examples
    --------
    >>> _bias_options({"bias": [1, 2]}, np.dtype("float32"), None, 2, 4).params[0]
    ('const float* __restrict__', 'bias')
    """
    from .bias_add import fit_bias

    # A zero-stride stand-in for the field: fit_bias checks size and dtype only.
    bias = fit_bias(params.get("bias"), np.broadcast_to(np.zeros((), in_dtype), (n_values,)))

    def upload():
        import cupy

        return cupy.asarray(bias)

    return KernelOptions(params=[(f"const {ctype(in_dtype)}* __restrict__", "bias"),
                                 ("const long long", "n_bias")],
                         values=[upload, np.int64(bias.size)])


def _no_tail(tail: tuple, params: dict) -> tuple:
    """One value per tuple.

    Examples
    --------
    >>> _no_tail((3,), {})
    ()
    """
    return ()


CUDA = {
    "pass_through": CudaSpec("pass_through.cuh", "pass_through", "flat",
                             out_dtype=_pass_through_dtype, accepted_params=("dtype",)),
    "point_to_cell": CudaSpec("point_to_cell.cuh", "point_to_cell", "cells"),
    "bias_add": CudaSpec("bias_add.cuh", "bias_add", "flat", out_dtype=_same_dtype,
                         options=_bias_options, accepted_params=("bias",)),
    "magnitude": CudaSpec("magnitude.cuh", "magnitude", "tuples", out_tail=_no_tail),
    "cell_to_point": CudaSpec("cell_to_point.cuh", "cell_to_point", "points"),
    "point_gradient": CudaSpec("gradient.cuh", "point_gradient", "points",
                               out_tail=_gradient_tail, uses_coordinates=True,
                               point_links="corners"),
    "cell_gradient": CudaSpec("gradient.cuh", "cell_gradient", "cells",
                              out_tail=_gradient_tail, uses_coordinates=True),
}
"""CUDA spec of each worklet family, by worklet name."""
