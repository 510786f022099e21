"""The kernel of the compiled structured contour's passes
(:mod:`daxpy.worklets.contour_cpu`): :func:`_march`, counting or writing blocks of
x-rows, one thread's blocks at a time.

The careful path is kernels of its own, compiled only for a field that takes
it; :func:`_march` only skips its rows (``careful_points``, ``searched``: all
False for most fields), so it is one compiled function for every field, and
no specialization compiles both paths (the march with both compiled in about
3 s, cold; the three kernels now 0.7-1.6 s each). The kernels are
serial (``nogil``), threaded from Python, not Numba ``prange`` loops: a parallel
kernel is two more levels of compiled code, each re-optimizing all it calls, and
cost a cold first call about half of its 6 s. For the same reason counting and
writing are one kernel (a second cost about 0.4 s more, cold), the row loops are
written out in it, and the threads' buffers are made by the caller (an array
made in a kernel compiles NumPy's allocation with it).

Examples
--------
>>> _march.__name__
'_march'
"""

from __future__ import annotations

import numpy as np

from ._contour_careful_cpu import _screen_row
from ._contour_rows_cpu import (_ALL_IN, _BLOCK, _SPREAD, _ZERO, _columns, _next_columns,
                                _plane_columns, _plane_span, _screen_plane_row, _shifted_columns)
from ._contour_slots import _LANES, _Y, _Z
from ._numba import kernel


@kernel(nogil=True, no_cfunc_wrapper=True)
def _march(s, px, py, pz, changes, value, bound, equal, zero, nx, ny, nz, zc, writing,
           careful_points, searched, edge_rows, counts, slotted, point_counts, point_spans,
           cell_counts, cell_spans, blocks, bad, lo, hi, t, cells, source, places, xyz,
           scratch, scratch_words, slots, first, step):
    """The point rows and their cell rows, in one walk each over eight rows' bits:
    counted (``writing`` False: outputs, spans, the screen), or written from their
    starts (but the ``careful_points`` point rows and the ``searched`` cell rows:
    other kernels write them; none where they are empty). One kernel for both
    passes, one loop, no row function: each kernel and each level of calls is
    compiled again, cold.

    Rows go by blocks of :data:`_BLOCK`, each thread the same blocks in both passes.
    Counting, block ``b``'s point and cell outputs and its rows screened out go to
    ``blocks[:3, b + 1]``; writing, ``blocks[:2, b]`` is where its outputs start
    (their exclusive scan), and each row's start is counted on from there, through
    the counts its thread wrote: no scan of every row's counts (nor a read of every
    row's screen) on one thread, after 16 threads wrote them (on the GPU machine's
    host, about 0.2-0.5 ms a scan of 65,536 rows).

    Writing, each point's edge (``lo``, ``hi``, ``t``) is written only on the point
    rows ``edge_rows`` marks (one flag: every row's; none where the caller reads no
    edges: 24 of the 36 bytes of a placed point), and each cell's input cell
    (``source``) only where ``source`` is not empty (the caller reads it).

    Writing, a cell's cut edges' points are counted, not looked up: where no point
    row of a cell row is on the careful path, each cut edge is a point, so the
    outputs of its four point rows before x are the cut edges at their points
    before x, counted as the rows are walked from the first (``slots``: a cell's
    twelve edge points, by :data:`_SLOT`).

    With ``xyz`` not empty, each point's coordinates are written beside its edge,
    from ``places[m, index]``: the terms of its coordinate along the march's axis ``m``
    (x, y, z), the grid's too (:func:`~daxpy.worklets._edge_points_cpu.axis_places`).

    With a plane's axes' terms (``px``, ``py``, ``pz`` not empty; ``s`` then unread),
    point (i, j, k)'s value is ``(pz[k] + py[j]) + px[i]``, made where it is read:
    the bits of the cut of that distance field, with no field of the grid's size;
    ``changes``, each point row's change of side along x (counting only; empty for
    a field)."""
    n, per, full = ny * nz, slotted.shape[2], (1 << 4 * zc) - 1
    plane, careful = px.shape[0] != 0, careful_points.shape[0] != 0
    keep_source = source.shape[0] != 0
    placing = xyz.shape[0] != 0
    y0 = y1 = y2 = z0 = z1 = z2 = 0.0
    before = _ZERO - 2   # the row whose columns the buffer holds, from held_a to held_last
    held_a = held_last = _ZERO
    nxy = nx * ny
    columns, words = scratch[first], scratch_words[first]
    at = slots[first]
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    for dealt in range(first, n_blocks, step):
        # Round r is blocks r step .. r step + step - 1, turned by r: in turn, thread t
        # would walk the same bands of y in every z plane, where a surface is denser in
        # some bands. Dealt, not taken from a shared counter (`_claim_cpu.claim`): the
        # 256³ count pass, 16 cores, 5.3-5.8 ms taken, 4.4-4.5 dealt (in turns).
        turn = dealt // step
        size = n_blocks - turn * step if n_blocks - turn * step < step else step
        block = turn * step + (dealt - turn * step + turn) % size
        stop = (block + 1) * _BLOCK   # (not min, nor a function: each compiles again, cold)
        made_here, cells_here, bad_here = _ZERO, _ZERO, _ZERO   # counting: the block's
        # Writing: the starts of row r, of row r + ny (the next plane's, 3-D) and of
        # the cell row at or after r, counted on from the block's.
        start, start_out, start_cell = blocks[0, block], _ZERO, blocks[1, block]
        if writing and zc == 2 and block * _BLOCK + ny < n:
            out_block = (block * _BLOCK + ny) // _BLOCK
            start_out = blocks[0, out_block]
            for earlier in range(out_block * _BLOCK, block * _BLOCK + ny):
                start_out += point_counts[earlier]
        for r in range(block * _BLOCK, n if stop > n else stop):
            j, k = r % ny, r // ny
            up, out = (nx if j + 1 < ny else _ZERO), (nxy if k + 1 < nz else _ZERO)
            c = j + (ny - 1) * k
            cells_too = up != 0 and (zc == 1 or out != 0)   # not the grid's last y or z
            points_too, edges_too = True, False
            # Writing, the starts of point rows (j, k), (j + 1, k), (j, k + 1), (j + 1,
            # k + 1) (in 2-D the last two are the first two again: their slots go
            # unused) and of the cell row.
            q0 = q1 = q2 = q3 = count = _ZERO
            if writing:
                q0 = start
                start = q1 = q0 + point_counts[r]
                q2, q3 = q0, q1
                if zc == 2 and r + ny < n:
                    q2 = start_out
                    start_out = q3 = q2 + point_counts[r + ny]
                count = start_cell
                if cells_too:
                    start_cell += cell_counts[c]
            if placing:   # the point row's y and z terms (see axis_places)
                y0, y1, y2 = places[1, j, 0], places[1, j, 1], places[1, j, 2]
                z0, z1, z2 = places[2, k, 0], places[2, k, 1], places[2, k, 2]
            if not writing:   # while it is in cache
                bad[r] = (_screen_plane_row(px, pz[k] + py[j], bound, equal, zero, changes[r])
                          if plane else _screen_row(s, equal, zero, r * nx, nx))
                bad_here += bad[r]
            else:
                cells_too = cells_too and cell_counts[c] != 0 and not (careful and searched[c])
                points_too = point_counts[r] != 0 and not (careful and careful_points[r])
                edges_too = edge_rows[r if edge_rows.shape[0] > 1 else 0]
                if not (points_too or cells_too):
                    continue
            # Counting: the whole row (a plane's: where its rows change side, found
            # by bisection). Writing: from the first x where any of the four rows has
            # an output to the last cell (after the point row's last output: its cut
            # edges are its cells').
            a, end, i1 = _ZERO, nx - 1, nx - 2
            if plane and not writing:
                a, end = _plane_span(px, py, pz, changes, j, k, up // nx, out // nxy, bound,
                                     nx, ny)
            if writing:
                a, end = (point_spans[r, 0], point_spans[r, 1]) if points_too else (nx, _ZERO - 1)
            if writing and cells_too:
                i1, r2 = cell_spans[c, 1], (r + ny if zc == 2 else r)
                end = i1 + 1
                for low in (cell_spans[c, 0], point_spans[r + 1, 0], point_spans[r2, 0],
                            point_spans[r2 + 1, 0]):
                    a = low if low < a else a
            last = end + 1 if end + 1 < nx else nx - 1
            # Counting needs only bits 0 to 3 (the far rows: the row itself again).
            up2 = nx if writing and j + 2 < ny else _ZERO
            out2 = nxy if writing and k + 2 < nz else _ZERO
            if plane:
                _plane_columns(px, py, pz, j, k, up // nx, out // nxy, up2 // nx, out2 // nxy,
                               bound, a, last, columns)
            elif not writing and r == before + 1 and j > 0:
                # The row before's columns (this thread's last) hold this row's bits and
                # the plane after's: two rows read, not eight (one thread, 256³: count
                # 18.1-18.9 -> 13.6-13.7 ms; a helper of its own, not a flag of _columns:
                # that measured 15.9-16.0, and slowed the write).
                _next_columns(s, bound, r * nx, up, out, nx, columns)
            elif writing and r == before + 1 and j > 0:
                # Five of the row's eight bits are the row before's, held (one thread,
                # 256³, 2 cores: write 27.4-27.6 -> 26.0-26.4 ms).
                _shifted_columns(s, bound, r * nx, up, out, up2, out2, a, last, held_a,
                                 held_last, columns)
            else:
                _columns(s, bound, r * nx, up, out, up2, out2, a, last, columns)
            before, held_a, held_last = r, a, last
            columns[nx] = columns[nx - 1]   # no x edge from the row's last point
            points, point_low, point_high = _ZERO, nx, _ZERO - 1
            made, cell_low, cell_high = _ZERO, nx - 1, _ZERO - 1
            i = a - 1
            # The walk's indices unsigned (np.uint64, the same bits): Numba checks a signed
            # index it cannot prove non-negative for wrapping (i starts at a span read from
            # an array; one thread, 256³: count 19.7 -> 17.9 ms, write 30.3 -> 26.5).
            while i < end:
                i += 1
                if i & 7 == 0:
                    # Eight x all in or all out, with the x after them: one word, not
                    # eight bytes (_quiet_eight, written out here: one call less, cold).
                    word = words[np.uint64(i >> 3)]
                    if (word == 0 or word == _ALL_IN) and (
                            columns[np.uint64(i + 8)] == (word & 255)):
                        i += 7
                        continue
                now, after = columns[np.uint64(i)], columns[np.uint64(i + 1)]
                if now == after and (now == 0 or now == 255):
                    continue   # nothing on any of the eight rows
                # Lane r (4 bits) of x, y, z: whether point row r's edge along it is
                # cut here; of here: how many outputs point row r has here.
                x, y, z = _LANES[now ^ after], _Y[now], _Z[now]
                here = x + y + z
                cuts = (x & 1) | ((y & 1) << 1) | ((z & 1) << 2)   # the point row's own
                if points_too and cuts:
                    point_low, point_high = (i if point_high < 0 else point_low), i
                    points += here & 15
                    if writing:
                        p, q = r * nx + i, np.uint64(q0)
                        row_term = pz[k] + py[j] if plane else 0.0
                        low_value = (row_term + px[np.uint64(i)] if plane
                                     else np.float64(s[np.uint64(p)]))
                        for axis in range(3):
                            if cuts >> axis & 1:
                                other = p + (1 if axis == 0 else (up if axis == 1 else out))
                                if edges_too:
                                    lo[q], hi[q] = p, other
                                high_value = np.float64(s[np.uint64(other)]) if not plane else (
                                    row_term + px[np.uint64(i + 1)] if axis == 0 else (
                                        (pz[k] + py[j + 1] if axis == 1 else pz[k + 1] + py[j])
                                        + px[i]))
                                # The NumPy implementation's float64 arithmetic, in its order.
                                w = (value - low_value) / (high_value - low_value)
                                if edges_too:
                                    t[q] = w
                                if placing:
                                    # (Columns written as constants: as variables,
                                    # the pass took 4-5 ms more on one thread.)
                                    at_x = np.uint64(i)
                                    xyz[q, 0] = (places[0, at_x, 0]
                                                 + w * places[0, at_x, 1 + (axis != 0)])
                                    xyz[q, 1] = y0 + w * (y1 if axis == 1 else y2)
                                    xyz[q, 2] = z0 + w * (z1 if axis == 2 else z2)
                                q += np.uint64(1)
                # (np.uint64(case) where read: with case typed unsigned, the float64
                # specialization wrote some cells' points wrong (Numba 0.68, cause unknown).)
                case = (_SPREAD[now] | (_SPREAD[after] << 1)) & full
                outputs = counts[np.uint64(case)]
                if cells_too and i <= i1 and outputs:   # (x = nx - 1 is no cell)
                    cell_low, cell_high = (i if cell_high < 0 else cell_low), i
                    made += outputs
                    if writing:
                        # A cut edge's point: its row's first output at its x, plus the
                        # x edge's before a y edge's, and both before a z edge's.
                        xy, ahead = x + y, here + _LANES[after ^ columns[np.uint64(i + 2)]]
                        at[0], at[5], at[8], at[11] = q0, q1, q2, q3
                        at[1], at[9] = q0 + (x & 15), q2 + ((x >> 8) & 15)
                        at[2], at[6] = q0 + (xy & 15), q1 + ((xy >> 4) & 15)
                        at[3], at[10] = q0 + (ahead & 15), q2 + ((ahead >> 8) & 15)
                        ahead += _Y[after]
                        at[4], at[7] = q0 + (ahead & 15), q1 + ((ahead >> 4) & 15)
                        for m in range(outputs):
                            to = np.uint64(count)
                            for e in range(per):
                                cells[to, e] = at[np.uint64(slotted[np.uint64(case), m, e])]
                            if keep_source:
                                source[to] = i + (nx - 1) * c
                            count += 1
                if writing:
                    q0, q1 = q0 + (here & 15), q1 + ((here >> 4) & 15)
                    q2, q3 = q2 + ((here >> 8) & 15), q3 + (here >> 12)
            if not writing:
                point_counts[r] = points
                point_spans[r, 0], point_spans[r, 1] = point_low, point_high
                made_here += points
                if cells_too:
                    cell_counts[c], cell_spans[c, 0], cell_spans[c, 1] = made, cell_low, cell_high
                    cells_here += made
        if not writing:
            blocks[0, block + 1], blocks[1, block + 1] = made_here, cells_here
            blocks[2, block + 1] = bad_here
