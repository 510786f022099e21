"""Cell-to-point average: each point gets the mean of the values of the cells
that use it, as vtkCellDataToPointData computes it (every cell counts once;
a point that no cell uses gets 0).

Structured grids spread separably: along each cell axis a point takes the mean
of its two neighbouring cells, or the one cell at the border. The passes run
slab by slab along the slowest axis so that they stay in cache. Unstructured
grids go through each point's cells, listed once per grid with the points
grouped by their number of cells: over blocks of a group's points, on several
threads, a gather of the cells' values, sums row by row, a division.

On unstructured grids the CPU backend runs the compiled twin,
:mod:`daxpy.worklets.cell_to_point_cpu` (see :func:`~daxpy.worklets._averaging.register_average`).

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(4,))
>>> cell_to_point_structured(g, np.array([1.0, 3.0, 5.0])).tolist()
[1.0, 2.0, 4.0, 5.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._averaging import (average_output, gather, id_dtype, register_average,
                         structured_average, sum_dtype, sum_rows, run_slabs)

LINKS_BLOCK = 1 << 18
"""Point-cell links gathered at a time on unstructured grids: their values stay
in cache, and the blocks are long enough that the threads seldom wait for the GIL."""


def _along(axis: int, ndim: int, index) -> tuple:
    key = [slice(None)] * ndim
    key[axis] = index
    return tuple(key)


def _spread(src: np.ndarray, axis: int, dst: np.ndarray) -> None:
    """Cell values to the points of one axis: ``dst`` is one longer than ``src``."""
    ndim = src.ndim
    dst[_along(axis, ndim, 0)] = src[_along(axis, ndim, 0)]
    dst[_along(axis, ndim, -1)] = src[_along(axis, ndim, -1)]
    _mean(src[_along(axis, ndim, slice(None, -1))], src[_along(axis, ndim, slice(1, None))],
          dst[_along(axis, ndim, slice(1, -1))])


def _mean(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = (a + b) / 2``, added in float64: a float32 sum could overflow."""
    total = sum_dtype(out.dtype)
    if out.dtype == total:
        np.add(a, b, out=out, dtype=total)
        out *= 0.5
    else:
        out[...] = np.add(a, b, dtype=total) * 0.5


def _spread_slab(cells: np.ndarray, lo: int, k0: int, k1: int, dst: np.ndarray) -> None:
    """Points ``[k0, k1)`` of axis 0 from the cell planes ``cells`` (which start at
    ``lo``); point plane ``p`` uses cell planes ``p - 1`` and ``p`` where they exist."""
    n_cells = dst.shape[0] - 1
    if k0 == 0:
        dst[0] = cells[0]
    if k1 == n_cells + 1:
        dst[n_cells] = cells[n_cells - 1 - lo]
    first, stop = max(k0, 1), min(k1, n_cells)
    if stop > first:
        _mean(cells[first - 1 - lo:stop - 1 - lo], cells[first - lo:stop - lo], dst[first:stop])


def cell_to_point_structured(grid, values: np.ndarray, out: np.ndarray | None = None):
    """Average a cell field onto the points of a uniform, rectilinear or curvilinear
    grid; parameters and result as every average's
    (:func:`~daxpy.worklets._averaging.register_average`).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 2))
    >>> cell_to_point_structured(g, np.array([2.0, 4.0])).tolist()
    [2.0, 3.0, 4.0, 2.0, 3.0, 4.0]
    """
    return structured_average(grid, values, out, "cell", _spread_slabs)


def _spread_slabs(src: np.ndarray, dst: np.ndarray, starts: list[int], planes: int) -> None:
    """Point planes ``[k0, k0 + planes)`` of axis 0 for each ``k0`` in ``starts``: they
    read cell planes ``[k0 - 1, k0 + planes)``; the spreads along the other axes
    go through buffers of one slab, allocated once."""
    n_axes = src.ndim - 1
    buffers, shape = [], [planes + 1] + list(src.shape[1:])
    for axis in range(n_axes - 1, 0, -1):
        shape[axis] += 1
        buffers.append((axis, np.empty(shape, dtype=sum_dtype(dst.dtype))))
    for k0 in starts:
        k1 = min(k0 + planes, dst.shape[0])
        lo, hi = max(k0 - 1, 0), min(k1, src.shape[0])
        current = src[lo:hi]
        for axis, buffer in buffers:
            spread = buffer[:hi - lo]
            _spread(current, axis, spread)
            current = spread
        _spread_slab(current, lo, k0, k1, dst)


def cell_to_point_unstructured(grid, values: np.ndarray, out: np.ndarray | None = None):
    """Average a cell field onto the points of an unstructured grid (cells of any
    supported shapes, one or mixed) or PolyData; parameters and result as every
    average's (:func:`~daxpy.worklets._averaging.register_average`).

    Each point sums its cells in float64, in ascending cell order, as VTK does.
    Points that no cell uses get 0, as in VTK.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {LINE: [[0, 1], [1, 2]]})
    >>> cell_to_point_unstructured(g, np.array([2.0, 4.0])).tolist()
    [2.0, 3.0, 4.0, 0.0]
    """
    out = average_output(grid, values, "cell", out)
    for group in point_cells(grid):
        if group.n_cells == 0:
            out[group.points] = 0
            continue
        points_per_block = max(1, LINKS_BLOCK // group.n_cells)
        run_slabs(lambda starts: _average_group(values, group, points_per_block, starts, out),
                  group.points.size, points_per_block)
    return out


@dataclass(frozen=True)
class PointCells:
    """The points that ``n_cells`` cells use, and those cells.

    Attributes
    ----------
    n_cells : int
        Cells per point, the same for every point of the group.
    points : numpy.ndarray of int64, shape (n,)
        The group's point ids, ascending.
    cells : numpy.ndarray of int32 (int64 past 2**31 cells), shape (n_cells, n)
        Row ``j`` holds the ``j``-th cell (in ascending order) of each point.

    Examples
    --------
    >>> import numpy as np
    >>> group = PointCells(2, np.array([1, 4]), np.array([[0, 3], [1, 5]], np.int32))
    >>> group.cells[:, 1].tolist()
    [3, 5]
    """

    n_cells: int
    points: np.ndarray
    cells: np.ndarray


def point_cells(grid) -> tuple[PointCells, ...]:
    """The cells of each point of ``grid``, with points grouped by their number
    of cells; built once and cached on the grid's topology.

    Within a group the cells form a rectangle: a block of points sums its
    cells row after row, with no segment boundaries to walk.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {LINE: [[0, 1], [1, 2]]})
    >>> [(p.n_cells, p.points.tolist(), p.cells.tolist()) for p in point_cells(g)]
    [(0, [3], []), (1, [0, 2], [[0, 1]]), (2, [1], [[0], [1]])]
    """
    if "point_cells" not in grid._cache:
        connectivity = grid.connectivity
        entry_cell = np.repeat(np.arange(grid.n_cells, dtype=id_dtype(grid.n_cells)),
                               np.diff(grid.offsets))
        # A stable sort lists each point's cells in ascending order, so the
        # sums always run in one order: VTK's.
        linked = entry_cell[np.argsort(connectivity, kind="stable")]
        counts = np.bincount(connectivity, minlength=grid.n_points)
        starts = np.cumsum(counts) - counts
        by_count = np.argsort(counts, kind="stable")
        ordered = counts[by_count]
        # Counts are >= 0, so the -1 ends make the first and past-the-end bounds.
        bounds = np.flatnonzero(np.diff(ordered, prepend=-1, append=-1))
        groups = []
        for first, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            points, size = by_count[first:stop], int(ordered[first])
            cells = linked[starts[points] + np.arange(size)[:, None]]
            groups.append(PointCells(size, points, cells))
        grid._cache["point_cells"] = tuple(groups)
    return grid._cache["point_cells"]


def _average_group(values: np.ndarray, group: PointCells, block: int, starts: list[int],
                   out: np.ndarray) -> None:
    """Mean over their cells of the group's points ``[start, start + block)``, for
    each of ``starts``; buffers are allocated once per call."""
    n_cells, n_points = group.n_cells, group.points.size
    tail = values.shape[1:]
    width = values.shape[1] if values.ndim == 2 else 1
    picked = np.empty(n_cells * block * width, dtype=values.dtype)
    scratch = np.empty(n_cells * block, dtype=np.intp)
    sums = np.empty((block,) + tail)
    means = np.empty((block,) + tail, dtype=out.dtype)
    for start in starts:
        stop = min(start + block, n_points)
        cell_values = picked[:n_cells * (stop - start) * width].reshape(
            (n_cells, stop - start) + tail)
        gather(values, group.cells[:, start:stop], cell_values, scratch)
        sum_rows(cell_values, sums[:stop - start])
        np.divide(sums[:stop - start], n_cells, out=means[:stop - start])
        out[group.points[start:stop]] = means[:stop - start]


CELL_TO_POINT = register_average(
    "cell_to_point", "cells", cell_to_point_structured, cell_to_point_unstructured,
    doc="Mean over the cells that use each point (vtkCellDataToPointData).")
