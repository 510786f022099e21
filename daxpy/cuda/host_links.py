"""Point links built once on the host, for grids whose device topology comes and goes.

The device builds a grid's point links by sorting 64-bit keys
(:func:`daxpy.cuda.topology.point_cell_links`): fast, but its peak is ~80 bytes
per cell corner, and it is redone whenever the device topology is dropped, as
an out-of-core chunk's is after each chunk. A grid marked with :func:`mark`
gets its links built on the host instead, once, by the counting sort it is
marked with: kept in the grid's host cache (which
:func:`daxpy.cuda.device.forget` leaves alone), they are only uploaded on later
runs, and the device holds nothing but the links themselves.

The arrays equal the device's: a counting sort lists each point's items in
ascending order, the order of the device's (point, item) keys, and its starts
are the device's running counts.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import LINE
>>> from daxpy.worklets._links_cpu import build_links
>>> g = daxpy.UnstructuredGrid(np.eye(3), [1, 2, 0, 1], [0, 2, 4], [LINE, LINE])
>>> mark(g, build_links)
>>> [a.tolist() for a in point_cells(g, g.connectivity, np.int32)]
[[0, 1, 3, 4], [1, 0, 1, 0]]
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

_MARK = "host_links"
_PREFIX = "host_links:"


def mark(grid: Any, csr: Callable) -> None:
    """Have ``grid``'s point links built on the host by ``csr`` and kept there.

    ``csr(ids, offsets, n_points, n_rows)`` returns ``(starts, rows)``: the rows
    ``i`` whose ``ids[offsets[i]:offsets[i + 1]]`` hold point ``p``, ascending,
    at ``rows[starts[p]:starts[p + 1]]`` (as
    :func:`daxpy.worklets._links_cpu.build_links`, which the streaming layer
    passes: the CUDA layer does not import worklets).

    Examples
    --------
    >>> import daxpy
    >>> from daxpy.worklets._links_cpu import build_links
    >>> g = daxpy.UniformGrid(dims=(2,)); mark(g, build_links); marked(g)
    True
    """
    grid._cache[_MARK] = csr


def marked(grid: Any) -> bool:
    """Whether ``grid`` was :func:`mark`-ed.

    Examples
    --------
    >>> import daxpy
    >>> marked(daxpy.UniformGrid(dims=(2,)))
    False
    """
    cache = getattr(grid, "_cache", None)
    return bool(cache) and cache.get(_MARK) is not None


def _kept(grid: Any, key: str, ids: np.ndarray, offsets: np.ndarray, n_rows: int,
          dtype) -> tuple:
    full = f"{_PREFIX}{key}:{np.dtype(dtype).str}"
    if full not in grid._cache:
        starts, rows = grid._cache[_MARK](ids, offsets, grid.n_points, n_rows)
        grid._cache[full] = (starts.astype(dtype, copy=False), rows.astype(dtype, copy=False))
    return grid._cache[full]


def point_cells(grid: Any, connectivity: np.ndarray, dtype) -> tuple:
    """Host ``(offsets, cells)`` of a marked grid: each point's cells, ascending.

    ``connectivity`` is the grid's, checked by the caller.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> from daxpy.worklets._links_cpu import build_links
    >>> g = daxpy.UnstructuredGrid(np.eye(3), [1, 2, 0, 1], [0, 2, 4], [LINE, LINE])
    >>> mark(g, build_links)
    >>> point_cells(g, g.connectivity, np.int32)[1].tolist()
    [1, 0, 1, 0]
    """
    return _kept(grid, "cells", connectivity, grid.offsets, grid.n_cells, dtype)


def corner_slots(grid: Any, corners: np.ndarray, shape_name: str, dtype) -> tuple:
    """Host ``(offsets, slots)`` of a marked grid: for each point, the flat
    positions ``cell * K + corner`` of ``corners`` (one shape's, checked) that
    hold it, ascending.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> from daxpy.worklets._links_cpu import build_links
    >>> g = daxpy.UnstructuredGrid(np.eye(3), [1, 2, 0, 1], [0, 2, 4], [LINE, LINE])
    >>> mark(g, build_links)
    >>> corners = g.cell_blocks()["line"].corners
    >>> [a.tolist() for a in corner_slots(g, corners, "line", np.int32)]
    [[0, 1, 3, 4], [2, 0, 3, 1]]
    """
    flat = np.ascontiguousarray(corners).ravel()
    # Each corner is a row of its own: the rows that hold a point are its slots.
    return _kept(grid, f"slots:{shape_name}", flat, np.arange(flat.size + 1), flat.size,
                 dtype)


def cells_per_point(grid: Any, connectivity: np.ndarray, dtype) -> np.ndarray:
    """Host count of the cells using each point (kept on ``grid``).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid(np.eye(3), [1, 2, 0, 1], [0, 2, 4], [LINE, LINE])
    >>> cells_per_point(g, g.connectivity, np.int32).tolist()
    [1, 2, 1]
    """
    full = f"{_PREFIX}counts:{np.dtype(dtype).str}"
    if full not in grid._cache:
        grid._cache[full] = np.bincount(connectivity, minlength=grid.n_points).astype(dtype)
    return grid._cache[full]
