"""The contour of a 3-D structured grid's point field on the GPU, one grid row per warp.

The array program (:mod:`daxpy.worklets._marching`) classifies every cell, then
sorts the cut edges of the output triangles to merge them into points: about
twenty CuPy passes, a sort among them. Here, as in Flying Edges, each warp owns a
row of points ``(j, k)`` and these kernels do the work:

1. *bits*: a bit a point, in words of 32 along each row: at or above the value, and
   equal to it (each value read once, ``x`` along the lanes);
2. *classify*: from the words of a row and the rows after it in y and z (a lane a
   word), each row's number of output points and of triangles (of the cells whose
   corner 0 is in the row), which stretches of 32 points (words) have a cut edge
   or a point, and there each point's byte (at or above the value; which of its x,
   y and z edges are cut and make their own points; whether its value equals the
   value);
3. one exclusive scan over the rows' point counts then their triangle counts; a
   one-thread kernel writes the output sizes into page-locked memory, then the one
   host sync;
4. *emit*: over the stretches where one of its four corner rows has work (a
   fifth of them at 512³), each row's points at their final index (a warp scan
   gives each lane's first), and each cell's triangles, whose corners are the ids
   of its cut edges: its four corner rows' starts plus in-row scans.

A classify pass that compared each value itself, four points a lane, read each value
four times (once for each row whose cells it is a corner of) and was bound by its
instructions: at 512³ on an H200, 413M warp instructions (0.74 ms under ncu) against
the bits' and classify's 210M (0.18 + 0.19 ms), the whole cut 1.45 -> 1.18 ms
(``benchmarks/NOTES.md``). Emit is the most of what is left (0.99 ms under ncu).

Output is the array program's, bit for bit: points by lower point id, then axis
(x, y, z), which is ascending ``(lo, hi)``; triangles by cell id, then VTK's
table order; ``t = (value - s[lo]) / (s[hi] - s[lo])`` in float64. Every cut
edge is used by a triangle (true of VTK's voxel table: checked by the tests), so
every cut edge is a point. Its rules for a point whose value equals the value
hold here too: the cuts at that point are one output point, the point itself
(``lo == hi``, ``t = 0``), and triangles with two corners on it are dropped.
Where a value is not finite (cells with NaN corners make nothing) the array
program runs instead: :func:`contour_rows` returns None.

Specializations: the field's dtype, or a plane's distance made from the grid's axes
where it is read (:class:`~daxpy.cuda.plane_distance.PlaneDistance`: a slice). The
case tables come from the caller (VTK's, :data:`daxpy.worklets._marching.TABLES`) and
are compiled into the source (:mod:`daxpy.cuda.contour_rows_source`).

Examples
--------
>>> callable(contour_rows)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .compile import get_kernel
from .contour_rows_source import ROWS, source_for
from .plane_distance import PlaneDistance

_KERNELS: dict[str, tuple] = {}
"""Per dtype character: the tables the kernels were built from, then the kernels."""

SCAN_ONE_BLOCK = 1 << 16
"""Row counts (points' and triangles', together) scanned by one block of one kernel
that also writes the output's sizes (a slab's: one launch); more are scanned by
CuPy's scan, which spreads over the GPU (a whole 512³ grid's million, in a
fraction of the one block's time), and a one-thread kernel then writes the sizes."""


def _kernels(dtype, tables: tuple, plane: bool = False) -> tuple:
    """The classify, sizes and emit kernels of a dtype (or of a plane's distance), kept
    per tables object: building and hashing the source (its tables are 4,000 numbers)
    takes about a millisecond, longer than the kernels at 256³."""
    key = "plane" if plane else dtype.char  # a dtype's name takes microseconds to make
    kept = _KERNELS.get(key)
    if kept is None or kept[0] is not tables:
        name, source = source_for(dtype, *tables, plane=plane)
        kept = _KERNELS[key] = (tables, *(get_kernel(f"{name}_{part}", source)
                                          for part in ("classify", "sizes", "emit",
                                                       "scan", "bits")))
    return kept[1:]


@dataclass
class RowsClassified:
    """The classify pass's results for one grid (or slab), waiting for the host to
    read the output's sizes (:meth:`sizes`) before :func:`emit_rows`.

    ``own_rows`` point rows (``j + ny k``) emit: all of them for a whole grid; a
    slab's without its last two planes, there only for its cells' far corners.
    """

    fields: tuple
    dims: tuple
    value: float
    own_rows: int
    flags: Any
    active: Any
    starts: Any
    host: Any
    kernels: tuple
    ready: Any

    def sizes(self) -> tuple[int, int, bool]:
        """``(points, triangles, unusual)`` of the own rows, after waiting for the
        classify pass: unusual where a value is not finite (the array program's
        rules apply) or where point ids would pass 32 bits."""
        self.ready.synchronize()
        n_points, n_tris, odd = (int(v) for v in np.frombuffer(self.host, np.int64, 3))
        return n_points, n_tris, bool(odd) or n_points >= 2**31


class RowsScratch:
    """The classify pass's buffers for grids of up to ``rows`` point rows of ``nx``
    points, reused by the slabs of one grid (a slab's classify must not write them
    before the emit of the slab that last used them has read them: the caller
    orders the two, one stream or an event): five fewer allocations a slab for the
    host to make while the bus waits.

    Its flag of values that are not finite is never cleared: the first slab that
    sets it sends the whole grid to the array program.

    Examples
    --------
    >>> callable(RowsScratch)
    True
    """

    def __init__(self, nx: int, rows: int):
        import cupy

        self.flags = cupy.empty(nx * rows, cupy.uint8)
        self.in_words = cupy.empty(rows * ((nx + 31) // 32), cupy.uint32)
        self.ex_words = cupy.empty(rows * ((nx + 31) // 32), cupy.uint32)
        self.row_counts = cupy.empty(2 * rows, cupy.int32)
        self.active = cupy.empty(rows * ((nx + 31) // 32), cupy.uint8)
        self.unusual = cupy.zeros(1, cupy.int32)
        # Item 0 stays 0: the scan writes the items after it.
        self.starts = cupy.zeros(2 * rows + 1, cupy.int64)
        self.host = cupy.cuda.alloc_pinned_memory(3 * 8)


def classify_rows(scalars: Any, dims: tuple, value: float, bound: Any, tables: tuple,
                  own_rows: int | None = None, plane_below: bool = False,
                  scratch: RowsScratch | None = None) -> RowsClassified:
    """Enqueue the classify pass of :func:`contour_rows` and the scans of its rows'
    counts; the sizes are read by :meth:`RowsClassified.sizes` (the one host sync).

    Parameters are those of :func:`contour_rows`, and ``own_rows``: the point rows
    that emit (default: all of them); ``plane_below``: ``scalars`` is a slab of a
    larger grid whose plane below it is in memory just before it (a point at the
    value makes a point of its own where an edge from below is cut); ``scratch``:
    buffers to reuse (:class:`RowsScratch`; default: new ones).

    Examples
    --------
    >>> callable(classify_rows)
    True
    """
    import cupy

    nx, ny, nz = (int(d) for d in dims)
    plane = isinstance(scalars, PlaneDistance)
    if plane and scalars.x_first:
        raise ValueError("the contour's row kernels add a plane's z term first")
    if not plane:
        scalars = cupy.ascontiguousarray(scalars)
    kernels = _kernels(scalars.dtype, tables, plane)
    # The field and, for a plane, its y and z terms (a field's kernels ignore them).
    fields = (scalars.px, scalars.py, scalars.pz) if plane else (scalars, scalars, scalars)
    rows = ny * nz
    own_rows = rows if own_rows is None else int(own_rows)
    scratch = scratch or RowsScratch(nx, rows)
    n_words = rows * ((nx + 31) // 32)
    flags, active = scratch.flags[:nx * rows], scratch.active[:n_words]
    words = (scratch.in_words[:n_words], scratch.ex_words[:n_words])
    row_counts, starts = scratch.row_counts[:2 * rows], scratch.starts[:2 * rows + 1]
    # A value equals ``value`` in float64 exactly where it equals it in its own dtype,
    # if ``value`` is one of that dtype's numbers (else none does: NaN equals nothing).
    at = scalars.dtype.type(value)
    at = at if float(at) == value else scalars.dtype.type(np.nan)
    warps = ((rows + ROWS - 1) // ROWS,), (32, ROWS)
    bound = scalars.dtype.type(bound)
    kernels[4](*warps, (*fields, bound, at, np.int32(nx), np.int32(ny), np.int32(nz),
                        np.int32(not plane and scalars.data.ptr % 16 == 0), *words,
                        scratch.unusual))
    # Classify: a lane a word of 32 points, rows of 16 words or fewer sharing a warp.
    group = min(32, 1 << (((nx + 31) // 32) - 1).bit_length())
    kernels[0]((-(-rows // (ROWS * (32 // group))),), (32, ROWS),
               (*fields, bound, np.int32(nx), np.int32(ny), np.int32(nz), *words, flags,
                row_counts[:rows], row_counts[rows:], active, np.int32(plane_below),
                np.int32(group)))
    # The points' and the triangles' row counts in one scan; the triangles' starts
    # are its second half less its first item, taken off by the kernels. The
    # output's sizes, and whether the array program must run, are written into
    # page-locked memory, read after the one host sync.
    if 2 * rows <= SCAN_ONE_BLOCK:
        kernels[3]((1,), (1024,), (row_counts, np.int32(2 * rows), starts, np.int32(rows),
                                   np.int32(own_rows), scratch.unusual,
                                   np.uint64(scratch.host.ptr)))
    else:
        cupy.cumsum(row_counts, dtype=cupy.int64, out=starts[1:])
        kernels[1]((1,), (1,), (starts, starts[rows:], np.int32(own_rows), scratch.unusual,
                               np.uint64(scratch.host.ptr)))
    ready = cupy.cuda.get_current_stream().record()
    return RowsClassified(fields, (nx, ny, nz), value, own_rows, flags, active, starts,
                          scratch.host, kernels, ready)


def emit_rows(classified: RowsClassified, n_points: int, n_tris: int, *, point_base: int = 0,
              id_base: int = 0, cell_base: int = 0) -> tuple:
    """Enqueue the emit pass: the output of :func:`contour_rows`, its point ids shifted
    by ``point_base``, its triangles' corners by ``id_base`` and its cells by
    ``cell_base`` (a slab's place in the whole grid).

    Examples
    --------
    >>> callable(emit_rows)
    True
    """
    import cupy

    nx, ny, nz = classified.dims
    # One allocation for the five outputs (8-byte items all): each of the memory
    # pool's requests costs the host a few microseconds while the GPU waits.
    out = cupy.empty(3 * n_points + 4 * n_tris, cupy.int64)
    lo, hi = out[:n_points], out[n_points:2 * n_points]
    t = out[2 * n_points:3 * n_points].view(cupy.float64)
    triangles = out[3 * n_points:3 * n_points + 3 * n_tris].reshape(n_tris, 3)
    source = out[3 * n_points + 3 * n_tris:]
    if n_points or n_tris:  # all triangles may collapse onto points at the value
        classified.kernels[2](
            ((ny * nz + ROWS - 1) // ROWS,), (32, ROWS),
            (*classified.fields, np.float64(classified.value), np.int32(nx), np.int32(ny),
             np.int32(nz), classified.flags, classified.active, classified.starts,
             classified.starts[ny * nz:], lo, hi, t, triangles, source,
             np.int64(classified.own_rows), np.int64(point_base), np.int64(id_base),
             np.int64(cell_base)))
    return lo, hi, t, triangles, source


def contour_rows(scalars: Any, dims: tuple, value: float, bound: Any,
                 tables: tuple) -> tuple | None:
    """Cut a 3-D structured grid's point field at ``value`` on the GPU.

    Parameters
    ----------
    scalars : cupy.ndarray of float32 or float64, shape (n_points,), or PlaneDistance
        The field, or a plane's distance made where it is read (:class:`PlaneDistance`).
    dims : tuple of int
        The grid's points along x, y and z, each at least 2.
    value : float
    bound : NumPy scalar of the scalars' dtype
        A point is in where its value is at or above it (the float64 comparison
        with ``value``, :func:`daxpy.worklets._marching.at_least_bound`).
    tables : (counts, table, edges)
        VTK's voxel tables.

    Returns
    -------
    (lo, hi, t, triangles, source) or None
        The cut edges (int64, int64, float64), the triangles (int64, (m, 3)) and
        their input cells (int64); None where a value is not finite (the
        array program's rules apply there) or for 2^31 output points or more.

    Examples
    --------
    >>> callable(contour_rows)
    True
    """
    classified = classify_rows(scalars, dims, value, bound, tables)
    n_points, n_tris, odd = classified.sizes()
    if odd:
        return None
    return emit_rows(classified, n_points, n_tris)
