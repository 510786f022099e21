"""The emit pass of the compiled structured clip (:mod:`daxpy.worklets.clip_cpu`):
each point row writes its kept points and cut edges, each cell row its cells, their
centre points and the point numbers of their corners, from the count pass's flags
and the scans' starts.

A cell row walks its four point rows (a pixel row's two, each twice) in scalars:
their flags at x and x + 1, and how many kept points and cut edges come before x.
A cell with every corner kept (most kept cells) is written without the tables;
a cut cell numbers its corners and edges from those counters as its output cells
read them.

Examples
--------
>>> int(_CUTS[0b1110]), int(_CUTS[0b0001])   # a point's flag: kept bit, then x, y, z cuts
(3, 0)
"""

from __future__ import annotations

import numpy as np

from ._blocks_cpu import block_kernel
# The contour's table of a column's bits at the cell corners' case bits (the emit
# pass looks it up: each inlined call costs the first use's compile more than a
# lookup costs the run).
from ._contour_rows_cpu import _SPREAD
from ._numba import kernel

_CUTS = np.array([(f >> 1 & 1) + (f >> 2 & 1) + (f >> 3 & 1) for f in range(16)], np.int64)
"""Per point flag, how many of its x, y and z edges are cut (as ``_cut``)."""


@kernel(inline="always")
def _spread(column):
    """A column's bits (its rows (y, z): (0, 0), (1, 0), (0, 1), (1, 1)) at the case
    bits of the cell corners at x = 0 (VTK's voxel and pixel corner order), as the
    contour's table ``_SPREAD`` (:mod:`daxpy.worklets._contour_rows_cpu`) has them
    (inlined here: a call costs the clip's compile a function of its own)."""
    return (column & 1) | ((column & 2) << 1) | ((column & 4) << 2) | ((column & 8) << 3)


@kernel(inline="always")
def _cut(flag):
    """How many of a point's x, y and z edges are cut (flag bits 1 to 3)."""
    return ((flag >> 1) & 1) + ((flag >> 2) & 1) + ((flag >> 3) & 1)


@kernel(inline="always")
def _value(s, px, py, pz, p, i, j, k):
    """Point ``p``'s scalar in float64 (``p`` is point (i, j, k)): ``s[p]``, or with a
    plane's axes' terms (``px`` not empty) its distance ``(px[i] + py[j]) + pz[k]``,
    the clip's implicit plane's order, made where it is read."""
    if px.shape[0] == 0:
        return np.float64(s[p])
    return (px[i] + py[j]) + pz[k]


@kernel(inline="always")
def _weight_of(value, low, high):
    """The array program's cut weight between float64 end values ``low`` and ``high``."""
    return (value - low) / (high - low) if high != low else 0.0


@kernel(inline="always")
def _weight(s, value, lo, hi):
    """The array program's cut weight along edge (lo, hi) of a field, in float64."""
    return _weight_of(value, np.float64(s[lo]), np.float64(s[hi]))


@kernel(inline="always")
def _row_weight(s, px, py, pz, value, lo, i, j, k, axis, step):
    """:func:`_weight` along the edge from point ``lo``, which is (i, j, k), to its
    next point along ``axis`` (``step`` further), of the field or of a plane's
    distance (:func:`_value`): the points' indices are known where the rows walk, not
    divided out of their ids."""
    return _weight_of(value, _value(s, px, py, pz, lo, i, j, k),
                      _value(s, px, py, pz, lo + step, i + (axis == 0), j + (axis == 1),
                             k + (axis == 2)))


@kernel(inline="always")
def _emit_points(s, px, py, pz, value, first, nx, ny, flags, kept_at, cut_at, kept_ids, ids,
                 weights):
    """A point row's kept points' ids (from ``kept_at``) and cut edges' terms (from
    ``cut_at``, rows of ``ids`` and ``weights`` after the kept points', which are
    left unwritten: a kept point's values are copied by its id)."""
    j, k = (first // nx) % ny, first // (nx * ny)
    row = flags[first:first + nx]   # indexed from 0: no check for wrapping
    for i in range(nx):
        flag = row[i]
        if flag == 0:
            continue
        p = first + i
        if flag & 1:
            kept_ids[np.uint64(kept_at)] = p
            kept_at += 1
        for axis in range(3):
            if flag & (2 << axis):
                step = 1 if axis == 0 else nx if axis == 1 else nx * ny
                t = _row_weight(s, px, py, pz, value, p, i, j, k, axis, step)
                to = np.uint64(cut_at)
                ids[to, 0], ids[to, 1] = p, p + step
                weights[to, 0], weights[to, 1] = 1.0 - t, t
                cut_at += 1


@kernel(inline="always")
def _emit_centres(s, px, py, pz, value, base, i, j, k, case, offsets, places, centres,
                  centre_start, terms, shares, ids, weights, centre_ids, centre_weights, at,
                  first_centre):
    """The centre points of the cell at ``base`` (its first corner, point (i, j, k)),
    from row ``at``: each term's ends side by side, as the array program writes them
    (the first term in the point's two columns, the others in the centre table)."""
    for u in range(centres[case]):
        term = centre_start[case] + u
        row = at + u
        for m in range(terms.shape[1]):
            code = terms[term, m]
            a = base + offsets[code, 0]
            b = base + offsets[code, 1]
            row_of, axis = places[code, 0], places[code, 2]
            t = 0.0 if axis < 0 else _row_weight(s, px, py, pz, value, a, i + places[code, 1],
                                                 j + (row_of & 1), k + (row_of >> 1), axis,
                                                 b - a)
            share = shares[term, m]
            if m == 0:
                ids[row, 0], ids[row, 1] = a, b
                weights[row, 0], weights[row, 1] = (1.0 - t) * share, t * share
            else:
                c = row - first_centre
                centre_ids[c, 2 * m - 2], centre_ids[c, 2 * m - 1] = a, b
                centre_weights[c, 2 * m - 2] = (1.0 - t) * share
                centre_weights[c, 2 * m - 1] = t * share


@kernel(inline="always")
def _code_point(code, places, kept, cuts, flags, after):
    """The output point of a cut cell's corner or edge ``code``: a kept corner's
    number, or a cut edge's, from its row's counters (per row of the cell, the kept
    points and cut edges before x, and the flags at x and x + 1)."""
    row, dx, axis = places[code, 0], places[code, 1], places[code, 2]
    flag = flags[row]
    if axis < 0:
        return kept[row] + dx * (flag & 1)
    # Edges of the points before, then this point's edges of lower axes.
    near = after[row] if dx else flag
    return cuts[row] + dx * _CUTS[flag] + _CUTS[near & ((2 << axis) - 2)]


@block_kernel()
def _emit_rows(s, px, py, pz, value, nx, ny, nz, zc, made, start, centres, centre_start,
               types, sizes,
               codes, terms, shares, places, offsets, flags, point_start, cell_start,
               totals, kept_ids, ids, weights, centre_ids, centre_weights, connectivity,
               cell_offsets, cell_types, source, first_row, last_row):
    """Point rows ``first_row`` to ``last_row``'s points, and their cell rows' cells,
    with their connectivity and centre points.

    The tables (:func:`daxpy.worklets.clip_cpu._case_arrays`) and the output arrays
    come one by one, not in tuples, and the cell rows are written here, not in a
    function of their own: both cost several times more to compile.

    A cell row's four point rows (a pixel row's two, each twice) are walked in
    scalars, which stay in registers: their flags at x and x + 1, and how many
    kept points and cut edges come before x; a cut cell's corners and edges are
    numbered from them as its output cells read them (no buffer: each kind of array
    a kernel allocates costs its first use a compile)."""
    full = (1 << 4 * zc) - 1
    whole = start[full]   # a cell of every corner kept: its one output cell, uncut
    first_cut, first_centre = totals[0], totals[0] + totals[1]
    for r in range(first_row, last_row):
        j, k = r % ny, r // ny
        c = j + (ny - 1) * k
        # Rows that keep and cut nothing (far from the cut, on its outer side), and
        # cell rows that make no cell, have nothing to write.
        if point_start[r + 1, 0] + point_start[r + 1, 1] > point_start[r, 0] + point_start[r, 1]:
            _emit_points(s, px, py, pz, value, r * nx, nx, ny, flags, point_start[r, 0],
                         first_cut + point_start[r, 1], kept_ids, ids, weights)
        if (j + 1 == ny or (zc == 2 and k + 1 == nz)
                or cell_start[c + 1, 0] == cell_start[c, 0]):
            continue
        b0, b1 = r * nx, (r + 1) * nx
        b2, b3 = b0 + nx * ny * (zc - 1), b1 + nx * ny * (zc - 1)
        k0, k1 = point_start[r, 0], point_start[r + 1, 0]
        k2, k3 = point_start[b2 // nx, 0], point_start[b3 // nx, 0]
        c0, c1 = first_cut + point_start[r, 1], first_cut + point_start[r + 1, 1]
        c2, c3 = first_cut + point_start[b2 // nx, 1], first_cut + point_start[b3 // nx, 1]
        # The four point rows' flags as row slices: indices from 0, which need no
        # wrapping around below zero.
        row0, row1 = flags[b0:b0 + nx], flags[b1:b1 + nx]
        row2, row3 = flags[b2:b2 + nx], flags[b3:b3 + nx]
        f0, f1, f2, f3 = row0[0], row1[0], row2[0], row3[0]
        column = (f0 & 1) | ((f1 & 1) << 1) | ((f2 & 1) << 2) | ((f3 & 1) << 3)
        q, slot = cell_start[c, 0], cell_start[c, 1]
        centre_at = first_centre + cell_start[c, 2]
        for i in range(nx - 1):
            g0, g1, g2, g3 = row0[i + 1], row1[i + 1], row2[i + 1], row3[i + 1]
            after = (g0 & 1) | ((g1 & 1) << 1) | ((g2 & 1) << 2) | ((g3 & 1) << 3)
            # A pixel's rows 2 and 3 are its rows 0 and 1: the same bits.
            case = 0 if (column | after) == 0 else (
                (_SPREAD[column] | (_SPREAD[after] << 1)) & full)
            if case == full:
                # Most cells are kept whole: clip_cpu._WHOLE's corners, each the next
                # kept point of its row, written without reading the tables.
                at = np.uint64(slot)
                connectivity[at], connectivity[at + np.uint64(1)] = k0, k0 + 1
                connectivity[at + np.uint64(2)], connectivity[at + np.uint64(3)] = k1 + 1, k1
                if zc == 2:
                    connectivity[at + np.uint64(4)], connectivity[at + np.uint64(5)] = k2, k2 + 1
                    connectivity[at + np.uint64(6)], connectivity[at + np.uint64(7)] = k3 + 1, k3
                slot += 4 * zc
                cell = np.uint64(q)   # (unsigned: no check for wrapping)
                cell_types[cell], source[cell] = types[whole], i + (nx - 1) * c
                cell_offsets[cell + np.uint64(1)] = slot
                q += 1
            elif case:
                row_kept, row_cuts = (k0, k1, k2, k3), (c0, c1, c2, c3)
                here, beyond = (f0, f1, f2, f3), (g0, g1, g2, g3)
                for o in range(start[case], start[case] + made[case]):
                    for m in range(sizes[o]):
                        code = codes[o, m]
                        connectivity[slot] = centre_at - 1 - code if code < 0 else _code_point(
                            code, places, row_kept, row_cuts, here, beyond)
                        slot += 1
                    cell_types[q], source[q] = types[o], i + (nx - 1) * c
                    cell_offsets[q + 1] = slot
                    q += 1
                if centres[case]:
                    _emit_centres(s, px, py, pz, value, b0 + i, i, j, k, case, offsets,
                                  places, centres, centre_start, terms, shares, ids, weights,
                                  centre_ids, centre_weights, centre_at, first_centre)
                    centre_at += centres[case]
            k0, k1, k2, k3 = k0 + (f0 & 1), k1 + (f1 & 1), k2 + (f2 & 1), k3 + (f3 & 1)
            c0, c1, c2, c3 = c0 + _CUTS[f0], c1 + _CUTS[f1], c2 + _CUTS[f2], c3 + _CUTS[f3]
            f0, f1, f2, f3, column = g0, g1, g2, g3, after
