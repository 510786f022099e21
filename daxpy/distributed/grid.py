"""Scale out with Dask: run daxpy pipelines over grids whose fields are Dask arrays.

Install with ``pip install 'daxpy-viz[dask]'``. A :class:`DaskGrid` is a daxpy grid
whose fields are Dask arrays, with NumPy chunks on CPU workers or CuPy chunks
on GPU workers (dask-cuda, one worker per GPU). :func:`pipeline` gives the
usual lazy pipeline over it; its ``run`` returns a :class:`DaskGrid` of lazy
results, equal to the single-domain run of the same pipeline.

Structured grids are cut into slabs (:func:`daxpy.data.partition.plan_chunks`) and
exchange halos through Dask's overlap (what ``map_overlap`` does), with
``boundary='none'`` so that a stencil is one-sided only at the grid's true
border. The depth is the longest chain of worklet reaches in the pipeline
(:func:`daxpy.data.partition.worklet_reach`); every block runs the pipeline on its
sub-grid, which keeps the true coordinates, and keeps what it owns. Fields
live in C order: a point field is ``(nz, ny, nx)`` or ``(nz, ny, nx, c)``, a
cell field the same over the cells. Unstructured grids are cut into cell
ranges with ghost levels (:func:`daxpy.data.partition.partition_cells`); fields
there are ``(n,)`` or ``(n, c)``.

Maps must not depend on a value's position in the whole field: a BiasAdd
whose bias spans several tuples does, and gives other results per block.

Examples
--------
>>> import numpy as np, daxpy, daxpy.dask
>>> grid = daxpy.UniformGrid(dims=(6, 5, 8), spacing=(0.5, 0.5, 0.5))
>>> p = grid.points()[:, 0] ** 2
>>> dgrid = daxpy.dask.DaskGrid(grid, point_data={"p": p})
>>> pipe = daxpy.dask.pipeline(dgrid)
>>> out = pipe.gradient("p").magnitude().point_to_cell()
>>> result = pipe.run(backend="cpu", chunks=((3, 5), (5,), (6,)))
>>> single = daxpy.pipeline(grid.with_fields(point_data={"p": p}))
>>> _ = single.gradient("p").magnitude().point_to_cell()
>>> expected = single.run(backend="cpu").cell_data[out.name]
>>> bool((result.compute().cell_data[out.name] == expected).all())
True
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Mapping, Sequence

from ..data.extras import require

# Before the first dask import, so that a missing extra is a MissingExtraError naming it.
require("dask.array", "dask", "daxpy.dask")
import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402

from ..data.arrays import is_device_array, to_host
from ..data.dataset import DataSet
from .graph import resources, structured_outputs, unstructured_outputs
from ..errors import ArgumentError, FieldError
from ..engine.stage import Stage
from ..pipeline import Pipeline
from .runner import checked_runner
from ..data.structured import StructuredGrid

__all__ = ["DaskGrid", "DaskPipeline", "apply", "pipeline", "resources"]


class DaskGrid:
    """A daxpy grid (its topology) with fields held as Dask arrays.

    Parameters
    ----------
    grid : DataSet
        Gives the topology; its own fields are wrapped too (one chunk each).
    point_data, cell_data : dict of str to array, optional
        More fields: Dask, NumPy or CuPy arrays. Structured grids take them
        in C order, ``(nz, ny, nx[, c])`` at points and the same over cells, or
        flat ``(n[, c])``; unstructured grids flat.

    Examples
    --------
    >>> import numpy as np, dask.array as da, daxpy, daxpy.dask
    >>> g = daxpy.UniformGrid(dims=(4, 3, 2))
    >>> d = DaskGrid(g, point_data={"v": da.ones((2, 3, 4, 3), chunks=(1, 3, 4, 3))})
    >>> d.point_data["v"].shape, d.topology.point_data.keys() == set()
    ((2, 3, 4, 3), True)
    """

    def __init__(self, grid: Any, point_data: Mapping[str, Any] | None = None,
                 cell_data: Mapping[str, Any] | None = None) -> None:
        from ..filters._names import as_dataset

        grid = as_dataset(grid)
        if grid.family not in ("uniform", "rectilinear", "curvilinear", "unstructured"):
            # Blocks are cut from structured extents or unstructured cell arrays.
            raise ArgumentError(
                f"daxpy.dask does not take {type(grid).__name__} yet; run its filters "
                "on one process (they return the same results)")
        self.topology = grid.with_fields()
        for data in (self.topology.point_data, self.topology.cell_data):
            for name in list(data):
                del data[name]
        self.point_data: dict[str, Any] = {}
        self.cell_data: dict[str, Any] = {}
        for association, given in (("points", grid.point_data), ("points", point_data),
                                   ("cells", grid.cell_data), ("cells", cell_data)):
            for name, values in (given or {}).items():
                self.add(name, values, association)

    @property
    def structured(self) -> bool:
        """True for uniform, rectilinear and curvilinear grids."""
        return isinstance(self.topology, StructuredGrid)

    def field_shape(self, association: str) -> tuple[int, ...]:
        """Shape of a one-component field at ``association`` (C order if structured)."""
        if not self.structured:
            return (self.topology.n_points if association == "points" else self.topology.n_cells,)
        return (self.topology.point_shape() if association == "points"
                else self.topology.cell_shape())

    def add(self, name: str, values: Any, association: str) -> None:
        """Add a field, checking its shape; NumPy and CuPy arrays become one chunk.

        Raises
        ------
        FieldError
            If the shape fits neither layout of ``association``.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> d = DaskGrid(daxpy.UniformGrid(dims=(3, 2)))
        >>> d.add("t", np.zeros(6), "points")
        >>> d.point_data["t"].shape
        (1, 2, 3)
        """
        array = values if isinstance(values, da.Array) else da.from_array(
            values, chunks=values.shape, asarray=False)
        base = self.field_shape(association)
        flat = (math.prod(base),)
        if array.shape[:len(base)] == base and array.ndim in (len(base), len(base) + 1):
            shaped = array
        elif array.shape[:1] == flat and array.ndim in (1, 2):
            shaped = array.reshape(base + array.shape[1:])
        else:
            raise FieldError(
                f"{association[:-1]} field {name!r} has shape {array.shape}; expected "
                f"{base} or {flat} (optionally with a component axis)")
        (self.point_data if association == "points" else self.cell_data)[name] = shaped

    def fields(self) -> Iterator[tuple[str, str, Any]]:
        """Every field as ``(name, association, array)``."""
        for association, data in (("points", self.point_data), ("cells", self.cell_data)):
            for name, array in data.items():
                yield name, association, array

    def standin(self) -> DataSet:
        """The topology with zero-memory fields of the right dtypes and shapes
        (what a pipeline is built against).

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> DaskGrid(daxpy.UniformGrid(dims=(3,)), {"t": np.ones(3)}).standin().point_data["t"].strides
        (0,)
        """
        flat = {}
        for name, association, array in self.fields():
            rows = math.prod(self.field_shape(association))
            placeholder = np.broadcast_to(np.ones(1, dtype=array.dtype),
                                          (rows,) + _components(self, association, array))
            flat.setdefault(association, {})[name] = placeholder
        return self.topology.with_fields(flat.get("points"), flat.get("cells"))

    def persist(self) -> "DaskGrid":
        """Persist every field (on the cluster's workers); return a new DaskGrid.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> d = DaskGrid(daxpy.UniformGrid(dims=(3,)), {"t": np.ones(3)}).persist()
        >>> float(d.point_data["t"].sum().compute())
        3.0
        """
        names = list(self.fields())
        arrays = dask.persist(*(array for _, _, array in names))
        result = DaskGrid(self.topology)
        for (name, association, _), array in zip(names, arrays):
            (result.point_data if association == "points" else result.cell_data)[name] = array
        return result

    def compute(self) -> DataSet:
        """Gather every field into a daxpy grid of NumPy arrays, flat ``(n[, c])``.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> DaskGrid(daxpy.UniformGrid(dims=(2, 2)), {"t": np.arange(4.0)}).compute().point_data["t"]
        array([0., 1., 2., 3.])
        """
        names = list(self.fields())
        values = dask.compute(*(array for _, _, array in names))
        flat = {"points": {}, "cells": {}}
        for (name, association, array), value in zip(names, values):
            rows = math.prod(self.field_shape(association))
            flat[association][name] = to_host(value).reshape(
                (rows,) + _components(self, association, array))
        return self.topology.with_fields(flat["points"], flat["cells"])

    def __repr__(self) -> str:
        return (f"DaskGrid({self.topology.topology_name}, points={list(self.point_data)}, "
                f"cells={list(self.cell_data)})")


def _components(dgrid: DaskGrid, association: str, array) -> tuple[int, ...]:
    return tuple(array.shape[len(dgrid.field_shape(association)):])


def _on_gpu(dgrid: DaskGrid, backend: str) -> bool:
    chunked_on_gpu = any(is_device_array(array._meta) for _, _, array in dgrid.fields())
    return chunked_on_gpu or backend == "cuda"


# -- the user's verbs ---------------------------------------------------------------

def _as_dask_grid(data) -> DaskGrid:
    return data if isinstance(data, DaskGrid) else DaskGrid(data)


def _execute(dgrid: DaskGrid, stages, wanted, backend: str, to: str, chunks) -> DaskGrid:
    found, program = checked_runner(dgrid.standin(), stages, wanted, backend, to)
    outputs = program.outputs
    build = structured_outputs if dgrid.structured else unstructured_outputs
    arrays = build(dgrid, program, found, chunks, _on_gpu(dgrid, backend))
    result = DaskGrid(dgrid.topology)
    for name, array in arrays.items():
        (result.point_data if outputs[name] == "points" else result.cell_data)[name] = array
    return result


class DaskPipeline(Pipeline):
    """A lazy pipeline over a :class:`DaskGrid`; build it with :func:`pipeline`.

    Verbs, branching and printing are :class:`daxpy.Pipeline`'s; only ``run``
    differs: it returns a :class:`DaskGrid` of lazy results.
    """

    def __init__(self, dgrid: DaskGrid):
        super().__init__(dgrid.standin())
        self.dask_grid = dgrid

    def run(self, backend: str = "auto", outputs: Sequence[Any] | None = None,  # type: ignore[override]
            to: str = "host", chunks: Any = "auto") -> "DaskGrid":
        """Build the task graph of the pipeline; return a DaskGrid of the outputs.

        Parameters
        ----------
        backend : {"auto", "cpu", "cuda"}
            Where each block runs; ``"auto"`` is decided on each worker.
        outputs : list of Node or str, optional
            Fields to return; by default the outputs no other stage reads.
        to : {"host", "device"}
            Whether the result chunks are NumPy or CuPy arrays.
        chunks : "auto", None, tuple or int
            Structured grids: ``"auto"`` plans slabs from the workers' memory
            and the pipeline's bytes per point, an int asks for that many
            slabs, None keeps the fields' chunks, a tuple gives Dask chunks
            over ``(nz, ny, nx)`` (leading axes of one point may be left out).
            Chunks are merged where they are thinner than the pipeline's
            depth. Unstructured grids: ``"auto"`` or a number of pieces.

        Returns
        -------
        DaskGrid
            Lazy: call ``compute()`` or ``persist()`` on it.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> d = DaskGrid(daxpy.UniformGrid(dims=(5,)), {"p": np.arange(5.0) ** 2})
        >>> pipe = pipeline(d)
        >>> g = pipe.gradient("p")
        >>> pipe.run(backend="cpu", chunks=((2, 3),)).compute().point_data[g.name][:, 0].tolist()
        [1.0, 2.0, 4.0, 6.0, 7.0]
        """
        if chunks is not None and not isinstance(chunks, (str, tuple, int)):
            raise ArgumentError(f"chunks must be 'auto', None, a tuple or an int, got {chunks!r}")
        if self.stages and getattr(self.stages[-1].filter, "makes_dataset", False):
            # Each block would make its own piece of the new dataset, with the
            # pieces' shared borders cut twice: not joined on Dask yet.
            raise ArgumentError(
                f"{self.stages[-1].verb} makes a new dataset, which daxpy.dask does not "
                "assemble from blocks; run the pipeline with daxpy.pipeline instead")
        return _execute(self.dask_grid, self.stages, self._output_names(outputs), backend,
                        to, chunks)


def pipeline(data: Any) -> DaskPipeline:
    """Start a lazy pipeline over a DaskGrid (or a daxpy/VTK dataset, wrapped).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> d = DaskGrid(daxpy.UniformGrid(dims=(3, 3)), {"p": np.zeros(9)})
    >>> print(pipeline(d).gradient("p").pipeline)
    Pipeline over UniformGrid (uniform2d, 9 points)
      [1] gradient(p) -> gradient_1
    """
    return DaskPipeline(_as_dask_grid(data))


def apply(flt: Any, data: Any, backend: str = "auto", to: str = "host",
          chunks: Any = "auto") -> DaskGrid:
    """Run one filter over a DaskGrid; return a DaskGrid of the fields it adds.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.filters import CellToPoint
    >>> d = DaskGrid(daxpy.UniformGrid(dims=(4,)), cell_data={"c": np.array([0.0, 2.0, 4.0])})
    >>> out = apply(CellToPoint("c", result="p"), d, backend="cpu", chunks=((2, 2),))
    >>> out.compute().point_data["p"].tolist()
    [0.0, 1.0, 3.0, 4.0]
    """
    dgrid = _as_dask_grid(data)
    outputs = flt.outputs()
    if not outputs:
        raise ArgumentError(f"{type(flt).__name__} adds no field to run")
    stage = Stage(1, flt.verb or type(flt).__name__, flt, tuple(flt.reads()), outputs[0])
    return _execute(dgrid, [stage], list(outputs), backend, to, chunks)
