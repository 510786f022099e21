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
2. *scan*: exclusive sums of the blocks' counts (blocks of rows, each thread's
   the same in both passes): the one place the output's size is known, before
   anything is written; each row's start is counted on from its block's by the
   thread that counted the row;
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

The passes' kernel is :func:`~daxpy.worklets._contour_march_cpu._march`.

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

from ._contour_careful_cpu import _around, _beside, _careful_rows, _outputs_of, screen_values
from ._contour_careful_rows_cpu import _march_careful, _threads_for
from ._contour_march_cpu import _march
from ._contour_rows_cpu import _BLOCK, _plane_changes
from ._edge_cut import EdgeCut
from ._edge_points_cpu import axis_places, place_rows
from ._contour_slots import _CUT, _KINDS, _SLOTTED
from ._marching import TABLES, at_least_bound
from ._blocks_cpu import on_threads, over_blocks
from ._numba import rows_or_terms, threads
from ._scan_cpu import exclusive
from .plane_cuts import array_axis_distance


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
    changes = none = np.zeros(0, np.int64)
    if px.shape[0] != 0:   # each point row's change of side, found once for the count
        changes = host_empty(ny * nz, np.int64)
        over_blocks(_plane_changes, (ny * nz + _BLOCK - 1) // _BLOCK, px, py, pz, bound,
                    np.int64(ny), changes)
    march = (s, px, py, pz, changes, value, bound, *screen_values(s.dtype, value), nx, ny, nz,
             zc)
    # No row on the careful path, yet (empty flags: none; not a row's flag each, made
    # on one thread and read on all); nothing to write into, yet.
    careful_points = searched = np.zeros(0, bool)
    nothing = (none, none, np.zeros(0), np.zeros((0, per), np.int64), none)
    unplaced = (np.zeros((3, 0, 3)), np.zeros((0, 3), np.float32))
    starts = (none, none)   # every row's: made only for the careful path
    # Each block's point and cell outputs (then where they start) and bad rows.
    n_blocks = (ny * nz + _BLOCK - 1) // _BLOCK
    blocks = np.empty((3, n_blocks + 1), np.int64)

    def run(writing, outputs, placing, edge_rows):
        on_threads(_march, step, *march, writing, careful_points, searched, edge_rows, counts,
                   _SLOTTED[kind], point_counts, point_spans, cell_counts, cell_spans, blocks,
                   bad, *outputs, *placing, scratch, scratch_words, slots)

    def run_careful(mode, rows, outputs):
        on_threads(_march_careful, _threads_for(rows.shape[0], step), np.int64(mode), s, value,
                   bound, nx, ny, nz, zc, rows, careful_cells, counts, table, edge_table, offsets,
                   _CUT[kind], point_counts, point_spans, starts[0], cell_counts, cell_spans,
                   starts[1], *outputs, known, scratch, scratch_words, slots)

    # Every row on the fast path, screened as it goes; then the rows near a bad one
    # again, on the careful path (none, for most fields).
    run(False, nothing, unplaced, searched)   # (edge_rows: read writing only)
    careful = blocks[2, 1:].any()
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
        # The blocks' starts are their first rows' (the counts of the blocks changed).
        first = np.arange(n_blocks) * _BLOCK
        blocks[0, :-1] = starts[0][first]
        blocks[1, :-1] = starts[1][np.minimum(first % ny + (ny - 1) * (first // ny),
                                              n_cell_rows)]
        blocks[:2, -1] = starts[0][-1], starts[1][-1]
    else:
        blocks[:2, 0] = 0
        np.cumsum(blocks[:2], axis=1, out=blocks[:2])
    # From the pool of host blocks: on one 16-core host the write pass took 10.7 ms
    # into fresh arrays (their pages faulted in as written) and 6.0 into reused ones.
    n_points = int(blocks[0, -1])
    # The points' coordinates too, where the march knows each point's (i, j, k):
    # on uniform and rectilinear grids whose axes are the march's (3-D, or 2-D in
    # x and y; in other planes the surface makes them from the edges after).
    placing = unplaced
    if grid.family in ("uniform", "rectilinear") and all(
            int(d) > 1 for d in grid.dims[:dimension]):
        placing = (axis_places(grid), host_empty((n_points, 3), np.float32))
    edges = edges or placing is unplaced   # (unplaced, the surface's points need them)
    edge_rows = np.array([edges])   # every row's
    if careful and not edges:
        # The careful cell rows look their points up among their point rows' edges.
        edge_rows = _around(searched.reshape(-1, ny - 1), nz, zc).ravel()
    made = n_points if edges or careful else 0
    lo, hi = host_empty(made, np.int64), host_empty(made, np.int64)
    t = host_empty(made, np.float64)
    cells = host_empty((int(blocks[1, -1]), per), np.int64)
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

