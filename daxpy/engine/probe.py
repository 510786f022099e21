"""What a pipeline needs around each piece of a grid, learnt from one tiny run.

Partitioned runs (:mod:`daxpy.dask`, chunked streaming) must know, before any
data moves, how many layers of halo a pipeline reads (its *depth*) and the
dtype and components of every field it makes. :func:`probe` runs the
pipeline once on a few points of the grid, with fields of ones, and reads
both off that run: the worklets each stage dispatches (through
:func:`daxpy.engine.dispatch.traced`, so no worklet is named here) give the depth,
the fields it leaves give the rest.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(9, 9, 9), point_data={"v": np.zeros((729, 3), np.float32)})
>>> pipe = daxpy.pipeline(g)
>>> _ = pipe.field("v").magnitude().gradient().point_to_cell()
>>> found = probe(g, pipe.stages)
>>> found.depth, found.fields["gradient_2"]
(2, ('points', dtype('float32'), (3,)))
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np

from ..data.arrays import to_host
from .dispatch import traced
from ..data.decomposition import Piece
from ..data.partition import window_grid
from ..data.structured import StructuredGrid
from ..data.unstructured import UnstructuredGrid


def worklet_reach(worklet) -> int:
    """Layers of points a worklet reads beyond the element it writes.

    The declared halo, and at least 1 where the worklet moves a field between
    points and cells: a cell's corners span two layers of points.

    Examples
    --------
    >>> from daxpy.data.worklet import get_worklet
    >>> worklet_reach(get_worklet("point_gradient")), worklet_reach(get_worklet("cell_gradient"))
    (1, 1)
    """
    moves = worklet.output_association not in (None, worklet.input_association)
    return max(int(worklet.halo), 1 if moves else 0)


@dataclass
class Probe:
    """What one tiny run of a pipeline showed.

    Attributes
    ----------
    depth : int
        Longest chain of worklet reaches along the pipeline's dependencies:
        the layers of halo (or ghost levels) each piece needs.
    fields : dict of str to (association, dtype, components)
        Every field of the run, sources and stage outputs; ``components`` is
        ``()`` for a one-component field stored as ``(n,)``.
    produced : dict of int to list of str
        The fields each stage (by index) added.
    """

    depth: int = 0
    fields: dict = field(default_factory=dict)
    produced: dict = field(default_factory=dict)

    def note(self, dataset) -> None:
        """Record the association, dtype and components of ``dataset``'s fields."""
        for association in ("points", "cells"):
            for name, values in dataset.fields(association).items():
                comps = () if values.ndim == 1 else (int(values.shape[1]),)
                self.fields[name] = (association, np.dtype(values.dtype), comps)

    def bytes_per_point(self) -> int:
        """Bytes per point of all the run's fields together (an upper bound on a
        piece's working set, since intermediates are released as it goes).

        Examples
        --------
        >>> Probe(fields={"a": ("points", np.dtype("f4"), (3,))}).bytes_per_point()
        12
        """
        return sum(dtype.itemsize * math.prod(comps) for _, dtype, comps in self.fields.values())


def probe_dataset(dataset):
    """A few points of ``dataset`` (at most 3 per axis, or its first cell) with
    fields of ones of the same dtypes and components (ones keep log, sqrt...
    finite).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(50, 50), point_data={"t": np.zeros(2500)})
    >>> probe_dataset(g).point_data["t"].tolist()[:3]
    [1.0, 1.0, 1.0]
    """
    if isinstance(dataset, StructuredGrid):
        hi = tuple(min(n, 3) for n in dataset.dims)
        small = window_grid(dataset, Piece((0, 0, 0), hi, (0, 0, 0), hi))
    elif dataset.n_cells:
        corners = dataset.connectivity[dataset.offsets[0]:dataset.offsets[1]]
        small = UnstructuredGrid(to_host(dataset.points())[corners], np.arange(len(corners)),
                                 [0, len(corners)], dataset.cell_types[:1])
    else:
        small = dataset
    data = {"points": {}, "cells": {}}
    for association in ("points", "cells"):
        rows = small.n_points if association == "points" else small.n_cells
        for name, values in dataset.fields(association).items():
            data[association][name] = np.ones((rows,) + tuple(values.shape[1:]),
                                              dtype=values.dtype)
    return small.with_fields(data["points"], data["cells"])


def probe(dataset, stages) -> Probe:
    """Run ``stages`` once on :func:`probe_dataset` (CPU); report what they need.

    Parameters
    ----------
    dataset : DataSet
        The grid, with fields of the right dtypes and shapes (their values
        are not read; zero-stride stand-ins will do).
    stages : list of daxpy.engine.stage.Stage
        In build order.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(4, 4), point_data={"p": np.zeros(16)})
    >>> pipe = daxpy.pipeline(g)
    >>> grad = pipe.gradient("p")
    >>> _ = grad.magnitude(), grad.point_to_cell()
    >>> probe(g, pipe.stages).depth
    2
    """
    working = probe_dataset(dataset)
    found = Probe()
    found.note(working)
    need: dict[int, int] = {}
    for stage in stages:
        configured = copy.copy(stage.filter)
        configured.backend = "cpu"
        before = set(working.point_data) | set(working.cell_data)
        with traced() as seen, np.errstate(all="ignore"):
            working = configured.apply(working)
        found.produced[stage.index] = [name for name in (*working.point_data,
                                                         *working.cell_data)
                                       if name not in before]
        found.note(working)
        reach = sum(worklet_reach(worklet) for worklet in seen)
        need[stage.index] = reach + max((need[d] for d in stage.depends_on), default=0)
        found.depth = max(found.depth, need[stage.index])
    return found
