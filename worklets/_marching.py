"""Marching cells: classify, count, scan and emit, on NumPy or CuPy arrays alike.

The same array program runs on the host (NumPy) and on the device (CuPy), so both
backends give the same surface in the same order:

1. *classify*: each cell's case, bit ``i`` set where corner ``i`` is at or above
   the value (as ``vtkCell::Contour``);
2. *count*: the case's number of output cells (triangles, segments or points),
   from VTK's tables (:mod:`daxpy.worklets._contour_tables`);
3. *scan*: each active cell's first output cell, by an exclusive scan; the total
   is the one number the host must learn (one device-to-host sync on CuPy);
4. *emit*: each output cell's edges, as global ``(lo, hi)`` point pairs.

Output points are the distinct cut edges in ascending ``(lo, hi)`` order, so an
edge shared by several cells gives one point (the surface is connected); a grid
point whose value equals the value exactly is one output point for all the edges
that meet there, and output cells that collapse on it are dropped (as VTK's
vtkContourFilter and vtkCutter do). Output cells follow their input cell's id,
then the table's order.

Examples
--------
>>> import numpy as np
>>> corners = np.array([[0, 1, 2, 3]])          # one tetrahedron
>>> s = np.array([1.0, 0.0, 0.0, 0.0])           # corner 0 is in at 0.5
>>> keys, source = march(corners, np.array([0]), s, 0.5, "tetra")
>>> (keys // 4).tolist(), (keys % 4).tolist(), source.tolist()   # edges (0, 3), (0, 1), (0, 2)
([[0, 0, 0]], [[3, 1, 2]], [0])

The edges become points in :mod:`daxpy.worklets._merge_cuts`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daxpy.data.arrays import array_module
from daxpy.data.worklet import GENERATING_KIND, Worklet, register

from ._contour_tables import CASES, EDGES

PER_CELL = {"line": 1, "triangle": 2, "quad": 2, "pixel": 2}
"""Edges per output cell of each kind (points, segments); the 3-D kinds give triangles."""


def per_cell(kind: str) -> int:
    """Points per output cell of a kind: 3 (triangles), 2 (segments) or 1.

    Examples
    --------
    >>> per_cell("tetra"), per_cell("quad")
    (3, 2)
    """
    return PER_CELL.get(kind, 3)


def _padded(kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(counts, table, edges)`` of a kind as arrays: output cells per case, the
    cases' edges padded to one shape, and the edges' corner pairs."""
    per = per_cell(kind)
    cases = CASES[kind]
    counts = np.array([len(case) // per for case in cases], np.int64)
    table = np.zeros((len(cases), max(int(counts.max()), 1), per), np.int64)
    for index, case in enumerate(cases):
        table[index, :counts[index]] = np.reshape(case, (-1, per))
    return counts, table, np.array(EDGES[kind], np.int64)


TABLES = {kind: _padded(kind) for kind in CASES}
"""Per kind: output cells per case, the padded case table and the edges' corners."""


def at_least(values: Any, value: float) -> Any:
    """``values >= value`` as if compared in float64, without converting ``values``:
    a float32 field is compared with the smallest float32 at or above ``value``
    (NumPy and CuPy would otherwise round ``value`` to float32 first).

    Examples
    --------
    >>> at_least(np.array([0.1], np.float32), 0.1).tolist()   # float32(0.1) > 0.1
    [True]
    >>> at_least(np.array([np.nextafter(np.float32(1), 0)]), 1.0 - 1e-9).tolist()
    [False]
    """
    xp = array_module(values)
    if values.dtype == np.float32:
        bound = np.float32(value)
        if float(bound) < value:
            bound = np.nextafter(bound, np.float32(np.inf))
        return values >= xp.float32(bound)
    return values >= value


def kept_side(values: Any, value: float, invert: bool) -> Any:
    """Where ``values`` are at or above ``value`` (:func:`at_least`), or below it with
    ``invert``: one pass over them, or two with ``invert`` (not a comparison with
    ``invert`` as well, a pass over every point for nothing).

    Examples
    --------
    >>> kept_side(np.array([0.0, 2.0]), 1.0, True).tolist()
    [True, False]
    """
    kept = at_least(values, value)
    return ~kept if invert else kept


def at_most(values: Any, value: float) -> Any:
    """``values <= value`` as if compared in float64 (see :func:`at_least`).

    Examples
    --------
    >>> at_most(np.array([0.1], np.float32), 0.1).tolist()   # float32(0.1) > 0.1
    [False]
    """
    xp = array_module(values)
    if values.dtype == np.float32:
        bound = np.float32(value)
        if float(bound) > value:
            bound = np.nextafter(bound, np.float32(-np.inf))
        return values <= xp.float32(bound)
    return values <= value


def classify(values: Any, value: float) -> Any:
    """Each cell's case from its corners' values, shape (n, k): bit ``i`` set where
    corner ``i`` is at or above ``value``.

    Examples
    --------
    >>> classify(np.array([[0.0, 2.0, 1.0]]), 1.0).tolist()
    [6]
    """
    xp = array_module(values)
    bits = xp.arange(values.shape[1], dtype=xp.int64)
    return (at_least(values, value).astype(xp.int64) << bits).sum(axis=1)


def march(corners: Any, cell_ids: Any, scalars: Any, value: float, kind: str,
          cases: Any = None) -> tuple[Any, Any]:
    """The output cells of cells of one kind: each as its edges' ``(lo, hi)`` keys.

    Parameters
    ----------
    corners : int array, shape (n, k)
        The cells' corner point ids, in VTK's corner order for ``kind``.
    cell_ids : int array, shape (n,)
        The cells' ids in the input (ascending).
    scalars : float array
        The point field cut, where ``corners`` lives.
    value : float
    kind : str
        A kind of :data:`daxpy.worklets._contour_tables.CASES`.
    cases : int array, shape (n,), optional
        The cells' cases, when already classified.

    Returns
    -------
    keys : int64 array, shape (m, per)
        ``lo * n_points + hi`` of each output cell's edges, ``lo < hi``.
    source : int64 array, shape (m,)
        The input cell of each output cell, ascending.
    """
    xp = array_module(corners)
    counts, table, edges = (xp.asarray(a) for a in TABLES[kind])
    if cases is None:
        cases = classify(scalars[corners], value)
    made = counts[cases]
    active = xp.flatnonzero(made)
    made = made[active]
    ends = xp.cumsum(made)                       # the scan: each cell's last output + 1
    total = int(ends[-1]) if ends.shape[0] else 0  # the one host sync: the output's size
    made_index = xp.arange(total)
    owner = xp.searchsorted(ends, made_index, side="right")
    local = made_index - (ends - made)[owner]
    cut = table[cases[active][owner], local]     # (m, per) edges of the kind
    cell = corners[active][owner]
    a = xp.take_along_axis(cell, edges[cut, 0], axis=1)
    b = xp.take_along_axis(cell, edges[cut, 1], axis=1)
    n_points = scalars.shape[0]
    keys = xp.minimum(a, b).astype(xp.int64) * n_points + xp.maximum(a, b)
    # A cell listing a point twice (a strip turning back) may cut one edge twice
    # for one output cell: merge() drops such collapsed cells.
    return keys, xp.asarray(cell_ids)[active][owner]


def on_device(impl):
    """A topology-generating implementation run on the GPU: its scalars copied there
    and the grid's host arrays placed there (both once per dataset, cached with it
    by :func:`daxpy.cuda.device.to_device`); the array program then runs on CuPy.

    Examples
    --------
    >>> def contour_cells(grid, scalars, place=None, **params): ...
    >>> on_device(contour_cells).__name__
    'contour_cells_cuda'
    """

    def run(grid: Any, scalars: Any, **params: Any) -> Any:
        from daxpy.cuda.device import to_device

        return impl(grid, to_device(scalars, grid), place=lambda array: to_device(array, grid),
                    **params)

    run.__name__ = run.__qualname__ = f"{impl.__name__}_cuda"
    run.__doc__ = f"{impl.__name__} with its arrays on the GPU (CuPy)."
    return run


def register_generating(name: str, impls: dict, *, input_association: str, halo: int,
                        doc: str, cpu: dict | None = None) -> None:
    """Declare a topology-generating worklet: ``impls`` maps grid families to its
    array program, which runs on NumPy as it is and on CuPy through :func:`on_device`;
    ``cpu`` maps families to compiled CPU implementations, where there are some.

    Each program is called as ``impl(grid, scalars, **params, place=None)``: ``grid``
    one of its families, ``scalars`` an array (NumPy or CuPy) that it works where it
    lives, and ``place`` a callable that puts the grid's host arrays there too (by
    default ``asarray`` of the scalars' module).

    Examples
    --------
    >>> from daxpy.data.worklet import get_worklet
    >>> get_worklet("clip").kind == get_worklet("threshold").kind
    True
    """
    register(Worklet(name=name, input_association=input_association,
                     output_association=None, halo=halo, numpy=dict(impls),
                     cpu=dict(cpu or {}),
                     cuda={family: on_device(impl) for family, impl in impls.items()},
                     kind=GENERATING_KIND, doc=doc))


GRID_FAMILIES = ("uniform", "rectilinear", "curvilinear", "unstructured")
"""The grid families every topology-generating worklet takes (contour adds PolyData)."""


IMAGE_CELL_CORNERS = {
    3: ((0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, 1), (1, 0, 1), (0, 1, 1), (1, 1, 1)),
    2: ((0, 0), (1, 0), (0, 1), (1, 1)),
    1: ((0,), (1,)),
}
"""Corner offsets of a structured cell along the grid's axes of more than one point,
in VTK's image cell order (voxel, pixel, line), by the grid's dimension."""


def structured_corners(dims: tuple, cells: Any, offsets: tuple) -> Any:
    """The corner point ids of structured cells (ids in VTK's cell order) for corner
    ``offsets`` along the axes of more than one point.

    Examples
    --------
    >>> structured_corners((3, 2, 1), np.array([1]), IMAGE_CELL_CORNERS[2]).tolist()
    [[1, 2, 4, 5]]
    """
    xp = array_module(cells)
    sizes = [int(d) for d in dims if d > 1]
    strides = np.cumprod([1] + sizes[:-1])
    first, rest = xp.zeros_like(cells), cells
    for size, stride in zip([n - 1 for n in sizes], strides):
        first += (rest % size) * int(stride)
        rest = rest // size
    return first[:, None] + xp.asarray(np.array(offsets, np.int64) @ strides)[None, :]


def used_points(ids: Any, n_points: int) -> tuple[Any, Any]:
    """The points that ``ids`` name, ascending, and each point's number among them
    (meaningful at those points only): a mask and a scan, no sort.

    Examples
    --------
    >>> point_ids, renumber = used_points(np.array([4, 1, 4]), 6)
    >>> point_ids.tolist(), renumber[[1, 4]].tolist()
    ([1, 4], [0, 1])
    """
    xp = array_module(ids)
    used = xp.zeros(n_points, dtype=bool)
    used[ids] = True
    return xp.flatnonzero(used), xp.cumsum(used) - 1


def cut_edges(kind: str) -> np.ndarray:
    """Per case of a ``kind`` of cell, how many edges its cells cut, then those
    edges: row ``case`` is ``[n, e1, ..., en, 0...]``.

    Examples
    --------
    >>> cut_edges("pixel")[1].tolist()
    [2, 0, 3, 0, 0]
    """
    edges = np.array(TABLES[kind][2])
    n_cases = 1 << (int(edges.max()) + 1)
    cut = np.zeros((n_cases, edges.shape[0] + 1), np.int64)
    for case in range(n_cases):
        crossed = [e for e, (a, b) in enumerate(edges) if (case >> a ^ case >> b) & 1]
        cut[case, :len(crossed) + 1] = [len(crossed)] + crossed
    return cut


def at_least_bound(dtype: np.dtype, value: float):
    """The smallest number of ``dtype`` at or above ``value``: ``s >= bound`` in the
    field's dtype is ``s >= value`` in float64 (as :func:`at_least`), without
    converting ``s``.

    Examples
    --------
    >>> float(at_least_bound(np.dtype(np.float32), 0.1)) >= 0.1
    True
    """
    bound = dtype.type(value)
    if float(bound) < value:
        bound = np.nextafter(bound, dtype.type(np.inf))
    return bound


def range_bounds(dtype: np.dtype, lower: float, upper: float) -> tuple:
    """``lower`` and ``upper`` rounded inwards to ``dtype``: a value of ``dtype``
    compared with them is compared with the given ones in float64
    (:func:`at_least`, :func:`at_most`).

    Examples
    --------
    >>> low, high = range_bounds(np.dtype(np.float32), 0.1, 0.1)
    >>> float(low) >= 0.1 >= float(high)
    True
    """
    # The largest number at or below upper is minus the smallest at or above -upper.
    return at_least_bound(dtype, lower), -at_least_bound(dtype, -upper)
