"""The chunk planner's passes over an unstructured grid's corner ids: NumPy's for
small grids, the compiled kernels' threads (:mod:`daxpy.worklets._chunk_ids_cpu`)
for large ones, with the same results.

Loading the compiled kernels costs a process about 0.3 s once (Numba's start and
its cached kernels; about 1 s more to compile them, the first time on a machine):
what NumPy's serial passes take over some 45M ids. Below :data:`THREADED_IDS` a
grid's first GPU run would pay it for nothing.

Examples
--------
>>> import numpy as np
>>> [a.tolist() for a in cell_corner_bounds(np.array([4, 2, 7, 1]), np.array([0, 3, 4]))]
[[2, 1], [7, 1]]
"""

from __future__ import annotations

import numpy as np

from ..data.decomposition import as_selection

THREADED_IDS = 1 << 22
"""Ids (or cells) from which a pass runs on the compiled kernels' threads."""


def _threaded():
    # Imported here: importing the worklets package loads every worklet module.
    from ..worklets import _chunk_ids_cpu

    return _chunk_ids_cpu


def cell_corner_bounds(connectivity: np.ndarray, offsets: np.ndarray,
                       corners: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's lowest and highest point id (int64); ``corners``, where every
    cell has as many (a grid of one shape), spares the threaded pass the offsets.

    Examples
    --------
    >>> import numpy as np
    >>> low, high = cell_corner_bounds(np.array([3, 0, 5, 9, 1]), np.array([0, 3, 5]))
    >>> low.tolist(), high.tolist()
    ([0, 1], [5, 9])
    """
    if connectivity.shape[0] >= THREADED_IDS:
        return _threaded().cell_corner_bounds(connectivity, offsets, corners)
    if offsets.shape[0] <= 1:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ids = connectivity.astype(np.int64, copy=False)
    starts = offsets[:-1].astype(np.int64)
    return np.minimum.reduceat(ids, starts), np.maximum.reduceat(ids, starts)


def running_bounds(lowest: np.ndarray, highest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The running maximum of ``highest`` and the running minimum of ``lowest``
    from the end (on threads, ``highest`` and ``lowest`` themselves where neither
    ever decreases).

    Examples
    --------
    >>> import numpy as np
    >>> [a.tolist() for a in running_bounds(np.array([3, 1, 4]), np.array([5, 2, 6]))]
    [[5, 5, 6], [1, 1, 4]]
    """
    if highest.shape[0] >= THREADED_IDS:
        return _threaded().running_bounds(lowest, highest)
    return np.maximum.accumulate(highest), np.minimum.accumulate(lowest[::-1])[::-1]


def held_cells(lowest: np.ndarray, highest: np.ndarray, ranges: list) -> tuple:
    """The cells held by any of ``ranges`` (a slice where they are one run, else
    their ids ascending, int64) and the point range ``[first, stop)`` their
    corners span (None where none is held).

    Each range is ``(a, b, points)``: the cells ``a .. b - 1`` whose corner range
    (``lowest .. highest``) meets ``points = (first, stop)``, or all of them where
    ``points`` is None.

    Examples
    --------
    >>> import numpy as np
    >>> low, high = np.array([0, 2, 5, 9]), np.array([3, 4, 8, 12])
    >>> held, span = held_cells(low, high, [(0, 1, None), (1, 4, (6, 7))])
    >>> held.tolist(), span
    ([0, 2], (0, 9))
    """
    # By the grid's cells, as running_bounds: a chunk's window of them is smaller
    # than the threshold where the grid's passes have loaded the kernels already.
    if lowest.shape[0] >= THREADED_IDS:
        return _threaded().held_cells(lowest, highest, ranges)
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    # One mask over the window the ranges span (no sort of the ids).
    keep = np.zeros(max(hi - lo, 0), dtype=bool)
    for a, b, points in ranges:
        if points is None:
            keep[a - lo:b - lo] = True
        else:
            keep[a - lo:b - lo] |= (lowest[a:b] < points[1]) & (highest[a:b] >= points[0])
    ids = lo + np.flatnonzero(keep)
    if ids.size == 0:
        return slice(0, 0), None
    held = as_selection(ids)  # a run of cells is read in place, not gathered
    return held, (int(lowest[held].min()), int(highest[held].max()) + 1)


def shifted_ids(ids: np.ndarray, start: int, dtype=np.int64,
                grid_ids: int | None = None) -> np.ndarray:
    """``ids - start`` in ``dtype`` (int32 or int64), for differences it holds.

    ``ids`` are cut from a grid of ``grid_ids`` ids (default: ``ids.size``): a
    chunk's are renumbered on threads where its grid's passes ran on them, however
    small the chunk (NumPy's serial pass and its int64 temporary took 140 ms of a
    plan of 10M hexahedra in 23 chunks, against 40 for 5 chunks on threads).

    Examples
    --------
    >>> import numpy as np
    >>> shifted_ids(np.array([[7, 9], [8, 7]]), 7, np.int32).tolist()
    [[0, 2], [1, 0]]
    """
    if (ids.size if grid_ids is None else grid_ids) >= THREADED_IDS:
        return _threaded().shifted_ids(ids, start, dtype)
    return np.subtract(ids, start, dtype=np.int64).astype(dtype, copy=False)
