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
>>> two = shifted(one, points=1, cells=1, n_points=2)      # the same cut, one point on
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


def shifted(made: Any, *, points: int, cells: int, n_points: int) -> Any:
    """A chunk's result (on the host) in the whole grid's numbering: its point ids
    moved on by ``points`` and its cell ids by ``cells``; ``n_points`` is the
    chunk's point count (a clip's keys are made of it).

    Examples
    --------
    >>> import numpy as np
    >>> from daxpy.worklets.threshold import Kept
    >>> kept = Kept(np.array([0]), np.array([0, 1]), np.array([0, 1]), np.array([0, 2]),
    ...             np.array([3], np.uint8))
    >>> moved = shifted(kept, points=4, cells=3, n_points=2)
    >>> moved.cell_ids.tolist(), moved.point_ids.tolist(), moved.connectivity.tolist()
    ([3], [4, 5], [0, 1])
    """
    if isinstance(made, Kept):
        return dataclasses.replace(made, cell_ids=made.cell_ids + cells,
                                   point_ids=made.point_ids + points)
    if isinstance(made, EdgeCut):
        return EdgeCut(made.lo + points, made.hi + points, made.t, made.cells,
                       {k: s + cells for k, s in made.source.items()})
    return _shifted_clip(made, points, cells, n_points)


def _shifted_clip(made: Clipped, points: int, cells: int, n: int) -> Clipped:
    """A clip's ids and keys moved on; the keys stay relative to the chunk's ``n``
    points until :func:`merged` recodes them (it knows the whole grid's count)."""
    keys = made.keys
    centre = keys >= n + n * n
    ids = made.ids.copy()
    # Ids past a point's own terms are zeros with zero weight: they stay point 0,
    # as the whole grid's would.
    ids[:, :2] += points
    ids[centre, 2:] += points
    return dataclasses.replace(made, ids=ids, source=made.source + cells,
                               keys=np.stack([keys, np.full_like(keys, points),
                                              np.full_like(keys, cells),
                                              np.full_like(keys, n)], axis=1))


def _global_clip_keys(coded: np.ndarray, n_points: int) -> np.ndarray:
    """Chunk keys (with each chunk's point and cell offsets and point count) as the
    whole grid's keys."""
    keys, points, cells, n = coded.T
    edge, centre = keys >= n, keys >= n + n * n
    out = keys + points                                   # a kept point
    code = keys - n
    lo, hi = code // np.maximum(n, 1), code % np.maximum(n, 1)
    out = np.where(edge, n_points + (lo + points) * n_points + (hi + points), out)
    code = keys - n - n * n
    out = np.where(centre, n_points + n_points * n_points + (code // 64 + cells) * 64
                   + code % 64, out)
    return out


def merged(parts: list, *, n_points: int) -> Any:
    """The whole grid's result from its chunks' :func:`shifted` results, in chunk
    order; ``n_points``: the whole grid's point count.

    Examples
    --------
    >>> import numpy as np
    >>> line = Kept(np.array([0]), np.array([0, 1]), np.array([0, 1]), np.array([0, 2]),
    ...             np.array([3], np.uint8))                # one line cell kept
    >>> two = merged([line, shifted(line, points=1, cells=1, n_points=2)], n_points=3)
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
    first, keys, maps = _unique_points([_global_clip_keys(p.keys, n_points) for p in parts])
    width = max(p.ids.shape[1] for p in parts)

    def padded(name):
        return np.concatenate([np.pad(getattr(p, name), ((0, 0), (0, width - p.ids.shape[1])))
                               for p in parts])[first]

    offsets, connectivity = _cells(parts, lambda p: p.offsets, lambda p: p.connectivity,
                                   lambda i, c: maps[i][c])
    return Clipped(padded("ids"), padded("weights"), connectivity, offsets,
                   np.concatenate([p.cell_types for p in parts]),
                   np.concatenate([p.source for p in parts]), keys)
