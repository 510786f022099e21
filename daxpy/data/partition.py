"""Cutting a structured grid into windows that are computed apart and put back.

Distributed runs (:mod:`daxpy.dask`) and chunked host<->device streaming use
these windows; nothing here knows about either. Unstructured grids are cut in
:mod:`daxpy.distributed.ghosts` (cell ranges with VTK ghost levels).

A piece of a structured grid (a *window*) is a
:class:`~daxpy.data.decomposition.Piece`: the box of points it reads (``lo``
to ``hi`` along x, y, z) and the box it owns. The read box is the owned one
grown by the pipeline's *depth* on every side that has a neighbour, and by
nothing at the grid's true border, so one-sided differences happen only
there. :func:`window_grid` gives the window's sub-grid with its true
coordinates, :func:`run_window` runs a pipeline on it and keeps only what the
window owns. A window owns the cells whose first corner (lowest index) it
owns, so the cell results of neighbouring windows tile the grid's cells; a
point-to-cell stage therefore needs one layer of points past the owned box.

Examples
--------
>>> import daxpy
>>> g = daxpy.UniformGrid(dims=(4, 4, 10))
>>> [(w.lo[2], w.hi[2], w.own_lo[2], w.own_hi[2]) for w in slab_windows(g.dims, 5, 1)]
[(0, 6, 0, 5), (4, 10, 5, 10)]
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .decomposition import Piece
from .structured import CurvilinearGrid, RectilinearGrid, UniformGrid



class UniformWindow(UniformGrid):
    """A box of a uniform grid whose coordinates are computed as the whole grid's.

    ``origin + spacing * global_index`` rounds like the whole grid does, where
    a grid of its own (``origin`` moved to the box) would round differently,
    so results on the window are bitwise those on the grid.

    Parameters
    ----------
    parent : UniformGrid
    lo, hi : sequence of int
        First and one-past-last point along x, y, z.

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.UniformGrid(dims=(9,), origin=(0.1,), spacing=(0.3,))
    >>> w = UniformWindow(g, (4, 0, 0), (7, 1, 1))
    >>> bool((w.axis_coordinates(0) == g.axis_coordinates(0)[4:7]).all())
    True
    """

    def __init__(self, parent: UniformGrid, lo: Sequence[int], hi: Sequence[int]):
        self.parent_origin = parent.origin
        self.first = tuple(int(v) for v in lo)
        origin = [parent.axis_coordinates(a)[lo[a]] for a in range(3)]
        super().__init__(dims=tuple(h - l for l, h in zip(lo, hi)), origin=origin,
                         spacing=parent.spacing, name=parent.name)

    def axis_coordinates(self, axis: int) -> np.ndarray:
        """Coordinates along one axis, exactly the parent's (float64)."""
        first = self.first[axis]
        return (self.parent_origin[axis]
                + self.spacing[axis] * np.arange(first, first + self.dims[axis]))


def window_grid(grid, window: Piece, points: Any = None):
    """The sub-grid of ``grid`` inside ``window``'s read box, with no fields.

    Parameters
    ----------
    grid : UniformGrid, RectilinearGrid or CurvilinearGrid
    window : Piece
    points : array, shape (nz, ny, nx, 3), optional
        The window's point coordinates (curvilinear grids); by default sliced
        from ``grid``.

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.RectilinearGrid([0, 1, 3, 7])
    >>> window_grid(g, Piece((1, 0, 0), (4, 1, 1), (1, 0, 0), (4, 1, 1))).axis_coordinates(0)
    array([1., 3., 7.])
    """
    lo, hi = window.lo, window.hi
    if grid.family == "uniform":
        return UniformWindow(grid, lo, hi)
    if grid.family == "rectilinear":
        return RectilinearGrid(*(grid.coordinates[a][lo[a]:hi[a]] for a in range(3)),
                               name=grid.name)
    if points is None:
        view = grid.points().reshape(grid.point_shape() + (3,))
        points = view[lo[2]:hi[2], lo[1]:hi[1], lo[0]:hi[0]]
    return CurvilinearGrid(window.shape, points.reshape(-1, 3), name=grid.name)


def _flat(block, shape: tuple) -> Any:
    return block.reshape((math.prod(shape),) + tuple(block.shape[3:]))


def window_dataset(grid, window: Piece, point_blocks: dict, cell_blocks: dict,
                   points: Any = None):
    """The sub-grid of ``window`` (:func:`window_grid`) with its fields, flat.

    The blocks are used in place (reshaped, not copied), so a field written
    later is what the next run of the dataset reads.

    Parameters
    ----------
    grid, window, points
        As for :func:`window_grid`.
    point_blocks, cell_blocks : dict of str to array
        Fields over the read box, as for :func:`run_window`.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(6,))
    >>> w = Piece((2, 0, 0), (6, 1, 1), (3, 0, 0), (6, 1, 1), g.dims)
    >>> window_dataset(g, w, {"p": np.arange(2.0, 6.0)[None, None]}, {}).point_data["p"]
    array([2., 3., 4., 5.])
    """
    sub = window_grid(grid, window, points)
    cells = sub.cell_shape()
    return sub.with_fields({k: _flat(b, sub.point_shape()) for k, b in point_blocks.items()},
                           {k: _flat(b, cells) for k, b in cell_blocks.items()})


def owned_results(result, window: Piece, outputs: dict[str, str]) -> dict[str, Any]:
    """The owned part of each output of ``result``, a run over ``window``'s
    sub-grid, in C-order shape ``(nz, ny, nx[, c])`` (views, not copies).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> w = Piece((2, 0, 0), (6, 1, 1), (3, 0, 0), (6, 1, 1), (6, 1, 1))
    >>> sub = daxpy.UniformGrid(dims=(4,), point_data={"p": np.arange(4.0)})
    >>> owned_results(sub, w, {"p": "points"})["p"].ravel().tolist()
    [1.0, 2.0, 3.0]
    """
    trimmed = {}
    for name, association in outputs.items():
        values, _ = result.field(name, association)
        shape = result.point_shape() if association == "points" else result.cell_shape()
        trimmed[name] = values.reshape(shape + values.shape[1:])[
            window.owned_slices(association)]
    return trimmed


def run_window(run: Callable, grid, window: Piece, point_blocks: dict, cell_blocks: dict,
               outputs: dict[str, str], points: Any = None) -> dict[str, Any]:
    """Run a pipeline on one window; return its owned results in C-order shape.

    Parameters
    ----------
    run : callable
        ``run(dataset) -> dataset`` holding the ``outputs`` fields.
    grid : structured grid
        The whole grid (topology only is read).
    window : Piece
        With the whole grid's ``dims``.
    point_blocks : dict of str to array
        Point fields over the read box, shape ``(nz, ny, nx)`` or ``(nz, ny, nx, c)``.
    cell_blocks : dict of str to array
        Cell fields over ``window.read_box("cells")``, the same way.
    outputs : dict of str to str
        Output field name to its association.
    points : array, optional
        Point coordinates of the read box (curvilinear grids).

    Returns
    -------
    dict of str to array
        Each output over the owned points or cells, shape ``(nz, ny, nx[, c])``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(6,))
    >>> w = Piece((2, 0, 0), (6, 1, 1), (3, 0, 0), (6, 1, 1), g.dims)
    >>> run = lambda d: daxpy.pipeline(d).point_to_cell("p", "c").pipeline.run(backend="cpu")
    >>> out = run_window(run, g, w, {"p": np.arange(2.0, 6.0)[None, None]}, {}, {"c": "cells"})
    >>> out["c"].ravel().tolist()
    [3.5, 4.5]
    """
    data = window_dataset(grid, window, point_blocks, cell_blocks, points)
    return owned_results(run(data), window, outputs)


def even_split(n: int, count: int) -> tuple[int, ...]:
    """``n`` split into ``count`` near-equal positive parts, larger ones first.

    Examples
    --------
    >>> even_split(10, 3)
    (4, 3, 3)
    """
    count = max(1, min(count, n))
    return tuple(n // count + (1 if i < n % count else 0) for i in range(count))


def merge_small(sizes: Iterable[int], minimum: int, last_minimum: int) -> tuple[int, ...]:
    """Merge neighbouring chunk sizes until each is at least ``minimum`` and the
    last at least ``last_minimum`` (halos need that many layers next door).

    Examples
    --------
    >>> merge_small((1, 1, 3, 2, 1), 2, 3)
    (2, 3, 3)
    """
    merged: list[int] = []
    pending = 0
    for size in sizes:
        pending += size
        if pending >= minimum:
            merged.append(pending)
            pending = 0
    if pending:
        if merged:
            merged[-1] += pending
        else:
            merged.append(pending)
    while len(merged) > 1 and merged[-1] < last_minimum:
        last = merged.pop()
        merged[-1] += last
    return tuple(merged)


def plan_chunks(dims: Sequence[int], bytes_per_point: int, memory_bytes: int,
                pieces: int = 1, depth: int = 0) -> tuple[tuple[int, ...], ...]:
    """Chunk sizes, in C order (z, y, x), for slabs of a structured grid.

    Slabs are cut along the slowest axis with more than one point: as few as
    fit ``memory_bytes`` each at ``bytes_per_point``, at least ``pieces`` and a
    multiple of it where the axis allows, so every worker gets equal work.
    Only when one layer is too large is the next axis cut too. Each slab is at
    least ``depth`` layers thick, the last one ``depth + 1`` (its cells).

    Examples
    --------
    >>> plan_chunks((100, 100, 100), 8, 8 * 100 * 100 * 30, pieces=2)
    ((25, 25, 25, 25), (100,), (100,))
    >>> plan_chunks((100, 100, 1), 8, 8 * 100 * 10)
    ((1,), (10, 10, 10, 10, 10, 10, 10, 10, 10, 10), (100,))
    """
    shape = tuple(dims[::-1])
    budget = max(1, memory_bytes // max(bytes_per_point, 1))
    needed = max(-(-math.prod(shape) // budget), pieces, 1)
    chunks = [(n,) for n in shape]
    for axis, n in enumerate(shape):
        if needed <= 1:
            break
        if n == 1:
            continue
        count = min(n, -(-needed // pieces) * pieces if axis == first_axis(shape) else needed)
        sizes = merge_small(even_split(n, count), max(depth, 1), depth + 1)
        chunks[axis] = sizes
        needed = -(-needed // len(sizes))
    return tuple(chunks)


def first_axis(shape: Sequence[int]) -> int:
    """Index of the first (slowest, in C order) axis with more than one point.

    Examples
    --------
    >>> first_axis((1, 4, 5))
    1
    """
    return next((a for a, n in enumerate(shape) if n > 1), 0)


def slowest_axis(dims) -> int:
    """The axis (0=x, 1=y, 2=z) that slabs are cut across: the slowest with > 1 point.

    Examples
    --------
    >>> slowest_axis((5, 4, 1)), slowest_axis((1, 1, 1))
    (1, 2)
    """
    return 2 - first_axis(tuple(dims[::-1]))


def layer_sizes(grid) -> tuple[int, int]:
    """Points and cells in one layer across the slowest axis.

    Examples
    --------
    >>> import daxpy
    >>> layer_sizes(daxpy.UniformGrid(dims=(4, 3, 5)))
    (12, 6)
    """
    axis = slowest_axis(grid.dims)
    return (math.prod(grid.dims[:axis]), math.prod(grid.cell_dims[:axis]))


def slab_windows(dims: Sequence[int], planes: int, depth: int) -> list[Piece]:
    """Windows of ``planes`` owned layers along the slowest axis, halos of ``depth``.

    Examples
    --------
    >>> [w.hi[0] for w in slab_windows((7, 1, 1), 3, 1)]
    [4, 7, 7]
    """
    axis = 2 - first_axis(tuple(dims[::-1]))
    n = dims[axis]
    windows = []
    for start in range(0, n, max(planes, 1)):
        stop = min(start + planes, n)
        lo, hi = [0, 0, 0], list(dims)
        lo[axis], hi[axis] = max(start - depth, 0), min(stop + depth, n)
        own_lo, own_hi = [0, 0, 0], list(dims)
        own_lo[axis], own_hi[axis] = start, stop
        windows.append(Piece(tuple(lo), tuple(hi), tuple(own_lo), tuple(own_hi), tuple(dims)))
    return windows
