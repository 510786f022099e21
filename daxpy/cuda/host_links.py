"""Point links built once on the host, for grids whose device topology comes and goes.

The device builds a grid's point links by sorting 64-bit keys
(:func:`daxpy.cuda.unstructured_arrays.point_cell_links`): fast, but its peak is ~80 bytes
per cell corner, and it is redone whenever the device topology is dropped, as
an out-of-core chunk's is after each chunk. A grid marked with :func:`mark`
gets its links built on the host instead, once, by the counting sort it is
marked with: kept in the grid's host cache (which
:func:`daxpy.cuda.device.forget` leaves alone) with its corner ids and
coordinates in the kernels' types, and page-locked, they are only uploaded on
later runs, asynchronously on the current stream, and the device holds nothing
but the links themselves.

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


def mark(grid: Any, csr: Callable, pin: Callable[[np.ndarray], Any] = lambda a: None) -> None:
    """Have ``grid``'s point links built on the host by ``csr`` and kept there,
    with its corner ids and coordinates in the kernels' types, each given to
    ``pin`` once.

    ``csr(ids, offsets, n_points, n_rows)`` returns ``(starts, rows)``: the rows
    ``i`` whose ``ids[offsets[i]:offsets[i + 1]]`` hold point ``p``, ascending,
    at ``rows[starts[p]:starts[p + 1]]`` (as
    :func:`daxpy.worklets._links_cpu.build_links`). ``pin`` page-locks a host
    array in place (as :func:`daxpy.stream.transfer.page_lock`), so that its
    uploads are asynchronous copies with no staging copy on the host. The
    streaming layer passes both: the CUDA layer imports neither worklets nor it.

    Examples
    --------
    >>> import daxpy
    >>> from daxpy.worklets._links_cpu import build_links
    >>> g = daxpy.UniformGrid(dims=(2,)); mark(g, build_links); marked(g)
    True
    """
    grid._cache[_MARK] = (csr, pin)


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


def checked(grid: Any, check: Callable[[Any, np.ndarray], Any]) -> None:
    """Run ``check(grid, grid.connectivity)`` once for a marked grid, not before
    each upload: its arrays are the planner's own copies, which nothing writes.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> from daxpy.worklets._links_cpu import build_links
    >>> g = daxpy.UnstructuredGrid(np.eye(3), [1, 2], [0, 2], [LINE]); mark(g, build_links)
    >>> for _ in range(2):
    ...     checked(g, lambda grid, ids: print("checked", ids.size))
    checked 2
    """
    if not grid._cache.get(_PREFIX + "checked"):
        check(grid, grid.connectivity)
        grid._cache[_PREFIX + "checked"] = True


def _kept(grid: Any, key: str, build: Callable[[], tuple]) -> tuple:
    """``build()``'s host arrays, made and pinned once, kept on ``grid``."""
    full = _PREFIX + key
    if full not in grid._cache:
        arrays = build()
        for array in arrays:
            grid._cache[_MARK][1](array)
        grid._cache[full] = arrays
    return grid._cache[full]


def _links(grid: Any, key: str, ids: np.ndarray, offsets: np.ndarray, n_rows: int,
           dtype) -> tuple:
    def build():
        starts, rows = grid._cache[_MARK][0](ids, offsets, grid.n_points, n_rows)
        return starts.astype(dtype, copy=False), rows.astype(dtype, copy=False)

    return _kept(grid, f"{key}:{np.dtype(dtype).str}", build)


def narrowed(grid: Any, key: str, array: np.ndarray, dtype) -> np.ndarray:
    """``array`` (of a marked grid) in ``dtype``, C-contiguous: itself where it
    is, else a copy made once; pinned and kept on the grid.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.worklets._links_cpu import build_links
    >>> g = daxpy.UniformGrid(dims=(2,)); mark(g, build_links)
    >>> narrowed(g, "ids", np.arange(3), np.int32).dtype
    dtype('int32')
    """
    return _kept(grid, f"{key}:{np.dtype(dtype).str}", lambda: (
        np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("=")),))[0]


def point_cells(grid: Any, connectivity: np.ndarray, dtype) -> tuple:
    """Host ``(offsets, cells)`` of a marked grid: each point's cells, ascending.

    ``connectivity`` is the grid's, checked by the caller (:func:`checked`).

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
    return _links(grid, "cells", connectivity, grid.offsets, grid.n_cells, dtype)


def corner_slots(grid: Any, corners: np.ndarray, shape_name: str, dtype) -> tuple:
    """Host ``(offsets, slots)`` of a marked grid: for each point, the flat
    positions ``cell * K + corner`` of ``corners`` (one shape's, checked: :func:`checked`) that
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
    return _links(grid, f"slots:{shape_name}", flat, np.arange(flat.size + 1), flat.size,
                  dtype)


def cells_per_point(grid: Any, connectivity: np.ndarray, dtype) -> np.ndarray:
    """Host count of the cells using each point of a marked grid (kept on it).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> from daxpy.worklets._links_cpu import build_links
    >>> g = daxpy.UnstructuredGrid(np.eye(3), [1, 2, 0, 1], [0, 2, 4], [LINE, LINE])
    >>> mark(g, build_links)
    >>> cells_per_point(g, g.connectivity, np.int32).tolist()
    [1, 2, 1]
    """
    return _kept(grid, f"counts:{np.dtype(dtype).str}", lambda: (
        np.bincount(connectivity, minlength=grid.n_points).astype(dtype),))[0]
