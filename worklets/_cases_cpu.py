"""Compiled, threaded classification of unstructured cells for marching: each
cell's case from its corners' values, in one pass with no temporaries.

The array program (:func:`daxpy.worklets._marching.classify` on the gathered
corner values, then a case of 0 for cells with a NaN or Inf corner) makes an
``(n_cells, corners)`` table of values, one of booleans and one of shifted bits,
on one thread: most of a slice's time on a hexahedral grid. This kernel gives its
results: bit ``i`` of a case is set where corner ``i`` is at or above the value
(compared as in float64: :func:`~daxpy.worklets._marching.at_least_bound`), and
a cell with a non-finite corner has case 0.

Examples
--------
>>> import numpy as np
>>> cell_cases(np.array([[0, 1, 2]] * 4096), np.array([0.0, 2.0, 1.0]), 1.0)[:2].tolist()
[6, 6]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._marching import at_least_bound
from ._numba import CompiledUnavailable, KERNEL_DTYPES, kernel, refuse_bad_ids

MIN_CELLS = 1 << 12
"""Fewer cells than this are classified by NumPy: threads would not pay off."""

_BLOCK = 1 << 12
"""Cells per iteration of the parallel loop."""


@kernel(parallel=True)
def _cases(corners, scalars, bound, cases):
    n, m, k, bad = scalars.shape[0], corners.shape[0], corners.shape[1], 0
    for block in prange((m + _BLOCK - 1) // _BLOCK):
        for i in range(block * _BLOCK, min(m, (block + 1) * _BLOCK)):
            case, finite, ok = 0, True, True
            for j in range(k):
                p = corners[i, j]
                ok &= (p >= 0) & (p < n)
            if not ok:
                bad += 1
                cases[i] = 0
                continue
            for j in range(k):
                s = scalars[corners[i, j]]
                finite &= np.isfinite(s)
                case |= np.int64(s >= bound) << j
            cases[i] = case if finite else 0
    return bad


def cell_cases(corners: np.ndarray, scalars: np.ndarray, value: float) -> np.ndarray:
    """Each cell's marching case (int64) at ``value``; 0 for a cell with a NaN or
    Inf corner.

    Raises
    ------
    CompiledUnavailable
        For device arrays, fewer than :data:`MIN_CELLS` cells, or a field that is
        not float32 or float64.
    IndexError
        For a corner id out of range.

    Examples
    --------
    >>> import numpy as np
    >>> corners = np.array([[0, 1]] * MIN_CELLS)
    >>> cell_cases(corners, np.array([np.nan, 2.0]), 1.0)[0].item()
    0
    """
    if not (isinstance(corners, np.ndarray) and isinstance(scalars, np.ndarray)):
        raise CompiledUnavailable("device arrays: the array program serves them")
    if corners.shape[0] < MIN_CELLS or scalars.dtype not in KERNEL_DTYPES:
        raise CompiledUnavailable("few cells, or no kernel for the dtype")
    cases = np.empty(corners.shape[0], np.int64)
    refuse_bad_ids(_cases(np.ascontiguousarray(corners), np.ascontiguousarray(scalars),
                          at_least_bound(scalars.dtype, value), cases))
    return cases
