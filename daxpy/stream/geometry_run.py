"""Runs whose last stage makes a new dataset (contour, slice, threshold, clip): the
field stages first, then the geometry filter, whole or slab by slab.

A grid's geometry runs in chunks (:mod:`daxpy.engine.geometry_chunks`: slabs of
whole cell layers of a structured grid, ranges of cells of an unstructured one) when
the settings ask for it (``geometry_cells``), or when a host-to-host GPU run has a
device budget (``max_device_bytes``) that the whole grid's working set would pass:
then as many cells as fit the budget at :data:`DEVICE_BYTES_PER_CELL`. Chunks give
the whole grid's dataset, bit for bit.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(4, 4, 50))
>>> cells_for(g, on_gpu=True, to="host", max_device_bytes=64 * DEVICE_BYTES_PER_CELL)
64
"""

from __future__ import annotations

import time
from typing import Any


from ..engine.backend import resolve_backend
from ..engine.geometry_chunks import STRUCTURED, cells_now, chunk_cells
from ..engine.run import Profile, StageRecord, run_in_core
from ..engine.stage import configured
from ..errors import ArgumentError
from .placement import results_on_device, uploaded
from .settings import current_settings

CHUNKED = STRUCTURED + ("unstructured",)
"""The grid families a geometry filter runs chunk by chunk."""

DEVICE_BYTES_PER_CELL = 768
"""Device bytes a topology-generating array program may hold per input cell at its
peak (the clip's, measured at about 600 on an H100 at 256³: cases, its output cells' codes
and corners, point keys, terms),
with room to spare; the slabs of an out-of-core run are sized by it."""


def cells_for(dataset: Any, *, on_gpu: bool, to: str, max_device_bytes: int | None,
              geometry_cells: int | None = None) -> int | None:
    """Input cells per chunk for a geometry filter on ``dataset`` (None: the whole grid).

    Examples
    --------
    >>> import daxpy
    >>> cells_for(daxpy.UniformGrid(dims=(3, 3, 3)), on_gpu=False, to="host",
    ...           max_device_bytes=None, geometry_cells=4)
    4
    """
    if geometry_cells is not None:
        return geometry_cells
    if not on_gpu or to != "host" or max_device_bytes is None or \
            dataset.family not in CHUNKED:
        return None
    cells = int(max_device_bytes) // DEVICE_BYTES_PER_CELL
    return max(cells, 1) if cells < dataset.n_cells else None


def run_to_new_dataset(dataset, stages, backend: str, to: str, fuse: bool,
                       concurrent: bool):
    """Run a pipeline whose last stage makes a new dataset (a geometry filter);
    return ``(dataset, Profile)``.

    The stages before it leave what the last stage reads where they ran (on the
    device for CUDA, on the host when the geometry runs in slabs); the last makes
    the new dataset, on the device for ``to="device"`` (where its
    ``device_results`` allows), else on the host.

    Raises
    ------
    ArgumentError
        For ``to="device"`` on the CPU, or with a filter that assembles on the host.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.engine.stage import Stage
    >>> from daxpy.filters import Threshold
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.arange(3.0)})
    >>> stage = Stage(1, "threshold", Threshold("t", 0.5, 9.0), ("t",), "")
    >>> made, _ = run_to_new_dataset(g, [stage], "cpu", "host", True, True)
    >>> made.n_cells
    1
    """
    *fields, last = stages
    produced = {name for stage in fields for name in (stage.output,) + stage.filter.outputs()}
    wanted = [name for name in last.inputs if name in produced]
    on_gpu = resolve_backend(backend) == "cuda"
    if to == "device" and not (on_gpu and getattr(last.filter, "device_results", False)):
        raise ArgumentError(f"to='device' needs the CUDA backend and a filter that leaves "
                            f"its dataset there ({last.verb}: host assembly, or the CPU)")
    settings = current_settings()
    # The settings', or those of an enclosing chunk_cells block.
    cells = cells_for(dataset, on_gpu=on_gpu, to=to,
                      max_device_bytes=settings.max_device_bytes,
                      geometry_cells=settings.geometry_cells) or cells_now()
    keep = "device" if on_gpu and cells is None else "host"
    if keep == "device" and to == "host" and not fields and \
            settings.staging in ("auto", "register") and hasattr(last.filter, "make_in_slabs"):
        # A filter that can overlap the host grid's upload, its cut and the result's
        # download slab by slab does (None where it cannot for this grid), first:
        # with no field stage there is nothing for the in-core run to do, and its
        # setup (about 0.1 ms) would come before the first byte goes up.
        start = time.perf_counter()
        made = configured(last, backend).make_in_slabs(dataset)
        if made is not None:
            return made, _recorded(Profile(backend="cuda"), last, made, start)
    working, profile = run_in_core(dataset, fields, wanted, backend, keep, fuse, concurrent)
    working = dataset.with_fields(working.point_data, working.cell_data)
    start = time.perf_counter()
    if keep == "device":
        # The geometry filter reads its field and carries the others: every host
        # field goes up once, at the bus's rate, not through a pageable copy.
        working = working.with_fields(
            {name: uploaded(v, settings.staging) for name, v in working.point_data.items()},
            {name: uploaded(v, settings.staging) for name, v in working.cell_data.items()})
    with results_on_device(to == "device"), chunk_cells(cells):
        made = configured(last, backend).apply(working)
    return made, _recorded(profile, last, made, start)


def _recorded(profile: Any, last: Any, made: Any, start: float) -> Any:
    """``profile`` with the last stage's record: its time since ``start`` and the
    bytes of the fields it made."""
    elapsed = (time.perf_counter() - start) * 1e3
    # A filter may make several datasets (a clip's two halves).
    written = sum(int(values.nbytes) for one in (made if isinstance(made, tuple) else (made,))
                  for data in (one.point_data, one.cell_data) for values in data.values())
    profile.stages.append(StageRecord(last.index, last.verb, last.output, elapsed, written))
    return profile
