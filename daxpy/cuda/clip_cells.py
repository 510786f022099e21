"""The clip of a 3-D structured grid's point field on the GPU: two kernels and scans.

The array program (:mod:`daxpy.worklets.clip`) builds every output cell's point
keys, then numbers the points by sorts, ``unique`` and searches: about forty CuPy
passes (25 ms of device time at 256³ on an H200). Here, as in the compiled CPU
twin (:mod:`daxpy.worklets.clip_cpu`), each warp owns a row of points ``(j, k)``
(``x`` along its lanes, 32 points at a time) and every output is numbered by scans:

1. *count*: per point its flag byte (kept; which of its x, y and z edges are
   cut), the kept points as words of bits, per point row its kept points and cut
   edges, and per cell row (the cells whose corner 0 is in the row) its output
   cells, connectivity slots and centre points, from VTK's case tables;
2. one exclusive scan over the five counts' rows, one count after the other
   (:func:`daxpy.cuda.scan.scan_counts`), and the one host sync: the sizes;
3. *emit*: each kept word's first output point, each row's cut edges (numbered
   after the kept points, in ``(p, axis)`` order, which is the array program's
   ascending ``(lo, hi)``; centre points last, in cell order), and each cell row's cells,
   their corners and edges numbered from their four point rows' starts plus a
   ballot or a scan over the lanes below: cells kept whole from those numbers
   alone (by the whole warp, coalesced, where all 32 are), cut cells' slots and
   cells by the warp lane by lane, through a flat table of each case's places.

Output is the array program's :class:`~daxpy.worklets.clip.Clipped`, bit for bit,
``keys`` included, but for its kept points: those are the count's words of bits
(:class:`~daxpy.cuda.bit_words.BitWords`), by which their coordinates and fields
are copied, and no ids, weights or keys of theirs are written (they were 40 bytes
a kept point, most of a clip's points, written and read back). Weights in float64
as ``(value - low) / (high - low)``, ``1 - t``, ``(1 - t) * share`` and ``t *
share``, each operation rounded on its own.

Specialization: the field's dtype, or a plane's signed distance made where it is read
from the grid's axes' terms (:class:`~daxpy.cuda.plane_distance.PlaneDistance`, x
term first: a clip by a plane makes no distance field of the grid's size, nor the
passes that would make it; :mod:`daxpy.cuda.clip_cells_source`). The case
tables come from the caller and live on the device as small arrays, uploaded once.

Examples
--------
>>> callable(clip_cells)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import FieldError
from .bit_words import BitWords
from .case_tables import on_device
from .clip_cells_source import CENTRE_TERMS, WARPS, source_for
from .compile import kernels_from
from .plane_distance import PlaneDistance
from .scan import scan_counts

def _layout(tables: tuple, places: np.ndarray) -> tuple:
    """``(cases, cells, slot_places)`` as host arrays in the layout of
    :data:`~daxpy.cuda.clip_cells_source.CASE_FIELDS` and
    :data:`~daxpy.cuda.clip_cells_source.CELL_FIELDS`: per case its counts and first
    entries; per output cell its type and end; per slot of every case's cells, in
    order, its place packed as ``row | dx << 2 | (axis + 1) << 3`` (a centre keeps
    its code, ``-1 - index``).

    Examples
    --------
    >>> from daxpy.worklets._clip_arrays import CASE_ARRAYS, PLACES
    >>> cases, cells, slot_places = _layout(CASE_ARRAYS[("voxel", False)], PLACES["voxel"])
    >>> whole = cases[255]  # one hexahedron of eight kept corners
    >>> cells[whole[1]].tolist(), slot_places[whole[5]:whole[5] + 8].tolist()
    ([12, 8], [0, 4, 5, 1, 2, 6, 7, 3])
    """
    made, start, slots, centres, centre_start, types, sizes, codes, _, _ = tables
    packed = places[:, 0] | places[:, 1] << 2 | (places[:, 2] + 1) << 3
    slot_places, ends = [], np.zeros(len(types), np.int64)
    for first, count in zip(start, made):
        end = 0
        for o in range(first, first + count):
            cell_codes = codes[o, :sizes[o]]
            slot_places += np.where(cell_codes < 0, cell_codes, packed[cell_codes]).tolist()
            end = ends[o] = end + sizes[o]
    slot_start = np.concatenate([[0], np.cumsum(slots)[:-1]])
    cases = np.stack([made, start, slots, centres, centre_start, slot_start], axis=1)
    cells = np.stack([types.astype(np.int64), ends], axis=1)
    return cases, cells, np.array(slot_places or [0], np.int64)


def _count_codes(cases: np.ndarray) -> np.ndarray:
    """Per case its output cells, slots and centre points, a byte each (``made |
    slots << 8 | centres << 16``): the count reads one number a cell, not three.

    Examples
    --------
    >>> from daxpy.worklets._clip_arrays import CASE_ARRAYS, PLACES
    >>> codes = _count_codes(_layout(CASE_ARRAYS[("voxel", False)], PLACES["voxel"])[0])
    >>> hex(int(codes[255]))  # one hexahedron, eight slots, no centre
    '0x801'
    """
    made, slots, centres = cases[:, 0], cases[:, 2], cases[:, 3]
    if max(made.max(), slots.max(), centres.max()) > 255:
        raise ValueError("the clip's count takes at most 255 cells, slots and centres a case")
    return (made | slots << 8 | centres << 16).astype(np.int32)


def _device_tables(tables: tuple, places: np.ndarray) -> tuple:
    """``(cases, cells, slot_places, terms, shares, places, width, count_codes)`` on
    the device (:func:`_layout`, then the centres' terms and :func:`_count_codes`):
    uploaded once per tables."""

    def upload() -> tuple:
        import cupy

        terms, shares = tables[8], tables[9]
        if terms.shape[1] != CENTRE_TERMS:  # the emit's loop over them is compiled
            raise ValueError(f"the clip's kernels take centres of {CENTRE_TERMS} terms; "
                             f"these tables have {terms.shape[1]}")
        if tables[3].max(initial=0) > 1:  # the emit numbers a word's centres by lane
            raise ValueError("the clip's kernels take at most one centre point a cell")
        layout = _layout(tables, places)
        return (*(cupy.asarray(a.astype(np.int32).ravel()) for a in (*layout, terms)),
                cupy.asarray(shares.astype(np.float64).ravel()),
                cupy.asarray(places.astype(np.int32).ravel()), np.int32(terms.shape[1]),
                cupy.asarray(_count_codes(layout[0])))

    return on_device(("clip_cells", id(tables), id(places)), (tables, places), upload)


def _empty(cupy, nx: int) -> tuple:
    """The array program's clip that makes no cell: nothing, kept points neither."""
    none = cupy.zeros(0, cupy.int64)
    return (BitWords(cupy.zeros(0, cupy.uint32), none, 0, nx, 0), cupy.zeros((0, 2), cupy.int64),
            cupy.zeros((0, 2)), none, cupy.zeros((0, 0), cupy.int64), cupy.zeros((0, 0)), none,
            cupy.zeros(1, cupy.int64), cupy.zeros(0, cupy.uint8), none, none)


def _check_length(scalars: Any, dims: tuple, plane: bool) -> None:
    """Refuse scalars of another length than the grid's points (a plane's terms: than
    its axes), here, before a kernel reads past their end.

    Examples
    --------
    >>> import numpy as np
    >>> _check_length(PlaneDistance(*np.zeros((3, 2)), x_first=True), (2, 2, 3), True)
    Traceback (most recent call last):
    ...
    daxpy.errors.FieldError: the clip's plane terms have lengths (2, 2, 2); dims (2, 2, 3)
    """
    if plane:
        lengths = tuple(int(t.size) for t in (scalars.px, scalars.py, scalars.pz))
        if lengths != dims:
            raise FieldError(f"the clip's plane terms have lengths {lengths}; dims {dims}")
        if not scalars.x_first:
            raise ValueError("the clip's kernels add a plane's x term first")
    elif scalars.ndim != 1 or scalars.shape[0] != dims[0] * dims[1] * dims[2]:
        raise FieldError(f"the clip's scalars have shape {tuple(scalars.shape)}; a grid of "
                         f"dims {dims} has {dims[0] * dims[1] * dims[2]} points")


def clip_cells(scalars: Any, dims: tuple, value: float, bound: Any, invert: bool,
               tables: tuple, places: np.ndarray) -> tuple | None:
    """Clip a 3-D structured grid where its point ``scalars`` are at or above ``value``
    (below it with ``invert``), on the GPU.

    Parameters
    ----------
    scalars : cupy.ndarray of float32 or float64, shape (n_points,), or PlaneDistance
        The field, or a plane's distance made where it is read (its terms one per
        point of each axis, ``x_first``).
    dims : tuple of int
        The grid's points along x, y and z, each at least 2.
    value : float
    bound : NumPy scalar
        The smallest number of the scalars' dtype at or above ``value``
        (:func:`daxpy.worklets._marching.at_least_bound`): compared in the field's
        dtype, it keeps what the float64 comparison keeps.
    invert : bool
    tables, places
        VTK's voxel tables for ``invert`` and the places of their codes, as
        :func:`daxpy.worklets._clip_arrays._case_arrays` and
        :func:`~daxpy.worklets._clip_arrays._code_places` give them (kept by the
        caller: they are uploaded once per object).

    Returns
    -------
    tuple or None
        The fields of :class:`daxpy.worklets.clip.Clipped`, in its order (``keys``
        last), the kept points' :class:`~daxpy.cuda.bit_words.BitWords` in place of
        their ids; None for grids of 2^31 points or more, or rows whose slots could
        pass 2^31 (the kernels index rows and count them in 32 bits).

    Raises
    ------
    FieldError
        If ``scalars`` is not one value a point of the grid (a plane's terms: one a
        point of each axis).

    Examples
    --------
    >>> callable(clip_cells)
    True
    """
    nx, ny, nz = (int(d) for d in dims)
    plane = isinstance(scalars, PlaneDistance)
    _check_length(scalars, (nx, ny, nz), plane)
    # Rows are indexed and their counts scanned in 32 bits.
    if nx * ny * nz >= 2**31 or nx * int(tables[2].max()) >= 2**31 or min(nx, ny, nz) < 2:
        return None
    import cupy

    # The field and, for a plane, its y and z terms (a field's kernels ignore them).
    fields = ((scalars.px, scalars.py, scalars.pz) if plane
              else (cupy.ascontiguousarray(scalars),) * 3)
    count, emit = kernels_from(source_for, scalars.dtype, plane)
    (cases, cells, slot_places, terms, shares, code_places, width,
     count_codes) = _device_tables(tables, places)
    rows = ny * nz
    launch = ((rows + WARPS - 1) // WARPS,), (32, WARPS)
    sizes = (np.int32(nx), np.int32(ny), np.int32(nz))
    flags = cupy.empty(nx * rows, cupy.uint8)
    words = cupy.empty(rows * ((nx + 31) // 32), cupy.uint32)
    # Per word: the row's kept points and cut edges before it.
    prefix = cupy.empty((words.shape[0], 2), cupy.int32)
    counts = cupy.empty(5 * rows, cupy.int32)
    count(*launch, (*fields, scalars.dtype.type(bound), np.int32(bool(invert)), *sizes,
                    count_codes, flags, words, prefix, counts))
    # One scan over the five counts' rows in turn (kept points, cut edges, cells,
    # slots, centres), then the one host sync: each count's end, in pinned memory.
    starts = cupy.empty(5 * rows + 1, cupy.int64)
    ends = scan_counts(counts, starts, [field * rows for field in range(1, 6)])
    n_kept, n_cut, n_cells, n_slots, n_centres = np.diff([0, *ends]).tolist()
    if n_cells == 0:
        return _empty(cupy, nx)
    n_made = n_cut + n_centres
    # Every row of the made points' arrays is written by emit, and every word's
    # start; the centre table is zeroed, as the array program pads it (emit writes
    # every column too).
    word_starts = cupy.empty(words.shape[0], cupy.int64)
    ids = cupy.empty((n_made, 2), cupy.int64)
    weights = cupy.empty((n_made, 2), cupy.float64)
    centre_ids = cupy.zeros((n_centres, 2 * int(width) - 2), cupy.int64)
    centre_weights = cupy.zeros((n_centres, 2 * int(width) - 2), cupy.float64)
    connectivity = cupy.empty(n_slots, cupy.int64)
    offsets = cupy.empty(n_cells + 1, cupy.int64)
    types = cupy.empty(n_cells, cupy.uint8)
    source = cupy.empty(n_cells, cupy.int64)
    keys = cupy.empty(n_made, cupy.int64)
    emit(*launch, (*fields, np.float64(value), *sizes, cases, cells, slot_places, terms,
                   shares, code_places, flags, words, prefix, starts, np.int64(n_kept),
                   np.int64(n_kept + n_cut), word_starts, ids, weights, centre_ids,
                   centre_weights, connectivity, offsets, types, source, keys))
    return (BitWords(words, word_starts, 0, nx, n_kept), ids, weights,
            cupy.arange(n_cut, n_made, dtype=cupy.int64), centre_ids, centre_weights,
            connectivity, offsets, types, source, keys)
