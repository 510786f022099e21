"""Compiled CPU contour of 2-D and 3-D structured grids (uniform, rectilinear,
curvilinear): Flying Edges-style passes over the grid's x-rows, giving the NumPy
implementation's :class:`~daxpy.worklets._edge_cut.EdgeCut` bit for bit.

Each pass is one parallel loop over blocks of rows (Numba ``prange``); every row
writes its own slots, so the output does not depend on the thread count:

1. *count*: per point row, its output points (the cut edges starting at its
   points, by point then axis) and per cell row its output cells, with the span
   of x where they are; each row is also screened for a NaN, an Inf or the value
   itself. The rows near such a row are counted again on the careful path
   (:mod:`daxpy.worklets._contour_careful_cpu`);
2. *scan*: exclusive sums of the per-row counts (NumPy, over rows, not points):
   the one place the output's size is known, before anything is written;
3. *emit points*, then *emit cells*: each row fills its slice; a cell finds each
   cut edge's point among the few its corner's row emitted at that corner.

The passes walk one byte per x (which of four rows' points are in), filled by a
loop the compiler vectorizes; only the rows' spans are walked after the count.
The points come out in the ``(lo, hi)`` order of the NumPy implementation's sort,
and the cells in input cell order, then the case table's order.

Where no row takes the careful path, the kernels get None for its flags:
Numba prunes the branches testing ``careful is None`` before typing, so the
careful path is compiled only for a field that needs it (seconds, cold).

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
from numba import parallel_chunksize, prange

from ._contour_careful_cpu import (_careful_flags, _careful_rows, _collapsed, _corner_key,
                                   _finite_cell, _repeats, _screen_row, screen_values)
from ._edge_cut import EdgeCut
from ._marching import TABLES, at_least_bound, cut_edges
from ._numba import kernel, structured_rows

_KINDS = {3: "voxel", 2: "pixel"}
"""The cell each grid dimension is marched as (1-D grids run the NumPy path)."""


_CUT = {kind: cut_edges(kind) for kind in _KINDS.values()}
"""Each case's cut edges, by kind (a cell's triangles use all of them)."""

_BLOCK = 8
"""Rows per iteration of the parallel loops (which share one row buffer)."""

_ZERO, _NO, _YES = np.int64(0), np.bool_(False), np.bool_(True)
"""Constants typed as values, not literals: a literal argument would make Numba
compile one more specialization of the function called (seconds, cold)."""

@kernel()
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


@kernel()
def _fast_flags(column, after):
    """A point's cut edges (bits 1 to 3: x, y, z) from its column and the next
    one, where nothing near is NaN, Inf or equal to the value."""
    return ((((column ^ after) & 1) << 1) | (((column ^ (column >> 1)) & 1) << 2)
            | (((column ^ (column >> 2)) & 1) << 3))


@kernel()
def _spread(column):
    """A column's bits (its rows (y, z): (0, 0), (1, 0), (0, 1), (1, 1)) at the case
    bits of the cell corners at x = 0 (VTK's voxel and pixel corner order)."""
    return (column & 1) | ((column & 2) << 1) | ((column & 4) << 2) | ((column & 8) << 3)


@kernel()
def _fast_counts(s, bound, j, k, nx, ny, nz, zc, cells_too, counts, columns):
    """Point row (j, k)'s outputs and, with ``cells_too``, its cell row's, with
    their spans: where nothing near is NaN, Inf or the value."""
    nxy = nx * ny
    up = nx if j + 1 < ny else 0
    out = nxy if k + 1 < nz else 0
    _columns(s, bound, j * nx + k * nxy, up, out, _ZERO, nx - 1, columns)
    full = (1 << 4 * zc) - 1
    last = columns[nx - 1]
    points = ((last ^ (last >> 1)) & 1) + ((last ^ (last >> 2)) & 1)
    cells = 0
    for i in range(nx - 1):
        column, after = columns[i], columns[i + 1]
        if column == after and (column == 0 or column == 15):
            continue  # all in or all out: no cut edge, no crossed cell
        points += (((column ^ after) & 1) + ((column ^ (column >> 1)) & 1)
                   + ((column ^ (column >> 2)) & 1))
        cells += counts[(_spread(column) | (_spread(after) << 1)) & full]
    if not cells_too:
        cells = _ZERO
    point_low, point_high = _first_and_last(columns, nx, _NO, points)
    cell_low, cell_high = _first_and_last(columns, nx - 1, _YES, cells)
    return points, point_low, point_high, cells, cell_low, cell_high


@kernel()
def _first_and_last(columns, n, of_cells, made):
    """The first and last x (of ``n``) where a point has a cut edge, or a cell is
    crossed (``of_cells``); ``(n, -1)`` where nothing is ``made``."""
    if made == 0:
        return n, -1
    low, high = _ZERO, n - 1
    while _quiet(columns, low, n, of_cells):
        low += 1
    while _quiet(columns, high, n, of_cells):
        high -= 1
    return low, high


@kernel()
def _quiet(columns, i, n, of_cells):
    column = columns[i]
    after = columns[i + 1] if i + 1 < columns.shape[0] else column
    if of_cells:
        return column == after and (column == 0 or column == 15)
    return _fast_flags(column, after if i + 1 < n else column) == 0


@kernel()
def _point_row(s, value, bound, j, k, nx, ny, nz, zc, careful, i0, i1, lo, hi, t, start,
               columns):
    """Point row (j, k): counts its outputs over ``[i0, i1]`` (``start < 0``),
    returning their number and span, or writes them from ``start``."""
    nxy = nx * ny
    first = j * nx + k * nxy
    up = nx if j + 1 < ny else 0
    out = nxy if k + 1 < nz else 0
    count, low, high = 0, nx, -1
    if careful is None or not careful:
        _columns(s, bound, first, up, out, i0, min(i1 + 1, nx - 1), columns)
    for i in range(i0, i1 + 1):
        if careful is not None and careful:
            flags = _careful_flags(s, value, bound, i, j, k, nx, ny, nz, zc)
        else:
            flags = _fast_flags(columns[i], columns[i + 1] if i + 1 < nx else columns[i])
        if flags == 0:
            continue
        low, high = min(low, i), i
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


@kernel()
def _case(columns, i, full):
    """The case of the cell at x = i from its two columns (0 where it is all in or
    all out)."""
    case = (_spread(columns[i]) | (_spread(columns[i + 1]) << 1)) & full
    return 0 if case == full else case


@kernel()
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


@kernel()
def _advance(lo, q, point):
    """The first output from ``q`` on whose edge starts at ``point`` or after."""
    while q < lo.shape[0] and lo[q] < point:
        q += 1
    return q


@kernel()
def _find(lo, hi, q, a, b):
    """The output point on edge (a, b), at or after ``q`` (a few steps on)."""
    while q + 1 < lo.shape[0] and (lo[q] != a or hi[q] != b):
        q += 1
    return q


@kernel()
def _emit_cells_row(s, value, bound, j, k, nx, ny, zc, careful, counts, table, edges, cut,
                    offsets, i0, i1, lo, hi, row_start, cells, source, start, columns, found):
    """Write cell row (j, k)'s output cells from ``start``: each crossed edge's
    point (``found``, by edge; ``cut``: each case's crossed edges) looked up once
    per cell, in the rows' outputs (``lo``, ``hi``, the rows from ``row_start``)."""
    per = table.shape[2]
    full = (1 << 4 * zc) - 1
    nxy = nx * ny
    first = j * nx + k * nxy
    row = j + ny * k
    # Each of the cell row's point rows: the first output at or after this cell
    # (scalars, not an array, so that they stay in registers).
    q0, q1 = row_start[row], row_start[row + 1]
    q2 = q3 = q0
    if zc == 2:
        q2, q3 = row_start[row + ny], row_start[row + ny + 1]
    _columns(s, bound, first, nx, nxy if zc == 2 else 0, i0, i1 + 1, columns)
    count = start
    for i in range(i0, i1 + 1):
        case = _case(columns, i, full)
        if case == 0 or (careful is not None and careful
                         and not _finite_cell(s, i, j, k, nx, nxy, zc)):
            continue
        base = first + i
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
        for n in range(counts[case]):
            if careful is not None and careful and _repeats(found, table[case, n]):
                continue  # collapsed on a snapped point
            for m in range(per):
                cells[count, m] = found[table[case, n, m]]
            source[count] = i + (nx - 1) * (j + (ny - 1) * k)
            count += 1


@kernel(parallel=True)
def _count(s, value, bound, equal, zero, nx, ny, nz, zc, rows, careful_points, careful_cells,
           offsets, tables, point_counts, point_spans, cell_counts, cell_spans, bad):
    none = np.zeros(0, np.int64)
    n = rows.shape[0]
    for block in prange((n + _BLOCK - 1) // _BLOCK):
        columns = np.empty(nx, np.uint8)
        for x in range(block * _BLOCK, min(n, (block + 1) * _BLOCK)):
            r = rows[x]
            j, k = r % ny, r // ny
            # The screen, while the row is in cache.
            bad[r] = _screen_row(s, equal, zero, r * nx, nx)
            c = j + (ny - 1) * k
            cells_too = j + 1 < ny and (zc == 1 or k + 1 < nz)
            if careful_points is None or (not careful_points[r]
                                          and not (cells_too and careful_cells[c])):
                (point_counts[r], point_spans[r, 0], point_spans[r, 1], made, low,
                 high) = _fast_counts(s, bound, j, k, nx, ny, nz, zc, cells_too, tables[0],
                                      columns)
                if cells_too:
                    cell_counts[c], cell_spans[c, 0], cell_spans[c, 1] = made, low, high
                continue
            point_counts[r], point_spans[r, 0], point_spans[r, 1] = _point_row(
                s, value, bound, j, k, nx, ny, nz, zc, careful_points[r], _ZERO, nx - 1, none,
                none, np.zeros(0), _ZERO - 1, columns)
            if cells_too:
                cell_counts[c], cell_spans[c, 0], cell_spans[c, 1] = _count_cells(
                    s, value, bound, j, k, nx, ny, zc, careful_cells[c], tables[0], tables[1],
                    tables[2], offsets, columns)


@kernel(parallel=True)
def _emit_points(s, value, bound, nx, ny, nz, zc, careful_points, point_counts, point_spans,
                 point_start, lo, hi, t):
    n = ny * nz
    for block in prange((n + _BLOCK - 1) // _BLOCK):
        columns = np.empty(nx, np.uint8)
        for r in range(block * _BLOCK, min(n, (block + 1) * _BLOCK)):
            if point_counts[r]:
                careful = None if careful_points is None else careful_points[r]
                _point_row(s, value, bound, r % ny, r // ny, nx, ny, nz, zc, careful,
                           point_spans[r, 0], point_spans[r, 1], lo, hi, t, point_start[r],
                           columns)


@kernel(parallel=True)
def _emit_cells(s, value, bound, nx, ny, zc, careful_cells, offsets, tables, cut, cell_counts,
                cell_spans, cell_start, point_start, lo, hi, cells, source):
    n = cell_counts.shape[0]
    counts, table, edges = tables
    for block in prange((n + _BLOCK - 1) // _BLOCK):
        columns = np.empty(nx, np.uint8)
        found = np.empty(edges.shape[0], np.int64)
        for c in range(block * _BLOCK, min(n, (block + 1) * _BLOCK)):
            if cell_counts[c]:
                careful = None if careful_cells is None else careful_cells[c]
                _emit_cells_row(s, value, bound, c % (ny - 1), c // (ny - 1), nx, ny, zc,
                                careful, counts, table, edges, cut, offsets,
                                cell_spans[c, 0], cell_spans[c, 1], lo, hi, point_start, cells,
                                source, cell_start[c], columns, found)


def _exclusive(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def contour_structured(grid, scalars: np.ndarray, value: float, place=None) -> EdgeCut:
    """The compiled form of :func:`daxpy.worklets.contour.contour_structured`, on
    2-D and 3-D grids of float32 or float64 scalars.

    Raises
    ------
    CompiledUnavailable
        On 0-D and 1-D grids and other dtypes: the NumPy implementation serves them.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.worklets.contour import contour_structured as reference
    >>> g, t = daxpy.UniformGrid(dims=(4, 3, 2)), np.arange(24.0)
    >>> contour_structured(g, t, value=7.5).t.tolist() == reference(g, t, value=7.5).t.tolist()
    True
    """
    s, nx, ny, nz, dimension = structured_rows(
        grid, scalars, "the compiled contour marches 2-D and 3-D grids")
    zc = dimension - 1   # corners along z: 2 (voxels) or 1 (pixels)
    kind = _KINDS[dimension]
    counts, table, edges = TABLES[kind]
    tables = (counts, table, edges)
    offsets = np.array([(c & 1) + ((c >> 1) & 1) * nx + (c >> 2) * nx * ny
                        for c in range(4 * zc)], np.int64)
    value = float(value)
    bound = at_least_bound(s.dtype, value)
    n_cell_rows = (ny - 1) * max(nz - 1, 1)
    point_counts = np.zeros(ny * nz, np.int64)
    point_spans = np.zeros((ny * nz, 2), np.int64)
    cell_counts = np.zeros(n_cell_rows, np.int64)
    cell_spans = np.zeros((n_cell_rows, 2), np.int64)
    bad = np.zeros(ny * nz, bool)
    careful_points = careful_cells = None   # no row on the careful path, yet
    counted = (point_counts, point_spans, cell_counts, cell_spans, bad)
    # Every row on the fast path, screened as it goes; then the rows near a bad
    # one again, on the careful path (none, for most fields).
    screen = screen_values(s.dtype, value)
    _count(s, value, bound, *screen, nx, ny, nz, zc, np.arange(ny * nz), careful_points,
           careful_cells, offsets, tables, *counted)
    if bad.any():
        careful_points, careful_cells, again = _careful_rows(bad.reshape(nz, ny), zc)
        _count(s, value, bound, *screen, nx, ny, nz, zc, again, careful_points, careful_cells,
               offsets, tables, *counted)
    point_start, cell_start = _exclusive(point_counts), _exclusive(cell_counts)

    lo = np.empty(point_start[-1], np.int64)
    hi, t = np.empty_like(lo), np.empty(lo.shape[0])
    per = table.shape[2]
    cells = np.empty((cell_start[-1], per), np.int64)
    source = np.empty(cells.shape[0], np.int64)
    # The rows that emit anything are bunched where the surface is: blocks dealt
    # one at a time to the threads as they free up balance them.
    with parallel_chunksize(1):
        _emit_points(s, value, bound, nx, ny, nz, zc, careful_points, point_counts,
                     point_spans, point_start, lo, hi, t)
        _emit_cells(s, value, bound, nx, ny, zc, careful_cells, offsets, tables, _CUT[kind],
                    cell_counts, cell_spans, cell_start, point_start, lo, hi, cells, source)
    return EdgeCut(lo=lo, hi=hi, t=t, cells={per: cells}, source={per: source})
