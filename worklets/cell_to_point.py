"""Cell-to-point average: each point gets the mean of the values of the cells
that use it, as vtkCellDataToPointData computes it (every cell counts once;
a point that no cell uses gets 0).

Structured grids spread separably: along each cell axis a point takes the mean
of its two neighbouring cells, or the one cell at the border. The passes run
slab by slab along the slowest axis so that they stay in cache. Unstructured
grids scatter cell values onto their corners with ``np.bincount`` over blocks
of cells, then divide by the number of cells per point.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(4,))
>>> cell_to_point_structured(g, np.array([1.0, 3.0, 5.0])).tolist()
[1.0, 2.0, 4.0, 5.0]
"""

from __future__ import annotations

import numpy as np

from daxpy.worklet import Worklet, register

from ._cuda_specs import CUDA

from ._averaging import (check_tuples, float_dtype, output_array, run_slabs,
                         slab_planes, structured_view)


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


def _corner_block(n_corners: int, components: int, n_points: int) -> int:
    # Each block scatters about as many values as the output holds, which
    # keeps the index and weight temporaries near the output's size.
    return max(1, max(n_points * components, 1 << 16) // (n_corners * components))


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
        Point field; float dtypes are kept, integers give float64. Points
        that no cell uses get 0, as in VTK.

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
    components = values.shape[1] if values.ndim == 2 else 1
    flat_values = values.reshape(grid.n_cells, components)
    size = grid.n_points * components
    sums = np.zeros(size)
    lanes = np.arange(components)
    for block in grid.cell_blocks().values():
        n_corners = block.shape.n_corners
        step = _corner_block(n_corners, components, grid.n_points)
        for start in range(0, block.cell_ids.size, step):
            corners = block.corners[start:start + step]
            cell_values = flat_values[block.cell_ids[start:start + step]]
            # Slot of (cell, corner, component) in the interleaved point output.
            slots = (corners[:, :, None] * components + lanes).ravel() if components > 1 \
                else corners.ravel()
            weights = np.broadcast_to(cell_values[:, None, :], (corners.shape[0], n_corners,
                                                                components)).ravel()
            sums += np.bincount(slots, weights=weights, minlength=size)
    # A point no cell uses has a zero sum; dividing it by 1 gives VTK's 0.
    np.divide(sums.reshape(grid.n_points, components), _cells_per_point(grid)[:, None],
              out=out.reshape(grid.n_points, components))
    return out


def _cells_per_point(grid) -> np.ndarray:
    """Cells using each point (at least 1), computed once and cached on the grid's topology."""
    cache = getattr(grid, "_cache", None)
    if cache is not None and "cells_per_point" in cache:
        return cache["cells_per_point"]
    counts = np.ones(grid.n_points, dtype=np.int64) if grid.n_cells == 0 else np.maximum(
        sum(np.bincount(block.corners.ravel(), minlength=grid.n_points)
            for block in grid.cell_blocks().values()), 1)
    if cache is not None:
        cache["cells_per_point"] = counts
    return counts


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
