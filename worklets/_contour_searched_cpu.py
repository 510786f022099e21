"""The cell rows of the compiled structured contour (:mod:`daxpy.worklets.contour_cpu`)
beside a row on the careful path: there not every cut edge is an output point, so
each cell's edge points are looked up among its point rows' outputs, once all
the points are written.

Examples
--------
>>> callable(_emit_searched)   # a kernel, called from contour_cpu on threads
True
"""

from __future__ import annotations

from ._contour_careful_cpu import HELPER, _corner_key, _finite_cell, _repeats
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
def _emit_searched(s, value, bound, nx, ny, zc, careful_cells, rows, offsets, counts, table,
                   edges, cut,
                   cell_counts, cell_spans, cell_start, row_start, lo, hi, cells, source,
                   scratch, scratch_words, edge_points, first, step):
    """Write the output cells of cell rows ``rows``, near a NaN, an Inf or the
    value, after the points (:func:`~daxpy.worklets.contour_cpu._march`, and
    :func:`~daxpy.worklets._contour_careful_rows_cpu._march_careful` near those): each
    crossed edge's point (``found``, by edge; ``cut``: each case's crossed edges)
    looked up once per cell, in the outputs (``lo``, ``hi``) of the cell's point
    rows (from ``row_start``). One loop, no row function: each level of calls is
    compiled again, cold."""
    n = rows.shape[0]
    per = table.shape[2]
    full = (1 << 4 * zc) - 1
    nxy = nx * ny
    columns, words = scratch[first], scratch_words[first]
    found = edge_points[first]
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
            q0, q1 = row_start[row], row_start[row + 1]
            q2 = q3 = q0
            if zc == 2:
                q2, q3 = row_start[row + ny], row_start[row + ny + 1]
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
                for t in range(counts[case]):
                    if careful and _repeats(found, table[case, t]):
                        continue  # collapsed on a snapped point
                    for m in range(per):
                        cells[count, m] = found[table[case, t, m]]
                    source[count] = i + (nx - 1) * (j + (ny - 1) * k)
                    count += 1
