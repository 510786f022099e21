"""Compiled CPU clip of unstructured grids: every cell block (vertices, lines,
triangles, quads, tetrahedra, hexahedra, wedges, pyramids) cut as the array
program cuts it, its :class:`~daxpy.worklets.clip.Clipped` bit for bit.

1. *count*: per cell (parallel over chunks of each block), its case from its
   corners' kept flags, kept as one byte a cell; per chunk, from the tables, its
   output cells, connectivity slots, centre points and cut edges;
2. *scan*: for a grid of one cell shape, exclusive sums over the chunks (a few
   thousand rows: NumPy), from which each chunk's cells count on; for mixed
   grids, each cell's counts stored at its input id and scanned in id order (on
   every core, :func:`~daxpy.worklets._scan_cpu.exclusive_rows`): each cell's
   first output cell, slot, centre point and cut-edge key, whatever its block;
3. *keys*: each cell's cut edges as ``lo * n + hi``; only these are sorted
   (in buckets of their high bits, on every core:
   :func:`~daxpy.worklets._scan_cpu.sorted_unique`), for the output points'
   ascending ``(lo, hi)`` order;
4. *emit*: each cell writes its output cells and centre points from its starts,
   so blocks of mixed grids interleave in input cell order without a sort; a
   cut edge's point is found by a search of its bucket of sorted keys.

A grid of one shape (most large grids) so writes no table of 32 bytes a cell
and reads none back: a clip of 1M hexahedra by a plane, 77 -> 65 ms on one
thread.

Kept points are numbered by a mask and a scan, as on structured grids. The passes
read each chunk's rows through slices indexed from 0, ids read unsigned where they
are known in range: Numba checks every index it cannot prove non-negative for
wrapping around, and that held each pass back (a count of 4M hexahedra on one
thread, 34-40 -> 20-30 ms).

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import TETRA
>>> g = daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [TETRA])
>>> made = clip_unstructured(g, np.array([1.0, 0, 0, 0]), value=0.5)
>>> made.cell_types.tolist(), made.kept.tolist(), made.ids.tolist()
([10], [0], [[0, 1], [0, 2], [0, 3]])
"""

from __future__ import annotations

import numpy as np

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, over_blocks
from ._marching import at_least_bound
from ._numba import CompiledUnavailable, count_type, kernel, kernel_dtype, refuse_bad_ids
from .clip import _SHAPES, TABLES, Clipped, _assemble
from ._scan_cpu import exclusive_rows, rank, ranks, sorted_unique
from ._clip_rows_cpu import _weight
from .clip_cpu import _CORNER_CODES, _case_arrays, new_points

_CHUNK = 1024
"""Cells (points, cut edges) per chunk dealt to a thread."""


def _chunks(n: int) -> int:
    return (n + _CHUNK - 1) // _CHUNK


def _vertex_arrays() -> tuple:
    """A vertex's table, in :func:`_case_arrays`' form: kept, it stays whole."""
    one = np.array([0, 1], np.int64)
    return (one, np.zeros(2, np.int64), one, np.zeros(2, np.int64), np.zeros(2, np.int64),
            np.array([1], np.uint8), np.array([1], np.int64), np.zeros((1, 8), np.int64),
            np.zeros((1, 1), np.int64), np.zeros((1, 1)))


def _kind_arrays(kind: str, invert: bool) -> tuple:
    """A kind's case tables, its edges' corners and each case's cut edges."""
    if kind == "vertex":
        return _vertex_arrays(), np.zeros((1, 2), np.int64), np.zeros(2, np.int64)
    edges = TABLES[(kind, invert)]["edges"]
    cases = TABLES[(kind, invert)]["count"].shape[0]
    crossed = np.array([sum((case >> a ^ case >> b) & 1 for a, b in edges)
                        for case in range(cases)], np.int64)
    return _case_arrays(kind, invert), edges, crossed


_TABLES = {(kind, invert): _kind_arrays(kind, invert)
           for kind in _SHAPES.values() for invert in (False, True)}
# A cell with every corner kept makes one cell, itself, its corners in order, and
# no centre: the emit pass copies those (most cells of a clip) without the tables.
for (_kind, _invert), (_t, _, _) in _TABLES.items():
    _whole = _t[1][_t[0].shape[0] - 1]
    if (_t[0][-1], _t[3][-1], tuple(_t[7][_whole, :_t[6][_whole]])) != \
            (1, 0, tuple(range(_t[6][_whole]))):
        raise ImportError(f"clip tables: a whole {_kind} is not itself")


# Serial kernels over ranges of chunks of cells, which _blocks_cpu.over_blocks
# deals to the threads (a parallel loop costs several times more to compile).
# Tables and outputs come one by one, not in tuples: tuples of arrays cost
# several times more to compile.

@kernel(inline="always")
def _case(kept, corners, x, corner_count):
    """Cell ``x``'s case (bit ``c`` set where its corner ``c`` is kept), -1 for a
    corner out of range (written into since the grid was checked: refused)."""
    n, case = kept.shape[0], 0
    for c in range(len(corner_count)):
        p = corners[x, c]
        if np.uint64(p) >= np.uint64(n):   # one compare: below 0 wraps around
            return -1
        # Read unsigned: an index Numba cannot prove non-negative is checked for
        # wrapping around on every read.
        case = case | (np.int64(kept[np.uint64(p)]) << c)
    return case


@block_kernel()
def _kept_flags(s, bound, flip, kept, first, last):
    """Chunks ``first`` to ``last`` of the points: 1 where ``s >= bound`` (in the
    field's dtype: :func:`~daxpy.worklets._marching.at_least_bound`), flipped by
    ``flip`` (NaN is below every bound: kept only by an inverted clip). NumPy's
    comparison, inequality and cast were three passes on one thread."""
    lo, hi = first * _CHUNK, min(s.shape[0], last * _CHUNK)
    values, flags = s[lo:hi], kept[lo:hi]
    for p in range(hi - lo):
        flags[p] = np.uint8((values[p] >= bound) != flip)


@block_kernel()
def _count(kept, corners, corner_count, made, slots, centres, crossed, cases, chunk_counts,
           first, last):
    """Chunks ``first`` to ``last``: each cell's case into ``cases`` (0 for a cell
    refused), and per chunk its cells' output cells, slots, centre points and cut
    edges, and its cells refused. ``corner_count``:
    :func:`~daxpy.worklets._numba.count_type` of the corners (the corner loop
    unrolled)."""
    m = corners.shape[0]
    for chunk in range(first, last):
        n_made, n_slots, n_centres, n_crossed, bad = 0, 0, 0, 0, 0
        lo, hi = chunk * _CHUNK, min(m, (chunk + 1) * _CHUNK)
        rows, found = corners[lo:hi], cases[lo:hi]
        for x in range(hi - lo):
            case = _case(kept, rows, x, corner_count)
            if case < 0:
                bad += 1
                case = 0   # counted as making nothing (the call is refused after)
            found[x] = case
            u = np.uint64(case)
            n_made += made[u]
            n_slots += slots[u]
            n_centres += centres[u]
            n_crossed += crossed[u]
        chunk_counts[chunk, 0], chunk_counts[chunk, 1] = n_made, n_slots
        chunk_counts[chunk, 2], chunk_counts[chunk, 3] = n_centres, n_crossed
        chunk_counts[chunk, 4] = bad


@block_kernel()
def _cell_counts(cases, cell_ids, made, slots, centres, crossed, counts, first, last):
    """Chunks ``first`` to ``last``'s cells' counts, at their input ids (a grid of
    several blocks: scanned in input cell order)."""
    m = cases.shape[0]
    for x in range(first * _CHUNK, min(m, last * _CHUNK)):
        case, cell = cases[x], cell_ids[x]
        counts[cell, 0], counts[cell, 1] = made[case], slots[case]
        counts[cell, 2], counts[cell, 3] = centres[case], crossed[case]


@block_kernel()
def _keys(corners, cases, cell_ids, crossed, edges, n, starts, by_cell, keys, first, last):
    """Chunks ``first`` to ``last``'s cells' cut edges as ``lo * n + hi``, from their
    key starts: each chunk's (a grid of one block), else each cell's
    (``by_cell``)."""
    m = corners.shape[0]
    for chunk in range(first, last):
        at = 0 if by_cell else starts[chunk, 3]
        lo, hi = chunk * _CHUNK, min(m, (chunk + 1) * _CHUNK)
        rows, found = corners[lo:hi], cases[lo:hi]
        for x in range(hi - lo):
            case = np.int64(found[x])
            if crossed[np.uint64(case)] == 0:
                continue
            if by_cell:
                at = starts[cell_ids[lo + x], 3]
            for e in range(edges.shape[0]):
                a, b = rows[x, edges[e, 0]], rows[x, edges[e, 1]]
                if (case >> edges[e, 0] ^ case >> edges[e, 1]) & 1:
                    keys[at] = min(a, b) * n + max(a, b)
                    at += 1


@block_kernel()
def _emit(s, value, renumber, corners, cases, cell_ids, made, start, centres, centre_start,
          types, sizes, codes, terms, shares, edges, cut_keys, shift, bucket_first, starts,
          by_cell, first_centre, ids, weights, centre_ids, centre_weights, connectivity,
          cell_offsets, cell_types, source, first, last):
    """Chunks ``first`` to ``last``'s cells' output cells and centre points, from
    their starts: each chunk's, counted on from cell to cell (a grid of one
    block), else each cell's (``by_cell``)."""
    n, m, k = renumber.shape[0] - 1, corners.shape[0], corners.shape[1]
    n_kept = renumber[n]
    whole = made.shape[0] - 1   # every corner kept
    whole_type = types[start[whole]]
    for chunk in range(first, last):
        at = 0 if by_cell else chunk
        q, slot, centre = starts[at, 0], starts[at, 1], starts[at, 2]
        # Ids read unsigned: the count refused any out of range.
        lo, hi = chunk * _CHUNK, min(m, (chunk + 1) * _CHUNK)
        rows, found, found_ids = corners[lo:hi], cases[lo:hi], cell_ids[lo:hi]
        for x in range(hi - lo):
            case, cell = np.int64(found[x]), found_ids[x]
            if made[np.uint64(case)] == 0:
                continue
            if by_cell:
                q, slot, centre = starts[cell, 0], starts[cell, 1], starts[cell, 2]
            if case == whole:
                # Itself: its corners renumbered, in order, with no table read.
                to = connectivity[slot:slot + k]
                for c in range(k):
                    to[c] = renumber[np.uint64(rows[x, c])]
                slot += k
                cell_types[q], source[q] = whole_type, cell
                cell_offsets[q + 1] = slot
                q += 1
                continue
            centre_at = first_centre + centre
            # Counted on here; q and slot by the loops below.
            centre += centres[case]
            # Each corner and cut edge numbered as an output cell reads it, not into a
            # buffer first: each kind of array a kernel allocates costs its first use a
            # compile.
            for o in range(start[case], start[case] + made[case]):
                for j in range(sizes[o]):
                    code = codes[o, j]
                    if code < 0:
                        connectivity[slot] = centre_at - 1 - code
                    elif code < _CORNER_CODES:
                        connectivity[slot] = renumber[rows[x, code]]
                    else:
                        a = rows[x, edges[code - _CORNER_CODES, 0]]
                        b = rows[x, edges[code - _CORNER_CODES, 1]]
                        connectivity[slot] = n_kept + rank(cut_keys, shift, bucket_first,
                                                           min(a, b) * n + max(a, b))
                    slot += 1
                cell_types[q], source[q] = types[o], cell
                cell_offsets[q + 1] = slot
                q += 1
            for j in range(centres[case]):
                term = centre_start[case] + j
                for t in range(terms.shape[1]):
                    code = terms[term, t]
                    if code < _CORNER_CODES:
                        a = b = rows[x, code]
                        w = 0.0
                    else:
                        one = rows[x, edges[code - _CORNER_CODES, 0]]
                        other = rows[x, edges[code - _CORNER_CODES, 1]]
                        a, b = min(one, other), max(one, other)
                        w = _weight(s, value, a, b)
                    # The first term in the point's two columns, the others in
                    # the centre table, as the array program writes them.
                    if t == 0:
                        row = centre_at + j
                        ids[row, 0], ids[row, 1] = a, b
                        weights[row, 0] = (1.0 - w) * shares[term, t]
                        weights[row, 1] = w * shares[term, t]
                    else:
                        c = centre_at + j - first_centre
                        centre_ids[c, 2 * t - 2], centre_ids[c, 2 * t - 1] = a, b
                        centre_weights[c, 2 * t - 2] = (1.0 - w) * shares[term, t]
                        centre_weights[c, 2 * t - 1] = w * shares[term, t]


@block_kernel()
def _point_rows(s, value, kept, renumber, cut_keys, kept_ids, ids, weights, first, last):
    """Chunks ``first`` to ``last`` of the output points: the kept points' ids
    (ascending) in the first chunks, then the cut edges' rows (ascending key; the
    rows of ``ids`` and ``weights`` after the kept points', left unwritten: no terms
    of a kept point are read, its values are copied by ``kept_ids``)."""
    n, m = kept.shape[0], cut_keys.shape[0]
    kept_chunks, n_kept = (n + _CHUNK - 1) // _CHUNK, renumber[n]
    for chunk in range(first, last):
        if chunk < kept_chunks:
            lo, hi = chunk * _CHUNK, min(n, (chunk + 1) * _CHUNK)
            flags, numbers = kept[lo:hi], renumber[lo:hi]
            for p in range(hi - lo):
                if flags[p]:
                    kept_ids[np.uint64(numbers[p])] = lo + p
            continue
        at = (chunk - kept_chunks) * _CHUNK
        for e in range(at, min(m, at + _CHUNK)):
            lo = cut_keys[e] // n
            hi = cut_keys[e] - lo * n
            t = _weight(s, value, lo, hi)
            ids[n_kept + e, 0], ids[n_kept + e, 1] = lo, hi
            weights[n_kept + e, 0], weights[n_kept + e, 1] = 1.0 - t, t


def clip_unstructured(grid, scalars: np.ndarray, value: float, invert: bool = False,
                      place=None) -> Clipped:
    """The compiled form of :func:`daxpy.worklets.clip.clip_cells` on unstructured
    grids of float32 or float64 scalars: parameters and result as
    :func:`~daxpy.worklets.clip_cpu.clip_structured`'s.

    Raises
    ------
    CompiledUnavailable
        For other dtypes and cell shapes: the array program serves them.
    IndexError
        If a cell's point id went out of range since the grid was checked.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import QUAD
    >>> from daxpy.worklets.clip import clip_cells as reference
    >>> g = daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [QUAD])
    >>> t = np.array([0.0, 1, 2, 3])
    >>> ours, theirs = clip_unstructured(g, t, 1.5, True), reference(g, t, 1.5, True)
    >>> ours.connectivity.tolist() == theirs.connectivity.tolist()
    True
    """
    blocks = list(grid.cell_blocks().values())
    if any(b.shape.name not in _SHAPES for b in blocks) or scalars.ndim != 1:
        raise CompiledUnavailable("the compiled clip cuts the shapes of its tables")
    s = np.ascontiguousarray(kernel_dtype(scalars)[0])
    value = float(value)
    kept = host_empty(s.shape[0], np.uint8)
    over_blocks(_kept_flags, _chunks(s.shape[0]), s, at_least_bound(s.dtype, value),
                np.bool_(invert), kept)
    pieces = [(np.ascontiguousarray(b.corners, np.int64), np.ascontiguousarray(
        b.cell_ids, np.int64), _TABLES[(_SHAPES[b.shape.name], bool(invert))]) for b in blocks]
    return _clipped(s, value, kept, pieces, grid.n_cells)


def _counted(kept, pieces: list, n_input_cells: int) -> tuple:
    """Each piece's cases and output cells, and the starts the later passes read:
    each chunk's, for a grid of one block (its cells in input order), else each
    input cell's (so that mixed blocks' outputs interleave in input cell order)."""
    cases, chunk_counts = [], []
    for corners, cells, (tables, _, crossed) in pieces:
        cases.append(host_empty(corners.shape[0], np.uint8))   # 8 corners: 256 cases
        chunk_counts.append(host_empty((_chunks(corners.shape[0]), 5), np.int64))
        over_blocks(_count, chunk_counts[-1].shape[0], kept, corners,
                    count_type(corners.shape[1]), tables[0], tables[2], tables[3], crossed,
                    cases[-1], chunk_counts[-1])
    refuse_bad_ids(sum(int(c[:, 4].sum()) for c in chunk_counts))
    made = [int(c[:, 0].sum()) for c in chunk_counts]
    if len(pieces) == 1:
        starts = np.zeros((chunk_counts[0].shape[0] + 1, 4), np.int64)
        np.cumsum(chunk_counts[0][:, :4], axis=0, out=starts[1:])
        return cases, made, starts
    # Every cell's row is written by its block (no zeros first: a pass over 32
    # bytes a cell, on one thread).
    counts = host_empty((n_input_cells, 4), np.int64)
    for (corners, cells, (tables, _, crossed)), found in zip(pieces, cases):
        over_blocks(_cell_counts, _chunks(corners.shape[0]), found, cells, tables[0],
                    tables[2], tables[3], crossed, counts)
    return cases, made, exclusive_rows(counts)


def _clipped(s, value: float, kept, pieces: list, n_input_cells: int) -> Clipped:
    """Count, scan, sort the cut edges and emit, over every block."""
    n = s.shape[0]
    cases, made, starts = _counted(kept, pieces, n_input_cells)
    by_cell = len(pieces) > 1
    n_cells, n_slots, n_centres, n_keys = (int(x) for x in starts[-1])
    if n_cells == 0:
        # As the array program: a clip that leaves no cell keeps no point either,
        # but a grid of no cells keeps its kept points (as VTK).
        return _assemble([], kept.astype(bool) if n_input_cells == 0 else np.zeros(n, bool),
                         np)
    # Each kept point's place among them, the count last, on every core (NumPy's
    # cumsum: 2.3 ms on one thread for 1M points); other points' entries go unread.
    renumber = exclusive_rows(kept.reshape(-1, 1))[:, 0]
    keys = host_empty(n_keys, np.int64)
    for (corners, cells, (_, edges, crossed)), found in zip(pieces, cases):
        over_blocks(_keys, _chunks(corners.shape[0]), corners, found, cells, crossed, edges, n,
                    starts, by_cell, keys)
    cut_keys = sorted_unique(keys, n * n)   # the cut edges' only sort
    n_points = int(renumber[-1]) + cut_keys.shape[0] + n_centres
    # As wide as the widest centre of a kind that made cells (two columns at least).
    width = max([2] + [2 * tables[8].shape[1] for (_, _, (tables, _, _)), count
                       in zip(pieces, made) if count])
    points = new_points(n_points, n_centres, width)
    out = (host_empty(n_slots, np.int64), host_empty(n_cells + 1, np.int64),
           host_empty(n_cells, np.uint8), host_empty(n_cells, np.int64))
    out[1][0] = 0
    n_kept = int(renumber[-1])
    kept_ids = host_empty(n_kept, np.int64)
    over_blocks(_point_rows, _chunks(n) + _chunks(cut_keys.shape[0]), s, value, kept, renumber,
                cut_keys, kept_ids, points[0], points[1])
    first_centre = n_points - n_centres
    # The cut edges' keys, with an index that finds each among a few.
    shift, bucket_first = ranks(cut_keys, n * n)
    for (corners, cells, (tables, edges, _)), found in zip(pieces, cases):
        over_blocks(_emit, _chunks(corners.shape[0]), s, value, renumber, corners, found, cells,
                    *(tables[t] for t in (0, 1, 3, 4, 5, 6, 7, 8, 9)), edges, cut_keys, shift,
                    bucket_first, starts, by_cell, first_centre, *points, *out)
    return Clipped(kept_ids, points[0][n_kept:], points[1][n_kept:],
                   np.arange(first_centre - n_kept, n_points - n_kept, dtype=np.int64),
                   *points[2:], *out)
