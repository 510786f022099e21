"""The cell gradient on hexahedra, as compiled CPU code that knows the shape.

The generic kernel (:func:`daxpy.worklets._derivatives_cpu.cell_derivatives`)
reads the shape's weights and their corners from tables at run time, so its
loops neither unroll nor fold the weights, and a hexahedron took about 145 ns
on one thread. Here the 8 corners and the centre's weights (``±0.25``, the
shape's table, a module constant) are known when Numba compiles: the same
terms, added in the same order, with the same closed-form solve, so the
results are the generic kernel's bits.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import HEXAHEDRON
>>> cube = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
...                  [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], float)
>>> corners, out = np.arange(8)[None], np.empty((1, 3))
>>> hex_cell_gradient(cube, (cube @ [1.0, 2.0, 3.0])[:, None], corners, np.zeros(1, int),
...                   False, out)
0
>>> out.tolist()
[[1.0, 2.0, 3.0]]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._cell_gradients import _centre_table
from ._derivatives_cpu import BLOCK
from ._hex_gradient_cpu import _cofactors
from ._numba import kernel

_WEIGHTS = np.ascontiguousarray(_centre_table("hex"), dtype=np.float64)
"""The hexahedron's parametric derivatives at its centre, ``(3, 8)``: every
corner weighs in each row."""


@kernel()
def _hex_cells(points, values, corners, cell_ids, check, out, lo, hi):
    n_points, bad = points.shape[0], 0
    for i in range(lo, hi):
        ok = True
        for j in range(8):
            ok &= (corners[i, j] >= 0) & (corners[i, j] < n_points)
        if not ok:
            bad += 1
            continue
        # The Jacobian's rows: sum_j w_aj X_j, in corner order, from +0.0.
        r00 = r01 = r02 = r10 = r11 = r12 = r20 = r21 = r22 = 0.0
        for j in range(8):
            p = corners[i, j]
            x, y, z = np.float64(points[p, 0]), np.float64(points[p, 1]), np.float64(points[p, 2])
            w0, w1, w2 = _WEIGHTS[0, j], _WEIGHTS[1, j], _WEIGHTS[2, j]
            r00 += x * w0
            r01 += y * w0
            r02 += z * w0
            r10 += x * w1
            r11 += y * w1
            r12 += z * w1
            r20 += x * w2
            r21 += y * w2
            r22 += z * w2
        # solve_rows: det = r2 . (r0 x r1); g = ((b0 r1 - b1 r0) x r2 + b2 (r0 x r1)) / det.
        c0, c1, c2, scale = _cofactors(r00, r01, r02, r10, r11, r12, r20, r21, r22)
        row = cell_ids[i]
        for comp in range(values.shape[1]):
            b0 = b1 = b2 = 0.0
            finite = True
            for j in range(8):
                v = values[corners[i, j], comp]
                finite &= np.isfinite(v)
                f = np.float64(v)
                b0 += f * _WEIGHTS[0, j]
                b1 += f * _WEIGHTS[1, j]
                b2 += f * _WEIGHTS[2, j]
            wx = b0 * r10 - b1 * r00
            wy = b0 * r11 - b1 * r01
            wz = b0 * r12 - b1 * r02
            dx = wy * r22 - wz * r21
            dy = wz * r20 - wx * r22
            dz = wx * r21 - wy * r20
            dx, dy, dz = dx + b2 * c0, dy + b2 * c1, dz + b2 * c2
            if check and not finite:
                # VTK weighs every corner: a NaN or Inf poisons the cell.
                out[row, 3 * comp] = out[row, 3 * comp + 1] = out[row, 3 * comp + 2] = np.nan
                continue
            out[row, 3 * comp] = dx * scale
            out[row, 3 * comp + 1] = dy * scale
            out[row, 3 * comp + 2] = dz * scale
    return bad


@kernel(parallel=True)
def _hex_kernel(points, values, corners, cell_ids, check, out):
    n, bad = corners.shape[0], 0
    for b in prange((n + BLOCK - 1) // BLOCK):
        bad += _hex_cells(points, values, corners, cell_ids, check, out, np.int64(b * BLOCK),
                          np.int64(min(n, (b + 1) * BLOCK)))
    return bad


def hex_cell_gradient(points, values, corners, cell_ids, check, out) -> int:
    """Write into ``out`` ``(n_cells, 3 c)`` the gradient of every component of
    ``values`` ``(n_points, c)`` at the centre of each hexahedron ``corners``
    ``(n, 8)`` (row ``cell_ids[i]``); return the number of cells skipped for a
    point id out of range. ``check``: the field may hold NaN or Inf.

    Examples
    --------
    >>> import numpy as np
    >>> cube = np.array([[0, 0, 0], [2, 0, 0], [2, 1, 0], [0, 1, 0],
    ...                  [0, 0, 1], [2, 0, 1], [2, 1, 1], [0, 1, 1]], float)
    >>> out = np.empty((1, 3))
    >>> hex_cell_gradient(cube, cube[:, :1].copy(), np.arange(8)[None], np.zeros(1, int),
    ...                   False, out), out.tolist()
    (0, [[1.0, 0.0, 0.0]])
    """
    return _hex_kernel(points, values, corners, cell_ids, check, out)
