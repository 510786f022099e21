"""The clip of an unstructured grid of one cell shape on the GPU, as the compiled CPU
clip (:mod:`daxpy.worklets._clip_cells_cpu`) cuts it, in four kernels.

The array program (:mod:`daxpy.worklets.clip`) gathers each cell's corners and codes
into tables of the output's size, sorts every output slot's key and searches them
back: about 30 CuPy passes (10M hexahedra: 18 ms on an H100). Here, a block of 256
cells is a chunk, and:

1. *count*: each cell's case (a byte) and per chunk the sums of its output cells,
   slots, centre points and cut edges;
2. scans over the chunks, the one host sync for the sizes;
3. *keys*: each cut edge as ``lo * n + hi`` (a block scan places each cell's), sorted
   and made unique (``cupy.unique``): the output points' ascending ``(lo, hi)``;
4. *points*: the kept points' rows (numbered by words of their flags,
   :mod:`daxpy.cuda.kept_numbers`), then the cut edges';
5. *emit*: each cell's output cells from its chunk's starts and a block scan: a cell
   with every corner kept is itself renumbered (a warp of such cells writes its slots
   together); a warp's cut cells' slots, output cells and centre points' terms are
   written by the warp as three lists, 32 a round (:mod:`daxpy.cuda.warp_owner`),
   from VTK's tables, a cut edge's point numbered by its key's rank
   among the distinct keys (a search of the sorted keys, at the cell's keys).

The result is the array program's :class:`~daxpy.worklets.clip.Clipped`, bit for bit,
``keys`` included (the CPU twin leaves them out).

Examples
--------
>>> callable(clip_block)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .block_scan import CHUNK
from .case_tables import on_device
from .clip_block_source import source_for
from .compile import kernels_from
from .kept_numbers import kept_numbers
from .sizes import totals_at

KINDS = ("line", "triangle", "quad", "tetra", "pyramid", "wedge", "hexahedron")
"""The cell shapes (VTK's table names) whose grids these kernels clip."""

def _device_tables(kind: str, invert: bool, tables: tuple, edges: np.ndarray) -> tuple:
    """``(per_case, case_starts, cells, slot_codes, terms, shares, term_width)`` on the
    device: per case its output cells, slots, centres and cut edges, its first output
    cell, first centre and first slot; per output cell its type and slots' end; every case's
    slots' codes in order; per centre its terms and their shares.
    Uploaded once per device, shape and side."""

    def upload() -> tuple:
        import cupy

        made, start, slots, centres, centre_start, types, sizes, codes, terms, shares = tables
        # The kernels pack a chunk's sums in 64 bits on these bounds (clip_block_source).
        if made.max() > 16 or slots.max() > 64 or centres.max() > 8 or len(edges) > 12:
            raise ValueError(f"{kind}: a case makes more than the clip's kernels count on")
        n_cases = made.shape[0]
        crossed = np.array([sum((case >> int(a) ^ case >> int(b)) & 1 for a, b in edges)
                            for case in range(n_cases)], np.int64)
        per_case = np.stack([made, slots, centres, crossed], axis=1)
        # Per case its cells' slots in order, as codes, from its first slot: the emit
        # walks a cut cell's slots by the warp.
        cell_codes = [codes[o, :sizes[o]] for o in range(codes.shape[0])]
        slot_codes = np.concatenate(cell_codes) if cell_codes else np.zeros(0, np.int64)
        first_slot = np.concatenate([[0], np.cumsum(sizes)])[start]
        case_starts = np.stack([start, centre_start, first_slot], axis=1)
        # Per output cell its type and its slots' end, counted as its case's first
        # slot is (the emit subtracts that).
        cells = np.stack([types.astype(np.int64), np.cumsum(sizes)], axis=1)
        return (*(cupy.asarray(a.astype(np.int32).ravel())
                  for a in (per_case, case_starts, cells, slot_codes, terms)),
                cupy.asarray(shares.astype(np.float64).ravel()), np.int32(terms.shape[1]))

    return on_device(("clip_block", kind, bool(invert)), (), upload)


def clip_block(scalars: Any, kept: Any, corners: Any, kind: str, invert: bool, value: float,
               tables: tuple, edges: np.ndarray) -> tuple | None:
    """Clip the cells ``corners`` (one shape, ``kind``) of a grid whose points are
    ``kept`` (at or above ``value``, or below it with ``invert``), on the GPU.

    Parameters
    ----------
    scalars : cupy.ndarray of float32 or float64, shape (n_points,)
    kept : cupy.ndarray of bool, shape (n_points,)
    corners : cupy.ndarray of int32 or int64, shape (n_cells, k)
        The cells' point ids, cell ``i`` the grid's cell ``i`` (other int dtypes are
        read as int64).
    kind : str
        One of :data:`KINDS`.
    invert : bool
    value : float
    tables : tuple
        The shape's tables for ``invert``
        (:func:`daxpy.worklets._clip_arrays._case_arrays`).
    edges : numpy.ndarray of int64, shape (n_edges, 2)
        The shape's edges, by their corners (VTK's order).

    Returns
    -------
    tuple or None
        The kept points' count, then the terms of every output point, the centre
        table, the cells and every point's key, as
        :meth:`daxpy.worklets.clip.Clipped.from_rows` takes them; None where the
        clip makes no cell (the array program's rules for what it keeps then
        apply) or for grids of 2^31 points or more.

    Raises
    ------
    IndexError
        If a cell's point id went out of range since the grid was checked.

    Examples
    --------
    >>> callable(clip_block)
    True
    """
    import cupy

    n_points, n_cells = int(scalars.shape[0]), int(corners.shape[0])
    if n_points >= 2**31 or n_cells == 0:
        return None
    scalars = cupy.ascontiguousarray(scalars)
    corners = cupy.ascontiguousarray(
        corners, dtype=cupy.int32 if corners.dtype == np.int32 else cupy.int64)
    flags = cupy.ascontiguousarray(kept).view(cupy.uint8)
    count, make_keys, points, emit = kernels_from(
        source_for, scalars.dtype, kind, tuple(map(tuple, edges.tolist())), corners.dtype)
    per_case, case_starts, cells, slot_codes, terms, shares, term_width = _device_tables(
        kind, invert, tables, edges)
    chunks = (n_cells + CHUNK - 1) // CHUNK
    launch = (chunks,), (CHUNK,)
    cases = cupy.empty(n_cells, cupy.uint8)
    chunk_counts = cupy.empty((5, chunks), cupy.int64)
    count(*launch, (flags, corners, np.int64(n_cells), np.int64(n_points), per_case, cases,
                    chunk_counts, np.int64(chunks)))
    starts = cupy.zeros((5, chunks + 1), cupy.int64)
    cupy.cumsum(chunk_counts, axis=1, dtype=cupy.int64, out=starts[:, 1:])
    renumber = kept_numbers(flags)
    # The one host sync for the sizes: output cells, slots, centres, cut edges (with
    # repeats), cells refused, and kept points.
    n_made, n_slots, n_centres, n_keys, bad, n_kept = totals_at(
        starts, [f * (chunks + 1) + chunks for f in range(5)], also=[(renumber, n_points)])
    if bad:
        raise IndexError(f"{bad} cells have a point id out of range (the grid was changed "
                         "after it was checked)")
    if n_made == 0:
        return None
    keys = cupy.empty(n_keys, cupy.int64)
    make_keys(*launch, (corners, cases, np.int64(n_cells), np.int64(n_points), per_case,
                        starts[3], keys))
    # Sorted, and each cell's cut edge's rank among them; the size costs a second host
    # sync. A sort of the keys alone and a search: unique's inverse
    # sorts (key, index) pairs (0.22 ms of a 10M-hexahedra clip's 2.2 on an H100).
    cut_keys = cupy.unique(keys)
    rank = cupy.searchsorted(cut_keys, keys)
    n_cut = int(cut_keys.shape[0])
    n_total = n_kept + n_cut + n_centres
    first_centre = n_total - n_centres
    ids = cupy.empty((n_total, 2), cupy.int64)
    weights = cupy.empty((n_total, 2), cupy.float64)
    width = 2 * int(term_width) - 2
    centre_ids = cupy.zeros((n_centres, width), cupy.int64)
    centre_weights = cupy.zeros((n_centres, width), cupy.float64)
    connectivity = cupy.empty(n_slots, cupy.int64)
    offsets = cupy.empty(n_made + 1, cupy.int64)
    offsets[0] = 0
    types = cupy.empty(n_made, cupy.uint8)
    source = cupy.empty(n_made, cupy.int64)
    point_keys = cupy.empty(n_total, cupy.int64)
    value = np.float64(value)
    rows = n_points + n_cut
    points(((rows + CHUNK - 1) // CHUNK,), (CHUNK,),
           (scalars, value, flags, renumber, np.int64(n_points), cut_keys, np.int64(n_cut),
            ids, weights, point_keys))
    emit(*launch, (scalars, value, corners, cases, np.int64(n_cells), np.int64(n_points),
                   per_case, case_starts, cells, slot_codes, terms, shares, term_width, renumber,
                   rank.astype(cupy.int64, copy=False), starts, np.int64(chunks),
                   np.int64(first_centre), ids,
                   weights, centre_ids, centre_weights, connectivity, offsets, types, source,
                   point_keys))
    return (n_kept, ids, weights, cupy.arange(first_centre, n_total, dtype=cupy.int64),
            centre_ids, centre_weights, connectivity, offsets, types, source, point_keys)
