"""Magnitude: the Euclidean norm of each tuple of a field.

Float fields run, on the CPU backend, its compiled twin: :mod:`daxpy.worklets.magnitude_cpu`.

Examples
--------
>>> import numpy as np
>>> magnitude(None, np.array([[3.0, 4.0], [0.0, -2.0]])).tolist()
[5.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from daxpy.errors import FieldError

from ._averaging import float_dtype, output_array
from ._cuda_specs import CUDA
from ._maps import register_map


def magnitude(grid, values: np.ndarray, out: np.ndarray | None = None):
    """Return ``sqrt(sum of squares)`` over the components of each tuple.

    Parameters
    ----------
    grid, values, out
        As for every map (:func:`~daxpy.worklets._maps.register_map`); a single
        component gives its absolute value.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Float dtypes are kept; integers give float64.

    Examples
    --------
    >>> import numpy as np
    >>> magnitude(None, np.array([-3, 2], dtype=np.int8)).tolist()
    [3.0, 2.0]
    """
    if values.ndim not in (1, 2):
        raise FieldError(
            f"magnitude needs a field of shape (n,) or (n, components), got {values.shape}"
        )
    dtype = float_dtype(values.dtype)
    out = output_array(out, values.shape[:1], dtype)
    if values.ndim == 1 or values.shape[1] == 1:
        np.absolute(values.reshape(out.shape), out=out, dtype=dtype)
        return out
    # Summing component by component, in order, gives the same bits whatever
    # the input's memory layout (einsum's order follows the strides).
    np.multiply(values[:, 0], values[:, 0], out=out, dtype=dtype)
    square = np.empty_like(out)
    for c in range(1, values.shape[1]):
        np.multiply(values[:, c], values[:, c], out=square, dtype=dtype)
        out += square
    np.sqrt(out, out=out)
    return out


MAGNITUDE = register_map(magnitude, CUDA["magnitude"], compiled_cpu=True,
                         cpu_tuple=True, doc="Euclidean norm over the components of each tuple.")
