"""Compiled CPU kernel of the magnitude: one threaded pass over the tuples.

Squares are summed component by component in the field's dtype and the root
taken in it, the NumPy implementation's arithmetic in its order, so the
results are its bits. The NumPy implementation stays as the reference and for
integer fields. :func:`magnitude_tuple` writes the same arithmetic for one
tuple, in fused kernels.

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
from ._tuple_code import Slots, TupleCode, TupleType


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


def norm_code(slots: Slots) -> tuple[list[str], str]:
    """Statements and the expression of the norm of the tuple ``slots.x``, as
    :func:`_magnitude_kernel` computes it: ``abs`` of one component; else the
    squares summed in component order, then the root.

    Examples
    --------
    >>> kind = TupleType(np.dtype("float32"), (2,), 3)
    >>> norm_code(Slots(kind, 1))
    (['s1_total = v1_0 * v1_0', 's1_total = s1_total + v1_1 * v1_1'], 'np.sqrt(s1_total)')
    """
    x = slots.x
    if len(x) == 1:
        return [], f"abs({x[0]})"
    total = slots.tmp("total")
    lines = [f"{total} = {x[0]} * {x[0]}"]
    lines += [f"{total} = {total} + {v} * {v}" for v in x[1:]]
    return lines, f"np.sqrt({total})"


def magnitude_tuple(kind: TupleType, params: dict, slots: Slots) -> TupleCode | None:
    """Per-tuple code of the magnitude (see :func:`norm_code`); a one-value result.

    Examples
    --------
    >>> kind = TupleType(np.dtype("float64"), (), 3)
    >>> magnitude_tuple(kind, {}, Slots(kind, 0)).results
    ['abs(v0_0)']
    """
    lines, norm = norm_code(slots)
    return TupleCode(TupleType(kind.dtype, (), kind.n), [norm], lines, tag="magnitude")
