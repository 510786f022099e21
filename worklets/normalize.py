"""Normalize: each tuple of a field divided by its Euclidean norm (unit vectors).

A zero tuple has no direction and gives NaN in every component, as
``v / numpy.linalg.norm(v)`` does and as VTK's array calculator ``norm(v)``
does with its default (ExprTk) parser (VTK's older vtkFunctionParser and
``vtkMath::Normalize`` leave a zero vector at zero instead). A tuple with a
NaN gives NaN; one with an Inf has an infinite norm, so its Inf components
give NaN (``inf / inf``) and its finite ones 0, as in NumPy.

Float fields run, on the CPU backend, its compiled twin: :mod:`daxpy.worklets.normalize_cpu`.

Examples
--------
>>> import numpy as np
>>> normalize(None, np.array([[3.0, 4.0], [0.0, -2.0]])).tolist()
[[0.6, 0.8], [0.0, -1.0]]
"""

from __future__ import annotations

import numpy as np

from daxpy.cuda.spec import CudaSpec

from ._averaging import float_dtype, output_array
from ._maps import register_map
from .magnitude import magnitude


def normalize(grid, values: np.ndarray, out: np.ndarray | None = None):
    """Return each tuple of ``values`` divided by its Euclidean norm.

    Parameters
    ----------
    grid, values, out
        As for every map (:func:`~daxpy.worklets._maps.register_map`); a single
        component gives its sign (``x / |x|``).

    Returns
    -------
    numpy.ndarray, shape of ``values``
        Float dtypes are kept; integers give float64. A zero tuple gives NaN.

    Examples
    --------
    >>> import numpy as np
    >>> normalize(None, np.array([-3, 0], dtype=np.int8)).tolist()
    [-1.0, nan]
    """
    norm = magnitude(grid, values)  # also checks the shape
    out = output_array(out, values.shape, float_dtype(values.dtype))
    column = norm if values.ndim == 1 else norm[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):  # 0 / 0 and inf / inf: NaN
        np.divide(values, column, out=out, dtype=out.dtype)
    return out


NORMALIZE = register_map(
    normalize, CudaSpec("normalize.cuh", "normalize", "tuples", map="NormalizeMap"),
    compiled_cpu=True, cpu_tuple=True,
    doc="Each tuple divided by its Euclidean norm (a zero tuple gives NaN).")
