"""Compiled joining of a marched cut's edges into a surface's points on the host:
:func:`daxpy.worklets._merge_cuts.merge`'s array program, its bits, on every core.

The distinct edge keys come from the bucket sort of :func:`~daxpy.worklets._scan_cpu.
sorted_unique`, each key's place among them from :func:`~daxpy.worklets._scan_cpu.rank`
(a search of the few keys that share its high bits), each distinct edge's ends and
weight from one pass over them, and each output cell's points, with whether it
collapses, from one pass over the cells. The array program makes about a dozen NumPy
passes on one thread: on the GPU machine's host, most of a 10M-hexahedra slice's time
outside its parallel passes.

A cut where an edge's end has the value exactly (its points snap onto grid points),
or of scalars the kernels are not compiled for (other than native float32 and
float64), is the array program's, from the same distinct keys and places.

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

from ._blocks_cpu import block_kernel, over_blocks
from ._edge_cut import EdgeCut
from ._merge_cuts import _merged
from ._scan_cpu import rank, ranks, sorted_unique

_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
"""The scalars' dtypes the kernels take."""

_ROWS = 1 << 14
"""Distinct edges, or output cells, a block."""


@block_kernel()
def _edge_terms(unique, n_points, scalars, value, lo, hi, t, snapped, first, last):
    """Blocks ``first`` to ``last`` of the distinct edge keys: each one's ends (``lo``,
    ``hi``) and weight ``t``, as the array program computes them (float64, in its
    order); whether an end of the block's edges has the value (``snapped``)."""
    n = unique.shape[0]
    for block in range(first, last):
        hit = False
        for u in range(block * _ROWS, min(n, (block + 1) * _ROWS)):
            a, b = unique[u] // n_points, unique[u] % n_points
            low, high = np.float64(scalars[a]), np.float64(scalars[b])
            lo[u], hi[u] = a, b
            t[u] = (value - low) / (high - low)
            hit = hit or low == value or high == value
        snapped[block] = hit


@block_kernel()
def _ranked(unique, shift, starts, keys, cells, distinct, first, last):
    """Blocks ``first`` to ``last`` of the output cells of ``cells.shape[1]`` points:
    each point its key's place among the distinct keys (``keys`` flat, a cell's
    after the one before); whether the cell lists no point twice (``distinct``:
    else it collapsed where a value equals the value exactly, and is dropped, as
    VTK's contouring of cells drops it)."""
    n, k = cells.shape[0], cells.shape[1]
    for block in range(first, last):
        for c in range(block * _ROWS, min(n, (block + 1) * _ROWS)):
            row = cells[c]
            for j in range(k):
                row[j] = rank(unique, shift, starts, keys[c * k + j])
            apart = k == 1 or row[0] != row[k - 1]
            for j in range(k - 1):
                apart = apart and row[j] != row[j + 1]
            distinct[c] = apart


def _blocks(n: int) -> int:
    return (n + _ROWS - 1) // _ROWS


def merged(parts: dict, sizes: list, flat: list, every: np.ndarray, scalars: np.ndarray,
           value: float, n_points: int) -> EdgeCut:
    """:func:`daxpy.worklets._merge_cuts.merge` on the host: ``parts`` the march's
    ``(keys, source)`` by output cell size, ``sizes`` their sizes ascending, ``flat``
    each size's keys flat and ``every`` all of them end to end.

    Examples
    --------
    >>> import numpy as np
    >>> keys = np.array([[0 * 3 + 1, 1 * 3 + 2], [1 * 3 + 2, 0 * 3 + 1]])
    >>> cut = merged({2: (keys, np.array([4, 9]))}, [2], [keys.ravel()], keys.ravel(),
    ...              np.array([0.0, 1.0, 3.0]), 0.5, 3)
    >>> cut.cells[2].tolist(), cut.source[2].tolist(), cut.t.tolist()
    ([[0, 1], [1, 0]], [4, 9], [0.5, -0.25])
    """
    # Every key is lo * n_points + hi, both below n_points.
    top = max(1, int(n_points) * int(n_points))
    unique = sorted_unique(np.ascontiguousarray(every, np.int64), top)
    shift, starts = ranks(unique, top)
    made = []
    for k, piece in zip(sizes, flat):
        cells = np.empty((piece.shape[0] // k, k), np.int64)
        distinct = np.empty(cells.shape[0], np.bool_)
        over_blocks(_ranked, _blocks(cells.shape[0]), unique, shift, starts,
                    np.ascontiguousarray(piece, np.int64), cells, distinct)
        made.append((cells, distinct))
    lo, hi = np.empty(unique.shape[0], np.int64), np.empty(unique.shape[0], np.int64)
    t = np.empty(unique.shape[0], np.float64)
    snapped = np.ones(1, np.bool_)
    if scalars.dtype in _KERNEL_DTYPES:
        snapped = np.empty(_blocks(unique.shape[0]), np.bool_)
        over_blocks(_edge_terms, snapped.shape[0], unique, np.int64(n_points), scalars,
                    float(value), lo, hi, t, snapped)
    if snapped.any():
        inverse = (np.concatenate([cells.reshape(-1) for cells, _ in made]) if made
                   else np.zeros(0, np.int64))
        return _merged(parts, sizes, flat, unique, inverse, scalars, value, n_points)
    cells_by_size, source = {}, {}
    for k, (cells, distinct) in zip(sizes, made):
        given = np.ascontiguousarray(parts[k][1], np.int64)
        if not distinct.all():
            keep = np.flatnonzero(distinct)
            cells, given = cells[keep], given[keep]
        cells_by_size[k], source[k] = cells, given
    return EdgeCut(lo=lo, hi=hi, t=t, cells=cells_by_size, source=source)
