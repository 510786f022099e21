"""Checks of device-resident input, each one pass over the array on the GPU.

Examples
--------
>>> callable(count_out_of_range)
True
"""

from __future__ import annotations

import functools
from typing import Any


@functools.lru_cache(maxsize=1)
def _out_of_range_kernel():
    import cupy

    # One fused pass: no boolean temporaries. For unsigned ids `id < 0` is
    # false and `id >= n` compares as unsigned (n >= 0), so huge ids count too.
    return cupy.ReductionKernel(
        "T id, int64 n", "int64 bad", "(id < 0 || id >= n) ? 1 : 0", "a + b", "bad = a",
        "0", "daxpy_ids_out_of_range")


def count_out_of_range(ids: Any, n: int) -> int:
    """Number of entries of the CuPy integer array ``ids`` outside ``[0, n)``.

    One reduction on the device; the host waits for its single result.

    Examples
    --------
    >>> callable(count_out_of_range)
    True
    """
    return int(_out_of_range_kernel()(ids, int(n)))
