"""Compiled CPU kernel of the magnitude: one threaded pass over the tuples.

Squares are summed component by component in the field's dtype and the root
taken in it, the NumPy implementation's arithmetic in its order, so the
results are its bits. The NumPy implementation stays as the reference and for
integer fields.

Examples
--------
>>> import numpy as np
>>> magnitude(None, np.array([[3.0, 4.0], [0.0, -2.0]], np.float32)).tolist()
[5.0, 2.0]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from daxpy.errors import FieldError

from ._averaging import output_array
from ._numba import columns, kernel


@kernel(parallel=True)
def _magnitude_kernel(values, out):
    c = values.shape[1]
    for i in prange(values.shape[0]):
        if c == 1:
            out[i] = abs(values[i, 0])
            continue
        total = values[i, 0] * values[i, 0]
        for comp in range(1, c):
            total += values[i, comp] * values[i, comp]
        out[i] = np.sqrt(total)


def magnitude(grid, values: np.ndarray, out: np.ndarray | None = None):
    """The compiled form of :func:`daxpy.worklets.magnitude.magnitude` (float fields).

    Examples
    --------
    >>> import numpy as np
    >>> magnitude(None, np.array([-3.0, 2.0])).tolist()
    [3.0, 2.0]
    """
    if values.ndim not in (1, 2):
        raise FieldError(
            f"magnitude needs a field of shape (n,) or (n, components), got {values.shape}"
        )
    table = columns(values)
    out = output_array(out, values.shape[:1], values.dtype)
    _magnitude_kernel(table, out)
    return out
