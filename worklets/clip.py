"""Clip: the topology-generating worklet that keeps the part of each cell on one
side of a scalar's value, cut as vtkTableBasedClipDataSet cuts it.

One array program runs on NumPy (CPU) or CuPy (CUDA): classify each cell (its
case: which corners are kept), count its output cells from VTK's tables
(:mod:`daxpy.worklets._clip_tables`), scan (one host sync learns the sizes), and
emit. Every output point is a weighted sum of input points: a kept corner, a cut
edge's two ends, or a centre point's terms; the weights interpolate every field.
On the CPU, its compiled twins (:mod:`daxpy.worklets.clip_cpu` for 2-D and 3-D
structured grids, :mod:`daxpy.worklets._clip_cells_cpu` for unstructured ones)
give the same bits; so do the GPU's row kernels for 3-D structured grids
(:mod:`daxpy.cuda.clip_cells`), which replace the program there.

Output points, in order: the kept corners in ascending input id, then the cut
edges in ascending ``(lo, hi)`` order (one point per edge, shared by the cells
that cut it), then the centre points in input cell order. Output cells follow
their input cell, then the table's order.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.array([0.0, 1, 2])})
>>> made = clip_cells(g, g.point_data["t"], value=0.5)
>>> made.kept.tolist(), made.ids.tolist(), made.weights.tolist(), made.connectivity.tolist()
([1, 2], [[0, 1]], [[0.5, 0.5]], [2, 0, 0, 1])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daxpy.data.arrays import array_module, joined

from ._clip_arrays import _EDGE_CODE, CASE_ARRAYS, PLACES, TABLES, _case_arrays
from ._clip_numbers import count_dtype, numbered
from ._clipped import Clipped
from ._marching import (GRID_FAMILIES, IMAGE_CELL_CORNERS, at_least_bound, kept_side,
                        register_generating, structured_corners)
from ._numba import compiled
from ._structured_cases import structured_cases

_SHAPES = {"vertex": "vertex", "line": "line", "tri": "triangle", "quad": "quad",
           "tet": "tetra", "hex": "hexahedron", "wedge": "wedge", "pyramid": "pyramid"}
# Structured cells are clipped as VTK clips image cells: voxels, pixels, lines.
_STRUCTURED = {3: "voxel", 2: "pixel", 1: "line"}


def _structured_pieces(grid: Any, scalars: Any, value: float, invert: bool) -> list:
    """``(kind, cases, corners of rows, cell ids)`` of a structured grid: its cases read
    from the scalars in one pass, its corners made only for the cells that give
    output (rows are cell ids)."""
    xp = array_module(scalars)
    dims = tuple(int(d) for d in grid.dims)
    active = [a for a in range(3) if dims[a] > 1]
    if not active:
        return []
    cases = structured_cases(scalars, dims, value, invert)
    offsets = IMAGE_CELL_CORNERS[len(active)]
    return [(_STRUCTURED[len(active)], cases,
             lambda rows: structured_corners(dims, rows, offsets),
             xp.arange(cases.shape[0], dtype=xp.int64))]


def clip_cells(grid: Any, scalars: Any, value: float, invert: bool = False,
               place=None) -> Clipped:
    """Clip ``grid`` where its point ``scalars`` are at or above ``value`` (below
    it with ``invert``), as vtkTableBasedClipDataSet (``InsideOut`` for ``invert``).

    Parameters
    ----------
    grid, scalars, place
        As for every topology-generating program
        (:func:`~daxpy.worklets._marching.register_generating`); ``scalars`` of shape
        ``(n_points,)``.
    value : float
    invert : bool

    Returns
    -------
    Clipped
    """
    xp = array_module(scalars)
    if xp.__name__ != "numpy":
        found = (_cells_on_gpu(grid, scalars, value, invert, place or xp.asarray)
                 if grid.family == "unstructured" else _on_gpu(grid, scalars, value, invert))
        if found is not None:
            return found
    place = place or xp.asarray
    kept_point = kept_side(scalars, value, invert)
    pieces = (_unstructured_pieces(grid, place, kept_point) if grid.family == "unstructured"
              else _structured_pieces(grid, scalars, value, invert))
    emitted = [(_vertices if kind == "vertex" else _emit)(
        (kind, invert), cases, corners_of, cell_ids, scalars, value, xp)
        for kind, cases, corners_of, cell_ids in pieces]
    emitted = [e for e in emitted if e is not None]
    if not emitted and grid.n_cells:
        # VTK's clip of cells that leaves none gives an empty grid, kept points too.
        kept_point = xp.zeros_like(kept_point)
    return _assemble(emitted, kept_point, xp,
                     None if grid.family == "unstructured" else _strides(grid))


def _on_gpu(grid: Any, scalars: Any, value: float, invert: bool) -> Clipped | None:
    """A 3-D structured grid's clip by the GPU's row kernels
    (:mod:`daxpy.cuda.clip_cells`), which give this program's bits; None where the
    program runs instead (fewer axes, other dtypes, 2^31 points or more)."""
    if scalars.ndim != 1 or scalars.dtype not in (np.float32, np.float64):
        return None
    return _row_kernels(grid, scalars, value, invert)


def clip_plane_cells(grid: Any, terms: Any, value: float, invert: bool = False
                     ) -> Clipped | None:
    """Clip a 3-D image or rectilinear grid on the GPU where a plane's signed distance
    is at or above ``value`` (below it with ``invert``), the distance made where the
    row kernels read it from the axes' ``terms`` (a
    :class:`~daxpy.cuda.plane_distance.PlaneDistance`, x term first): the bits of
    :func:`clip_cells` of the distance field those terms add up to, with no field of
    the grid's size made. None where that clip must run instead (fewer axes, 2^31
    points or more).

    Examples
    --------
    >>> callable(clip_plane_cells)
    True
    """
    return _row_kernels(grid, terms, value, invert)


def _row_kernels(grid: Any, scalars: Any, value: float, invert: bool) -> Clipped | None:
    dims = tuple(int(d) for d in grid.dims)
    if min(dims) < 2:
        return None
    from daxpy.cuda.clip_cells import clip_cells as on_gpu

    found = on_gpu(scalars, dims, float(value), at_least_bound(scalars.dtype, float(value)),
                   bool(invert), CASE_ARRAYS[("voxel", bool(invert))], PLACES["voxel"])
    return None if found is None else Clipped(None, *found[1:], kept_words=found[0])


_BLOCK_TABLES: dict[tuple, tuple] = {}
"""Per (kind, invert): the tables of :func:`_cells_on_gpu`'s kernels (made once: a
millisecond of the host's time each)."""


def _cells_on_gpu(grid: Any, scalars: Any, value: float, invert: bool, place) -> Clipped | None:
    """An unstructured grid of one cell shape clipped by the GPU's kernels
    (:mod:`daxpy.cuda.clip_block`), which give this program's bits; None where the
    program runs instead (mixed shapes, vertices, other dtypes, no output cell)."""
    blocks = list(grid.cell_blocks().values())
    if len(blocks) != 1 or scalars.ndim != 1 or scalars.dtype not in (np.float32, np.float64):
        return None
    from daxpy.cuda.clip_block import KINDS, clip_block

    block, kind = blocks[0], _SHAPES.get(blocks[0].shape.name)
    if kind not in KINDS or block.cell_ids.shape[0] != grid.n_cells:
        return None
    key = (kind, bool(invert))
    if key not in _BLOCK_TABLES:
        _BLOCK_TABLES[key] = (_case_arrays(kind, bool(invert)), TABLES[key]["edges"])
    from daxpy.cuda.device import narrow_ids

    kept_point = kept_side(scalars, value, invert)
    found = clip_block(scalars, kept_point, narrow_ids(block.corners, grid), kind,
                       bool(invert), float(value), *_BLOCK_TABLES[key])
    return None if found is None else Clipped.from_rows(*found[:-1], keys=found[-1])


def _strides(grid: Any) -> tuple:
    """A structured grid's point id strides along its axes of more than one point,
    padded to three with its point count (no step reaches it)."""
    dims = tuple(int(d) for d in grid.dims)
    steps = (1, dims[0], dims[0] * dims[1])
    active = [steps[a] for a in range(3) if dims[a] > 1]
    return tuple(active + [int(np.prod(dims))] * (3 - len(active)))


def _vertices(kind: tuple, cases: Any, corners_of, cell_ids: Any, scalars: Any,
              value: float, xp):
    """Vertices have no edge to cut: a kept vertex stays, whole."""
    keep = xp.flatnonzero(cases)
    if keep.shape[0] == 0:
        return None
    count = keep.shape[0]
    keys = xp.full((count, 8), -1, xp.int64)
    keys[:, 0] = corners_of(keep)[:, 0]
    none = (xp.zeros(0, xp.int64), xp.zeros((0, 2), xp.int64), xp.zeros((0, 2)))
    no_edges = (xp.zeros(0, xp.int64),) * 3 + (xp.zeros(0),)
    return (keys, cell_ids[keep], xp.full(count, 1, xp.uint8), xp.ones(count, xp.int64),
            no_edges, none)


def _unstructured_pieces(grid: Any, place, kept_point: Any) -> list:
    """``(kind, cases, corners of rows, cell ids)`` per cell shape of an unstructured
    grid (a case: bit ``i`` set where corner ``i`` is kept)."""
    pieces = []
    for block in grid.cell_blocks().values():
        corners = place(block.corners)
        pieces.append((_SHAPES[block.shape.name], _cases(kept_point, corners),
                       corners.__getitem__, place(block.cell_ids)))
    return pieces


def _cases(kept_point: Any, corners: Any) -> Any:
    """Each cell's case: bit ``i`` set where its corner ``i`` is kept."""
    xp = array_module(kept_point)
    if xp is not np:
        from daxpy.cuda.cell_cases import cell_cases, serves

        # One kernel, a byte a cell, no table of the corners' flags (the same cases):
        # the flags as 0.0 and 1.0, a corner kept at or above 1.
        flags = kept_point.astype(xp.float32)
        if serves(flags, corners):
            return cell_cases(flags, corners, np.float32(1.0))
    bits = xp.arange(corners.shape[1], dtype=xp.int64)
    return (kept_point[corners].astype(xp.int64) << bits).sum(axis=1)


def _resolve(codes: Any, cell: Any, edges: Any, scalars: Any, value: float, xp):
    """Point codes of cells (``cell``: their corners) as keys, and the terms of the
    slots that hold an edge point: ``(flat slot, lo, hi, t)``, in slot order, the
    point ``(1 - t) * x[lo] + t * x[hi]`` (a corner slot's point is its corner).

    Keys sort corners, then edges, then centres: a corner ``id``, an edge
    ``n + lo * n + hi``; centre codes are resolved by the caller. Only the edge
    slots' terms are kept: most slots are corners of whole cells."""
    n_points = scalars.shape[0]
    edge = codes >= _EDGE_CODE
    keys = _corner_keys(codes, cell, xp)
    # Only cut cells have edge slots: interpolate those alone.
    rows, slots = xp.nonzero(edge)
    e = codes[rows, slots] - _EDGE_CODE
    one, other = cell[rows, edges[e, 0]], cell[rows, edges[e, 1]]
    lo, hi = xp.minimum(one, other), xp.maximum(one, other)
    low, high = scalars[lo].astype(xp.float64), scalars[hi].astype(xp.float64)
    cut = high != low
    t = xp.where(cut, (value - low) / xp.where(cut, high - low, 1.0), 0.0)
    keys[rows, slots] = n_points + lo * n_points + hi
    return keys, (rows * codes.shape[1] + slots, lo, hi, t)


def _corner_keys(codes: Any, cell: Any, xp) -> Any:
    """Each slot's corner id (corner 0's at an edge or centre slot)."""
    return xp.take_along_axis(cell, xp.where((codes >= _EDGE_CODE) | (codes < 0), 0, codes),
                              axis=1)


def _dense_terms(codes: Any, cell: Any, edges: Any, scalars: Any, value: float, xp) -> tuple:
    """Every slot's ``(a, b, t)`` of :func:`_resolve`'s points, as arrays of the codes'
    shape: a corner is ``a == b``, ``t == 0``."""
    a = _corner_keys(codes, cell, xp)
    b, t = a.copy(), xp.zeros(codes.shape)
    at, lo, hi, weight = _resolve(codes, cell, edges, scalars, value, xp)[1]
    for whole, part in ((a, lo), (b, hi), (t, weight)):
        whole.reshape(-1)[at] = part
    return a, b, t


def _emit(kind: tuple, cases: Any, corners_of, cell_ids: Any, scalars: Any, value: float,
          xp):
    """One kind's output cells: point keys (padded to 8), types, sizes and input
    cells, with every point's input ids and weights."""
    t = {name: xp.asarray(array) for name, array in TABLES[kind].items()}
    made = t["count"][cases]
    ends = xp.cumsum(made)
    total = int(ends[-1]) if ends.shape[0] else 0  # the one host sync: the output's size
    if total == 0:
        return None
    # Each slot's cell by a scan, not a search: each making cell marks its first
    # slot, and the marks counted up to a slot name its cell among them.
    active = xp.flatnonzero(made)
    firsts = (ends - made)[active]
    marks = xp.zeros(total, xp.int8)
    marks[firsts] = 1
    rank = xp.cumsum(marks, dtype=count_dtype(total, xp)) - 1
    owner = active[rank]
    row = t["start"][cases[owner]] + (xp.arange(total) - firsts[rank])
    codes = t["codes"][row]
    cell = corners_of(owner)
    keys, terms = _resolve(codes, cell, t["edges"], scalars, value, xp)
    # Centre points: one per (input cell, centre of its case), resolved only where a
    # slot holds one (few cases make them).
    slot, place = xp.nonzero(codes < 0)
    j = -1 - codes[slot, place]
    term = t["centre_start"][cases[owner[slot]]] + j
    a, b, s = _dense_terms(t["term_codes"][term], cell[slot], t["edges"], scalars, value, xp)
    n = scalars.shape[0]
    centre_keys = n + n * n + cell_ids[owner[slot]] * 64 + j
    keys[slot, place] = centre_keys
    share = t["term_weights"][term]
    # Each term's two ends side by side: ids a0 b0 a1 b1 ..., weights to match.
    width = 2 * t["term_codes"].shape[1]
    centres = (centre_keys, xp.stack([a, b], axis=-1).reshape(a.shape[0], width),
               xp.stack([(1.0 - s) * share, s * share], axis=-1).reshape(a.shape[0], width))
    return (keys, cell_ids[owner], t["type"][row], t["size"][row], terms, centres)


def _assemble(emitted: list, kept_point: Any, xp, strides: tuple | None = None) -> Clipped:
    """Join the kinds in input cell order; number the points (every kept input
    point first, as VTK keeps those no cell uses too, a grid of no cells
    included, then the cut points); give each its weights (a corner or an edge
    point two terms, a centre point its own: its first in the two columns, the
    rest in the centre table). ``strides``: a structured grid's, for
    :func:`~daxpy.worklets._clip_numbers.numbered`."""
    if not emitted:
        none = xp.zeros(0, xp.int64)
        return Clipped(xp.flatnonzero(kept_point).astype(xp.int64), xp.zeros((0, 2), xp.int64),
                       xp.zeros((0, 2)), none, xp.zeros((0, 0), xp.int64), xp.zeros((0, 0)),
                       none, xp.zeros(1, xp.int64), xp.zeros(0, xp.uint8), none, none)
    source = joined([e[1] for e in emitted])
    # One kind's cells already come in ascending input cell order.
    order = (xp.arange(source.shape[0]) if len(emitted) == 1
             else xp.argsort(source, kind="stable"))
    sizes = joined([e[3] for e in emitted])[order]
    types = joined([e[2] for e in emitted])[order]
    keys = joined([e[0] for e in emitted])
    # Slots in output order, as flat indices into the unsorted arrays: only the
    # keys move, and each point's terms are read once, from its first slot.
    slots = keys.shape[1]
    valid = xp.arange(slots)[None, :] < sizes[:, None]
    flat = (order[:, None] * slots + xp.arange(slots)[None, :])[valid]
    unique, corners, cut_first, inverse = numbered(keys.reshape(-1)[flat], kept_point, xp,
                                                    strides)
    ids = xp.zeros((unique.shape[0], 2), xp.int64)
    weights = xp.zeros((unique.shape[0], 2))
    # A corner is itself; a cut point's terms are read from its first slot.
    ids[:corners, 0], ids[:corners, 1], weights[:corners, 0] = unique[:corners], \
        unique[:corners], 1.0
    a, b, t = _cut_terms(emitted, flat[cut_first], xp)
    ids[corners:, 0], ids[corners:, 1] = a, b
    weights[corners:, 0], weights[corners:, 1] = 1.0 - t, t
    rows, centre_ids, centre_weights = _centres(emitted, unique, xp)
    ids[rows], weights[rows] = centre_ids[:, :2], centre_weights[:, :2]
    offsets = xp.concatenate([xp.zeros(1, xp.int64), xp.cumsum(sizes)])
    return Clipped.from_rows(corners, ids, weights, rows, centre_ids[:, 2:],
                             centre_weights[:, 2:], inverse.astype(xp.int64), offsets, types,
                             source[order].astype(xp.int64), keys=unique.astype(xp.int64))


def _cut_terms(emitted: list, at: Any, xp) -> tuple:
    """``(lo, hi, t)`` of the slots ``at`` (flat, into the kinds' keys end to end) that
    hold an edge point, by a search among the edge slots; at a centre point's slot,
    any edge's (its row is written from the centre table after)."""
    sizes = np.cumsum([0] + [int(e[0].size) for e in emitted[:-1]])
    where = joined([e[4][0] + int(size) for e, size in zip(emitted, sizes)])
    lo, hi, t = (joined([e[4][k] for e in emitted]) for k in (1, 2, 3))
    if where.shape[0] == 0:
        return xp.zeros(at.shape, xp.int64), xp.zeros(at.shape, xp.int64), xp.zeros(at.shape)
    found = xp.minimum(xp.searchsorted(where, at), where.shape[0] - 1)
    return lo[found], hi[found], t[found]


def _centres(emitted: list, unique: Any, xp) -> tuple:
    """The centre points' rows (ascending) among the points ``unique`` (their keys),
    with all their terms, as wide as the widest kind's (two columns at least),
    padded with zeros. A centre point is named by every slot that uses it: the
    same terms each time, kept once."""
    width = max([2] + [e[5][1].shape[1] for e in emitted])
    found = [(k, xp.pad(i, ((0, 0), (0, width - i.shape[1]))),
              xp.pad(w, ((0, 0), (0, width - w.shape[1])))) for k, i, w in (e[5] for e in emitted)]
    at, first = xp.unique(xp.searchsorted(unique, xp.concatenate([f[0] for f in found])),
                          return_index=True)
    return (at.astype(xp.int64), xp.concatenate([f[1] for f in found])[first],
            xp.concatenate([f[2] for f in found])[first])


# The compiled (Numba) twins of this program: 2-D and 3-D structured grids, and
# unstructured grids.
_COMPILED = compiled("clip_cpu", "clip_structured", clip_cells)
_COMPILED_CELLS = compiled("_clip_cells_cpu", "clip_unstructured", clip_cells)

register_generating("clip", {family: clip_cells for family in GRID_FAMILIES},
                    input_association="points", halo=0,
                    doc="the part of each cell on one side of a point field's value, cut as "
                        "VTK's table-based clip",
                    cpu={"uniform": _COMPILED, "rectilinear": _COMPILED,
                         "curvilinear": _COMPILED, "unstructured": _COMPILED_CELLS})
