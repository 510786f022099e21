"""Topology-generating worklets run on a grid chunk by chunk: chunked host-to-host
runs and grids larger than the GPU.

Within :func:`chunk_cells`, a topology-generating worklet (contour, threshold,
clip) runs on chunks of a grid one after another: on a uniform, rectilinear or
curvilinear grid, slabs of whole cell layers across its slowest axis (a
contiguous range of its points and cells); on an unstructured grid, ranges of
cells with the points they use. Each chunk's scalars go to the device, its
result comes back, and the results are merged into the whole grid's, bit for bit
(:mod:`daxpy.worklets._chunk_merge`). So the device holds one chunk's working
set, not the grid's. The filter then assembles its dataset from the merged
result on the host, where the grid's fields are. The geometry runner
(:mod:`daxpy.stream.geometry_run`) sets the chunk size from the streaming settings.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.engine.dispatch import execute
>>> g = daxpy.UniformGrid(dims=(3, 3, 4), point_data={"t": np.arange(36.0)})
>>> with chunk_cells(4):                      # one layer of 2 x 2 cells, and more
...     cut = execute("contour", g, g.point_data["t"], "points", backend="cpu", value=17.5)
>>> whole = execute("contour", g, g.point_data["t"], "points", backend="cpu", value=17.5)
>>> cut.lo.tolist() == whole.lo.tolist(), cut.cells[3].tolist() == whole.cells[3].tolist()
(True, True)
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

import numpy as np

from ..data.arrays import is_device_array, to_host
from ..data.partition import layer_sizes, slowest_axis
from ..data.structured import UniformGrid
from ..errors import ArgumentError

_CELLS: ContextVar[int | None] = ContextVar("daxpy_geometry_chunk_cells", default=None)

STRUCTURED = ("uniform", "rectilinear", "curvilinear")
"""The grid families that run in slabs (their slabs are contiguous ranges)."""


@contextmanager
def chunk_cells(cells: int | None) -> Iterator[None]:
    """Run topology-generating worklets on chunks of about ``cells`` input cells (None:
    whole grids) within the block: slabs of as many whole cell layers as fit (one at
    least) on structured grids, ranges of cells on unstructured ones.

    Raises
    ------
    ArgumentError
        If ``cells`` is not a positive integer.

    Examples
    --------
    >>> with chunk_cells(1000):
    ...     cells_now()
    1000
    """
    if cells is not None and (isinstance(cells, bool) or
                              not isinstance(cells, (int, np.integer)) or cells < 1):
        raise ArgumentError(f"geometry chunks need a positive number of cells, got {cells!r}")
    token = _CELLS.set(cells)
    try:
        yield
    finally:
        _CELLS.reset(token)


def cells_now() -> int | None:
    """The input cells per chunk set by :func:`chunk_cells` (None: whole grids).

    Examples
    --------
    >>> cells_now() is None
    True
    """
    return _CELLS.get()


def run_chunked(impl, dataset: Any, values: Any, association: str, params: dict) -> Any:
    """``impl`` (a topology-generating program) on ``dataset`` chunk by chunk, merged;
    None when it runs whole (no chunks set, a grid that fits one, or PolyData).

    Examples
    --------
    >>> run_chunked(None, UniformGrid(dims=(2,)), np.zeros(2), "points", {}) is None
    True
    """
    from daxpy.worklets._chunk_merge import merged

    cells = cells_now()
    if cells is None or dataset.n_cells <= cells:
        return None
    if dataset.family in STRUCTURED:
        chunks = _slabs(dataset, cells)
    elif dataset.family == "unstructured":
        chunks = _cell_ranges(dataset, cells)
    else:
        return None
    # A chunk's scalars are a part of the array, where it lives (on the host for a
    # grid larger than the GPU: one part goes to the device at a time).
    scalars = values if is_device_array(values) else to_host(values)
    parts = [run(impl, scalars, association, params, dataset.n_points) for run in chunks]
    return merged(parts, n_points=dataset.n_points)


def _slabs(grid: Any, cells: int) -> list:
    """Slabs of whole cell layers across the slowest axis, as many layers as fit
    ``cells`` (one at least); each a contiguous range of points and of cells."""
    dims = tuple(int(d) for d in grid.dims)
    axis = slowest_axis(dims)
    layer_points, layer_cells = layer_sizes(grid)
    layers, n_layers = max(cells // layer_cells, 1), dims[axis] - 1
    chunks = []
    for first in range(0, n_layers, layers):
        last = min(first + layers, n_layers)
        sub_dims = list(dims)
        sub_dims[axis] = last - first + 1
        # The programs read a structured grid's dimensions only: a uniform grid of
        # the slab's shape stands for it.
        chunks.append(_Chunk(UniformGrid(dims=tuple(sub_dims)),
                             slice(first * layer_points, (last + 1) * layer_points),
                             slice(first * layer_cells, last * layer_cells),
                             first * layer_points, first * layer_cells))
    return chunks


def _cell_ranges(grid: Any, cells: int) -> list:
    """Ranges of ``cells`` cells with the points they use (their ids ascending, so
    every edge keeps its ends' order)."""
    from ..data.unstructured import UnstructuredGrid

    offsets, connectivity = to_host(grid.offsets), to_host(grid.connectivity)
    types, points = to_host(grid.cell_types), to_host(grid.points())
    chunks = []
    for first in range(0, grid.n_cells, cells):
        last = min(first + cells, grid.n_cells)
        ends = offsets[first:last + 1]
        corners = connectivity[ends[0]:ends[-1]]
        used = np.unique(corners)
        piece = UnstructuredGrid.from_checked(points[used], np.searchsorted(used, corners),
                                              ends - ends[0], types[first:last])
        chunks.append(_Chunk(piece, used, slice(first, last), used, first))
    return chunks


class _Chunk:
    """One chunk: its grid, where its point and cell values are in the whole grid's
    arrays, and how its point and cell ids move into the whole grid's."""

    def __init__(self, grid, point_part, cell_part, points, cells):
        self.grid, self.point_part, self.cell_part = grid, point_part, cell_part
        self.points, self.cells = points, cells

    def __call__(self, impl, scalars: Any, association: str, params: dict,
                 n_global: int) -> Any:
        from daxpy.worklets._chunk_merge import shifted

        part = self.point_part if association == "points" else self.cell_part
        made = impl(self.grid, scalars[part], **params)
        return shifted(_on_host(made), points=self.points, cells=self.cells,
                       n_points=self.grid.n_points, n_global=n_global)


def _on_host(made: Any) -> Any:
    """A worklet's result (a dataclass of arrays, or of dicts of arrays) on the host,
    its ids made where it left them to the device's words (a threshold's ``with_ids``)
    and its fields marked ``device_only`` dropped."""
    import dataclasses

    def host(value):
        if isinstance(value, dict):
            return {k: to_host(v) for k, v in value.items()}
        return None if value is None else to_host(value)

    if hasattr(made, "with_ids"):
        made = made.with_ids()
    return type(made)(**{f.name: None if f.metadata.get("device_only") else
                         host(getattr(made, f.name)) for f in dataclasses.fields(made)})
