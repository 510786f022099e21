"""An unstructured grid's arrays on the device: corner ids, coordinates and point
links, checked and cached on the grid (:func:`daxpy.cuda.device.cached`).

Point links are built once on the device, by sorting (point, item) keys, or,
for grids marked by :mod:`daxpy.cuda.host_links` (out-of-core chunks), once on
the host and uploaded from page-locked memory on the current stream, each time
the device topology was dropped. Both give the same arrays. Kernels read
through point ids without bounds checks, so ids are checked in range before any
kernel reads them (:func:`checked_ids`): on the device, after their upload, or
on the host before page-locked copies are kept.

Examples
--------
>>> index_dtype("int")
<class 'numpy.int32'>
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidDataSetError
from . import host_links
from .device import cached, to_device


def index_dtype(index: str):
    """NumPy type of a kernel index type.

    Examples
    --------
    >>> index_dtype("long long")
    <class 'numpy.int64'>
    """
    return np.int32 if index == "int" else np.int64


def checked_ids(grid, ids: np.ndarray) -> np.ndarray:
    """``ids`` (point ids of ``grid``, on the host or the device), after checking
    they lie in ``[0, n_points)``: one min and one max, before kernels read them
    without bounds checks (and before narrowing, which could wrap).

    Raises
    ------
    InvalidDataSetError
        If the grid's arrays were changed after it was built.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid(np.eye(3), [0, 1], [0, 2], [LINE])
    >>> checked_ids(g, np.array([0, 3]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: unstructured grid holds point id 3, outside [0, 3): ...
    """
    if ids.size:
        low, high = int(ids.min()), int(ids.max())
        if low < 0 or high >= grid.n_points:
            raise InvalidDataSetError(
                f"{grid.name} holds point id {low if low < 0 else high}, outside "
                f"[0, {grid.n_points}): were its arrays changed after it was built? Call "
                "validate() or build a new grid")
    return ids


def _marked(grid) -> bool:
    """Whether ``grid`` takes its arrays from :mod:`daxpy.cuda.host_links` (checked once)."""
    if not host_links.marked(grid):
        return False
    host_links.checked(grid, checked_ids)
    return True


def corner_ids(grid, shape_name: str, index: str):
    """The corner ids of one shape's cells on the device, checked, cached.

    Examples
    --------
    >>> callable(corner_ids)
    True
    """
    def build():
        corners = grid.cell_blocks()[shape_name].corners
        if _marked(grid):
            return _uploaded((host_links.narrowed(grid, f"corners:{shape_name}", corners,
                                                  index_dtype(index)),))[0]
        # Uploaded as they are, then checked and narrowed on the device: on the host
        # the check and the narrowing were three serial passes over the ids, 0.5 s
        # of a first run at 10M hexahedra, where the wider upload costs ~0.06 s.
        return checked_ids(grid, to_device(corners)).astype(index_dtype(index), copy=False)

    return cached(grid, f"corners:{shape_name}:{index}", build)


def coordinates(grid, coord):
    """The grid's points on the device in the ``coord`` type, cached.

    Examples
    --------
    >>> callable(coordinates)
    True
    """
    if _marked(grid):
        return cached(grid, f"xyz:{np.dtype(coord).str}", lambda: _uploaded(
            (host_links.narrowed(grid, "xyz", grid.points(), coord),))[0])
    return to_device(grid.points(), grid, coord)


def padded_coordinates(grid, coord):
    """The grid's points on the device as rows of four ``(x, y, z, 0)`` in the
    ``coord`` type, cached: the point gradient gathers a corner's point with one
    16-byte load (two for float64) instead of three scalar ones. Built from an
    upload that is not kept, so a run that reads only these holds one copy.

    Examples
    --------
    >>> callable(padded_coordinates)
    True
    """
    import cupy

    def build():
        if _marked(grid):
            xyz = _uploaded((host_links.narrowed(grid, "xyz", grid.points(), coord),))[0]
        else:
            xyz = to_device(grid.points(), None, coord)
        rows = cupy.zeros((grid.n_points, 4), dtype=coord)
        rows[:, :3] = xyz
        return rows

    return cached(grid, f"xyz4:{np.dtype(coord).str}", build)


def all_points_finite(grid, xyz) -> bool:
    """Whether every coordinate of ``grid`` (``xyz``, its device points) is finite,
    checked once and kept on the grid: the hexahedra's point gradient takes four
    corners' points where all eight are finite (one host sync, at the first run).

    Examples
    --------
    >>> callable(all_points_finite)
    True
    """
    import cupy

    return cached(grid, f"points_finite:{xyz.dtype.str}", lambda: bool(cupy.isfinite(xyz).all()))


def _connectivity(grid):
    """The grid's connectivity on the device as int64, checked, cached."""
    # Checked on the device, after the upload (see corner_ids).
    return checked_ids(grid, to_device(grid.connectivity, grid, np.int64))


def _links_by_point(points, items, n_items: int, n_points: int, idt) -> tuple:
    """CSR ``(offsets, items)`` grouping int64 device ``items`` by their ``points``.

    Unique keys (point, item): each point's items come in ascending order.
    """
    import cupy

    order = cupy.argsort(points * max(n_items, 1) + items)
    counts = cupy.bincount(points, minlength=n_points)
    offsets = cupy.zeros(n_points + 1, dtype=idt)
    offsets[1:] = cupy.cumsum(counts)
    return offsets, items[order].astype(idt)


def _uploaded(arrays: tuple) -> tuple:
    """Device copies of kept host arrays (:mod:`daxpy.cuda.host_links`), enqueued on
    the current stream: from page-locked memory they overlap other streams' work.
    The device copies are the cached entries, dropped with the device topology."""
    import cupy

    stream = cupy.cuda.get_current_stream()
    copies = []
    for array in arrays:
        device = cupy.empty(array.shape, dtype=array.dtype)
        device.set(array, stream=stream)
        copies.append(device)
    return copies


def point_cell_links(grid, index: str) -> tuple:
    """Point -> cell links (CSR) of an unstructured grid, on the device, cached.

    Links of each point are sorted by cell id, so sums over them always run
    in the same order (bitwise reproducible results, no atomics).

    Returns
    -------
    (cupy.ndarray, cupy.ndarray)
        ``offsets`` (n_points + 1) and ``cells``, of the index dtype.
    """
    import cupy

    idt = index_dtype(index)

    def build():
        if _marked(grid):
            return _uploaded(host_links.point_cells(grid, grid.connectivity, idt))
        conn = _connectivity(grid)
        offsets = to_device(grid.offsets, grid, np.int64)
        sizes = cupy.diff(offsets)
        cells = cupy.repeat(cupy.arange(grid.n_cells, dtype=np.int64), sizes)
        return _links_by_point(conn, cells, grid.n_cells, grid.n_points, idt)

    return cached(grid, f"links:{index}", build)


def corner_links(grid, shape_name: str, index: str) -> tuple:
    """Links from points to the corners of one shape's cells, on the device, cached.

    Returns
    -------
    (cupy.ndarray, cupy.ndarray)
        ``offsets`` (n_points + 1) and ``slots``: for each point, the flat
        positions ``cell * K + corner`` where it appears in the block's corner
        array, in increasing order.
    """
    import cupy

    idt = index_dtype(index)

    def build():
        if _marked(grid):
            return _uploaded(host_links.corner_slots(
                grid, grid.cell_blocks()[shape_name].corners, shape_name, idt))
        flat = corner_ids(grid, shape_name, index).ravel().astype(np.int64)
        slots = cupy.arange(flat.size, dtype=np.int64)
        return _links_by_point(flat, slots, flat.size, grid.n_points, idt)

    return cached(grid, f"corner_links:{shape_name}:{index}", build)


def cells_per_point(grid, index: str):
    """Number of cells (of any shape) using each point, on the device, cached."""
    import cupy

    def build():
        if _marked(grid):
            return _uploaded((host_links.cells_per_point(grid, grid.connectivity,
                                                         index_dtype(index)),))[0]
        return cupy.bincount(_connectivity(grid), minlength=grid.n_points).astype(
            index_dtype(index))

    return cached(grid, f"cells_per_point:{index}", build)
