"""The derivatives of a point field inside one cell, as compiled CPU code.

The per-cell math of :mod:`daxpy.worklets._jacobian`, one cell at a time:
a shape's table of parametric derivatives (at the centre, or at a corner)
combines the corner coordinates into the rows of the Jacobian and the corner
values into the field's parametric derivatives; the 3x3 system is solved in
closed form with the same cross products, in the same order, in float64, so
the results are the NumPy implementation's bits.

Examples
--------
>>> import numpy as np
>>> g, pts, corners = np.empty(3), np.array([[0.0, 0, 0], [2, 0, 0]]), np.array([[0, 1]])
>>> tables = sparse(np.array([[[-1.0, 1.0]]]))
>>> cell_derivatives(pts, np.array([[1.0], [2.0]]), corners, 0, tables, 0, 1, True,
...                  np.empty((3, 3)), np.empty((3, 1)), g)
>>> g.tolist()
[0.5, 0.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from ._numba import kernel

BLOCK = 512
"""Elements a kernel's loop body handles per scratch allocation."""

ALONE, ADD, LAST = 0, 1, 2
"""How a block's point sums end: divided and stored (the only block), added to
the float64 buffer, or added to it, divided and stored (the last block)."""


def sparse(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-zero weights of parametric derivative tables ``(n, dim, k)``, in
    corner order: their count ``(n, dim)``, corner ``(n, dim, k)`` and weight.

    A loop over them has the same trip count for every corner of a shape (2 at
    a hexahedron's corner), where testing each weight for zero would branch
    differently at each corner.

    Examples
    --------
    >>> import numpy as np
    >>> [a.tolist() for a in sparse(np.array([[[0.0, -1.0, 1.0]]]))]
    [[[2]], [[[1, 2, 0]]], [[[-1.0, 1.0, 0.0]]]]
    """
    n, dim, k = tables.shape
    counts = (tables != 0).sum(axis=2)
    columns, weights = np.zeros((n, dim, k), np.int64), np.zeros((n, dim, k))
    for t in range(n):
        for a in range(dim):
            used = np.flatnonzero(tables[t, a])
            columns[t, a, :used.size], weights[t, a, :used.size] = used, tables[t, a, used]
    return counts, columns, weights


@kernel(inline="always")
def valid_ids(corners, i, n_points):
    """Whether every corner id of cell ``i`` is a point id (see
    :func:`daxpy.worklets._numba.refuse_bad_ids`)."""
    for j in range(corners.shape[1]):
        if corners[i, j] < 0 or corners[i, j] >= n_points:
            return False
    return True


@kernel(inline="always")
def cell_derivatives(points, values, corners, i, tables, t, dim, check, rows, rhs, g):
    """Write into ``g`` (length ``3 * c``) the derivatives of every component of
    ``values`` inside cell ``i`` (corner ids ``corners[i]``), with ``tables``
    the :func:`sparse` form of the shape's parametric derivatives and ``t`` the
    point of evaluation; ``rows`` ``(3, 3)`` and ``rhs`` ``(3, c)`` are float64
    scratch.

    A component with a non-finite corner value gets NaN (the NaN rule; where
    ``check`` is False the caller knows every value is finite); a singular
    Jacobian gives 0, as VTK does. One flat function: Numba compiles it fast,
    and each cell costs one call.
    """
    k, c = corners.shape[1], values.shape[1]
    counts, columns, weights = tables
    for a in range(dim):
        # sum_j w_j X_j over the non-zero weights, in corner order (combine's order):
        # at a corner of a hexahedron, 2 of its 8 corners per row.
        x = y = z = 0.0
        for q in range(counts[t, a]):
            p, w = corners[i, columns[t, a, q]], weights[t, a, q]
            x += np.float64(points[p, 0]) * w
            y += np.float64(points[p, 1]) * w
            z += np.float64(points[p, 2]) * w
        rows[a, 0], rows[a, 1], rows[a, 2] = x, y, z
        for comp in range(c):
            total = 0.0
            for q in range(counts[t, a]):
                total += np.float64(values[corners[i, columns[t, a, q]], comp]) * weights[t, a, q]
            rhs[a, comp] = total
    if dim == 1:
        # vtkLine divides by each coordinate difference on its own (0 where it is 0).
        for comp in range(c):
            for j in range(3):
                g[3 * comp + j] = rhs[0, comp] / rows[0, j] if rows[0, j] != 0.0 else 0.0
    else:
        if dim == 2:
            # The plane of a surface cell: through its first three corners, as in VTK.
            p0, p1, p2 = corners[i, 0], corners[i, 1], corners[i, 2]
            ax = np.float64(points[p1, 0]) - np.float64(points[p0, 0])
            ay = np.float64(points[p1, 1]) - np.float64(points[p0, 1])
            az = np.float64(points[p1, 2]) - np.float64(points[p0, 2])
            bx = np.float64(points[p2, 0]) - np.float64(points[p0, 0])
            by = np.float64(points[p2, 1]) - np.float64(points[p0, 1])
            bz = np.float64(points[p2, 2]) - np.float64(points[p0, 2])
            rows[2, 0] = ay * bz - az * by
            rows[2, 1] = az * bx - ax * bz
            rows[2, 2] = ax * by - ay * bx
        # solve_rows: det = r2 . (r0 x r1); g = ((b0 r1 - b1 r0) x r2 + b2 (r0 x r1)) / det.
        c0 = rows[0, 1] * rows[1, 2] - rows[0, 2] * rows[1, 1]
        c1 = rows[0, 2] * rows[1, 0] - rows[0, 0] * rows[1, 2]
        c2 = rows[0, 0] * rows[1, 1] - rows[0, 1] * rows[1, 0]
        det = rows[2, 0] * c0
        det += rows[2, 1] * c1
        det += rows[2, 2] * c2
        scale = 1.0 / det if det != 0.0 else 0.0
        for comp in range(c):
            b0, b1 = rhs[0, comp], rhs[1, comp]
            wx = b0 * rows[1, 0] - b1 * rows[0, 0]
            wy = b0 * rows[1, 1] - b1 * rows[0, 1]
            wz = b0 * rows[1, 2] - b1 * rows[0, 2]
            dx = wy * rows[2, 2] - wz * rows[2, 1]
            dy = wz * rows[2, 0] - wx * rows[2, 2]
            dz = wx * rows[2, 1] - wy * rows[2, 0]
            if dim == 3:
                b2 = rhs[2, comp]
                dx, dy, dz = dx + b2 * c0, dy + b2 * c1, dz + b2 * c2
            g[3 * comp], g[3 * comp + 1], g[3 * comp + 2] = dx * scale, dy * scale, dz * scale
    if check:
        for comp in range(c):
            for j in range(k):
                # VTK weighs every corner, zero weights too: a NaN or Inf poisons the cell.
                if not np.isfinite(values[corners[i, j], comp]):
                    g[3 * comp] = g[3 * comp + 1] = g[3 * comp + 2] = np.nan
                    break


@kernel(inline="always")
def finish_point(p, s, starts, counts, total, out, mode):
    """End point ``p`` with its block's sums ``s``: the mean over its cells, or
    (grids of several shapes) a step of the float64 sum across the blocks."""
    if mode == ADD:
        for q in range(s.shape[0]):
            total[p, q] += s[q]
        return
    count = starts[p + 1] - starts[p] if mode == ALONE else counts[p]
    # A conditional, not max(): each builtin overload is compiled once more, cold.
    scale = 1.0 / (count if count > 1 else 1)
    for q in range(s.shape[0]):
        out[p, q] = ((total[p, q] if mode == LAST else 0.0) + s[q]) * scale
