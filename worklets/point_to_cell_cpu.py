"""Compiled CPU kernel of the point-to-cell average on unstructured grids.

One parallel loop per shape block: each cell sums its corner values in corner
order in float64 and divides by the corner count, the NumPy implementation's
arithmetic in its order, so the results are its bits (and VTK's order). The
NumPy implementation stays as the reference and for other dtypes.

The kernel is generated per (corners per cell, components): with both known
when Numba compiles, the corner and component loops unroll and the gathers
pipeline. With either read from the arrays' shapes at run time, 10M hexahedra
took twice as long (2M hexahedra, one thread: 19 ms against 7.5; two: 10
against 4.3; a literal argument, ``numba.literally``, was slower still).

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

from daxpy.data.arrays import native_order

from ._averaging import check_tuples, output_array
from ._fork_safe_cpu import fork_safe_generated
from ._generated_cpu import load_generated
from ._numba import columns, refuse_bad_ids


def average_source(corners: int, components: int, dense: bool) -> tuple[str, str]:
    """Source of the module holding the kernel that averages ``corners`` corner
    values of ``components`` components per cell, and the kernel's name.

    The kernel is called as ``kernel(values, corners, cell_ids, out)`` with
    ``(n, components)`` tables and returns the number of cells skipped for a
    point id out of range.

    Examples
    --------
    >>> source, name = average_source(8, 1, True)
    >>> name
    'average_k8_c1_dense'
    >>> "range(1, 8)" in source
    True
    """
    name = f"average_k{corners}_c{components}{'_dense' if dense else ''}"
    # prange's index is unsigned: made signed, so that it unifies with an id.
    row = "i" if dense else "np.int64(cell_ids[i])"
    source = f'''"""Point-to-cell average of {corners} corners, {components} component(s)."""
import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True, error_model="numpy")
def {name}(values, corners, cell_ids, out):
    n, bad = values.shape[0], 0
    for i in prange(corners.shape[0]):
        # Branch-free: every id in range (see refuse_bad_ids).
        ok = True
        for j in range({corners}):
            ok &= (corners[i, j] >= 0) & (corners[i, j] < n)
        if not ok:
            bad += 1
            continue
        row = {row}
        for comp in range({components}):
            total = np.float64(values[corners[i, 0], comp])
            for j in range(1, {corners}):
                total += values[corners[i, j], comp]
            out[row, comp] = total / {corners}
    return bad
'''
    return source, name


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
        corners = native_order(block.corners)
        # A grid of one shape numbers its cells 0, 1, ...: no cell id stream to read.
        source, name = average_source(corners.shape[1], table.shape[1],
                                      block.cell_ids.shape[0] == grid.n_cells)
        kernel = fork_safe_generated(load_generated(source, "point_to_cell", name))
        refuse_bad_ids(kernel(table, corners, block.cell_ids, rows))
    return out
