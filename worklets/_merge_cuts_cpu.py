"""Compiled joining of a marched cut's edges into a surface's points on the host:
:func:`daxpy.worklets._merge_cuts.merge`'s array program, its bits, in two passes
(each distinct edge's ends and weight; each output cell's points read through its
keys' places, the collapsed cells dropped) where the array program makes a dozen
over the same arrays, each on one thread (on the GPU machine's host, most of a
10M-hexahedra slice's 25 ms outside its parallel passes).

A cut where an edge's end has the value exactly (its points snap onto grid points),
or of scalars the kernels are not compiled for (other than native float32 and
float64), is the array program's, from the same distinct keys.

Examples
--------
>>> import numpy as np
>>> keys = np.array([[1 * 3 + 2, 0 * 3 + 1]])   # edges (1, 2) and (0, 1) of 3 points
>>> cut = merged({2: (keys, np.array([7]))}, [2], [keys.ravel()], keys.ravel(),
...              np.array([0.0, 1.0, 3.0]), 2.0, 3)
>>> cut.cells[2].tolist(), cut.lo.tolist(), cut.hi.tolist(), cut.t.tolist()
([[1, 0]], [0, 1], [1, 2], [2.0, 0.5])
"""

from __future__ import annotations

import numpy as np

from ._distinct_cpu import unique_places
from ._edge_cut import EdgeCut
from ._merge_cuts import _merged
from ._numba import kernel


_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
"""The scalars' dtypes the kernels take."""


@kernel()
def _edge_terms(unique, n_points, scalars, value, lo, hi, t):
    """Each distinct edge key's ends (``lo``, ``hi``) and weight ``t``, as the array
    program computes them (float64, in its order); whether an end has the value."""
    snapped = False
    for u in range(unique.shape[0]):
        a, b = unique[u] // n_points, unique[u] % n_points
        low, high = np.float64(scalars[a]), np.float64(scalars[b])
        lo[u], hi[u] = a, b
        t[u] = (value - low) / (high - low)
        snapped = snapped or low == value or high == value
    return snapped


@kernel()
def _kept_cells(place, seen, first, source, cells, kept_source):
    """The output cells of ``cells.shape[1]`` points whose keys are ``first ..`` in
    ``seen``, each point its key's place (``place[seen[x]]``), but those that list a
    point twice (collapsed where a value equals the value exactly, as VTK's
    contouring of cells drops them), with their input cells; how many are kept."""
    k = cells.shape[1]
    count = 0
    for c in range(source.shape[0]):
        row = cells[count]
        for j in range(k):
            row[j] = place[seen[first + c * k + j]]
        distinct = k == 1 or row[0] != row[k - 1]
        for j in range(k - 1):
            distinct = distinct and row[j] != row[j + 1]
        if distinct:
            kept_source[count] = source[c]
            count += 1
    return count


def merged(parts: dict, sizes: list, flat: list, every: np.ndarray, scalars: np.ndarray,
           value: float, n_points: int) -> EdgeCut:
    """:func:`daxpy.worklets._merge_cuts.merge` on the host: ``parts`` the march's
    ``(keys, source)`` by output cell size, ``sizes`` their sizes ascending, ``flat``
    each size's keys flat and ``every`` all of them end to end."""
    unique, place, seen = unique_places(every)
    lo, hi = np.empty(unique.shape[0], np.int64), np.empty(unique.shape[0], np.int64)
    t = np.empty(unique.shape[0], np.float64)
    if scalars.dtype not in _KERNEL_DTYPES or _edge_terms(
            unique, np.int64(n_points), scalars, float(value), lo, hi, t):
        return _merged(parts, sizes, flat, unique, place[seen], scalars, value, n_points)
    cells, source, first = {}, {}, 0
    for k, piece in zip(sizes, flat):
        given = np.ascontiguousarray(parts[k][1], np.int64)
        made = np.empty((given.shape[0], k), np.int64)
        kept = np.empty(given.shape[0], np.int64)
        count = _kept_cells(place, seen, np.int64(first), given, made, kept)
        cells[k], source[k] = made[:count], kept[:count]
        first += piece.shape[0]
    return EdgeCut(lo=lo, hi=hi, t=t, cells=cells, source=source)
