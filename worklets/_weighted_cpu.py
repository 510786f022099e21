"""Compiled, threaded weighted sums of point rows: each output point as a weighted
sum of input points (the points a clip makes), in float64, with the NumPy
program's bits (:func:`daxpy.filters._geometry.weighted_sum`).

Each output row is one thread's: its first two terms added, then, where a later
weight is not zero (a centre point), those terms added among themselves first
and their sum last, as NumPy adds columns. No fused multiply-add: Numba compiles
without contraction, as NumPy computes.

Examples
--------
>>> import numpy as np
>>> weighted_rows(np.array([0.0, 10.0, 20.0]), np.array([[0, 1, 2], [2, 2, 0]]),
...               np.array([[0.5, 0.25, 0.25], [1.0, 0.0, 0.0]])).tolist()
[7.5, 20.0]
"""

from __future__ import annotations

import numpy as np
from numba import parallel_chunksize, prange, set_num_threads

from daxpy.data.arrays import native_order

from ._numba import KERNEL_DTYPES, CompiledUnavailable, kernel, threads

_VALUE_KINDS = "iuf"
"""Integer and float fields (float16 excepted) are summed here; others by NumPy."""

_BLOCK = 4096
"""Output rows per iteration of the parallel loop."""


@kernel(inline="always")
def _gather(values, axes, nx, ny, point, into):
    """A point's row in float64: a field's values, or (``axes`` given) a structured
    grid's coordinates, float32 as VTK gives them (its grid index found once)."""
    if axes.shape[1] == 0:
        for c in range(into.shape[0]):
            into[c] = np.float64(values[point, c])
        return
    rest = point // nx
    k = rest // ny
    into[0], into[1], into[2] = axes[0, point - rest * nx], axes[1, rest - k * ny], axes[2, k]


@kernel(parallel=True)
def _weighted(values, axes, nx, ny, ids, weights, out):
    m, width = ids.shape
    comps = out.shape[1]
    for block in prange((m + _BLOCK - 1) // _BLOCK):
        row, total, extra = np.empty(comps), np.empty(comps), np.empty(comps)
        for p in range(block * _BLOCK, min(m, (block + 1) * _BLOCK)):
            _gather(values, axes, nx, ny, ids[p, 0], row)
            for c in range(comps):
                total[c] = row[c] * weights[p, 0]
            if width > 1:
                _gather(values, axes, nx, ny, ids[p, 1], row)
                for c in range(comps):
                    total[c] = total[c] + row[c] * weights[p, 1]
            more = False
            for j in range(2, width):
                more = more or weights[p, j] != 0
            if more:
                # A centre point: its later terms summed first, then added, as NumPy does.
                _gather(values, axes, nx, ny, ids[p, 2], row)
                for c in range(comps):
                    extra[c] = row[c] * weights[p, 2]
                for j in range(3, width):
                    _gather(values, axes, nx, ny, ids[p, j], row)
                    for c in range(comps):
                        extra[c] = extra[c] + row[c] * weights[p, j]
                for c in range(comps):
                    total[c] = total[c] + extra[c]
            for c in range(comps):
                out[p, c] = total[c]   # rounded once, to the output's dtype


def weighted_rows(values, ids: np.ndarray, weights: np.ndarray, axes=None,
                  dtype=None) -> np.ndarray:
    """``sum_j weights[:, j] * values[ids[:, j]]`` in float64, on every core, rounded
    once to ``dtype`` (float32 or float64, float64 by default) as it is stored.

    Parameters
    ----------
    values : array, shape (n, ...)
        Rows by point id (unused with ``axes``).
    ids : int array, shape (m, k)
    weights : float64 array, shape (m, k)
    axes : three float arrays, optional
        A uniform or rectilinear grid's axis coordinates: the rows are then its
        points' coordinates, computed from their grid indices (as float32, then
        float64), shape (m, 3).
    dtype : dtype, optional

    Returns
    -------
    array of ``dtype``, shape (m,) + values.shape[1:]

    Raises
    ------
    CompiledUnavailable
        For dtypes the kernel is not compiled for (float16, bool, objects...):
        the NumPy program serves them.

    Examples
    --------
    >>> import numpy as np
    >>> axes = (np.array([0.0, 1.0]), np.array([5.0]), np.array([0.5]))
    >>> weighted_rows(None, np.array([[0, 1]]), np.array([[0.5, 0.5]]), axes).tolist()
    [[0.5, 5.0, 0.5]]
    """
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    if weights.dtype != np.float64 or ids.dtype.kind not in "iu" or dtype not in KERNEL_DTYPES:
        raise CompiledUnavailable("weights must be float64, ids integers, sums float")
    ids, weights = native_order(ids), native_order(weights)
    if axes is None:
        values = native_order(np.asarray(values))
        if values.dtype.kind not in _VALUE_KINDS or values.dtype == np.float16:
            raise CompiledUnavailable(f"no weighted sum kernel for {values.dtype}")
        shape = values.shape[1:]
        table = np.ascontiguousarray(values.reshape(values.shape[0], -1))
        grid_axes = np.zeros((3, 0), np.float32)
    else:
        shape = (3,)
        table = np.zeros((0, 3))
        grid_axes = np.zeros((3, max(len(a) for a in axes)), np.float32)
        for a, coordinates in enumerate(axes):
            grid_axes[a, :len(coordinates)] = coordinates
    out = np.empty((ids.shape[0], int(np.prod(shape, dtype=np.int64))), dtype)
    set_num_threads(threads())
    # Blocks dealt one at a time as threads free up: one slowed by another
    # process's load does not hold up the rest.
    with parallel_chunksize(1):
        _weighted(table, grid_axes, len(axes[0]) if axes else 1, len(axes[1]) if axes else 1,
                  np.ascontiguousarray(ids), np.ascontiguousarray(weights), out)
    return out.reshape((ids.shape[0],) + shape)
