"""Compiled CPU kernel of the cell-to-point average on unstructured grids.

One parallel loop over the points: each point gathers its cells through the
cached point->cell links (:mod:`daxpy.worklets._links_cpu`), ascending, sums
their values in float64 and divides by their number, the NumPy
implementation's arithmetic in its order (VTK's), so the results are its
bits. The NumPy implementation stays as the reference and for other dtypes.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import VERTEX
>>> g = daxpy.UnstructuredGrid(np.eye(3), [1, 1], [0, 1, 2], [VERTEX, VERTEX])
>>> cell_to_point_unstructured(g, np.array([2.0, 5.0])).tolist()
[0.0, 3.5, 0.0]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._averaging import check_tuples, output_array
from ._derivatives_cpu import BLOCK
from ._links_cpu import grid_links
from ._numba import columns, kernel


@kernel()
def _average_points(values, starts, cells, out, lo, hi):
    for p in range(lo, hi):
        first, stop = starts[p], starts[p + 1]
        for comp in range(values.shape[1]):
            if stop == first:  # no cell uses the point: 0, as in VTK
                out[p, comp] = 0.0
                continue
            total = np.float64(values[cells[first], comp])
            for e in range(first + 1, stop):
                total += values[cells[e], comp]
            out[p, comp] = total / (stop - first)


@kernel(parallel=True)
def _average_kernel(values, starts, cells, out):
    n = out.shape[0]
    for b in prange((n + BLOCK - 1) // BLOCK):
        _average_points(values, starts, cells, out, b * BLOCK, min(n, (b + 1) * BLOCK))


def cell_to_point_unstructured(grid, values: np.ndarray, out: np.ndarray | None = None):
    """The compiled form of :func:`daxpy.worklets.cell_to_point.cell_to_point_unstructured`
    (float fields).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.worklets import cell_to_point as numpy_reference
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {5: [[0, 1, 2], [1, 2, 3]]})
    >>> c = np.array([6.0, 2.0], np.float32)
    >>> cell_to_point_unstructured(g, c).tolist()
    [6.0, 4.0, 4.0, 2.0]
    >>> np.array_equal(cell_to_point_unstructured(g, c),
    ...                numpy_reference.cell_to_point_unstructured(g, c))
    True
    """
    check_tuples(values, grid.n_cells, "cell", grid.name)
    table = columns(values)
    out = output_array(out, (grid.n_points,) + values.shape[1:], values.dtype)
    starts, cells = grid_links(grid)
    _average_kernel(table, starts, cells, out.reshape(grid.n_points, table.shape[1]))
    return out
