"""Compiled CPU kernel of BiasAdd: one threaded pass over the rows of the flat field.

``out.flat[i] = values.flat[i] + bias[i % len(bias)]`` in the field's dtype,
as the NumPy implementation computes it (bitwise equal). The NumPy
implementation stays as the reference and for integer fields.
:func:`bias_add_tuple` is the same sum for one tuple, in fused kernels.

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
from daxpy.errors import ArgumentError

from ._numba import kernel, kernel_dtype
from ._tuple_code import Slots, TupleCode, TupleType
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


def bias_add_tuple(kind: TupleType, params: dict, slots: Slots) -> TupleCode | None:
    """Per-tuple code of the bias add: component ``k`` of tuple ``i`` adds
    ``bias[(i * c + k) % len(bias)]`` (``bias[k % len(bias)]`` where the bias
    repeats within a tuple); None where the bias does not fit the field (the
    filter then raises its own error).

    Examples
    --------
    >>> kind = TupleType(np.dtype("float32"), (2,), 3)
    >>> bias_add_tuple(kind, {"bias": [1, 2]}, Slots(kind, 0)).results
    ['v0_0 + s0_a0[0]', 'v0_1 + s0_a0[1]']
    """
    c = kind.components
    try:
        # A zero-stride stand-in for the field: fit_bias checks size and dtype only.
        bias = fit_bias(params.get("bias"),
                        np.broadcast_to(np.zeros((), kind.dtype), (kind.n,) + kind.tail))
    except ArgumentError:
        return None
    nb, table = bias.size, slots.arg(0)
    index = [str(k % nb) if c % nb == 0 else f"({slots.i} * {c} + {k}) % {nb}"
             for k in range(c)]
    return TupleCode(kind, [f"{x} + {table}[{j}]" for x, j in zip(slots.x, index)],
                     arrays=[np.ascontiguousarray(bias)], tag="bias_add")
