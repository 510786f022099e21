"""Point-to-cell average: each cell gets the mean of its corner values, as
vtkPointDataToCellData computes it.

Structured grids average separably: one pairwise pass per cell axis, run slab
by slab along the slowest axis so the passes between the first read and the
final write stay in cache. Unstructured grids sum corner by corner over blocks
of cells of one shape, on several threads, reading corner ids from a cached
corner-major copy of the connectivity.

On unstructured grids the CPU backend runs the compiled twin,
:mod:`daxpy.worklets.point_to_cell_cpu` (see :func:`~daxpy.worklets._averaging.register_average`).

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(3, 2))
>>> point_to_cell_structured(g, np.arange(6.0)).tolist()
[2.0, 3.0]
"""

from __future__ import annotations

import numpy as np

from ._averaging import (average_output, gather, id_dtype, register_average,
                         structured_average, sum_dtype, sum_rows, run_slabs)

CELL_BLOCK = 1 << 14
"""Cells gathered at a time on unstructured grids: their corner values stay in cache."""


def _pair_sum(src: np.ndarray, axis: int, dst: np.ndarray) -> None:
    """``dst[..., i, ...] = src[..., i, ...] + src[..., i + 1, ...]`` along ``axis``."""
    low = [slice(None)] * src.ndim
    high = list(low)
    low[axis], high[axis] = slice(None, -1), slice(1, None)
    np.add(src[tuple(low)], src[tuple(high)], out=dst, dtype=dst.dtype)


def point_to_cell_structured(grid, values: np.ndarray, out: np.ndarray | None = None):
    """Average a point field over the corners of each cell of a uniform, rectilinear
    or curvilinear grid; parameters and result as every average's
    (:func:`~daxpy.worklets._averaging.register_average`).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2, 2))
    >>> point_to_cell_structured(g, np.arange(8, dtype=np.float32)).tolist()
    [3.5]
    """
    return structured_average(grid, values, out, "point", _average_slabs)


def _average_slabs(src: np.ndarray, dst: np.ndarray, starts: list[int], planes: int) -> None:
    """Cell planes ``[k0, k0 + planes)`` of axis 0 for each ``k0`` in ``starts``: they
    read point planes ``[k0, k0 + planes]``; the pairwise passes along the other
    axes go through buffers of one slab, allocated once."""
    n_axes = src.ndim - 1
    total = sum_dtype(dst.dtype)
    buffers, shape = [], [planes + 1] + list(src.shape[1:])
    for axis in range(n_axes - 1, 0, -1):
        shape[axis] -= 1
        buffers.append((axis, np.empty(shape, dtype=total)))
    # Narrower outputs get their sums in a buffer of the sum dtype first.
    sums = None if dst.dtype == total else np.empty((planes,) + dst.shape[1:], dtype=total)
    scale = 0.5 ** n_axes
    for k0 in starts:
        k1 = min(k0 + planes, dst.shape[0])
        current = src[k0:k1 + 1]
        for axis, buffer in buffers:
            reduced = buffer[:k1 + 1 - k0]
            _pair_sum(current, axis, reduced)
            current = reduced
        slab = dst[k0:k1] if sums is None else sums[:k1 - k0]
        _pair_sum(current, 0, slab)
        slab *= scale
        if sums is not None:
            dst[k0:k1] = slab


def point_to_cell_unstructured(grid, values: np.ndarray, out: np.ndarray | None = None):
    """Average a point field over the corners of each cell of an unstructured grid
    (cells of any supported shapes, one or mixed) or PolyData; parameters and result
    as every average's (:func:`~daxpy.worklets._averaging.register_average`).

    Each cell sums its corners in corner order in float64 and divides, as VTK does.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE, TRIANGLE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[0, 1]],
    ...                                                   TRIANGLE: [[0, 1, 2]]})
    >>> point_to_cell_unstructured(g, np.array([3.0, 6.0, 9.0])).tolist()
    [4.5, 6.0]
    """
    out = average_output(grid, values, "point", out)
    for block in grid.cell_blocks().values():
        rows = corner_rows(grid, block)
        run_slabs(lambda starts: _average_corners(values, block, rows, starts, out),
                  block.cell_ids.size, CELL_BLOCK)
    return out


def corner_rows(grid, block) -> np.ndarray:
    """The block's corner ids transposed to ``(n_corners, n_cells)``, int32 where
    the points allow, cached on the grid's topology.

    Row ``k`` holds corner ``k`` of every cell, so a block of cells gathers
    each corner from one contiguous run of ids into one contiguous row.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[0, 1], [1, 2]]})
    >>> corner_rows(g, g.cell_blocks()["line"]).tolist()
    [[0, 1], [1, 2]]
    """
    key = f"corner_rows:{block.shape.name}"
    if key not in grid._cache:
        grid._cache[key] = np.ascontiguousarray(block.corners.T, dtype=id_dtype(grid.n_points))
    return grid._cache[key]


def _average_corners(values: np.ndarray, block, rows: np.ndarray, starts: list[int],
                     out: np.ndarray) -> None:
    """Mean corner value of the cells ``[start, start + CELL_BLOCK)`` of one shape
    block, for each of ``starts``; buffers are allocated once per call.

    A block is four NumPy calls (widen the ids, gather every corner, sum over
    corners, divide), each long enough that the other thread seldom waits for
    the GIL; the sums run corner after corner, in float64 (VTK's order and
    type: a float32 sum would overflow near float32's maximum)."""
    n_cells, n_corners = block.cell_ids.size, block.shape.n_corners
    in_order = n_cells == out.shape[0]  # one shape: its ids are 0..n-1
    direct = in_order and out.dtype == sum_dtype(out.dtype)  # sums land in out itself
    tail = values.shape[1:]
    width = values.shape[1] if values.ndim == 2 else 1
    picked = np.empty(n_corners * CELL_BLOCK * width, dtype=values.dtype)
    scratch = np.empty(n_corners * CELL_BLOCK, dtype=np.intp)
    sums = None if direct else np.empty((CELL_BLOCK,) + tail, dtype=sum_dtype(out.dtype))
    for start in starts:
        stop = min(start + CELL_BLOCK, n_cells)
        corner_values = picked[:n_corners * (stop - start) * width].reshape(
            (n_corners, stop - start) + tail)
        gather(values, rows[:, start:stop], corner_values, scratch)
        total = out[start:stop] if direct else sums[:stop - start]
        sum_rows(corner_values, total)
        np.divide(total, n_corners, out=total)
        if not direct:
            out[block.cell_ids[start:stop] if not in_order else slice(start, stop)] = total


POINT_TO_CELL = register_average(
    "point_to_cell", "points", point_to_cell_structured, point_to_cell_unstructured,
    doc="Mean of each cell's corner values (vtkPointDataToCellData).")
