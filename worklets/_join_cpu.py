"""Compiled joins of host arrays end to end, each part's values shifted by a number
of its own (a surface's cells of several values, their point ids counted from each
value's first point), on every core into pooled host memory.

A contour of ten values at 256³ joined its 5.2M triangles' 15.7M point ids with
NumPy: one thread, into a fresh array whose pages were faulted in as written
(about 23 ms a call on a 2-core machine, a tenth of the call).

Examples
--------
>>> import numpy as np
>>> parts = [np.arange(1 << 16), np.arange(3)]
>>> joined_shifted(parts, [0, 10])[-3:].tolist()
[10, 11, 12]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, over_blocks
from ._numba import CompiledUnavailable

_BLOCK = 1 << 15
"""Values a block: 256 kB of 8-byte values, dealt to a thread at a time."""

MIN_VALUES = 1 << 16
"""Fewer values in all than this are joined by NumPy: threads would not pay off."""


@block_kernel()
def _shifted_copy(part, shift, out, first, last):
    """Blocks ``first`` to ``last`` of ``out``: ``part``'s values plus ``shift``."""
    n = part.shape[0]
    for block in range(first, last):
        lo = block * _BLOCK
        hi = min(n, lo + _BLOCK)
        # Slices indexed from 0: Numba checks a signed index it cannot prove
        # non-negative for wrapping, which keeps the loop from vectorizing.
        source, target = part[lo:hi], out[lo:hi]
        for i in range(hi - lo):
            target[i] = source[i] + shift


def _words(part: np.ndarray) -> np.ndarray:
    """A C-contiguous part's values as one row of unsigned integers of its item's
    size: copied as bits, so NaN payloads and signed zeros come out as they went in."""
    return np.ascontiguousarray(part).reshape(-1).view(f"u{part.dtype.itemsize}")


def joined_shifted(parts: Sequence[np.ndarray], shifts: Sequence[int]) -> np.ndarray:
    """``parts`` end to end along their first axis, each one's values plus its shift
    (all shifts 0: the parts' bits, of any plain dtype), from the pool of host blocks.

    Parameters
    ----------
    parts : sequence of numpy.ndarray
        Arrays of one dtype and one row shape (integers where any shift is not 0).
    shifts : sequence of int
        A number added to each part's values.

    Returns
    -------
    numpy.ndarray
        The joined array.

    Raises
    ------
    CompiledUnavailable
        For few values, parts of mixed dtypes or row shapes, shifts of non-integer
        parts, and dtypes that are not plain numbers: NumPy serves them.

    Examples
    --------
    >>> import numpy as np
    >>> xyz = np.ones((1 << 15, 3), np.float32)
    >>> joined_shifted([xyz, 2 * xyz], [0, 0])[-1].tolist()
    [2.0, 2.0, 2.0]
    """
    first = parts[0]
    dtype, rows = first.dtype, first.shape[1:]
    if (sum(p.size for p in parts) < MIN_VALUES or dtype.kind not in "iuf"
            or any(p.dtype != dtype or p.shape[1:] != rows for p in parts)):
        raise CompiledUnavailable("NumPy joins few or mixed arrays")
    shifted = any(int(s) != 0 for s in shifts)
    if shifted and dtype.kind not in "iu":
        raise CompiledUnavailable("only integers are shifted")
    out = host_empty((sum(p.shape[0] for p in parts),) + rows, dtype)
    flat = out.reshape(-1) if shifted else _words(out)
    start = 0
    for part, shift in zip(parts, shifts):
        values = np.ascontiguousarray(part).reshape(-1) if shifted else _words(part)
        over_blocks(_shifted_copy, -(-values.shape[0] // _BLOCK), values,
                    flat.dtype.type(shift), flat[start:start + values.shape[0]])
        start += values.shape[0]
    return out
