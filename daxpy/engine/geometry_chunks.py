"""Topology-generating worklets run on a structured grid slab by slab: chunked
host-to-host runs and grids larger than the GPU.

Within :func:`chunk_layers`, a topology-generating worklet (contour, threshold,
clip) on a uniform, rectilinear or curvilinear grid runs on slabs of that many
cell layers across the grid's slowest axis, one after another: each slab's
scalars (a contiguous range of the host array) go to the device, its result
comes back, and the results are merged into the whole grid's, bit for bit
(:mod:`daxpy.worklets._chunk_merge`). So the device holds one slab's working
set, not the grid's. The filter then assembles its dataset from the merged
result on the host, where the grid's fields are. The streaming runner
(:mod:`daxpy.stream.streaming`) sets the layers from its settings.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.engine.dispatch import execute
>>> g = daxpy.UniformGrid(dims=(3, 3, 4), point_data={"t": np.arange(36.0)})
>>> with chunk_layers(1):
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
from ..data.structured import UniformGrid
from ..errors import ArgumentError

_LAYERS: ContextVar[int | None] = ContextVar("daxpy_geometry_layers", default=None)

STRUCTURED = ("uniform", "rectilinear", "curvilinear")
"""The grid families that run in slabs (their slabs are contiguous ranges)."""


@contextmanager
def chunk_layers(layers: int | None) -> Iterator[None]:
    """Run topology-generating worklets on slabs of ``layers`` cell layers (None:
    the whole grid at once) within the block.

    Raises
    ------
    ArgumentError
        If ``layers`` is not a positive integer.

    Examples
    --------
    >>> with chunk_layers(2):
    ...     layers_now()
    2
    """
    if layers is not None and (isinstance(layers, bool) or not isinstance(layers, int)
                               or layers < 1):
        raise ArgumentError(f"geometry chunks need a positive number of cell layers, "
                            f"got {layers!r}")
    token = _LAYERS.set(layers)
    try:
        yield
    finally:
        _LAYERS.reset(token)


def layers_now() -> int | None:
    """The cell layers per slab set by :func:`chunk_layers` (None: whole grids).

    Examples
    --------
    >>> layers_now() is None
    True
    """
    return _LAYERS.get()


def slab_axis(dims: tuple) -> int:
    """The axis slabs are cut across: the slowest with more than one point (point
    ids run x fastest, so a slab is a contiguous range of them).

    Examples
    --------
    >>> slab_axis((4, 3, 1)), slab_axis((1, 1, 5))
    (1, 2)
    """
    return max([a for a in range(3) if dims[a] > 1] or [0])


def run_chunked(impl, dataset: Any, values: Any, association: str, on_gpu: bool,
                params: dict) -> Any:
    """``impl`` (a topology-generating program) on ``dataset`` slab by slab, merged;
    None when it runs whole (no layers set, a grid that is not structured, or a
    grid of no more layers than a slab).

    Examples
    --------
    >>> run_chunked(None, UniformGrid(dims=(2,)), np.zeros(2), "points", False, {}) is None
    True
    """
    from daxpy.worklets._chunk_merge import merged, shifted

    layers = layers_now()
    if layers is None or dataset.family not in STRUCTURED:
        return None
    dims = tuple(int(d) for d in dataset.dims)
    axis = slab_axis(dims)
    n_layers = dims[axis] - 1
    if n_layers <= layers:
        return None
    # Points and cells in one layer across the slab axis.
    layer_points = int(np.prod(dims[:axis]))
    layer_cells = int(np.prod([d - 1 if d > 1 else 1 for d in dims[:axis]]))
    # A slab's scalars are a range of the array, where it lives (on the host for a
    # grid larger than the GPU: one range goes to the device at a time).
    scalars = values if is_device_array(values) else to_host(values)
    parts = []
    for first in range(0, n_layers, layers):
        last = min(first + layers, n_layers)
        sub_dims = list(dims)
        sub_dims[axis] = last - first + 1
        # The programs read a structured grid's dimensions only: a uniform grid of
        # the slab's shape stands for it.
        slab = UniformGrid(dims=tuple(sub_dims))
        unit = layer_points if association == "points" else layer_cells
        stop = (last + 1) * layer_points if association == "points" else last * layer_cells
        made = impl(slab, scalars[first * unit:stop], **params)
        parts.append(shifted(_on_host(made), points=first * layer_points,
                             cells=first * layer_cells, n_points=slab.n_points))
    return merged(parts, n_points=dataset.n_points)


def _on_host(made: Any) -> Any:
    """A worklet's result (a dataclass of arrays, or of dicts of arrays) on the host."""
    import dataclasses

    def host(value):
        if isinstance(value, dict):
            return {k: to_host(v) for k, v in value.items()}
        return None if value is None else to_host(value)

    return type(made)(**{f.name: host(getattr(made, f.name)) for f in dataclasses.fields(made)})
