"""Compiled CPU kernels of the gradient family on unstructured grids.

One parallel loop per shape block (Numba ``prange``), no temporaries:

- cell gradient: each cell's derivatives at its parametric centre, the
  NumPy implementation's arithmetic in its order (bitwise equal to it);
- point gradient: each point gathers, through the cached point->cell links
  (:mod:`daxpy.worklets._links_cpu`), its cells' derivatives at its corner, in
  ascending cell order, sums them in float64 and divides by the number of
  cells using it, as vtkGradientFilter does. The NumPy implementation
  scatters the same terms with ``np.add.at`` in its output dtype; the two
  agree within rounding. Mixed grids sum block after block into a float64
  buffer, so the order stays fixed;
- on hexahedra, both from kernels that know the shape: the same terms in the
  same order (:mod:`daxpy.worklets._hex_cell_gradient_cpu`; the point
  gradient walks the cells in SIMD lanes, on Python threads over one compiled
  function rather than a ``prange``, :mod:`daxpy.worklets._hex_gradient_cpu`).

The NumPy implementations stay as the reference these kernels are tested
against, and for the dtypes the kernels are not compiled for.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import TETRA
>>> g = daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [TETRA])
>>> unstructured_cell_gradient(g, np.arange(4.0)).tolist()
[[-3.0, -2.0, -1.0]]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from daxpy.data.arrays import native_order

from ._cell_gradients import _DIMENSION, _centre_table, _corner_tables
from ._derivatives_cpu import (ADD, ALONE, BLOCK, LAST, cell_derivatives, finish_point, sparse,
                               valid_ids)
from ._hex_cell_gradient_cpu import hex_cell_gradient
from ._hex_gradient_cpu import hex_point_gradient
from ._jacobian import gradient_output, prepare_field
from ._links_cpu import block_links
from ._numba import kernel, kernel_dtype, refuse_bad_ids
from .gradient import _cells_per_point
from .point_to_cell import corner_rows

@kernel()
def _centre_cells(points, values, corners, cell_ids, tables, dim, check, out, lo, hi):
    g, rows, rhs = np.empty(out.shape[1]), np.empty((3, 3)), np.empty((3, values.shape[1]))
    bad = 0
    for i in range(lo, hi):
        if not valid_ids(corners, i, points.shape[0]):
            bad += 1
            continue
        cell_derivatives(points, values, corners, i, tables, 0, dim, check, rows, rhs, g)
        row = cell_ids[i]
        for q in range(g.shape[0]):
            out[row, q] = g[q]
    return bad


@kernel(parallel=True)
def _centre_kernel(points, values, corners, cell_ids, tables, dim, check, out):
    n, bad = corners.shape[0], 0
    for b in prange((n + BLOCK - 1) // BLOCK):
        bad += _centre_cells(points, values, corners, cell_ids, tables, dim, check, out,
                             b * BLOCK, min(n, (b + 1) * BLOCK))
    return bad


@kernel()
def _corner_points(points, values, corners, starts, cells, tables, dim, check, counts, total,
                   out, mode, lo, hi):
    width = out.shape[1]
    g, s = np.empty(width), np.empty(width)
    rows, rhs = np.empty((3, 3)), np.empty((3, values.shape[1]))
    bad, k = 0, corners.shape[1]
    for p in range(lo, hi):
        s[:] = 0.0
        for e in range(starts[p], starts[p + 1]):
            i = cells[e]
            m = 0
            while m < k and corners[i, m] != p:
                m += 1
            if m == k or not valid_ids(corners, i, points.shape[0]):
                bad += 1  # the ids changed since the links were built
                continue
            cell_derivatives(points, values, corners, i, tables, m, dim, check, rows, rhs,
                             g)
            for q in range(width):
                s[q] += g[q]
        finish_point(p, s, starts, counts, total, out, mode)
    return bad


@kernel(parallel=True)
def _corner_kernel(points, values, corners, starts, cells, tables, dim, check, counts, total,
                   out, mode):
    n, bad = out.shape[0], 0
    for b in prange((n + BLOCK - 1) // BLOCK):
        bad += _corner_points(points, values, corners, starts, cells, tables, dim, check,
                              counts, total, out, mode, b * BLOCK, min(n, (b + 1) * BLOCK))
    return bad


def _inputs(grid, values):
    table, _ = prepare_field(values, grid.n_points)
    table, points = kernel_dtype(table, grid.points())
    table = np.ascontiguousarray(table)
    # One pass over the field spares the NaN rule's check in every cell.
    return np.ascontiguousarray(points), table, not np.isfinite(table).all()


def unstructured_cell_gradient(grid, values: np.ndarray, out: np.ndarray | None = None
                               ) -> np.ndarray:
    """The compiled form of :func:`daxpy.worklets.gradient.unstructured_cell_gradient`.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> square = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
    >>> g = daxpy.UnstructuredGrid.from_blocks(square, {9: [[0, 1, 2, 3]]})   # a quad
    >>> (unstructured_cell_gradient(g, np.array([0.0, 2.0, 2.0, 0.0])) + 0.0).tolist()
    [[2.0, 0.0, 0.0]]
    """
    points, table, check = _inputs(grid, values)
    out = gradient_output(out, grid.n_cells, table.shape[1], table.dtype)
    for block in grid.cell_blocks().values():
        dim = _DIMENSION[block.shape.name]
        if dim == 0:  # a vertex's derivative is 0, as vtkVertex's
            out[block.cell_ids] = 0
            continue
        # Cells stream in order: the cached corner-major int32 ids read half the bytes.
        corners = corner_rows(grid, block).T
        if block.shape.name == "hex":
            refuse_bad_ids(hex_cell_gradient(points, table, corners, block.cell_ids, check, out))
            continue
        tables = sparse(_centre_table(block.shape.name)[None])
        refuse_bad_ids(_centre_kernel(points, table, corners, block.cell_ids, tables, dim, check,
                                      out))
    return out


def unstructured_point_gradient(grid, values: np.ndarray, out: np.ndarray | None = None
                                ) -> np.ndarray:
    """The compiled form of :func:`daxpy.worklets.gradient.unstructured_point_gradient`.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[0, 1], [1, 2]]})
    >>> unstructured_point_gradient(g, np.array([0.0, 1.0, 3.0]))[1].tolist()
    [-0.5, -0.5, 1.0]
    """
    points, table, check = _inputs(grid, values)
    out = gradient_output(out, grid.n_points, table.shape[1], table.dtype)
    blocks = [b for b in grid.cell_blocks().values() if _DIMENSION[b.shape.name] > 0]
    if not blocks:  # no cells, or only vertices: every derivative is 0
        out[...] = 0
        return out
    alone = len(grid.cell_blocks()) == 1
    counts = np.zeros(1, np.int64) if alone else _cells_per_point(grid)
    total = np.zeros((1, 1)) if alone else np.zeros(out.shape)
    for n, block in enumerate(blocks):
        mode = ALONE if alone else (LAST if n == len(blocks) - 1 else ADD)
        starts, cells = block_links(grid, block)
        corners = native_order(block.corners)  # the connectivity itself, where one shape
        if block.shape.name == "hex":
            refuse_bad_ids(hex_point_gradient(points, table, corners, starts, cells, check,
                                              counts, total, out, mode))
            continue
        tables = sparse(np.stack(_corner_tables(block.shape.name)))
        refuse_bad_ids(_corner_kernel(points, table, corners, starts, cells, tables,
                                      _DIMENSION[block.shape.name], check, counts, total, out,
                                      mode))
    return out

