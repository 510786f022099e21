"""The row helpers of the compiled structured contour
(:mod:`daxpy.worklets.contour_cpu`): a row's column bytes, its cut edges and
crossed cells, their counts and spans, and its output points.

A *column* is one byte per x: which of four rows' points (p, p + up, p + out,
p + up + out) are at or above the value, as bits 0 to 3. The passes walk these
bytes, not the rows' floats.

Examples
--------
>>> _ZERO.dtype.name   # the helpers' index arguments: int64 values, not literals
'int64'
"""

from __future__ import annotations

import numpy as np

from ._contour_careful_cpu import HELPER, _careful_flags, _collapsed, _corner_key, _finite_cell
from ._numba import kernel

_ALL_IN = np.uint64(0x0F0F0F0F0F0F0F0F)
"""Eight columns all in, as the word of their bytes."""

_ZERO = np.int64(0)
"""Zero typed as a value, not a literal: a literal argument would make Numba
compile one more specialization of the function called (seconds, cold)."""


@kernel(**HELPER)
def _columns(s, bound, first, up, out, i0, i1, columns):
    """For x from ``i0`` to ``i1``: which of the points p, p + up, p + out,
    p + up + out (p = first + x) are at or above the value, as bits 0 to 3. That is
    the x-column of a row of cells, or of a point row and its y and z neighbours
    (``up``, ``out``: 0 on the grid's last row, or in 2-D)."""
    n = i1 + 1 - i0
    start = first + i0
    # Four row slices and byte arithmetic: a loop the compiler vectorizes, so the
    # passes after it walk bytes, not four rows of floats.
    a, b = s[start:start + n], s[start + up:start + up + n]
    c, d = s[start + out:start + out + n], s[start + up + out:start + up + out + n]
    into = columns[i0:i0 + n]
    for i in range(n):
        into[i] = (np.uint8(a[i] >= bound) | (np.uint8(b[i] >= bound) << 1)
                   | (np.uint8(c[i] >= bound) << 2) | (np.uint8(d[i] >= bound) << 3))


@kernel(**HELPER)
def _fast_flags(column, after):
    """A point's cut edges (bits 1 to 3: x, y, z) from its column and the next
    one, where nothing near is NaN, Inf or equal to the value."""
    return ((((column ^ after) & 1) << 1) | (((column ^ (column >> 1)) & 1) << 2)
            | (((column ^ (column >> 2)) & 1) << 3))


@kernel(**HELPER)
def _spread(column):
    """A column's bits (its rows (y, z): (0, 0), (1, 0), (0, 1), (1, 1)) at the case
    bits of the cell corners at x = 0 (VTK's voxel and pixel corner order)."""
    return (column & 1) | ((column & 2) << 1) | ((column & 4) << 2) | ((column & 8) << 3)


@kernel(**HELPER)
def _quiet_eight(columns, words, i):
    """Whether the eight x from ``i`` (a multiple of 8) are all in or all out, with
    the x after them: one word, not eight bytes (most of a row is quiet). Bytes
    past the columns filled may be stale: they can only stop a skip, or allow one
    past the x walked."""
    word = words[i >> 3]
    return (word == 0 or word == _ALL_IN) and columns[i + 8] == (word & 15)


@kernel(**HELPER)
def _point_row(s, value, bound, j, k, nx, ny, nz, zc, careful, i0, i1, lo, hi, t, start,
               columns, words):
    """Point row (j, k): counts its outputs over ``[i0, i1]`` (``start < 0``),
    returning their number and span, or writes them from ``start``; ``words``: the
    bytes of ``columns`` eight at a time."""
    nxy = nx * ny
    first = j * nx + k * nxy
    up = nx if j + 1 < ny else 0
    out = nxy if k + 1 < nz else 0
    count, low, high = 0, nx, -1
    if careful is None or not careful:
        _columns(s, bound, first, up, out, i0, i1 + 1 if i1 + 1 < nx - 1 else nx - 1,
                 columns)
    i = i0 - 1
    while i < i1:
        i += 1
        if careful is not None and careful:
            flags = _careful_flags(s, value, bound, i, j, k, nx, ny, nz, zc)
        else:
            if i & 7 == 0 and _quiet_eight(columns, words, i):
                i += 7
                continue
            column = columns[i]
            after = columns[i + 1] if i + 1 < nx else column
            if column == after and (column == 0 or column == 15):
                continue  # all in or all out: most of a span, passed by the one test
            flags = _fast_flags(column, after)
        if flags == 0:
            continue
        low, high = (i if i < low else low), i
        if start < 0:
            count += ((flags & 1) + ((flags >> 1) & 1) + ((flags >> 2) & 1)
                      + ((flags >> 3) & 1))
            continue
        p = first + i
        steps = (0, 1, up, out)
        for bit in range(4):
            if flags & (1 << bit):
                q = p + steps[bit]
                lo[start + count], hi[start + count] = p, q
                low_value = np.float64(s[p])
                # The NumPy implementation's float64 arithmetic, in its order.
                t[start + count] = 0.0 if bit == 0 else (
                    (value - low_value) / (np.float64(s[q]) - low_value))
                count += 1
    return count, low, high


@kernel(**HELPER)
def _case(columns, i, full):
    """The case of the cell at x = i from its two columns (0 where it is all in or
    all out)."""
    case = (_spread(columns[i]) | (_spread(columns[i + 1]) << 1)) & full
    return 0 if case == full else case


@kernel(**HELPER)
def _count_cells(s, value, bound, j, k, nx, ny, zc, careful, counts, table, edges, offsets,
                 columns):
    """Cell row (j, k)'s output cells and the span of its crossed cells (on the
    careful path: cells collapsing on a snapped point are not counted)."""
    per = table.shape[2]
    full = (1 << 4 * zc) - 1
    nxy = nx * ny
    keys = np.empty((per, 3), np.int64)
    count, low, high = 0, nx, -1
    first = j * nx + k * nxy
    _columns(s, bound, first, nx, nxy if zc == 2 else 0, _ZERO, nx - 1, columns)
    for i in range(nx - 1):
        case = _case(columns, i, full)
        if case == 0 or (careful and not _finite_cell(s, i, j, k, nx, nxy, zc)):
            continue
        low, high = min(low, i), i
        for n in range(counts[case]):
            for m in range(per):
                e = table[case, n, m]
                keys[m, 0], keys[m, 1], keys[m, 2] = _corner_key(
                    s, value, first + i, offsets, edges[e, 0], edges[e, 1], careful)
            count += 0 if careful and _collapsed(keys) else 1
    return count, low, high
