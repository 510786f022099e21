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

from daxpy.cuda.spec import CudaSpec


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


CUDA = {
    "pass_through": CudaSpec("pass_through.cuh", "pass_through", "flat",
                             out_dtype=_pass_through_dtype, accepted_params=("dtype",)),
    "point_to_cell": CudaSpec("point_to_cell.cuh", "point_to_cell", "cells"),
    "cell_to_point": CudaSpec("cell_to_point.cuh", "cell_to_point", "points"),
    "point_gradient": CudaSpec("gradient.cuh", "point_gradient", "points",
                               out_tail=_gradient_tail, uses_coordinates=True,
                               point_links="corners"),
    "cell_gradient": CudaSpec("gradient.cuh", "cell_gradient", "cells",
                              out_tail=_gradient_tail, uses_coordinates=True),
}
"""CUDA spec of each worklet family, by worklet name."""
