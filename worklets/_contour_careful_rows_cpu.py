"""The rows of the compiled structured contour (:mod:`daxpy.worklets.contour_cpu`) on
the careful path, near a NaN, an Inf or a point equal to the value: counted
again after the fast count, their points written after the fast write, and the
cells of the rows beside them written last, their points looked up among the
outputs of their point rows (there not every cut edge is an output point).

One kernel of its own for the three (``mode`` 0, 1, 2), compiled only for a field
that has such rows: the fast march (:func:`~daxpy.worklets._contour_march_cpu._march`)
then is one compiled function for every field, and neither carries the other's
code (the march with these rows in it compiled in about 3 s, cold). Each function
is compiled with its own copy of every helper it calls, cold: the lookup of the
cells beside the careful rows, a kernel of its own before, added its helpers
again (the careful path's first use 2.07-2.11 s, now 1.87-1.90 s on a 2-core
machine, medians of five fresh caches). The rows' loops are written out in the
kernel, not row functions, for the same reason.

Examples
--------
>>> callable(_march_careful)   # a kernel, called from contour_cpu on threads
True
"""

from __future__ import annotations

import numpy as np

from ._contour_careful_cpu import HELPER, _careful_flags, _corner_key, _finite_cell, _repeats
from ._contour_rows_cpu import _BLOCK, _SPREAD, _ZERO, _columns, _quiet_eight
from ._numba import kernel


@kernel(**HELPER)
def _advance(lo, q, point):
    """The first output from ``q`` on whose edge starts at ``point`` or after."""
    while q < lo.shape[0] and lo[q] < point:
        q += 1
    return q


@kernel(**HELPER)
def _find(lo, hi, q, a, b):
    """The output point on edge (a, b), at or after ``q`` (a few steps on)."""
    while q + 1 < lo.shape[0] and (lo[q] != a or hi[q] != b):
        q += 1
    return q


@kernel(nogil=True, no_cfunc_wrapper=True)
def _march_careful(mode, s, value, bound, nx, ny, nz, zc, rows, careful_cells, counts, table,
                   edges, offsets, cut, point_counts, point_spans, point_start, cell_counts,
                   cell_spans, cell_start, lo, hi, t, cells, source, known, scratch,
                   scratch_words, slots, first, step):
    """Rows ``rows`` on the careful path, by ``mode``: 0 counts point rows (their
    outputs and spans, and their cell rows', those of ``careful_cells`` on the
    careful path too); 1 writes their points from their starts; 2 writes the output
    cells of cell rows ``rows`` (those beside a careful row), each crossed edge's
    point (``cut``: each case's crossed edges) looked up once per cell among the
    outputs (``lo``, ``hi``) of the cell's point rows, once every point is written.
    Each thread takes every ``step``-th block of rows from ``first``, as the fast
    march does; ``known``: row x's points' flags (:func:`_careful_flags`), made by
    mode 0 and read by mode 1 (the rules are most of the path's time); ``scratch``
    and ``slots``: each thread's buffers (a row's column bytes, a cell's edges'
    points). One kernel for the three: each function is
    compiled with its own copy of the helpers it calls, cold."""
    if mode == 2:
        n = rows.shape[0]
        per = table.shape[2]
        full = (1 << 4 * zc) - 1
        nxy = nx * ny
        columns, words = scratch[first], scratch_words[first]
        found = slots[first]
        for block in range(first, (n + _BLOCK - 1) // _BLOCK, step):
            stop = (block + 1) * _BLOCK
            for x in range(block * _BLOCK, n if stop > n else stop):
                c = rows[x]
                if cell_counts[c] == 0:
                    continue
                careful = careful_cells[c]
                j, k = c % (ny - 1), c // (ny - 1)
                i0, i1, count = cell_spans[c, 0], cell_spans[c, 1], cell_start[c]
                row_first = j * nx + k * nxy
                row = j + ny * k
                # Each of the cell row's point rows: the first output at or after this
                # cell (scalars, not an array, so that they stay in registers).
                q0, q1 = point_start[row], point_start[row + 1]
                q2 = q3 = q0
                if zc == 2:
                    q2, q3 = point_start[row + ny], point_start[row + ny + 1]
                _columns(s, bound, row_first, nx, nxy if zc == 2 else 0, _ZERO, _ZERO, i0, i1 + 1,
                         columns)
                i = i0 - 1
                while i < i1:
                    i += 1
                    if i & 7 == 0 and _quiet_eight(columns, words, i):
                        i += 7
                        continue
                    column, after = columns[i], columns[i + 1]
                    if column == after and (column == 0 or column == 255):
                        continue  # all in or all out: the count pass's test
                    if careful and not _finite_cell(s, i, j, k, nx, nxy, zc):
                        continue
                    case = (_SPREAD[column] | (_SPREAD[after] << 1)) & full
                    base = row_first + i
                    q0, q1 = _advance(lo, q0, base), _advance(lo, q1, base + nx)
                    if zc == 2:
                        q2, q3 = _advance(lo, q2, base + nxy), _advance(lo, q3, base + nx + nxy)
                    for m in range(cut[case, 0]):
                        e = cut[case, m + 1]
                        lo_key, hi_key, r = _corner_key(s, value, base, offsets, edges[e, 0],
                                                        edges[e, 1], careful)
                        # Arithmetic, not branches: the row varies from edge to edge.
                        q = (q0 * (r == 0) + q1 * (r == 1)) + (q2 * (r == 2) + q3 * (r == 3))
                        found[e] = _find(lo, hi, q, lo_key, hi_key)
                    for tri in range(counts[case]):
                        if careful and _repeats(found, table[case, tri]):
                            continue  # collapsed on a snapped point
                        for m in range(per):
                            cells[count, m] = found[table[case, tri, m]]
                        if source.shape[0] != 0:   # (empty: the caller reads none)
                            source[count] = i + (nx - 1) * (j + (ny - 1) * k)
                        count += 1
        return
    writing = mode == 1
    n = rows.shape[0]
    per = table.shape[2]
    full = (1 << 4 * zc) - 1
    nxy = nx * ny
    columns, snapped = scratch[first], slots[first]
    for block in range(first, (n + _BLOCK - 1) // _BLOCK, step):
        stop = (block + 1) * _BLOCK
        for row in range(block * _BLOCK, n if stop > n else stop):
            r = rows[row]
            j, k = r % ny, r // ny
            row_first = j * nx + k * nxy
            up, out = (nx if j + 1 < ny else _ZERO), (nxy if k + 1 < nz else _ZERO)
            # The point row: each point's outputs from the NumPy implementation's rules.
            i0, i1, q = _ZERO, nx - 1, _ZERO
            if writing:
                if point_counts[r] == 0:
                    continue
                i0, i1, q = point_spans[r, 0], point_spans[r, 1], point_start[r]
            low, high = nx, _ZERO - 1
            row_flags = known[row]
            if not writing:
                # The rules' first tests for the whole row, in a loop the compiler
                # vectorizes: a point not at the value whose edges after it are not cut
                # has no output (most points: no call of the rules).
                _columns(s, bound, row_first, up, out, _ZERO, _ZERO, _ZERO, nx - 1, columns)
                columns[nx] = columns[nx - 1]   # no x edge from the row's last point
                values = s[row_first:row_first + nx]
                for i in range(nx):
                    now = columns[i]
                    row_flags[i] = (values[i] == value) | (
                        ((now ^ columns[i + 1]) | (now ^ (now >> 1)) | (now ^ (now >> 2))) & 1)
            for i in range(i0, i1 + 1):
                if writing:
                    flags = np.int64(row_flags[i])
                else:
                    flags = (_careful_flags(s, value, bound, i, j, k, nx, ny, nz, zc)
                             if row_flags[i] else 0)
                    row_flags[i] = flags
                if flags == 0:
                    continue
                low, high = (i if high < 0 else low), i
                p = row_first + i
                low_value = np.float64(s[p])
                for bit in range(4):
                    if flags >> bit & 1:
                        if writing:
                            other = p + (0 if bit == 0 else (1 if bit == 1 else (
                                up if bit == 2 else out)))
                            lo[q], hi[q] = p, other
                            # The NumPy implementation's float64 arithmetic, in its order.
                            t[q] = 0.0 if bit == 0 else (
                                (value - low_value) / (np.float64(s[other]) - low_value))
                        q += 1
            if writing:
                continue
            point_counts[r], point_spans[r, 0], point_spans[r, 1] = q, low, high
            if up == 0 or (zc == 2 and out == 0):
                continue   # the grid's last y or z: no cell row
            # The cell row: its crossed cells with finite corners, less those whose
            # output cell lists a snapped point twice (VTK drops those).
            c = j + (ny - 1) * k
            careful = careful_cells[c]
            made, low, high = _ZERO, nx, _ZERO - 1   # (the row's columns: made above)
            for i in range(nx - 1):
                base = row_first + i
                case = (_SPREAD[columns[i]] | (_SPREAD[columns[i + 1]] << 1)) & full
                if case == 0 or case == full or (
                        careful and not _finite_cell(s, i, j, k, nx, nxy, zc)):
                    continue
                low, high = (i if high < 0 else low), i
                for m in range(counts[case]):
                    for e in range(per):
                        edge = table[case, m, e]
                        a, b, _ = _corner_key(s, value, base, offsets, edges[edge, 0],
                                              edges[edge, 1], careful)
                        # Two of a cell's edges are one point only where both snap
                        # to it: others get a key of their own (below 0).
                        snapped[edge] = a if a == b else -1 - edge
                    made += 0 if _repeats(snapped, table[case, m]) else 1
            cell_counts[c], cell_spans[c, 0], cell_spans[c, 1] = made, low, high


_CAREFUL_ROWS_PER_THREAD = 8
"""Rows on the careful path worth waking one more thread for: a thread costs the
call about 45 us on the GPU machine's 16 cores (its arguments are checked under
the GIL, one thread after another), a row of 256 points 12-26 us (each point's
rules, each cell's corners); the 256³ wavelet at its middle value has 36 such
point rows, which took 0.9-1.3 ms on one thread (`.dc/s/cc16.py`)."""


def _threads_for(rows: int, step: int) -> int:
    """Threads for a careful pass over ``rows`` rows: at most ``step``, one per
    :data:`_CAREFUL_ROWS_PER_THREAD` rows begun.

    Examples
    --------
    >>> _threads_for(5, 16), _threads_for(36, 16), _threads_for(10_000, 16)
    (1, 5, 16)
    """
    return max(1, min(step, -(-rows // _CAREFUL_ROWS_PER_THREAD)))
