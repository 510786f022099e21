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


def totals_at(values: Any, flat_indices: Sequence[int],
              also: Sequence[tuple[Any, int]] = ()) -> list[int]:
    """The int64 ``values`` (a C-contiguous CuPy array) at ``flat_indices``, then each
    ``(array, flat index)`` of ``also`` (int64, C-contiguous too), as Python ints,
    after one sync of the current stream.

    Examples
    --------
    >>> import cupy  # doctest: +SKIP
    >>> totals_at(cupy.arange(10, dtype=cupy.int64), [3, 9])  # doctest: +SKIP
    [3, 9]
    """
    import cupy
    import cupyx

    wanted = [(values, int(at)) for at in flat_indices] + [(a, int(at)) for a, at in also]
    if any(a.dtype != np.int64 or not a.flags.c_contiguous for a, _ in wanted):
        raise TypeError("totals_at reads C-contiguous int64 arrays")
    found = cupyx.empty_pinned(len(wanted), np.int64)
    stream = cupy.cuda.get_current_stream()
    for slot, (array, at) in enumerate(wanted):
        cupy.cuda.runtime.memcpyAsync(found.ctypes.data + 8 * slot, array.data.ptr + 8 * at,
                                      8, cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
    stream.synchronize()
    return [int(v) for v in found]
