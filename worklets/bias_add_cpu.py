"""Compiled CPU kernel of BiasAdd: one threaded pass over the rows of the flat field.

``out.flat[i] = values.flat[i] + bias[i % len(bias)]`` in the field's dtype,
as the NumPy implementation computes it (bitwise equal). The NumPy
implementation stays as the reference and for integer fields.

Examples
--------
>>> import numpy as np
>>> bias_add(None, np.arange(4.0), bias=[10, 20]).tolist()
[10.0, 21.0, 12.0, 23.0]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._averaging import output_array
from ._numba import kernel, kernel_dtype
from .bias_add import fit_bias


@kernel(parallel=True)
def _bias_kernel(values, bias, out):
    for r in prange(values.shape[0]):
        for j in range(bias.shape[0]):
            out[r, j] = values[r, j] + bias[j]


def bias_add(grid, values: np.ndarray, bias, out: np.ndarray | None = None):
    """The compiled form of :func:`daxpy.worklets.bias_add.bias_add` (float fields).

    Examples
    --------
    >>> import numpy as np
    >>> bias_add(None, np.zeros((2, 2), np.float32), bias=[1, 2]).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    values, = kernel_dtype(values)
    bias = fit_bias(bias, values)
    out = output_array(out, values.shape, values.dtype)
    rows = (values.size // bias.size, bias.size)
    _bias_kernel(np.ascontiguousarray(values).reshape(rows), bias, out.reshape(rows))
    return out
