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

The ranges run on Python threads, each in one compiled function that releases
the GIL (one function per walk: every call between compiled functions links
and optimizes the callee's code again in the caller, which is what a first
use waits for).

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

from ._blocks_cpu import block_kernel, over_blocks
from ._derivatives_cpu import finish_point
from ._numba import count_type, kernel, threads

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


@block_kernel()
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


@block_kernel()
def _walk_cells(points, values, corners, starts, cells, check, counts, total, out, mode, lo,
                hi, spread, components):
    """Points ``lo .. hi`` by their cells' walk; or nothing written, and -1 returned,
    where the cells are scattered: more than ``spread`` / 8 times as many cells lie
    between the range's first and last as it has links (walking them would cost more
    than the links' visit, :func:`_hex_points`).

    ``components`` is :func:`~daxpy.worklets._numba.count_type` of the component
    count: the walk is compiled once per count, its loops unrolled (a first use
    0.3 s shorter, the walk 13% faster, than with the count read from ``values``
    at run time)."""
    n, c = points.shape[0], len(components)
    # The first and last cell: the links list each point's cells in ascending order,
    # so the range's cells lie between its points' first and last ones. (Here, not
    # in a kernel of its own: each costs a first use about 0.2 s to compile.)
    first, last = np.int64(corners.shape[0]), np.int64(-1)
    for p in range(lo, hi):
        # Comparisons, not min and max: each of those compiles a function of its own.
        if starts[p + 1] > starts[p]:
            if cells[starts[p]] < first:
                first = np.int64(cells[starts[p]])
            if cells[starts[p + 1] - 1] > last:
                last = np.int64(cells[starts[p + 1] - 1])
    if 8 * (last - first + 1) > spread * (starts[hi] - starts[lo]):
        return -1
    # np.empty and loops: np.zeros and slice assignments each cost compile time.
    sums, seen = np.empty((hi - lo, 3 * c)), np.empty(hi - lo, np.int32)
    for j in range(hi - lo):
        seen[j] = 0
        for q in range(3 * c):
            sums[j, q] = 0.0
    xyz, vals = np.empty((8, 3, LANES)), np.empty((8, c, LANES))
    grad = np.empty((8, 3 * c, LANES))
    bad = 0
    for i0 in range(first, last + 1, LANES):
        nl = LANES if last + 1 - i0 > LANES else last + 1 - i0
        # The cells' corner coordinates and values into the lane tables (an id out
        # of range reads point 0, and counts: the call then fails).
        for k in range(nl):
            ok = True
            for m in range(8):
                p = corners[i0 + k, m]
                inside = (p >= 0) & (p < n)
                ok &= inside
                p = p if inside else 0
                for x in range(3):
                    xyz[m, x, k] = points[p, x]
                for comp in range(c):
                    vals[m, comp, k] = values[p, comp]
            bad += not ok
        for m in range(8):
            h = _upper(m)
            u0, l0 = (m, m ^ 1) if h & 1 else (m ^ 1, m)
            u1, l1 = (m, m ^ 3) if h & 2 else (m ^ 3, m)
            u2, l2 = (m, m ^ 4) if h & 4 else (m ^ 4, m)
            for comp in range(c):
                # Corner m's derivatives in every lane, the rows running from the
                # lower (l) to the upper (u) corner of each axis: a loop without
                # calls, reading two tables and writing one, which LLVM turns into
                # SIMD code (the Jacobian is recomputed per component rather than
                # stored, as more tables keep the loop scalar).
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
                    c0, c1, c2, scale = _cofactors(r00, r01, r02, r10, r11, r12, r20, r21,
                                                   r22)
                    f0 = vals[u0, comp, k] - vals[l0, comp, k]
                    f1 = vals[u1, comp, k] - vals[l1, comp, k]
                    f2 = vals[u2, comp, k] - vals[l2, comp, k]
                    wx = f0 * r10 - f1 * r00
                    wy = f0 * r11 - f1 * r01
                    wz = f0 * r12 - f1 * r02
                    grad[m, 3 * comp, k] = (wy * r22 - wz * r21 + f2 * c0) * scale
                    grad[m, 3 * comp + 1, k] = (wz * r20 - wx * r22 + f2 * c1) * scale
                    grad[m, 3 * comp + 2, k] = (wx * r21 - wy * r20 + f2 * c2) * scale
        if check is not None and check:
            # The NaN rule: a non-finite corner value poisons its cell's component
            # (check None: the field is finite, and Numba drops this code unseen).
            for comp in range(c):
                for k in range(nl):
                    for m in range(8):
                        if not np.isfinite(vals[m, comp, k]):
                            for j in range(8):
                                for x in range(3):
                                    grad[j, 3 * comp + x, k] = np.nan
                            break
        # Each lane's corner derivatives onto the sums of its corners in lo .. hi
        # (a grid's cells never repeat a point, so each corner is its point's term).
        for k in range(nl):
            for m in range(8):
                p = corners[i0 + k, m]
                if p < lo or p >= hi:
                    continue
                seen[p - lo] += 1
                # Three sums per step: a loop over all 3 c of them, LLVM vectorizes
                # 8 times over (once per corner), for nothing at 1 to 3 components.
                for comp in range(c):
                    sums[p - lo, 3 * comp] += grad[m, 3 * comp, k]
                    sums[p - lo, 3 * comp + 1] += grad[m, 3 * comp + 1, k]
                    sums[p - lo, 3 * comp + 2] += grad[m, 3 * comp + 2, k]
    for p in range(lo, hi):
        # A point met more or fewer times than its links say: the ids changed since.
        bad += seen[p - lo] != starts[p + 1] - starts[p]
        finish_point(p, sums[p - lo], starts, counts, total, out, mode)
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
    workers = threads()
    n = out.shape[0]
    size = max(-(-n // (3 * workers)), 1)

    def task(lo):
        hi = min(n, lo + size)
        # None, not False, for a finite field: the walk then compiles without the
        # NaN rule's code. Cells spread over more than twice the links' cell
        # visits (spread 2): by points.
        bad = _walk_cells(points, values, corners, starts, cells, check or None, counts,
                          total, out, mode, lo, hi, 2, count_type(values.shape[1]))
        if bad >= 0:
            return bad
        return _hex_points(points, values, corners, starts, cells, check, counts, total, out,
                           mode, lo, hi)

    # Python threads over nogil kernels, not a prange: Numba wraps a parallel
    # loop's body in three more modules (gufunc, its wrapper, the launcher) and
    # the caller's, each linking and optimizing the walk's code anew: 6.6 s of a
    # first use, against 1.5 for the walk alone (2 cores, loaded). Each task
    # writes its own points: the bits do not depend on the threads.
    changed = np.zeros(-(-n // size), np.int64)

    def ranges(first, last):
        for r in range(first, last):
            changed[r] = task(r * size)

    over_blocks(ranges, changed.shape[0])
    return int(changed.sum())
