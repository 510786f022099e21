"""Compiled CPU kernel of normalize: one threaded pass, norm and division fused.

Each tuple's norm is computed as :mod:`daxpy.worklets.magnitude_cpu` does and
each component divided by it in the field's dtype, as the NumPy
implementation does (bitwise equal; a zero tuple gives NaN). The NumPy
implementation stays as the reference and for integer fields.
:func:`normalize_tuple` writes the same arithmetic for one tuple, in fused kernels.

Examples
--------
>>> import numpy as np
>>> normalize(None, np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
[[0.6, 0.8], [nan, nan]]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._averaging import output_array
from ._numba import columns, kernel
from ._tuple_code import Slots, TupleCode, TupleType
from .magnitude_cpu import norm_code
from .magnitude import magnitude as check_shape


@kernel(parallel=True)
def _normalize_kernel(values, out):
    c = values.shape[1]
    for i in prange(values.shape[0]):
        if c == 1:
            norm = abs(values[i, 0])
        else:
            total = values[i, 0] * values[i, 0]
            for comp in range(1, c):
                total += values[i, comp] * values[i, comp]
            norm = np.sqrt(total)
        for comp in range(c):
            out[i, comp] = values[i, comp] / norm


def normalize(grid, values: np.ndarray, out: np.ndarray | None = None):
    """The compiled form of :func:`daxpy.worklets.normalize.normalize` (float fields).

    Examples
    --------
    >>> import numpy as np
    >>> normalize(None, np.array([-3.0, 0.0], np.float32)).tolist()
    [-1.0, nan]
    """
    if values.ndim not in (1, 2):
        check_shape(grid, values)  # raises the magnitude's FieldError
    table = columns(values)
    out = output_array(out, values.shape, values.dtype)
    _normalize_kernel(table, out.reshape(table.shape))
    return out


def normalize_tuple(kind: TupleType, params: dict, slots: Slots) -> TupleCode | None:
    """Per-tuple code of normalize: each component divided by the tuple's norm
    (:func:`daxpy.worklets.magnitude_cpu.norm_code`).

    Examples
    --------
    >>> kind = TupleType(np.dtype("float32"), (2,), 3)
    >>> normalize_tuple(kind, {}, Slots(kind, 0)).results
    ['v0_0 / s0_norm', 'v0_1 / s0_norm']
    """
    lines, norm = norm_code(slots)
    name = slots.tmp("norm")
    return TupleCode(kind, [f"{x} / {name}" for x in slots.x], lines + [f"{name} = {norm}"],
                     tag="normalize")
