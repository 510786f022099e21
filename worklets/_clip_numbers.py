"""Numbering a clip's output points from its cells' slots (:mod:`daxpy.worklets.clip`):
kept points by their mask, a structured grid's cut edges by a scan of flags, other
cut points by a sort.

Examples
--------
>>> import numpy as np
>>> count_dtype(2 ** 40, np).__name__
'int64'
"""

from __future__ import annotations

from typing import Any


def numbered(keys: Any, kept_point: Any, xp, strides: tuple | None) -> tuple:
    """The output points of slot ``keys``: their sorted keys, how many are kept input
    points (they come first), each cut point's first slot (or, for a structured
    grid's edge, any of its slots: each gives the same terms), and each slot's point.

    A kept corner's key is its input id (below the input's point count), and the
    kept points are numbered by their mask without a sort. So are a structured
    grid's cut edges (``strides``: its point id strides along its axes of more than
    one point, padded to three with the point count), by :func:`_axis_numbered`;
    other cut edges and the centre keys (cut cells' few) are sorted.

    Examples
    --------
    >>> import numpy as np
    >>> keys = np.array([1, 3 + 1 * 3 + 2, 2, 3 + 1 * 3 + 2])   # points 1, 2, edge (1, 2)
    >>> unique, corners, first, points = numbered(keys, np.array([False, True, True]), np,
    ...                                           (1, 3, 3))
    >>> unique.tolist(), corners, points.tolist()
    ([1, 2, 8], 2, [0, 2, 1, 2])
    """
    corner = keys < kept_point.shape[0]
    corner_ids, renumber = xp.flatnonzero(kept_point), xp.cumsum(kept_point) - 1
    others = xp.flatnonzero(~corner)
    if strides is None:
        cut_keys, cut_first = xp.unique(keys[others], return_index=True)
        number = xp.searchsorted(cut_keys, keys[others])
    else:
        cut_keys, cut_first, number = _axis_numbered(keys[others], kept_point.shape[0],
                                                     strides, xp)
    inverse = xp.empty(keys.shape[0], dtype=xp.int64)
    inverse[corner] = renumber[keys[corner]]
    inverse[others] = corner_ids.shape[0] + number
    return (xp.concatenate([corner_ids, cut_keys]), int(corner_ids.shape[0]),
            others[cut_first], inverse)


def _axis_numbered(keys: Any, n: int, strides: tuple, xp) -> tuple:
    """:func:`numbered` of the cut points of a structured grid (``keys``: theirs, by
    slot): their sorted keys, a slot of each, and each slot's cut point.

    A cut edge of a voxel, pixel or line is an axis edge ``(lo, lo + stride)``, and
    the strides grow with the axis, so ascending ``(lo, hi)`` order is ascending
    ``(lo, axis)`` order: one flag per (point, axis) marks the cut edges, and a
    scan of the flags numbers them. Centre keys (few) are sorted.
    """
    centre = keys >= n + n * n
    edge_at, centre_at = xp.flatnonzero(~centre), xp.flatnonzero(centre)
    code = keys[edge_at] - n
    lo = code // n
    step = code - lo * n - lo
    place = lo * 3 + (step >= strides[1]) + (step >= strides[2])
    flags = xp.zeros(3 * n, xp.int8)
    flags[place] = 1
    scan = xp.cumsum(flags, dtype=count_dtype(3 * n, xp))
    n_edges = int(scan[-1])  # a host sync: how many cut edges
    edge_number = scan[place] - 1
    # Any slot of an edge will do: the scatter keeps one of them.
    edge_first = xp.empty(n_edges, xp.int64)
    edge_first[edge_number] = edge_at
    centre_keys, centre_first = xp.unique(keys[centre_at], return_index=True)
    number = xp.empty(keys.shape[0], xp.int64)
    number[edge_at] = edge_number
    number[centre_at] = n_edges + xp.searchsorted(centre_keys, keys[centre_at])
    return (xp.concatenate([keys[edge_first], centre_keys]),
            xp.concatenate([edge_first, centre_at[centre_first]]), number)


def count_dtype(size: int, xp):
    """The narrowest integer a scan of ``size`` zeros and ones fits.

    Examples
    --------
    >>> import numpy as np
    >>> count_dtype(10, np).__name__
    'int32'
    """
    return xp.int32 if size < 2 ** 31 else xp.int64
