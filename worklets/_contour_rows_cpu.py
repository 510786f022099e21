"""The row helpers of the compiled structured contour
(:mod:`daxpy.worklets.contour_cpu`): a row's column bytes, its cut edges and
crossed cells, their counts and spans, and its output points.

A *column* is one byte per x: which of eight rows' points are at or above the
value (:func:`_columns`). The passes walk these bytes, not the rows' floats.

Examples
--------
>>> _ZERO.dtype.name   # the helpers' index arguments: int64 values, not literals
'int64'
"""

from __future__ import annotations

import numpy as np

from ._contour_careful_cpu import HELPER, _careful_flags, _collapsed, _corner_key, _finite_cell
from ._numba import kernel

_ALL_IN = np.uint64(0xFFFFFFFFFFFFFFFF)
"""Eight columns all in, as the word of their bytes."""

_ZERO = np.int64(0)
"""Zero typed as a value, not a literal: a literal argument would make Numba
compile one more specialization of the function called (seconds, cold)."""


_BLOCK = 8
"""Rows per block (which share one row buffer); a thread takes every n-th block:
the rows that emit anything are bunched where the surface is, and neighbouring
blocks go to different threads."""


@kernel(**HELPER)
def _columns(s, bound, first, up, out, up2, out2, i0, i1, columns):
    """For x from ``i0`` to ``i1``: which of eight point rows (p = first + x) are at
    or above the value, as bits 0 to 7: p, p + up, p + out, p + up + out (a point
    row with its y and z neighbours, or a cell row's four point rows), then
    p + up + up2, p + out + out2, p + up + out + up2, p + up + out + out2 (the far
    ends of the y and z edges from those rows that the cell row does not have).
    ``up``, ``out``, ``up2``, ``out2``: 0 past the grid's last row, or in 2-D (the
    row itself again: no edge); ``up2 = out2 = 0`` where only bits 0 to 3 matter.
    One helper for every pass: each is compiled once more, cold."""
    n = i1 + 1 - i0
    p = first + i0
    far = up + out
    # Eight row slices and byte arithmetic: a loop the compiler vectorizes, so the
    # passes after it walk bytes, not rows of floats.
    r0, r1 = s[p:p + n], s[p + up:p + up + n]
    r2, r3 = s[p + out:p + out + n], s[p + far:p + far + n]
    r4, r5 = s[p + up + up2:p + up + up2 + n], s[p + out + out2:p + out + out2 + n]
    r6, r7 = s[p + far + up2:p + far + up2 + n], s[p + far + out2:p + far + out2 + n]
    into = columns[i0:i0 + n]
    for i in range(n):
        into[i] = (np.uint8(r0[i] >= bound) | (np.uint8(r1[i] >= bound) << 1)
                   | (np.uint8(r2[i] >= bound) << 2) | (np.uint8(r3[i] >= bound) << 3)
                   | (np.uint8(r4[i] >= bound) << 4) | (np.uint8(r5[i] >= bound) << 5)
                   | (np.uint8(r6[i] >= bound) << 6) | (np.uint8(r7[i] >= bound) << 7))


@kernel(**HELPER)
def _fast_flags(column, after):
    """A point's cut edges (bits 1 to 3: x, y, z) from its column and the next
    one, where nothing near is NaN, Inf or equal to the value."""
    return ((((column ^ after) & 1) << 1) | (((column ^ (column >> 1)) & 1) << 2)
            | (((column ^ (column >> 2)) & 1) << 3))


_SPREAD = np.array([(column & 1) | ((column & 2) << 1) | ((column & 4) << 2) | ((column & 8) << 3)
                    for column in range(256)], np.int64)
"""Each column's bits 0 to 3 (its rows (y, z): (0, 0), (1, 0), (0, 1), (1, 1)) at the
case bits of the cell corners at x = 0 (VTK's voxel and pixel corner order): a
case is ``_SPREAD[column] | _SPREAD[after] << 1``. A table, not a function: each
function is compiled once more, cold."""


@kernel(**HELPER)
def _quiet_eight(columns, words, i):
    """Whether the eight x from ``i`` (a multiple of 8) are all in or all out, with
    the x after them: one word, not eight bytes (most of a row is quiet). Bytes
    past the columns filled may be stale: they can only stop a skip, or allow one
    past the x walked."""
    word = words[i >> 3]
    return (word == 0 or word == _ALL_IN) and columns[i + 8] == (word & 255)


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
        _columns(s, bound, first, up, out, _ZERO, _ZERO, i0,
                 i1 + 1 if i1 + 1 < nx - 1 else nx - 1, columns)
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
            if column == after and (column == 0 or column == 255):
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
    case = (_SPREAD[columns[i]] | (_SPREAD[columns[i + 1]] << 1)) & full
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
    _columns(s, bound, first, nx, nxy if zc == 2 else 0, _ZERO, _ZERO, _ZERO, nx - 1,
             columns)
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
