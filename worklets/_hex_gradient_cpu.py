"""The point gradient on hexahedra, as compiled CPU code that knows the shape.

The terms are those of the generic kernel (:mod:`daxpy.worklets.gradient_cpu`),
added in the same order, so the results are its bits. At a hexahedron's corner
``m`` the trilinear Jacobian's rows are the three edges from that corner, to
its neighbours ``m ^ 1``, ``m ^ 3`` and ``m ^ 4``, each oriented along its
parametric axis; the field's parametric derivatives are the same edges of the
values. Two ways to walk them:

- by cells (the usual case): the points are cut into a few ranges per thread;
  each range walks, in ascending order, the cells its points use, 64 at a time:
  the cells' corners are gathered once into small tables, the derivatives at
  all 8 corners are computed in SIMD lanes across the 64 cells, and each
  point's float64 sum grows cell after cell, in the links' order. The sums of
  a range (with the ranges in flight, under the output's size) are its only
  buffer;
- by points, where a range's cells are scattered over the grid (cells not
  numbered along the points), so that walking them would cost more than
  visiting each point's cells through the links.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import HEXAHEDRON
>>> from daxpy.worklets.gradient_cpu import unstructured_point_gradient
>>> cube = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
...                  [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], float)
>>> g = daxpy.UnstructuredGrid.from_blocks(cube, {HEXAHEDRON: [list(range(8))]})
>>> unstructured_point_gradient(g, cube @ [1.0, 2.0, 3.0])[6].tolist()
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._derivatives_cpu import BLOCK, finish_point
from ._numba import kernel, threads

LANES = 64
"""Cells whose corner derivatives are computed together, one per SIMD lane."""


@kernel(inline="always")
def _diff(h, far, p, q):
    """The edge from corner value ``p`` to its neighbour's ``q`` along a parametric
    axis (bit ``far`` of ``h``: ``p`` is the upper end), in float64. The generic
    kernel forms it as ``(0.0 + a * -1) + b``: the same difference up to the sign
    of a zero, which no output shows, as every point's sum starts from +0.0."""
    return np.float64(p) - np.float64(q) if h & far else np.float64(q) - np.float64(p)


@kernel(inline="always")
def _upper(m):
    """Bit ``k``: corner ``m`` is the upper end of its edge along parametric axis ``k``."""
    return ((m ^ (m >> 1)) & 1) | (m & 6)


@kernel(inline="always")
def _cofactors(r00, r01, r02, r10, r11, r12, r20, r21, r22):
    """The cofactors of the Jacobian's last row and the inverse of its determinant
    (0 where it is singular): cell_derivatives' closed form, its operations in its
    order (inlined: the lanes' loop stays one loop without calls)."""
    c0 = r01 * r12 - r02 * r11
    c1 = r02 * r10 - r00 * r12
    c2 = r00 * r11 - r01 * r10
    det = r20 * c0
    det += r21 * c1
    det += r22 * c2
    return c0, c1, c2, (1.0 / det if det != 0.0 else 0.0)


@kernel()
def _hex_points(points, values, corners, starts, cells, check, counts, total, out, mode,
                lo, hi):
    c, n, bad = values.shape[1], points.shape[0], 0
    s = np.empty(out.shape[1])
    for p in range(lo, hi):
        s[:] = 0.0
        px, py, pz = points[p, 0], points[p, 1], points[p, 2]
        for e in range(starts[p], starts[p + 1]):
            i = cells[e]
            # Branch-free: the first corner holding p, and whether every id is in range.
            m, ok = 8, True
            for j in range(7, -1, -1):
                v = corners[i, j]
                m = j if v == p else m
                ok &= (v >= 0) & (v < n)
            if m == 8 or not ok:
                bad += 1  # the ids changed since the links were built
                continue
            a, b, d, h = corners[i, m ^ 1], corners[i, m ^ 3], corners[i, m ^ 4], _upper(m)
            r00, r01, r02 = (_diff(h, 1, px, points[a, 0]), _diff(h, 1, py, points[a, 1]),
                             _diff(h, 1, pz, points[a, 2]))
            r10, r11, r12 = (_diff(h, 2, px, points[b, 0]), _diff(h, 2, py, points[b, 1]),
                             _diff(h, 2, pz, points[b, 2]))
            r20, r21, r22 = (_diff(h, 4, px, points[d, 0]), _diff(h, 4, py, points[d, 1]),
                             _diff(h, 4, pz, points[d, 2]))
            c0, c1, c2, scale = _cofactors(r00, r01, r02, r10, r11, r12, r20, r21, r22)
            for comp in range(c):
                vp = values[p, comp]
                f0, f1 = _diff(h, 1, vp, values[a, comp]), _diff(h, 2, vp, values[b, comp])
                f2 = _diff(h, 4, vp, values[d, comp])
                wx = f0 * r10 - f1 * r00
                wy = f0 * r11 - f1 * r01
                wz = f0 * r12 - f1 * r02
                gx = (wy * r22 - wz * r21 + f2 * c0) * scale
                gy = (wz * r20 - wx * r22 + f2 * c1) * scale
                gz = (wx * r21 - wy * r20 + f2 * c2) * scale
                if check:
                    for j in range(8):
                        # The NaN rule: every corner counts, as in cell_derivatives.
                        if not np.isfinite(values[corners[i, j], comp]):
                            gx = gy = gz = np.nan
                s[3 * comp] += gx
                s[3 * comp + 1] += gy
                s[3 * comp + 2] += gz
        finish_point(p, s, starts, counts, total, out, mode)
    return bad


@kernel()
def _gather(points, values, corners, i0, nl, xyz, vals):
    """Corner coordinates and values of cells ``i0 .. i0 + nl`` into lane tables
    ``(8, 3, LANES)`` and ``(8, c, LANES)``; how many cells hold an id out of range
    (read as point 0: the call then fails)."""
    n, bad = points.shape[0], 0
    for lane in range(nl):
        ok = True
        for m in range(8):
            p = corners[i0 + lane, m]
            inside = (p >= 0) & (p < n)
            ok &= inside
            p = p if inside else 0
            for x in range(3):
                xyz[m, x, lane] = points[p, x]
            for comp in range(values.shape[1]):
                vals[m, comp, lane] = values[p, comp]
        bad += not ok
    return bad


@kernel()
def _lanes(xyz, vals, grad, nl, m, comp, u0, l0, u1, l1, u2, l2):
    """Component ``comp``'s derivatives at corner ``m`` of every lane's cell, the
    rows running from the lower (``l``) to the upper (``u``) corner of each axis.

    One loop without calls, reading two tables and writing one: LLVM turns it
    into SIMD code (the Jacobian is recomputed per component rather than
    stored, as more tables keep the loop scalar)."""
    for k in range(nl):
        r00 = xyz[u0, 0, k] - xyz[l0, 0, k]
        r01 = xyz[u0, 1, k] - xyz[l0, 1, k]
        r02 = xyz[u0, 2, k] - xyz[l0, 2, k]
        r10 = xyz[u1, 0, k] - xyz[l1, 0, k]
        r11 = xyz[u1, 1, k] - xyz[l1, 1, k]
        r12 = xyz[u1, 2, k] - xyz[l1, 2, k]
        r20 = xyz[u2, 0, k] - xyz[l2, 0, k]
        r21 = xyz[u2, 1, k] - xyz[l2, 1, k]
        r22 = xyz[u2, 2, k] - xyz[l2, 2, k]
        c0, c1, c2, scale = _cofactors(r00, r01, r02, r10, r11, r12, r20, r21, r22)
        f0 = vals[u0, comp, k] - vals[l0, comp, k]
        f1 = vals[u1, comp, k] - vals[l1, comp, k]
        f2 = vals[u2, comp, k] - vals[l2, comp, k]
        wx = f0 * r10 - f1 * r00
        wy = f0 * r11 - f1 * r01
        wz = f0 * r12 - f1 * r02
        grad[m, 3 * comp, k] = (wy * r22 - wz * r21 + f2 * c0) * scale
        grad[m, 3 * comp + 1, k] = (wz * r20 - wx * r22 + f2 * c1) * scale
        grad[m, 3 * comp + 2, k] = (wx * r21 - wy * r20 + f2 * c2) * scale


@kernel()
def _corner_derivatives(vals, grad, nl, check, xyz):
    """Every lane's derivatives at its 8 corners; the NaN rule where ``check``."""
    for m in range(8):
        h = _upper(m)
        u0, l0 = (m, m ^ 1) if h & 1 else (m ^ 1, m)
        u1, l1 = (m, m ^ 3) if h & 2 else (m ^ 3, m)
        u2, l2 = (m, m ^ 4) if h & 4 else (m ^ 4, m)
        for comp in range(vals.shape[1]):
            _lanes(xyz, vals, grad, nl, m, comp, u0, l0, u1, l1, u2, l2)
    if check:
        for comp in range(vals.shape[1]):
            for k in range(nl):
                for m in range(8):
                    if not np.isfinite(vals[m, comp, k]):
                        grad[:, 3 * comp:3 * comp + 3, k] = np.nan
                        break


@kernel()
def _add_corners(corners, i0, nl, lo, hi, grad, sums, seen):
    """Add each lane's corner derivatives to the sums of its corners in ``lo .. hi``
    (a grid's cells never repeat a point, so each corner is its point's term)."""
    for k in range(nl):
        for m in range(8):
            p = corners[i0 + k, m]
            if p < lo or p >= hi:
                continue
            seen[p - lo] += 1
            for q in range(sums.shape[1]):
                sums[p - lo, q] += grad[m, q, k]


@kernel()
def _walk_cells(points, values, corners, starts, check, counts, total, out, mode, lo, hi,
                first, last):
    c = values.shape[1]
    sums, seen = np.zeros((hi - lo, 3 * c)), np.zeros(hi - lo, np.int32)
    xyz, vals = np.empty((8, 3, LANES)), np.empty((8, c, LANES))
    grad = np.empty((8, 3 * c, LANES))
    bad = 0
    for i0 in range(first, last + 1, LANES):
        nl = min(LANES, last + 1 - i0)
        bad += _gather(points, values, corners, i0, nl, xyz, vals)
        _corner_derivatives(vals, grad, nl, check, xyz)
        _add_corners(corners, i0, nl, lo, hi, grad, sums, seen)
    for p in range(lo, hi):
        # A point met more or fewer times than its links say: the ids changed since.
        bad += seen[p - lo] != starts[p + 1] - starts[p]
        finish_point(p, sums[p - lo], starts, counts, total, out, mode)
    return bad


@kernel(parallel=True)
def _hex_kernel(points, values, corners, starts, cells, check, counts, total, out, mode,
                size, scattered):
    """Each task's count of bad ids, in its own slot (no parfor reduction: Numba's
    reduction analysis of this loop fails on Python 3.12's bytecode, "unexpected
    cycle in lookup()"). ``scattered`` None: the tasks whose cells are not
    scattered, walking them (-1 in the others' slots); else the tasks it marks,
    by points. Numba prunes the branch not taken before typing, so a grid whose
    cells follow its points never compiles the walk by points (seconds, cold)."""
    n = out.shape[0]
    tasks = (n + size - 1) // size
    # np.empty, not np.zeros: in a parallel function np.zeros is a parallel loop
    # of its own, compiled as such. Every slot is written.
    bad = np.empty(tasks, np.int64)
    for t in prange(tasks):
        lo, hi = t * size, min(n, (t + 1) * size)
        if scattered is None:
            # The links list each point's cells in ascending order: the range's
            # cells lie between its points' first and last ones (int64 from the
            # start: a literal -1 would compile _walk_cells twice).
            first, last = corners.shape[0], np.int64(-1)
            for p in range(lo, hi):
                if starts[p + 1] > starts[p]:
                    first = min(first, cells[starts[p]])
                    last = max(last, cells[starts[p + 1] - 1])
            bad[t] = -1
            if 8 * (last - first + 1) <= 2 * (starts[hi] - starts[lo]):
                bad[t] = _walk_cells(points, values, corners, starts, check, counts, total,
                                     out, mode, lo, hi, first, last)
        else:
            here = 0
            if scattered[t]:
                for b in range(lo, hi, BLOCK):
                    here += _hex_points(points, values, corners, starts, cells, check,
                                        counts, total, out, mode, b, min(hi, b + BLOCK))
            bad[t] = here
    return bad


def hex_point_gradient(points, values, corners, starts, cells, check, counts, total, out,
                       mode) -> int:
    """Write the point gradient of ``values`` over hexahedra ``corners`` into ``out``
    (or, ``mode`` ADD, into the float64 ``total``; see
    :func:`daxpy.worklets._derivatives_cpu.finish_point`).

    Parameters
    ----------
    points : numpy.ndarray, shape (n, 3)
    values : numpy.ndarray, shape (n, c)
    corners : numpy.ndarray, shape (n_cells, 8)
        Corner point ids, in VTK's hexahedron order.
    starts, cells : numpy.ndarray
        Every point's cells, ascending (:func:`daxpy.worklets._links_cpu.block_links`).
    check : bool
        Whether ``values`` may hold NaN or infinities (the NaN rule is applied).
    counts, total, out, mode
        As :func:`~daxpy.worklets._derivatives_cpu.finish_point` reads them.

    Returns
    -------
    int
        How many cells or links hold ids changed since the links were built (0).

    Examples
    --------
    >>> import numpy as np
    >>> from daxpy.worklets._derivatives_cpu import ALONE
    >>> from daxpy.worklets._links_cpu import build_links
    >>> cube = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
    ...                  [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], float)
    >>> starts, cells = build_links(np.arange(8), np.array([0, 8]), 8, 1)
    >>> out = np.empty((8, 3))
    >>> hex_point_gradient(cube, cube[:, :1] * 2, np.arange(8)[None], starts, cells, False,
    ...                    np.zeros(1, np.int64), np.zeros((1, 1)), out, ALONE)
    0
    >>> out[0].tolist()
    [2.0, 0.0, 0.0]
    """
    # Three ranges per thread balance the load, and the sums of the ranges in
    # flight (one per thread, 8 bytes a sum, 4 a count) stay under the output's
    # size even for float32 (4 bytes a value).
    size = max(-(-out.shape[0] // (3 * threads())), 1)
    bad = _hex_kernel(points, values, corners, starts, cells, check, counts, total, out, mode,
                      size, None)
    scattered = bad < 0
    if scattered.any():
        # Each task writes its own points, in either call: the same bits.
        bad[scattered] = _hex_kernel(points, values, corners, starts, cells, check, counts,
                                     total, out, mode, size, scattered)[scattered]
    return int(bad.sum())
