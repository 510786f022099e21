"""Joining marched cells' cut edges into a surface's points
(:func:`merge`, after :func:`daxpy.worklets._marching.march`), on NumPy or CuPy
arrays alike: one point per distinct edge in ascending ``(lo, hi)`` order, a grid
point exactly at the value one point for every edge that meets there, output
cells that collapse on such a point dropped (as VTK's vtkContourFilter and
vtkCutter do); and several cell kinds' output cells joined in input cell order
(:func:`in_cell_order`).

Examples
--------
>>> import numpy as np
>>> from daxpy.worklets._marching import march
>>> corners = np.array([[0, 1, 2, 3]])          # one tetrahedron
>>> s = np.array([1.0, 0.0, 0.0, 0.0])           # corner 0 is in at 0.5
>>> cut = merge({3: march(corners, np.array([0]), s, 0.5, "tetra")}, s, 0.5, 4)
>>> cut.lo.tolist(), cut.hi.tolist(), cut.t.tolist(), cut.cells[3].tolist()
([0, 0, 0], [1, 2, 3], [0.5, 0.5, 0.5], [[2, 0, 1]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daxpy.data.arrays import array_module

from ._edge_cut import EdgeCut
from ._numba import compiled


def merge(parts: dict[int, tuple[Any, Any]], scalars: Any, value: float,
          n_points: int) -> EdgeCut:
    """One output point per distinct edge of every output cell, in ascending
    ``(lo, hi)`` order; each output cell's points, by cell size; each point's weight
    along its edge (float64).

    Parameters
    ----------
    parts : dict of int to (keys, source)
        :func:`march`'s results by output cell size, each in input cell order.

    Examples
    --------
    >>> keys = np.array([[1 * 3 + 2, 0 * 3 + 1]])   # edges (1, 2) and (0, 1) of 3 points
    >>> merge({2: (keys, np.array([7]))}, np.array([0.0, 1.0, 3.0]), 2.0, 3).cells[2].tolist()
    [[1, 0]]
    """
    xp = array_module(scalars)
    sizes = sorted(parts)
    flat = [parts[k][0].ravel() for k in sizes]
    every = xp.concatenate(flat) if flat else xp.zeros(0, xp.int64)
    if xp is not np:
        from daxpy.cuda.cut_edges import serves

        if serves(scalars):
            return _merged_on_device(parts, sizes, flat, every, scalars, value, n_points)
    else:
        merged_on_host = _MERGED_ON_HOST.load()   # None without Numba
        if merged_on_host is not None:
            return merged_on_host(parts, sizes, flat, every, scalars, value, n_points)
    unique, inverse = _distinct(every)
    return _merged(parts, sizes, flat, unique, inverse, scalars, value, n_points)


def _merged(parts: dict, sizes: list, flat: list, unique: Any, inverse: Any, scalars: Any,
            value: float, n_points: int) -> EdgeCut:
    """:func:`merge` from the distinct keys and each key's index among them, as an
    array program."""
    xp = array_module(scalars)
    lo, hi = unique // n_points, unique % n_points
    low, high = scalars[lo].astype(xp.float64), scalars[hi].astype(xp.float64)
    t = (value - low) / (high - low)
    # A grid point exactly at the value is cut by every edge that meets there:
    # those cuts are one point (the point itself, keyed as the edge (p, p)).
    at_point = xp.where(low == value, lo, xp.where(high == value, hi, -1))
    if bool((at_point >= 0).any()):  # a host sync, only where values equal the value
        snapped = xp.where(at_point >= 0, at_point * n_points + at_point, unique)
        unique, again = xp.unique(snapped, return_inverse=True)
        inverse = again[inverse]
        lo, hi = unique // n_points, unique % n_points
        low = scalars[lo].astype(xp.float64)
        span = scalars[hi].astype(xp.float64) - low
        t = xp.where(lo == hi, 0.0, (value - low) / xp.where(lo == hi, 1.0, span))
    cells, source, start = {}, {}, 0
    for k, piece in zip(sizes, flat):
        made = inverse[start:start + piece.shape[0]].reshape(-1, k).astype(xp.int64)
        cells[k], source[k] = _uncollapsed(made, parts[k][1].astype(xp.int64))
        start += piece.shape[0]
    return EdgeCut(lo=lo, hi=hi, t=t, cells=cells, source=source)


def _merged_on_device(parts: dict, sizes: list, flat: list, every: Any, scalars: Any,
                      value: float, n_points: int) -> EdgeCut:
    """:func:`merge` on the GPU by :mod:`daxpy.cuda.cut_edges`' kernels and one host
    sync where no edge's end has the value exactly (the usual cut); the array
    program snaps such edges, from the same distinct keys."""
    from daxpy.cuda.cut_edges import distinct_keys, edge_terms

    rows, first = [], 0
    for k, piece in zip(sizes, flat):
        rows.append((first, int(piece.shape[0]), k))
        first += int(piece.shape[0])
    unique, inverse, snapped, collapsed = distinct_keys(every, rows, scalars, value, n_points)
    if snapped:
        return _merged(parts, sizes, flat, unique, inverse, scalars, value, n_points)
    lo, hi, t = edge_terms(unique, scalars, value, n_points)
    cells, source = {}, {}
    for (first, count, k) in rows:
        made = inverse[first:first + count].reshape(-1, k)
        source[k] = parts[k][1].astype(np.int64, copy=False)
        # Unsnapped, a cell's points are its distinct keys: it collapses where they repeat.
        cells[k], source[k] = _uncollapsed(made, source[k]) if collapsed else (made, source[k])
    return EdgeCut(lo=lo, hi=hi, t=t, cells=cells, source=source)


def _distinct(keys: Any) -> tuple[Any, Any]:
    """``unique(keys, return_inverse=True)`` where the keys are; on the device by a
    sort of the keys and a search.

    Examples
    --------
    >>> [a.tolist() for a in _distinct(np.array([7, 3, 7]))]
    [[3, 7], [1, 0, 1]]
    """
    xp = array_module(keys)
    if xp is not np:  # a sort of the keys alone, not of (key, index) pairs, then a scatter
        unique = xp.unique(keys)
        return unique, xp.searchsorted(unique, keys)
    return np.unique(keys, return_inverse=True)


_MERGED_ON_HOST = compiled("_merge_cuts_cpu", "merged", None)
"""The host's merge, compiled (:mod:`daxpy.worklets._merge_cuts_cpu`: the distinct keys
by buckets, then block passes, on every core), where Numba is installed."""


def _uncollapsed(cells: Any, source: Any) -> tuple[Any, Any]:
    """Drop the output cells that list a point twice (collapsed where a grid value
    equals the value exactly), as VTK's contouring of cells does."""
    if cells.shape[1] == 1:
        return cells, source
    xp = array_module(cells)
    distinct = cells[:, 0] != cells[:, -1]
    for i in range(cells.shape[1] - 1):
        distinct &= cells[:, i] != cells[:, i + 1]
    keep = xp.flatnonzero(distinct)
    return cells[keep], source[keep]


def in_cell_order(parts: list[tuple[Any, Any]]) -> tuple[Any, Any]:
    """Join the ``(keys, source)`` of several kinds of cells, ordered by input cell
    (a stable sort: each cell's output cells keep the table's order).

    Examples
    --------
    >>> keys, source = in_cell_order([(np.array([[5, 6]]), np.array([3])),
    ...                               (np.array([[1, 2]]), np.array([1]))])
    >>> keys.tolist(), source.tolist()
    ([[1, 2], [5, 6]], [1, 3])
    """
    if len(parts) == 1:
        return parts[0]
    xp = array_module(parts[0][0])
    keys = xp.concatenate([k for k, _ in parts])
    source = xp.concatenate([s for _, s in parts])
    # Stable, so each cell's output cells keep the table's order (CuPy's argsort
    # is a radix sort, stable too).
    order = xp.argsort(source, kind="stable")
    return keys[order], source[order]
