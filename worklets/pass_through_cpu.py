"""Pass-through in fused CPU kernels: its per-tuple code.

A lone pass-through is a NumPy copy (``np.copyto``); in a fused chain its
tuple is the input converted to the output dtype, which the kernel does where
it stores the step's values (round to nearest, as NumPy's cast). Conversions
into integers, which the filter checks first, do not fuse.

Examples
--------
>>> import numpy as np
>>> from daxpy.worklets._tuple_code import Slots, TupleType
>>> kind = TupleType(np.dtype("float32"), (2,), 4)
>>> code = pass_through_tuple(kind, {"dtype": np.dtype("float64")}, Slots(kind, 0))
>>> code.results, code.out.dtype
(['v0_0', 'v0_1'], dtype('float64'))
"""

from __future__ import annotations

import numpy as np

from ._numba import KERNEL_DTYPES
from ._tuple_code import Slots, TupleCode, TupleType


def pass_through_tuple(kind: TupleType, params: dict, slots: Slots) -> TupleCode | None:
    """The tuple unchanged, converted to ``params["dtype"]`` (default: kept);
    None for a conversion into a dtype the kernels do not compute in.

    Examples
    --------
    >>> kind = TupleType(np.dtype("float64"), (), 4)
    >>> pass_through_tuple(kind, {"dtype": np.dtype("int32")}, Slots(kind, 0)) is None
    True
    """
    dtype = params.get("dtype")
    dtype = kind.dtype if dtype is None else np.dtype(dtype)
    if dtype not in KERNEL_DTYPES:
        return None
    return TupleCode(TupleType(dtype, kind.tail, kind.n), list(slots.x),
                     tag=f"pass_through_{dtype.name}")
