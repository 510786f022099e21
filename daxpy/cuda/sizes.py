"""The one host sync of a topology-generating kernel chain: a few int64 totals read
from the device (the ends of its scans), before the outputs they size are allocated.

Each value is copied on the current stream into page-locked memory (8 bytes a copy,
no gather kernel, no pageable staging), then the stream is synchronized once.

Examples
--------
>>> callable(totals_at)
True
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def totals_at(values: Any, flat_indices: Sequence[int]) -> list[int]:
    """The int64 ``values`` (a C-contiguous CuPy array) at ``flat_indices``, as Python
    ints, after one sync of the current stream.

    Examples
    --------
    >>> import cupy  # doctest: +SKIP
    >>> totals_at(cupy.arange(10, dtype=cupy.int64), [3, 9])  # doctest: +SKIP
    [3, 9]
    """
    import cupy
    import cupyx

    if values.dtype != np.int64 or not values.flags.c_contiguous:
        raise TypeError("totals_at reads a C-contiguous int64 array")
    found = cupyx.empty_pinned(len(flat_indices), np.int64)
    stream = cupy.cuda.get_current_stream()
    for slot, at in enumerate(flat_indices):
        cupy.cuda.runtime.memcpyAsync(found.ctypes.data + 8 * slot, values.data.ptr + 8 * int(at),
                                      8, cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
    stream.synchronize()
    return [int(v) for v in found]
