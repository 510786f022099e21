"""Compiled CPU clip of 2-D and 3-D structured grids (uniform, rectilinear,
curvilinear): the array program's :class:`~daxpy.worklets.clip.Clipped` bit for
bit, from two parallel passes over the grid's x-rows.

1. *count*: per point row, which points are kept and which of their x, y and z
   edges are cut (one flag byte per point), with how many of each; per cell row,
   its output cells, connectivity slots and centre points, from the case tables;
2. *scan*: exclusive sums of the per-row counts (NumPy, over rows, not points):
   the one place the output's sizes are known, before anything is written;
3. *emit* (:mod:`daxpy.worklets._clip_rows_cpu`): each point row writes its
   kept points and cut edges, each cell row its cells, their centre points, and
   the point numbers of their corners.

Every kind of output point is numbered without a sort. Kept points come first
in ascending id (a mask and a scan). A voxel's or pixel's cut edge is an axis
edge ``(p, p + step)``, and the steps grow with the axis, so the array
program's ascending ``(lo, hi)`` order is ``(p, axis)`` order: a row's edge
number is its scan plus the cut edges before it in the row, counted as the
cells walk the row. Centre points follow in input cell order. Each row writes
its own slices, so the output does not depend on the thread count.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.worklets.clip import clip_cells as reference
>>> g, t = daxpy.UniformGrid(dims=(3, 2)), np.arange(6.0)
>>> made = clip_structured(g, t, value=2.5)     # keeps points 3, 4, 5; cuts 3 y edges
>>> made.kept.tolist(), made.ids.tolist(), made.connectivity.tolist()
([3, 4, 5], [[0, 3], [1, 4], [2, 5]], [1, 0, 3, 4, 2, 1, 4, 5])
>>> made.connectivity.tolist() == reference(g, t, value=2.5).connectivity.tolist()
True
"""

from __future__ import annotations

import numpy as np

from daxpy.data.host_pool import host_empty

# The tables' arrays live beside the array program's (the GPU path reads them too);
# _CORNER_CODES and _case_arrays are re-exported for the unstructured twin.
from ._clip_arrays import _CORNER_CODES, _case_arrays, CASE_ARRAYS, PLACES  # noqa: F401
from ._marching import at_least_bound
from ._blocks_cpu import block_kernel, over_blocks
from ._clip_rows_cpu import _cut, _emit_rows, _spread
from ._numba import kernel, rows_or_terms
from ._scan_cpu import exclusive_rows
from .clip import Clipped, _assemble

_KINDS = {3: "voxel", 2: "pixel"}
"""The cell each grid dimension is clipped as (1-D grids run the array program)."""

_WHOLE = {"voxel": (12, (0, 1, 3, 2, 4, 5, 7, 6)), "pixel": (9, (0, 1, 3, 2))}
"""The one output cell of a cell with every corner kept: its type and corner codes,
which the emit pass writes without the tables (checked against them below)."""

_TABLES, _PLACES = CASE_ARRAYS, PLACES
for (_kind, _invert), _t in _TABLES.items():
    _whole = _t[1][(1 << len(_WHOLE[_kind][1])) - 1]
    if (_t[5][_whole], tuple(_t[7][_whole, :_t[6][_whole]])) != _WHOLE[_kind]:
        raise ImportError(f"clip tables: a whole {_kind} is not {_WHOLE[_kind]}")


@kernel(inline="always")
def _kept_columns(s, px, py, pz, bound, flip, first, up, out, nx, columns):
    """Per x of a point row: which of the points p, p + up, p + out, p + up + out
    (p = first + x) are kept, as bits 0 to 3 (``up``, ``out``: 0 past the grid's
    last row or plane, so that no edge leaves it). With a plane's axes' terms (``px``
    not empty), the scalars are its distance, made where they are read."""
    if px.shape[0] != 0:
        _kept_plane_columns(px, py, pz, bound, flip, first, up, out, nx, columns)
        return
    a, b = s[first:first + nx], s[first + up:first + up + nx]
    c, d = s[first + out:first + out + nx], s[first + up + out:first + up + out + nx]
    # Byte arithmetic over row slices: a loop the compiler vectorizes.
    for i in range(nx):
        columns[i] = ((np.uint8(a[i] >= bound) ^ flip) | ((np.uint8(b[i] >= bound) ^ flip) << 1)
                      | ((np.uint8(c[i] >= bound) ^ flip) << 2)
                      | ((np.uint8(d[i] >= bound) ^ flip) << 3))


@kernel(inline="always")
def _kept_plane_columns(px, py, pz, bound, flip, first, up, out, nx, columns):
    """:func:`_kept_columns` of a plane's distance ``(px[i] + py[j]) + pz[k]`` (the
    clip's implicit plane's order) for the point row that starts at ``first``."""
    ny = py.shape[0]
    j, k = (first // nx) % ny, first // (nx * ny)
    y0, y1 = py[j], py[j + (1 if up else 0)]
    z0, z1 = pz[k], pz[k + (1 if out else 0)]
    for i in range(nx):
        x = px[i]
        columns[i] = ((np.uint8((x + y0) + z0 >= bound) ^ flip)
                      | ((np.uint8((x + y1) + z0 >= bound) ^ flip) << 1)
                      | ((np.uint8((x + y0) + z1 >= bound) ^ flip) << 2)
                      | ((np.uint8((x + y1) + z1 >= bound) ^ flip) << 3))


# Serial kernels over ranges of rows, which _blocks_cpu.over_blocks deals to the
# threads (a parallel loop costs several times more to compile).

@block_kernel()
def _count_rows(s, px, py, pz, bound, flip, nx, ny, nz, zc, made, slots, centres, flags,
                row_counts, cell_counts, first_row, last_row):
    """Point rows ``first_row`` to ``last_row``: their flags and counts, and their
    cell rows' counts."""
    nxy = nx * ny
    full = (1 << 4 * zc) - 1
    for r in range(first_row, last_row):
        j, k = r % ny, r // ny
        first = r * nx
        # The row's columns go where its flags will: no buffer (each kind of array a
        # kernel allocates costs its first use a compile), and each flag replaces its
        # column only once the columns it is made from are read.
        columns = flags[first:first + nx]
        _kept_columns(s, px, py, pz, bound, flip, first, nx if j + 1 < ny else 0,
                      nxy if k + 1 < nz else 0, nx, columns)
        if j + 1 < ny and (zc == 1 or k + 1 < nz):
            cells = used = middles = 0
            for i in range(nx - 1):
                case = (_spread(columns[i]) | (_spread(columns[i + 1]) << 1)) & full
                cells += made[case]
                used += slots[case]
                middles += centres[case]
            c = j + (ny - 1) * k
            cell_counts[c, 0], cell_counts[c, 1], cell_counts[c, 2] = cells, used, middles
        kept = cut = 0
        for i in range(nx):
            column = columns[i]
            after = columns[i + 1] if i + 1 < nx else column
            flag = ((column & 1) | (((column ^ after) & 1) << 1)
                    | (((column ^ (column >> 1)) & 1) << 2)
                    | (((column ^ (column >> 2)) & 1) << 3))
            columns[i] = flag
            kept += flag & 1
            cut += _cut(flag)
        row_counts[r, 0], row_counts[r, 1] = kept, cut


def clip_structured(grid, scalars: np.ndarray | None, value: float, invert: bool = False,
                    place=None, terms: tuple | None = None) -> Clipped:
    """The compiled form of :func:`daxpy.worklets.clip.clip_cells` on 2-D and 3-D
    structured grids of float32 or float64 scalars, or (``terms``, ``scalars`` None)
    of a plane's signed distance made where it is read from the axes' terms of a 3-D
    image or rectilinear grid: point (i, j, k)'s is ``(terms[0][i] + terms[1][j]) +
    terms[2][k]`` in float64 (the clip's implicit plane's bits), with no field of the
    grid's size.

    Parameters
    ----------
    grid, scalars, value, invert, place
        As for :func:`~daxpy.worklets.clip.clip_cells` (``place`` is not used:
        everything stays on the host).
    terms : tuple of three float64 arrays, optional
        The plane's ``(axis - origin) normal`` along x, y and z.

    Returns
    -------
    Clipped

    Raises
    ------
    CompiledUnavailable
        On 0-D and 1-D grids and other dtypes, and for terms of grids not 3-D: the
        array program (or the field) serves them.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.worklets.clip import clip_cells as reference
    >>> g, t = daxpy.UniformGrid(dims=(4, 3, 2)), np.arange(24.0)
    >>> ours, theirs = clip_structured(g, t, 7.5, True), reference(g, t, 7.5, True)
    >>> ours.weights.tobytes() == theirs.weights.tobytes(), ours.n_kept
    (True, 8)
    """
    s, px, py, pz, nx, ny, nz, dimension = rows_or_terms(
        grid, scalars, terms, "the compiled clip cuts 2-D and 3-D grids")
    n_points = nx * ny * nz
    zc = dimension - 1   # corner rows along z: 2 (voxels) or 1 (pixels)
    kind = _KINDS[dimension]
    tables, places = _TABLES[(kind, bool(invert))], _PLACES[kind]
    value = float(value)
    n_cell_rows = (ny - 1) * max(nz - 1, 1)
    flags = host_empty(n_points, np.uint8)
    row_counts = host_empty((ny * nz, 2), np.int64)
    cell_counts = host_empty((n_cell_rows, 3), np.int64)
    # Blocks of rows are dealt one at a time to the threads as they free up: rows
    # where the cut is emit far more than others, and a thread slowed by another
    # process does not hold up the rest.
    over_blocks(_count_rows, ny * nz, s, px, py, pz, at_least_bound(s.dtype, value),
                np.uint8(bool(invert)), nx, ny, nz, zc, tables[0], tables[2], tables[3], flags,
                row_counts, cell_counts)
    point_start, cell_start = exclusive_rows(row_counts), exclusive_rows(cell_counts)
    totals = np.concatenate([point_start[-1], cell_start[-1]])
    n_kept, n_cut, n_cells, n_slots, n_centres = (int(x) for x in totals)
    if n_cells == 0:
        # As the array program: a clip that leaves no cell keeps no point either.
        return _assemble([], np.zeros(n_points, bool), np)
    # Point ids of each code's ends from the cell's first corner (equal for corners).
    steps = np.array([1, nx, nx * ny])
    lower = places[:, 1] + (places[:, 0] & 1) * nx + (places[:, 0] >> 1) * nx * ny
    offsets = np.stack([lower, lower + np.where(places[:, 2] < 0, 0, steps[places[:, 2]])],
                       axis=1).astype(np.int64)
    points = new_points(n_kept + n_cut + n_centres, n_centres, max(2, 2 * tables[8].shape[1]))
    kept_ids = host_empty(n_kept, np.int64)
    out = (host_empty(n_slots, np.int64), host_empty(n_cells + 1, np.int64),
           host_empty(n_cells, np.uint8), host_empty(n_cells, np.int64))
    out[1][0] = 0
    over_blocks(_emit_rows, ny * nz, s, px, py, pz, value, nx, ny, nz, zc,
                *(tables[t] for t in (0, 1, 3, 4, 5, 6, 7, 8, 9)), places, offsets, flags,
                point_start, cell_start, totals, kept_ids, *points, *out)
    return Clipped(kept_ids, points[0][n_kept:], points[1][n_kept:],
                   np.arange(n_cut, n_cut + n_centres, dtype=np.int64), *points[2:], *out)


def new_points(n_points: int, n_centres: int, width: int) -> tuple:
    """``(ids, weights, centre_ids, centre_weights)`` of ``n_points`` output points,
    the last ``n_centres`` centre points with terms ``width`` columns wide (their
    first two in the points' columns), the centres' zeroed as the array program pads
    them. The points' rows are not zeroed (from the pool of host blocks): the emit
    writes every cut and centre point's row, and the kept points' rows, first, are
    neither written nor read (2 x 16 bytes a point zeroed on one thread, and their
    pages faulted in as written, took about 3 ms of a 10M-hexahedra clip).

    Examples
    --------
    >>> [a.shape for a in new_points(5, 1, 14)]
    [(5, 2), (5, 2), (1, 12), (1, 12)]
    """
    return (host_empty((n_points, 2), np.int64), host_empty((n_points, 2), np.float64),
            np.zeros((n_centres, width - 2), np.int64), np.zeros((n_centres, width - 2)))
