"""Merging the topology-generating worklets' results of a grid's chunks into the
result of the whole grid, bit for bit.

A chunk is a slab of whole cell layers of a structured grid and the points they use
(:mod:`daxpy.engine.geometry_chunks`). Its result is numbered in the chunk:
:func:`shifted` moves it to the whole grid's numbering (a slab's points and cells
are contiguous ranges, so that is an offset), and :func:`merged` joins the chunks'.
Every output point of the three results has a key that orders the whole grid's
output (a kept point's id, a cut edge's ``(lo, hi)``, a clip's centre point's cell),
so the merged points are the chunks' keys made unique, in key order: points on
the layer two slabs share are made by both, with the same bits, and kept once.
Cells are already in input cell order, slab after slab.

Examples
--------
>>> import numpy as np
>>> from daxpy.worklets._edge_cut import EdgeCut
>>> one = EdgeCut(np.array([0]), np.array([1]), np.array([0.5]), {1: np.array([[0]])},
...               {1: np.array([0])})
>>> two = shifted(one, points=1, cells=1, n_points=2, n_global=3)   # one point on
>>> both = merged([one, two], n_points=3)
>>> both.lo.tolist(), both.hi.tolist(), both.cells[1].tolist(), both.source[1].tolist()
([0, 1], [1, 2], [[0], [1]], [0, 1])
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ._edge_cut import EdgeCut
from .clip import Clipped
from .threshold import Kept


def shifted(made: Any, *, points: Any, cells: int, n_points: int, n_global: int) -> Any:
    """A chunk's result (on the host) in the whole grid's numbering: its point ids
    moved by ``points`` (an offset, or each chunk point's id in the grid, ascending)
    and its cell ids on by ``cells``; ``n_points`` and ``n_global`` are the chunk's
    and the grid's point counts (a clip's keys are made of them).

    Examples
    --------
    >>> import numpy as np
    >>> from daxpy.worklets.threshold import Kept
    >>> kept = Kept(np.array([0]), np.array([0, 1]), np.array([0, 1]), np.array([0, 2]),
    ...             np.array([3], np.uint8))
    >>> moved = shifted(kept, points=np.array([4, 7]), cells=3, n_points=2, n_global=9)
    >>> moved.cell_ids.tolist(), moved.point_ids.tolist(), moved.connectivity.tolist()
    ([3], [4, 7], [0, 1])
    """
    def moved(ids):
        return ids + points if isinstance(points, (int, np.integer)) else points[ids]

    if isinstance(made, Kept):
        return dataclasses.replace(made, cell_ids=made.cell_ids + cells,
                                   point_ids=moved(made.point_ids))
    if isinstance(made, EdgeCut):
        # Ascending ids stay ascending: every edge keeps lo < hi.
        return EdgeCut(moved(made.lo), moved(made.hi), made.t, made.cells,
                       {k: s + cells for k, s in made.source.items()})
    return _shifted_clip(made, moved, cells, n_points, n_global)


def _shifted_clip(made: Clipped, moved, cells: int, n: int, total: int) -> Clipped:
    """A clip's ids moved and its made points' keys made the whole grid's (``n`` the
    chunk's points, ``total`` the grid's)."""
    keys = made.keys
    centre = keys >= n + n * n
    code = np.where(centre, 0, keys - n)
    lo, hi = moved(code // max(n, 1)), moved(code % max(n, 1))
    code = np.where(centre, keys - n - n * n, 0)
    whole = np.where(centre, total + total * total + (code // 64 + cells) * 64 + code % 64,
                     total + lo * total + hi)
    return dataclasses.replace(made, kept=moved(made.kept), ids=moved(made.ids),
                               centre_ids=moved(made.centre_ids), source=made.source + cells,
                               keys=whole)


def merged(parts: list, *, n_points: int) -> Any:
    """The whole grid's result from its chunks' :func:`shifted` results, in chunk
    order; ``n_points``: the whole grid's point count.

    Examples
    --------
    >>> import numpy as np
    >>> line = Kept(np.array([0]), np.array([0, 1]), np.array([0, 1]), np.array([0, 2]),
    ...             np.array([3], np.uint8))                # one line cell kept
    >>> two = merged([line, shifted(line, points=1, cells=1, n_points=2, n_global=3)],
    ...              n_points=3)
    >>> two.point_ids.tolist(), two.connectivity.tolist(), two.offsets.tolist()
    ([0, 1, 2], [0, 1, 1, 2], [0, 2, 4])
    """
    first = parts[0]
    if isinstance(first, Kept):
        return _merged_kept(parts)
    if isinstance(first, EdgeCut):
        return _merged_cut(parts, n_points)
    return _merged_clip(parts, n_points)


def _cells(parts: list, offsets_of, connectivity_of, point_index) -> tuple:
    """Offsets and connectivity joined, each part's point indices mapped to the
    merged points by ``point_index(i, connectivity)``."""
    offsets, connectivity, start = [np.zeros(1, np.int64)], [], 0
    for i, part in enumerate(parts):
        ends = offsets_of(part)
        offsets.append(ends[1:] + start)
        start += int(ends[-1])
        connectivity.append(point_index(i, connectivity_of(part)))
    return np.concatenate(offsets), np.concatenate(connectivity).astype(np.int64)


def _merged_kept(parts: list) -> Kept:
    point_ids = np.unique(np.concatenate([p.point_ids for p in parts]))
    offsets, connectivity = _cells(
        parts, lambda p: p.offsets, lambda p: p.connectivity,
        lambda i, c: np.searchsorted(point_ids, parts[i].point_ids[c]))
    return Kept(np.concatenate([p.cell_ids for p in parts]), point_ids, connectivity,
                offsets, np.concatenate([p.cell_types for p in parts]))


def _unique_points(keys: list) -> tuple[np.ndarray, np.ndarray, list]:
    """The merged points' first rows (into the joined rows) and keys, and each
    part's map from its points to them."""
    every = np.concatenate(keys)
    unique, first, inverse = np.unique(every, return_index=True, return_inverse=True)
    bounds = np.cumsum([0] + [k.shape[0] for k in keys])
    return first, unique, [inverse[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _merged_cut(parts: list, n_points: int) -> EdgeCut:
    first, _, maps = _unique_points([p.lo * n_points + p.hi for p in parts])
    lo, hi, t = (np.concatenate([getattr(p, name) for p in parts])[first]
                 for name in ("lo", "hi", "t"))
    sizes = sorted({k for p in parts for k in p.cells})
    cells = {k: np.concatenate([maps[i][p.cells[k]] for i, p in enumerate(parts)
                                if k in p.cells]).reshape(-1, k).astype(np.int64)
             for k in sizes}
    source = {k: np.concatenate([p.source[k] for p in parts if k in p.source]) for k in sizes}
    return EdgeCut(lo=lo, hi=hi, t=t, cells=cells, source=source)


def _merged_clip(parts: list, n_points: int) -> Clipped:
    kept = np.unique(np.concatenate([p.kept for p in parts]))
    first, keys, maps = _unique_points([p.keys for p in parts])
    # A part's points, kept ones first, as the merged points: kept points found
    # among the merged kept ones, made points after all of those.
    moved = [np.concatenate([np.searchsorted(kept, p.kept), kept.shape[0] + maps[i]])
             for i, p in enumerate(parts)]
    offsets, connectivity = _cells(parts, lambda p: p.offsets, lambda p: p.connectivity,
                                   lambda i, c: moved[i][c])
    # A centre point is its cell's, made by one part: its rows move to the merged
    # points', ascending as the parts' keys are; narrower tables padded with zeros.
    width = max(p.centre_ids.shape[1] for p in parts)

    def centre(name):
        return np.concatenate([np.pad(getattr(p, name),
                                      ((0, 0), (0, width - p.centre_ids.shape[1])))
                               for p in parts])

    return Clipped(kept, np.concatenate([p.ids for p in parts])[first],
                   np.concatenate([p.weights for p in parts])[first],
                   np.concatenate([maps[i][p.centre_rows] for i, p in enumerate(parts)]),
                   centre("centre_ids"), centre("centre_weights"), connectivity, offsets,
                   np.concatenate([p.cell_types for p in parts]),
                   np.concatenate([p.source for p in parts]), keys)
