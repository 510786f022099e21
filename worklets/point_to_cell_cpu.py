"""Compiled CPU kernel of the point-to-cell average on unstructured grids.

One parallel loop per shape block: each cell sums its corner values in corner
order in float64 and divides by the corner count, the NumPy implementation's
arithmetic in its order, so the results are its bits (and VTK's order). The
NumPy implementation stays as the reference and for other dtypes.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import QUAD
>>> g = daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [QUAD])
>>> point_to_cell_unstructured(g, np.array([1.0, 2.0, 3.0, 6.0])).tolist()
[3.0]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from daxpy.data.arrays import native_order

from ._averaging import check_tuples, output_array
from ._derivatives_cpu import BLOCK
from ._numba import columns, kernel, refuse_bad_ids


@kernel()
def _average_cells(values, corners, cell_ids, out, lo, hi):
    k, n, bad = corners.shape[1], values.shape[0], 0
    # A grid of one shape numbers its cells 0, 1, ...: no cell id stream to read.
    dense = cell_ids.shape[0] == out.shape[0]
    for i in range(lo, hi):
        # Branch-free: every id in range (see valid_ids).
        ok = True
        for j in range(k):
            ok &= (corners[i, j] >= 0) & (corners[i, j] < n)
        if not ok:
            bad += 1
            continue
        row = i if dense else cell_ids[i]
        for comp in range(values.shape[1]):
            total = np.float64(values[corners[i, 0], comp])
            for j in range(1, k):
                total += values[corners[i, j], comp]
            out[row, comp] = total / k
    return bad


@kernel(parallel=True)
def _average_kernel(values, corners, cell_ids, out):
    n, bad = corners.shape[0], 0
    for b in prange((n + BLOCK - 1) // BLOCK):
        bad += _average_cells(values, corners, cell_ids, out, b * BLOCK,
                              min(n, (b + 1) * BLOCK))
    return bad


def point_to_cell_unstructured(grid, values: np.ndarray, out: np.ndarray | None = None):
    """The compiled form of :func:`daxpy.worklets.point_to_cell.point_to_cell_unstructured`
    (float fields).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import TETRA
    >>> g = daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [TETRA])
    >>> point_to_cell_unstructured(g, np.arange(4, dtype=np.float32)).tolist()
    [1.5]
    """
    check_tuples(values, grid.n_points, "point", grid.name)
    table = columns(values)
    out = output_array(out, (grid.n_cells,) + values.shape[1:], values.dtype)
    rows = out.reshape(grid.n_cells, table.shape[1])
    for block in grid.cell_blocks().values():
        # The connectivity itself, cell after cell: one stream of ids, read once
        # (the NumPy implementation's cached corner-major int32 copy has half the
        # bytes in 8 streams, which measured slower and costs memory).
        refuse_bad_ids(_average_kernel(table, native_order(block.corners), block.cell_ids,
                                       rows))
    return out
