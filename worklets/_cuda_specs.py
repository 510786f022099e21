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
from daxpy.errors import FieldError


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


def _no_tail(tail: tuple, params: dict) -> tuple:
    """One value per tuple.

    Examples
    --------
    >>> _no_tail((3,), {})
    ()
    """
    return ()


def _velocity_gradient_dtype(dtype: np.dtype, params: dict) -> np.dtype:
    """Vector analysis reads float gradients and keeps their dtype.

    Examples
    --------
    >>> _velocity_gradient_dtype(np.dtype("float64"), {})
    dtype('float64')
    """
    if dtype.kind != "f":
        raise FieldError(f"the gradient must be float32 or float64, got {dtype}")
    return dtype


def _from_gradient(out_tail: tuple):
    """Output tail of a map from a 3x3 gradient (``(n, 9)`` input, checked).

    Examples
    --------
    >>> _from_gradient((3,))((9,), {})
    (3,)
    """
    def tail(in_tail: tuple, params: dict) -> tuple:
        if tuple(in_tail) != (9,):
            raise FieldError(
                "the input must be the gradient of a 3-component field, shape (n, 9); "
                f"got (n,) + {tuple(in_tail)}"
            )
        return out_tail
    return tail


def _vector_analysis(function: str, out_tail: tuple, map_name: str) -> CudaSpec:
    return CudaSpec("vector_analysis.cuh", function, "tuples",
                    out_dtype=_velocity_gradient_dtype, out_tail=_from_gradient(out_tail),
                    accepted_params=("field_name",), map=map_name)


CUDA = {
    "pass_through": CudaSpec("pass_through.cuh", "pass_through", "flat",
                             out_dtype=_pass_through_dtype, accepted_params=("dtype",),
                             map="PassThroughMap"),
    "point_to_cell": CudaSpec("point_to_cell.cuh", "point_to_cell", "cells",
                              march="point_to_cell_march"),
    "divergence": _vector_analysis("divergence", (), "DivergenceMap"),
    "vorticity": _vector_analysis("vorticity", (3,), "VorticityMap"),
    "qcriterion": _vector_analysis("qcriterion", (), "QCriterionMap"),
    "magnitude": CudaSpec("magnitude.cuh", "magnitude", "tuples", out_tail=_no_tail,
                          map="MagnitudeMap"),
    "cell_to_point": CudaSpec("cell_to_point.cuh", "cell_to_point", "points",
                              march="cell_to_point_march", march_planes=8),
    "point_gradient": CudaSpec("gradient.cuh", "point_gradient", "points",
                               out_tail=_gradient_tail, uses_coordinates=True,
                               point_links="corners", march="point_gradient_march",
                               hexahedra=("hex_point_gradient_fast", "hex_point_gradient_all",
                                          "hex_point_gradient_listed")),
    "cell_gradient": CudaSpec("gradient.cuh", "cell_gradient", "cells",
                              out_tail=_gradient_tail, uses_coordinates=True),
}
"""CUDA spec of each worklet family, by worklet name."""
