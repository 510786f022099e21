"""The rows of the compiled structured contour (:mod:`daxpy.worklets.contour_cpu`) on
the careful path, near a NaN, an Inf or a point equal to the value: counted
again after the fast count, and their points written after the fast write.

A kernel of its own, compiled only for a field that has such rows: the fast
march (:func:`~daxpy.worklets.contour_cpu._march`) then is one compiled function
for every field, and neither carries the other's code (the march with these
rows in it compiled in about 3 s, cold). The rows' loops are written out in the
kernel, not row functions: each function called is compiled again with its
caller, cold.

Examples
--------
>>> callable(_march_careful)   # a kernel, called from contour_cpu on threads
True
"""

from __future__ import annotations

import numpy as np

from ._contour_careful_cpu import _careful_flags, _corner_key, _finite_cell, _repeats
from ._contour_rows_cpu import _BLOCK, _SPREAD, _ZERO, _columns
from ._numba import kernel


@kernel(nogil=True, no_cfunc_wrapper=True)
def _march_careful(s, value, bound, nx, ny, nz, zc, writing, rows, careful_cells, counts,
                   table, edges, offsets, point_counts, point_spans, point_start, cell_counts,
                   cell_spans, lo, hi, t, scratch, slots, first, step):
    """Point rows ``rows``, each on the careful path: counted (``writing`` False:
    their outputs and spans, and their cell rows', those of ``careful_cells`` on
    the careful path too), or their points written from their starts (their cells
    are :func:`~daxpy.worklets._contour_searched_cpu._emit_searched`'s). Each
    thread takes every ``step``-th block of rows from ``first``, as the fast march
    does; ``scratch`` and ``slots``: each thread's buffers (a row's column bytes,
    a cell's edges' snapped points)."""
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
            for i in range(i0, i1 + 1):
                flags = _careful_flags(s, value, bound, i, j, k, nx, ny, nz, zc)
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
            made, low, high = _ZERO, nx, _ZERO - 1
            _columns(s, bound, row_first, nx, out, _ZERO, _ZERO, _ZERO, nx - 1, columns)
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
