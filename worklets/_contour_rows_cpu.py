"""The row helpers of the compiled structured contour
(:mod:`daxpy.worklets.contour_cpu`): a row's column bytes, and the test that
skips eight quiet x at once.

A *column* is one byte per x: which of eight rows' points are at or above the
value (:func:`_columns`). The passes walk these bytes, not the rows' floats.

Examples
--------
>>> _ZERO.dtype.name   # the helpers' index arguments: int64 values, not literals
'int64'
"""

from __future__ import annotations

import numpy as np

from ._blocks_cpu import block_kernel
from ._contour_careful_cpu import HELPER
from ._numba import kernel

_ALL_IN = np.uint64(0xFFFFFFFFFFFFFFFF)
"""Eight columns all in, as the word of their bytes."""

_ZERO = np.int64(0)
"""Zero typed as a value, not a literal: a literal argument would make Numba
compile one more specialization of the function called (seconds, cold)."""


_BLOCK = 64
"""Rows per block (which share one row buffer); a thread takes every n-th block:
the rows that emit anything are bunched where the surface is, and neighbouring
blocks go to different threads. 64, not 8: each row writes its counts, spans and
screen flag into arrays shared by every thread (one byte a row for the flag), and
with 8 a block, 8 threads working side by side wrote the same cache lines."""


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
def _next_columns(s, bound, first, up, out, n, columns):
    """The count's :func:`_columns` of the point row (p = first + x) from those of the
    row before it in its plane (``up = out2 = up2 = 0`` there): its bits 1 and 3 are
    this row's 0 and 2, so only rows p + up and p + up + out are read. Bits 4 to 7
    are bits 1, 2, 3, 3 (the far rows are those rows again)."""
    r1, r3 = s[first + up:first + up + n], s[first + up + out:first + up + out + n]
    into = columns[:n]
    for i in range(n):
        near = (((into[i] >> 1) & 5) | (np.uint8(r1[i] >= bound) << 1)
                | (np.uint8(r3[i] >= bound) << 3))
        into[i] = near | ((near & 14) << 3) | ((near & 8) << 4)


@kernel(**HELPER)
def _shifted_columns(s, bound, first, up, out, up2, out2, i0, i1, held0, held1, columns):
    """The write's :func:`_columns` of the point row (p = first + x), x from ``i0`` to
    ``i1``, where ``columns`` hold those of the row before it in its plane from
    ``held0`` to ``held1``: five of its eight rows are that row's (its bits 1, 4, 3,
    6, 7 become bits 0, 1, 2, 3, 5), so over the x both have only rows p + up + up2,
    p + up + out + up2 and p + up + out + out2 (bits 4, 6, 7) are read and compared;
    the x before and after are made as :func:`_columns` makes them."""
    a, b = (i0 if i0 > held0 else held0), (i1 if i1 < held1 else held1)
    if a > b:   # nothing held in the span: all made anew
        a, b = i1 + 1, i1
    if i0 < a:
        _columns(s, bound, first, up, out, up2, out2, i0, a - 1, columns)
    if b < i1:
        _columns(s, bound, first, up, out, up2, out2, b + 1, i1, columns)
    n = b + 1 - a
    p = first + a
    far = up + out
    r4, r6 = s[p + up + up2:p + up + up2 + n], s[p + far + up2:p + far + up2 + n]
    r7 = s[p + far + out2:p + far + out2 + n]
    into = columns[a:a + n]
    for i in range(n):
        held = into[i]
        into[i] = (((held >> 1) & 1) | ((held >> 3) & 2) | ((held >> 1) & 4)
                   | ((held >> 3) & 8) | ((held >> 2) & 32)
                   | (np.uint8(r4[i] >= bound) << 4) | (np.uint8(r6[i] >= bound) << 6)
                   | (np.uint8(r7[i] >= bound) << 7))


@kernel(**HELPER)
def _plane_columns(px, py, pz, j, k, dj, dk, dj2, dk2, bound, i0, i1, columns):
    """:func:`_columns` of a plane's signed distance made from its axes' terms where
    it is read (no field of the grid's size): point (i, j, k)'s value is
    ``(pz[k] + py[j]) + px[i]``, each sum rounded on its own, the bits of the
    distance field the slice would cut. The eight rows are (j, k), (j + dj, k),
    (j, k + dk), (j + dj, k + dk), (j + dj + dj2, k), (j, k + dk + dk2),
    (j + dj + dj2, k + dk), (j + dj, k + dk + dk2): ``dj``, ``dk`` 0 past the grid's
    last row or plane, as ``up`` and ``out`` are."""
    c0, c1 = pz[k] + py[j], pz[k] + py[j + dj]
    c2, c3 = pz[k + dk] + py[j], pz[k + dk] + py[j + dj]
    c4, c5 = pz[k] + py[j + dj + dj2], pz[k + dk + dk2] + py[j]
    c6, c7 = pz[k + dk] + py[j + dj + dj2], pz[k + dk + dk2] + py[j + dj]
    n = i1 + 1 - i0
    xs = px[i0:i0 + n]
    into = columns[i0:i0 + n]
    for i in range(n):
        x = xs[i]
        into[i] = (np.uint8(c0 + x >= bound) | (np.uint8(c1 + x >= bound) << 1)
                   | (np.uint8(c2 + x >= bound) << 2) | (np.uint8(c3 + x >= bound) << 3)
                   | (np.uint8(c4 + x >= bound) << 4) | (np.uint8(c5 + x >= bound) << 5)
                   | (np.uint8(c6 + x >= bound) << 6) | (np.uint8(c7 + x >= bound) << 7))


@kernel(**HELPER)
def _plane_change(px, c, bound, rising):
    """Along a plane's row (values ``c + px[i]``, monotone as ``px`` is): the first x
    at or above ``bound`` (``rising``), else the last; -1 where none is. Each x
    tested is computed as the full row computes it, so a bisection finds the bits
    the full row would have."""
    low, high = 0, px.shape[0] - 1
    start, end = c + px[low] >= bound, c + px[high] >= bound
    if start == end:
        return (low if rising else high) if end else -1
    while high - low > 1:   # on the start's side at low, on the end's at high
        middle = (low + high) >> 1
        if (c + px[middle] >= bound) == end:
            high = middle
        else:
            low = middle
    return high if rising else low


@block_kernel()
def _plane_changes(px, py, pz, bound, ny, changes, first, last):
    """Blocks ``first`` to ``last`` of :data:`_BLOCK` point rows of a plane's rows:
    each row's :func:`_plane_change` (rising as ``px`` rises), found once here where
    the count found it for each of the four cell rows a point row is a corner row
    of, and once more to screen it (on 2 cores, the 256³ slice's count pass took
    3.5-3.8 ms that way, 2.8-3.0 with this pass)."""
    n, nx = changes.shape[0], px.shape[0]
    rising = px[0] <= px[nx - 1]
    for block in range(first, last):
        for r in range(block * _BLOCK, min(n, (block + 1) * _BLOCK)):
            changes[r] = _plane_change(px, pz[r // ny] + py[r % ny], bound, rising)


@kernel(**HELPER)
def _screen_plane_row(px, c, bound, equal, zero, x):
    """:func:`~daxpy.worklets._contour_careful_cpu._screen_row` of a plane's distance
    along a row, ``c + px[i]`` (``c``: the row's ``pz[k] + py[j]``), in a few steps:
    monotone, its extremes are its ends (finite, or not), and the values equal to
    the value (``equal``, which is ``bound`` for float64) are a run next to its
    change of side ``x`` (:func:`_plane_changes`), starting at the first x at or
    above it (rising) or ending at the last (falling). (``x`` is found as ``px``
    rises; where the row's values say otherwise, they are all equal, and any x of
    the row screens it alike.)"""
    n = px.shape[0]
    first, last = c + px[0], c + px[n - 1]
    if (first - first != zero) or (last - last != zero):
        return True
    return x >= 0 and c + px[x] == equal


@kernel(**HELPER)
def _plane_span(px, py, pz, changes, j, k, dj, dk, bound, nx, ny):
    """``(a, end)``: the x a count walks on the point row (j, k) of a plane's rows, its
    cell row's four point rows (j, k), (j + dj, k), (j, k + dk), (j + dj, k + dk).
    Along x each row's bits change at most once (monotone values), where
    ``changes`` says (:func:`_plane_changes`); before the first change and after the
    last, every x has the same column, which has no output if the four rows agree
    there. ``a > end``: nothing to walk."""
    rising = px[0] <= px[nx - 1]
    first, last = nx, -1
    before, after = 0, 0   # the four rows' bits at x = 0 and at x = nx - 1
    for m in range(4):
        c = pz[k + (m >> 1) * dk] + py[j + (m & 1) * dj]
        low, high = c + px[0] >= bound, c + px[nx - 1] >= bound
        before |= np.int64(low) << m
        after |= np.int64(high) << m
        if low != high:
            x = changes[(j + (m & 1) * dj) + ny * (k + (m >> 1) * dk)]
            # The first x of the row's new side: rising, x itself; falling, after it.
            change = x if rising else x + 1
            first = change if change < first else first
            last = change if change > last else last
    a = 0 if before != 0 and before != 15 else (first - 1 if first <= nx - 1 else nx)
    end = nx - 1 if after != 0 and after != 15 else last
    return a, end


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
