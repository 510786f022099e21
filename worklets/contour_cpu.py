"""Compiled CPU contour of 2-D and 3-D structured grids (uniform, rectilinear,
curvilinear): Flying Edges-style passes over the grid's x-rows, giving the NumPy
implementation's :class:`~daxpy.worklets._edge_cut.EdgeCut` bit for bit.

Both passes are one serial kernel (:func:`_march`) over blocks of rows, run on
every thread at once (:func:`~daxpy.worklets._blocks_cpu.on_threads`), each thread
taking every n-th block; every row writes its own slots, so the output does not
depend on the thread count:

1. *count*: per point row, its output points (the cut edges starting at its
   points, by point then axis) and per cell row its output cells, with the span
   of x where they are; each row is also screened for a NaN, an Inf or the value
   itself. The rows near such a row are counted again on the careful path
   (:mod:`daxpy.worklets._contour_careful_rows_cpu`, the rules of
   :mod:`daxpy.worklets._contour_careful_cpu`);
2. *scan*: exclusive sums of the per-row counts (NumPy, over rows, not points):
   the one place the output's size is known, before anything is written;
3. *emit*: each point row writes its output points and its cell row's output
   cells in one walk; a cell's cut edges' points are counted from its point rows'
   starts, not looked up. On uniform and rectilinear grids (3-D, or 2-D in x and
   y) the points' coordinates are written there too, from each point's (i, j, k)
   and ``t`` (:func:`~daxpy.worklets._edge_points_cpu.axis_places`): the bits the
   surface would make from ``(lo, hi, t)`` in a pass of its own after. The
   careful point rows are written after, by the careful path's kernel (their
   coordinates from their edges), and the cell rows beside them look their points
   up last, by the same kernel (:mod:`daxpy.worklets._contour_careful_rows_cpu`).

The passes walk one byte per x (which of eight rows' points are in), filled by a
loop the compiler vectorizes; only the rows' spans are walked after the count.
The points come out in the ``(lo, hi)`` order of the NumPy implementation's sort,
and the cells in input cell order, then the case table's order.

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
>>> import numpy as np, daxpy
>>> square = daxpy.UniformGrid(dims=(2, 2))
>>> cut = contour_structured(square, np.array([0.0, 1.0, 2.0, 3.0]), value=1.5)
>>> cut.lo.tolist(), cut.hi.tolist(), sorted(cut.cells)
([0, 1], [2, 3], [2])
"""

from __future__ import annotations

import numpy as np

from daxpy.data.host_pool import host_empty

from ._contour_careful_cpu import (_around, _beside, _careful_rows, _outputs_of, _screen_row,
                                   screen_values)
from ._contour_careful_rows_cpu import _march_careful, _threads_for
from ._contour_rows_cpu import (_ALL_IN, _BLOCK, _SPREAD, _ZERO, _columns, _identity,
                                _next_columns, _plane_columns, _plane_span, _screen_plane_row,
                                _shifted_columns)
from ._edge_cut import EdgeCut
from ._edge_points_cpu import axis_places, place_rows
from ._contour_slots import _CUT, _KINDS, _LANES, _SLOTTED, _Y, _Z
from ._marching import TABLES, at_least_bound
from ._blocks_cpu import on_threads
from ._numba import kernel, rows_or_terms, threads
from ._scan_cpu import exclusive
from .plane_cuts import array_axis_distance

@kernel(nogil=True, no_cfunc_wrapper=True)
def _march(s, px, py, pz, value, bound, equal, zero, nx, ny, nz, zc, writing, rows,
           careful_points, searched, edge_rows, counts, slotted, point_counts, point_spans,
           point_start, cell_counts, cell_spans, cell_start, bad, lo, hi, t, cells, source,
           places, xyz, scratch, scratch_words, slots, first, step):
    """Point rows ``rows`` and their cell rows, in one walk each over eight rows'
    bits: counted (``writing`` False: outputs, spans, the screen), or written from
    their starts (but the ``careful_points`` point rows and the ``searched`` cell
    rows: other kernels write them). One kernel for both passes, one loop, no row
    function: each kernel and each level of calls is compiled again, cold.

    Writing, each point's edge (``lo``, ``hi``, ``t``) is written only on the point
    rows ``edge_rows`` marks (none where the caller reads no edges: 24 of the 36
    bytes of a placed point), and each cell's input cell (``source``) only where
    ``source`` is not empty (the caller reads it).

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
    the bits of the cut of that distance field, with no field of the grid's size."""
    n, per, full = rows.shape[0], slotted.shape[2], (1 << 4 * zc) - 1
    plane = px.shape[0] != 0
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
        for row in range(block * _BLOCK, n if stop > n else stop):
            r = rows[row]
            j, k = r % ny, r // ny
            up, out = (nx if j + 1 < ny else _ZERO), (nxy if k + 1 < nz else _ZERO)
            c = j + (ny - 1) * k
            cells_too = up != 0 and (zc == 1 or out != 0)   # not the grid's last y or z
            points_too, edges_too = True, False
            if placing:   # the point row's y and z terms (see axis_places)
                y0, y1, y2 = places[1, j, 0], places[1, j, 1], places[1, j, 2]
                z0, z1, z2 = places[2, k, 0], places[2, k, 1], places[2, k, 2]
            if not writing:   # while it is in cache
                bad[r] = (_screen_plane_row(px, pz[k] + py[j], bound, equal, zero) if plane
                          else _screen_row(s, equal, zero, r * nx, nx))
            else:
                cells_too = cells_too and cell_counts[c] != 0 and not searched[c]
                points_too = point_counts[r] != 0 and not careful_points[r]
                edges_too = edge_rows[r]
                if not (points_too or cells_too):
                    continue
            q0 = q1 = q2 = q3 = point_start[r] if writing else _ZERO
            # Counting: the whole row (a plane's: where its rows change side, found
            # by bisection). Writing: from the first x where any of the four rows has
            # an output to the last cell (after the point row's last output: its cut
            # edges are its cells').
            a, end, i1, count = _ZERO, nx - 1, nx - 2, _ZERO
            if plane and not writing:
                a, end = _plane_span(px, py, pz, j, k, up // nx, out // nxy, bound, nx)
            if writing:
                a, end = (point_spans[r, 0], point_spans[r, 1]) if points_too else (nx, _ZERO - 1)
            if writing and cells_too:
                # The point rows (j, k), (j + 1, k), (j, k + 1), (j + 1, k + 1); in 2-D
                # the last two are the first two again (their slots go unused).
                r2 = r + ny if zc == 2 else r
                q1, q2, q3 = point_start[r + 1], point_start[r2], point_start[r2 + 1]
                i1, count = cell_spans[c, 1], cell_start[c]
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
                if cells_too:
                    cell_counts[c], cell_spans[c, 0], cell_spans[c, 1] = made, cell_low, cell_high


def contour_structured(grid, scalars: np.ndarray | None, value: float, place=None,
                       terms: tuple | None = None, edges: bool = True,
                       sources: bool = True) -> EdgeCut:
    """The compiled form of :func:`daxpy.worklets.contour.contour_structured`, on
    2-D and 3-D grids of float32 or float64 scalars, or (``terms``, ``scalars`` None)
    of a plane's signed distance made where it is read from the axes' terms of a 3-D
    image or rectilinear grid: point (i, j, k)'s value is ``(terms[2][k] +
    terms[1][j]) + terms[0][i]`` in float64, the slice's distance field's bits, with
    no field of the grid's size (made only for rows on the careful path, if any).

    With ``edges`` False (the caller interpolates no field along the edges), a grid
    whose points the march places gives a cut without ``lo``, ``hi`` and ``t``; with
    ``sources`` False (it carries no cell field), one without ``source``: the write
    pass, bound by its reads and its output, writes 24 bytes a point and 8 a
    triangle fewer.

    Raises
    ------
    CompiledUnavailable
        On 0-D and 1-D grids and other dtypes, and for terms of grids not 3-D: the
        NumPy implementation (or the field) serves them.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.worklets.contour import contour_structured as reference
    >>> g, t = daxpy.UniformGrid(dims=(4, 3, 2)), np.arange(24.0)
    >>> contour_structured(g, t, value=7.5).t.tolist() == reference(g, t, value=7.5).t.tolist()
    True
    """
    s, px, py, pz, nx, ny, nz, dimension = rows_or_terms(
        grid, scalars, terms, "the compiled contour marches 2-D and 3-D grids")
    zc = dimension - 1   # corners along z: 2 (voxels) or 1 (pixels)
    kind = _KINDS[dimension]
    counts, table, edge_table = TABLES[kind]
    offsets = np.array([(c & 1) + ((c >> 1) & 1) * nx + (c >> 2) * nx * ny
                        for c in range(4 * zc)], np.int64)
    value = float(value)
    bound = at_least_bound(s.dtype, value)
    n_cell_rows = (ny - 1) * max(nz - 1, 1)
    # Not zeroed: the count pass writes every row's (zeroing them took 0.3 ms of a
    # 13.6 ms contour at 256³ on 16 cores, on one thread).
    point_counts, point_spans = host_empty(ny * nz, np.int64), host_empty((ny * nz, 2), np.int64)
    cell_counts = host_empty(n_cell_rows, np.int64)
    cell_spans = host_empty((n_cell_rows, 2), np.int64)
    bad = host_empty(ny * nz, bool)   # (each row's screen: written by the count pass)
    # Each thread's buffers, made here (made in a kernel, an array costs its compile
    # over a second, cold), rows of whole cache lines and one more, so that no two
    # threads' bytes share a line wherever the array starts.
    step = threads()
    scratch = np.empty((step, 64 * ((nx + 71 + 63) // 64) + 64), np.uint8)
    scratch_words = scratch.view(np.uint64)   # the same bytes, eight at a time
    slots = np.empty((step, 32), np.int64)
    per = table.shape[2]
    march = (s, px, py, pz, value, bound, *screen_values(s.dtype, value), nx, ny, nz, zc)
    # No row on the careful path, yet; nothing to write into, yet.
    careful_points, searched = host_empty(ny * nz, bool), host_empty(n_cell_rows, bool)
    careful_points.fill(False)   # (pooled: fresh zeros faulted their pages in at 512³)
    searched.fill(False)
    none = np.zeros(0, np.int64)
    nothing = (none, none, np.zeros(0), np.zeros((0, per), np.int64), none)
    unplaced = (np.zeros((3, 0, 3)), np.zeros((0, 3), np.float32))
    starts, every_row = (none, none), _identity(ny * nz)

    def run(writing, outputs, placing, edge_rows):
        on_threads(_march, step, *march, writing, every_row, careful_points, searched,
                   edge_rows, counts, _SLOTTED[kind], point_counts, point_spans, starts[0],
                   cell_counts, cell_spans, starts[1], bad, *outputs, *placing, scratch,
                   scratch_words, slots)

    def run_careful(mode, rows, outputs):
        on_threads(_march_careful, _threads_for(rows.shape[0], step), np.int64(mode), s, value,
                   bound, nx, ny, nz, zc, rows, careful_cells, counts, table, edge_table, offsets,
                   _CUT[kind], point_counts, point_spans, starts[0], cell_counts, cell_spans,
                   starts[1], *outputs, known, scratch, scratch_words, slots)

    # Every row on the fast path, screened as it goes; then the rows near a bad one
    # again, on the careful path (none, for most fields).
    run(False, nothing, unplaced, careful_points)   # (edge_rows: read writing only)
    careful = bad.any()
    if careful:
        if terms is not None:
            # The careful path reads a field: the distance's, made for the few planes
            # that take it (through grid points), in the same order of sums.
            s = array_axis_distance((px, py, pz), nx * ny * nz)
        careful_points, careful_cells = _careful_rows(bad.reshape(nz, ny), zc)
        # The cell rows whose points are looked up, not counted.
        searched = _beside(careful_points.reshape(nz, ny), zc)
        careful_rows = np.flatnonzero(careful_points)
        # Each careful point's outputs (its rules' flags): made counting, read writing.
        known = np.empty((careful_rows.shape[0], nx), np.uint8)
        run_careful(0, careful_rows, nothing)
    starts = (exclusive(point_counts), exclusive(cell_counts))
    # From the pool of host blocks: on one 16-core host the write pass took 10.7 ms
    # into fresh arrays (their pages faulted in as written) and 6.0 into reused ones.
    n_points = int(starts[0][-1])
    # The points' coordinates too, where the march knows each point's (i, j, k):
    # on uniform and rectilinear grids whose axes are the march's (3-D, or 2-D in
    # x and y; in other planes the surface makes them from the edges after).
    placing = unplaced
    if grid.family in ("uniform", "rectilinear") and all(
            int(d) > 1 for d in grid.dims[:dimension]):
        placing = (axis_places(grid), host_empty((n_points, 3), np.float32))
    edges = edges or placing is unplaced   # (unplaced, the surface's points need them)
    edge_rows = host_empty(ny * nz, bool)
    if edges or not careful:
        edge_rows.fill(edges)
    else:   # the careful cell rows look their points up among their point rows' edges
        edge_rows[:] = _around(searched.reshape(-1, ny - 1), nz, zc).ravel()
    made = n_points if edges or careful else 0
    lo, hi = host_empty(made, np.int64), host_empty(made, np.int64)
    t = host_empty(made, np.float64)
    cells = host_empty((starts[1][-1], per), np.int64)
    source = host_empty(cells.shape[0] if sources else 0, np.int64)
    run(True, (lo, hi, t, cells, source), placing, edge_rows)
    if careful:
        run_careful(1, careful_rows, (lo, hi, t, *nothing[3:]))
        if placing is not unplaced:
            place_rows(grid, lo, hi, t, _outputs_of(careful_rows, starts[0], point_counts),
                       placing[1])
        # The rest, once every point is written: their points are looked up.
        run_careful(2, np.flatnonzero(searched), (lo, hi, t, cells, source))
    return EdgeCut(lo=lo if edges else None, hi=hi if edges else None,
                   t=t if edges else None, cells={per: cells},
                   source={per: source} if sources else {},
                   points=None if placing is unplaced else placing[1])

