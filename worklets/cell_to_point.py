"""Cell-to-point average: each point gets the mean of the values of the cells
that use it, as vtkCellDataToPointData computes it (every cell counts once;
a point that no cell uses gets 0).

Structured grids spread separably: along each cell axis a point takes the mean
of its two neighbouring cells, or the one cell at the border. The passes run
slab by slab along the slowest axis so that they stay in cache. Unstructured
grids go point by point through point-to-cell links (CSR, built once per grid):
over blocks of points, on several threads, a gather of the linked cells' values
and ``np.add.reduceat`` sum each point's cells, then divide by their number.

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

from daxpy.worklet import Worklet, register

from ._cuda_specs import CUDA

from ._averaging import (check_tuples, float_dtype, gather, id_dtype, output_array,
                         run_slabs, slab_planes, structured_view)

POINT_BLOCK = 1 << 14
"""Points averaged at a time on unstructured grids: their cells' values
(about eight per point on hexahedra) stay in cache between the gather and the sums."""


def _along(axis: int, ndim: int, index) -> tuple:
    key = [slice(None)] * ndim
    key[axis] = index
    return tuple(key)


def _spread(src: np.ndarray, axis: int, dst: np.ndarray) -> None:
    """Cell values to the points of one axis: ``dst`` is one longer than ``src``."""
    ndim = src.ndim
    dst[_along(axis, ndim, 0)] = src[_along(axis, ndim, 0)]
    dst[_along(axis, ndim, -1)] = src[_along(axis, ndim, -1)]
    inner = dst[_along(axis, ndim, slice(1, -1))]
    np.add(src[_along(axis, ndim, slice(None, -1))], src[_along(axis, ndim, slice(1, None))],
           out=inner, dtype=dst.dtype)
    inner *= 0.5


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
        inner = dst[first:stop]
        np.add(cells[first - 1 - lo:stop - 1 - lo], cells[first - lo:stop - lo], out=inner,
               dtype=dst.dtype)
        inner *= 0.5


def cell_to_point_structured(grid, values: np.ndarray, out: np.ndarray | None = None):
    """Average a cell field onto the points of a structured grid.

    Parameters
    ----------
    grid : UniformGrid, RectilinearGrid or CurvilinearGrid
        Only the dims matter: the average does not depend on coordinates.
    values : numpy.ndarray, shape (n_cells,) or (n_cells, c)
        Cell field.
    out : numpy.ndarray, optional
        C-contiguous output of shape ``(n_points,) + values.shape[1:]``.

    Returns
    -------
    numpy.ndarray
        Point field; float dtypes are kept, integers give float64.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 2))
    >>> cell_to_point_structured(g, np.array([2.0, 4.0])).tolist()
    [2.0, 3.0, 4.0, 2.0, 3.0, 4.0]
    """
    check_tuples(values, grid.n_cells, "cell", grid.name)
    dtype = float_dtype(values.dtype)
    out = output_array(out, (grid.n_points,) + values.shape[1:], dtype)
    src = structured_view(grid, values, "cells")
    dst = structured_view(grid, out, "points")
    if src.ndim == 1:  # a single point is a single vertex cell
        np.copyto(out, values)
        return out
    planes = slab_planes(dst)
    run_slabs(lambda starts: _spread_slabs(src, dst, starts, planes), dst.shape[0], planes)
    return out


def _spread_slabs(src: np.ndarray, dst: np.ndarray, starts: list[int], planes: int) -> None:
    """Point planes ``[k0, k0 + planes)`` of axis 0 for each ``k0`` in ``starts``: they
    read cell planes ``[k0 - 1, k0 + planes)``; the spreads along the other axes
    go through buffers of one slab, allocated once."""
    n_axes = src.ndim - 1
    buffers, shape = [], [planes + 1] + list(src.shape[1:])
    for axis in range(n_axes - 1, 0, -1):
        shape[axis] += 1
        buffers.append((axis, np.empty(shape, dtype=dst.dtype)))
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
    """Average a cell field onto the points of an unstructured grid.

    Parameters
    ----------
    grid : UnstructuredGrid
        Cells of any of the supported shapes, one or mixed.
    values : numpy.ndarray, shape (n_cells,) or (n_cells, c)
        Cell field.
    out : numpy.ndarray, optional
        C-contiguous output of shape ``(n_points,) + values.shape[1:]``.

    Returns
    -------
    numpy.ndarray
        Point field; float dtypes are kept, integers give float64. Each point
        sums its cells in float64, in ascending cell order. Points that no
        cell uses get 0, as in VTK.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {LINE: [[0, 1], [1, 2]]})
    >>> cell_to_point_unstructured(g, np.array([2.0, 4.0])).tolist()
    [2.0, 3.0, 4.0, 0.0]
    """
    check_tuples(values, grid.n_cells, "cell", grid.name)
    dtype = float_dtype(values.dtype)
    out = output_array(out, (grid.n_points,) + values.shape[1:], dtype)
    links = point_links(grid)
    run_slabs(lambda starts: _average_links(values, links, starts, out), grid.n_points,
              POINT_BLOCK)
    return out


@dataclass(frozen=True)
class PointLinks:
    """The cells that use each point, in CSR form.

    Attributes
    ----------
    starts : numpy.ndarray of int64, shape (n_points + 1,)
        Point ``p``'s cells are ``cells[starts[p]:starts[p + 1]]``.
    cells : numpy.ndarray of int32 (int64 past 2**31 cells)
        Cell ids, ascending within each point.
    counts : numpy.ndarray of int64, shape (n_points,)
        Cells per point, at least 1 (a point no cell uses divides a zero sum).
    unused : bool
        Whether some point has no cell.

    Examples
    --------
    >>> import numpy as np
    >>> links = PointLinks(np.array([0, 1, 1]), np.array([0], np.int32), np.array([1, 1]), True)
    >>> links.cells[links.starts[0]:links.starts[1]].tolist()
    [0]
    """

    starts: np.ndarray
    cells: np.ndarray
    counts: np.ndarray
    unused: bool


def point_links(grid) -> PointLinks:
    """Point-to-cell links of ``grid``, built once and cached on its topology.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {LINE: [[0, 1], [1, 2]]})
    >>> links = point_links(g)
    >>> links.starts.tolist(), links.cells.tolist(), links.unused
    ([0, 1, 3, 4, 4], [0, 0, 1, 1], True)
    """
    if "averaging_links" not in grid._cache:
        connectivity = grid.connectivity
        entry_cell = np.repeat(np.arange(grid.n_cells, dtype=id_dtype(grid.n_cells)),
                               np.diff(grid.offsets))
        # A stable sort keeps each point's cells ascending: the sums' order is fixed.
        cells = entry_cell[np.argsort(connectivity, kind="stable")]
        counts = np.bincount(connectivity, minlength=grid.n_points)
        starts = np.zeros(grid.n_points + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        unused = bool(np.any(counts == 0))
        grid._cache["averaging_links"] = PointLinks(starts, cells, np.maximum(counts, 1),
                                                    unused)
    return grid._cache["averaging_links"]


def _average_links(values: np.ndarray, links: PointLinks, starts: list[int],
                   out: np.ndarray) -> None:
    """Mean over the linked cells of the points ``[start, start + POINT_BLOCK)``, for
    each of ``starts``; buffers, sized for the block with the most links, are
    allocated once per call."""
    n_points = out.shape[0]
    if not starts:
        return
    bounds = links.starts[np.minimum(np.add.outer(starts, [0, POINT_BLOCK]), n_points)]
    most = int(np.max(bounds[:, 1] - bounds[:, 0]))
    picked = np.empty((most,) + values.shape[1:], dtype=values.dtype)
    scratch = np.empty(most, dtype=np.intp)
    sums = np.empty((POINT_BLOCK,) + values.shape[1:])
    for start, (first, last) in zip(starts, bounds.tolist()):
        stop = min(start + POINT_BLOCK, n_points)
        block_sums = sums[:stop - start]
        if last == first:  # no point of the block is used by a cell
            out[start:stop] = 0
            continue
        cell_values = picked[:last - first]
        gather(values, links.cells[first:last], cell_values, scratch)
        segments = links.starts[start:stop] - first
        if links.unused:
            # reduceat needs in-range starts; an empty segment gets its
            # neighbour's value and is zeroed below.
            np.minimum(segments, last - first - 1, out=segments)
        np.add.reduceat(cell_values, segments, axis=0, dtype=np.float64, out=block_sums)
        if links.unused:
            block_sums[links.starts[start + 1:stop + 1] == links.starts[start:stop]] = 0
        counts = links.counts[start:stop]
        np.divide(block_sums, counts if values.ndim == 1 else counts[:, None],
                  out=out[start:stop])


_STRUCTURED = {family: cell_to_point_structured
               for family in ("uniform", "rectilinear", "curvilinear")}

CELL_TO_POINT = register(Worklet(
    name="cell_to_point",
    input_association="cells",
    output_association="points",
    halo=1,
    numpy={**_STRUCTURED, "unstructured": cell_to_point_unstructured},
    cuda=CUDA["cell_to_point"],
    doc="Mean over the cells that use each point (vtkCellDataToPointData).",
))
