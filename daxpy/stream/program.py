"""What a streamed pipeline reads, makes and needs around each chunk.

:func:`program_of` learns a pipeline's :class:`Program`: the halo depth and
every field it makes, with its dtype and components, from one tiny CPU run
of its stages (:func:`daxpy.engine.probe.probe`); the source fields it reads
and whether every stage gives the same result wherever a value sits in the
field from the filters' declarations (a stage whose result depends on the
position, such as a BiasAdd whose bias spans several tuples, cannot be cut
into chunks).
:mod:`daxpy.stream.sizing` turns it and a byte budget into chunks.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(4, 4), point_data={"p": np.ones(16)})
>>> pipe = daxpy.pipeline(g)
>>> _ = pipe.gradient("p").magnitude()
>>> prog = program_of(g, pipe.stages, ["magnitude_2"])
>>> prog.depth, prog.reads, prog.outputs
(1, {'p': 'points'}, ['magnitude_2'])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DaxpyError
from ..engine.probe import probe


class NotStreamable(DaxpyError):
    """A pipeline that cannot be cut into chunks (it runs on the whole grid)."""


@dataclass
class Program:
    """What a pipeline reads and makes, learnt once from probe runs.

    Attributes
    ----------
    depth : int
        Longest chain of worklet reaches (halo layers).
    reads : dict of str to str
        Source fields the stages read, with their associations.
    fields : dict of str to (str, numpy.dtype, tuple)
        Every field the stages make: association, dtype, components.
    outputs : list of str
        Wanted fields that the stages make.
    passed : list of str
        Wanted source fields (returned as they are).
    position_free : bool
        Whether every map gives the same values wherever an element sits.
    """

    depth: int
    reads: dict
    fields: dict
    outputs: list
    passed: list
    position_free: bool = True

    @property
    def touches_cells(self) -> bool:
        """Whether any field read or made lives at the cells."""
        return "cells" in set(self.reads.values()) | {a for a, _, _ in self.fields.values()}

    @property
    def kept(self) -> dict:
        """The outputs with their associations (what a chunk keeps of its results)."""
        return {name: self.fields[name][0] for name in self.outputs}


def fields_read(dataset, stages, produced) -> dict:
    """Source fields the stages read, with their associations, from each
    filter's declaration (:meth:`~daxpy.filters.Filter.reads`).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"p": np.zeros(2)})
    >>> pipe = daxpy.pipeline(g); c = pipe.point_to_cell("p")
    >>> fields_read(g, pipe.stages, {c.name})
    {'p': 'points'}
    """
    reads = {}
    for stage in stages:
        for name, association in stage.filter.reads().items():
            if name not in produced:
                reads[name] = dataset.field(name, association)[1]
    return reads


def position_dependent(where: str) -> str:
    """The message refusing a pipeline whose maps are not :func:`position_free`
    when it would run ``where`` (in chunks, on Dask blocks...).

    Examples
    --------
    >>> position_dependent("in chunks").startswith("a map of this pipeline")
    True
    """
    return ("a map of this pipeline depends on where a value sits in the whole field "
            "(such as a BiasAdd whose bias spans several tuples, not one entry per "
            f"component); it cannot run {where}: give one bias entry per component, or "
            "run it with daxpy.pipeline on the whole grid")


def position_free(dataset, stages, fields: dict | None = None) -> bool:
    """Whether every stage gives the same value for a tuple wherever it sits in
    its input field, as its filter declares
    (:meth:`~daxpy.filters.Filter.position_free`): such stages give the same
    values in any chunk. ``fields`` maps field names to (association, dtype,
    components), as :func:`daxpy.engine.probe.probe` finds them (probed here
    when not given).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3), point_data={"p": np.ones(9)})
    >>> pipe = daxpy.pipeline(g); _ = pipe.bias_add("p", [1.0, 2.0, 3.0])
    >>> position_free(g, pipe.stages)
    False
    """
    if fields is None:
        fields = probe(dataset, stages).fields
    for stage in stages:
        first = next(iter(stage.filter.reads()))
        if not stage.filter.position_free(int(np.prod(fields[first][2]))):
            return False
    return True


def program_of(dataset, stages, wanted) -> Program:
    """The :class:`Program` of ``stages`` over ``dataset`` (cached on the dataset).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3), point_data={"p": np.zeros(9), "q": np.ones(9)})
    >>> pipe = daxpy.pipeline(g)
    >>> m = pipe.map("p", "x + q")
    >>> program_of(g, pipe.stages, [m.name]).reads
    {'p': 'points', 'q': 'points'}
    """
    signature = tuple((a, n, np.dtype(v.dtype).str, tuple(v.shape[1:]))
                      for a in ("points", "cells") for n, v in dataset.fields(a).items())
    key = ("stream:program", tuple(id(s.filter) for s in stages), tuple(wanted), signature)
    cached = dataset._cache.get(key)
    if cached is not None and all(a is b.filter for a, b in zip(cached[0], stages)):
        return cached[1]
    try:
        found = probe(dataset, stages)
    except DaxpyError as err:
        # Stages that fail on a few points (a bias longer than the probe's field,
        # a wrong association...) run whole, where any real error shows.
        raise NotStreamable(f"the pipeline cannot run on a few points: {err}") from err
    produced = {n for names in found.produced.values() for n in names}
    result = Program(found.depth, fields_read(dataset, stages, produced),
                     {n: found.fields[n] for n in sorted(produced)},
                     [n for n in wanted if n in produced],
                     [n for n in wanted if n not in produced],
                     position_free(dataset, stages, found.fields))
    dataset._cache[key] = ([s.filter for s in stages], result)
    return result
