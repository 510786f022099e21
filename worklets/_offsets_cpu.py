"""Compiled offsets of cells of one size (a surface's triangles or lines): ``0, k, 2k,
..`` written on every core into pooled host memory.

A fresh array of a 256³ contour's 1.1M offsets cost its page faults on one thread,
and NumPy's ``arange`` fills on one core: on the GPU machine's 16 cores the offsets
took 2.1 ms of a 13.6 ms contour (cProfile, ``.dc/s/ctprof2.py``), the filled
steps of each thread's share as large a part as the offsets themselves.

Examples
--------
>>> uniform_offsets(4, 3).tolist()
[0, 3, 6, 9, 12]
"""

from __future__ import annotations

import numpy as np

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, over_blocks

_BLOCK = 1 << 15
"""Offsets a block: 256 kB, a block dealt to a thread at a time."""


@block_kernel()
def _fill(offsets, k, first, last):
    """Blocks ``first`` to ``last`` of ``offsets``: each offset its index times ``k``."""
    n = offsets.shape[0]
    for block in range(first, last):
        lo = block * _BLOCK
        hi = min(n, lo + _BLOCK)
        # A slice indexed from 0: Numba checks a signed index it cannot prove
        # non-negative for wrapping, which keeps the loop from vectorizing.
        part, start = offsets[lo:hi], lo * k
        for i in range(hi - lo):
            part[i] = start + i * k


def uniform_offsets(n_cells: int, k: int) -> np.ndarray:
    """``0, k, 2k, .. n_cells k`` (int64), the offsets of ``n_cells`` cells of ``k``
    points each, from the pool of host blocks.

    Parameters
    ----------
    n_cells : int
        Cells.
    k : int
        Points a cell.

    Returns
    -------
    numpy.ndarray
        ``n_cells + 1`` offsets.

    Examples
    --------
    >>> uniform_offsets(2, 2).tolist()
    [0, 2, 4]
    """
    offsets = host_empty(n_cells + 1, np.int64)
    over_blocks(_fill, -(-offsets.shape[0] // _BLOCK), offsets, np.int64(k))
    return offsets
