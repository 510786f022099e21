"""The offsets of a surface's cells of one size (a contour's triangles, a slice's
lines): ``0, k, 2k, ..`` on the host, written once and shared.

Every contour of millions of triangles has the same offsets up to its count, and
the datasets hold their arrays as read-only views: one array of them, kept and
grown as surfaces grow, serves every surface. Made afresh, a 256³ contour's 1.1M
offsets cost their page faults and a pass on every core on the CPU, and on the GPU,
host to host, 8.8 MB of the surface's 42 MB coming down after the field went up.
Surfaces of more than :data:`SHARED_CELLS` cells get their own.

Examples
--------
>>> host_offsets(4, 3).tolist()
[0, 3, 6, 9, 12]
"""

from __future__ import annotations

import numpy as np

from daxpy.worklets._numba import compiled

ON_THREADS = 1 << 16
"""Cells from which the offsets are written by the compiled kernel on every core
(:mod:`daxpy.worklets._offsets_cpu`); fewer are NumPy's ``arange``, whose pages
are few."""

SHARED_CELLS = 1 << 23
"""Cells up to which the offsets are views of the shared array: 64 MB of host
memory held at most for each cell size (a 512³ contour's 4.4M triangles fit)."""

_shared: dict[int, np.ndarray] = {}
"""Per cell size ``k``: the offsets of the most cells asked for yet (read-only)."""


def _arange_offsets(n_cells: int, k: int) -> np.ndarray:
    """``0, k, 2k, .. n_cells k`` by NumPy.

    Examples
    --------
    >>> _arange_offsets(4, 3).tolist()
    [0, 3, 6, 9, 12]
    """
    return np.arange(0, n_cells * k + 1, k, dtype=np.int64)


_COMPILED_OFFSETS = compiled("_offsets_cpu", "uniform_offsets", _arange_offsets)


def host_offsets(n_cells: int, k: int) -> np.ndarray:
    """``0, k, 2k, .. n_cells k`` (int64, read-only): a view of the shared array, grown
    (at least doubled, on every core) when it is too short; an array of its own
    beyond :data:`SHARED_CELLS` cells, by NumPy for few (or without Numba).

    Parameters
    ----------
    n_cells : int
        The surface's cells.
    k : int
        The points of each of them.

    Returns
    -------
    numpy.ndarray
        ``n_cells + 1`` offsets, not writeable: other surfaces may view them.

    Examples
    --------
    >>> offsets = host_offsets(2, 2)
    >>> offsets.tolist(), offsets.flags.writeable
    ([0, 2, 4], False)
    """
    if n_cells < ON_THREADS:
        made = _arange_offsets(n_cells, k)
    elif n_cells > SHARED_CELLS:
        made = _COMPILED_OFFSETS(n_cells, k)
    else:
        held = _shared.get(k)
        if held is None or held.shape[0] <= n_cells:
            # Two threads may both grow it: each keeps a valid array, one is kept.
            rows = min(max(n_cells, 2 * (held.shape[0] - 1 if held is not None else 0)),
                       SHARED_CELLS)
            held = _COMPILED_OFFSETS(rows, k)
            held.flags.writeable = False
            _shared[k] = held
        return held[:n_cells + 1]
    made.flags.writeable = False
    return made
