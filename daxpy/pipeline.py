"""Lazy pipelines: a small graph of filters over one dataset, run on demand.

A pipeline is built by chaining (each verb reads the previous stage's output)
or by branching (several verbs read one node). Nothing runs until
:meth:`Pipeline.run`, which uploads each input field once, keeps intermediates
where the backend computes them, releases each intermediate after its last
reader, and returns a dataset holding only the requested outputs.

Examples
--------
>>> import numpy as np, daxpy
>>> grid = daxpy.UniformGrid(dims=(4, 4, 4), point_data={"p": np.arange(64.0)})
>>> pipe = daxpy.pipeline(grid)
>>> out = pipe.gradient("p").magnitude().point_to_cell()
>>> result = pipe.run(backend="cpu", outputs=[out])
>>> list(result.cell_data), result.cell_data[out.name].shape
(['point_to_cell_3'], (27,))
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

from . import filters as _filters  # noqa: F401  (importing the filters declares their verbs)
from .data.dataset import DataSet
from .data.verbs import registered_verbs
from .errors import ArgumentError
from .engine.stage import Stage
from .stream.streaming import run_stages


class Node:
    """A field of the pipeline (a dataset field or a stage output) to chain from.

    Every verb returns a new node; calling two verbs on one node branches.
    The verbs are the declared ones (:mod:`daxpy.data.verbs`), attached as
    methods when this module is imported.
    """

    def __init__(self, pipeline: "Pipeline", name: str):
        self.pipeline = pipeline
        self.name = name

    def __repr__(self) -> str:
        return f"Node({self.name!r})"

    def _then(self, verb: str, make_filter, result: str | None,
              association: str | None = None):
        return self.pipeline._add(verb, make_filter, (self.name,), result, association)


class Pipeline:
    """A lazy graph of filters over one dataset.

    Parameters
    ----------
    dataset : DataSet, vtkDataSet or pyvista.DataSet
        The source; its arrays are used in place.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"p": np.arange(27.0)})
    >>> pipe = daxpy.pipeline(g)
    >>> grad = pipe.gradient("p")
    >>> a, b = grad.magnitude(), grad.point_to_cell()
    >>> print(pipe)
    Pipeline over UniformGrid (uniform3d, 27 points)
      [1] gradient(p) -> gradient_1
      [2] magnitude(gradient_1) -> magnitude_2
      [3] point_to_cell(gradient_1) -> point_to_cell_3
    """

    def __init__(self, dataset: Any):
        from .filters._names import as_dataset

        self.dataset: DataSet = as_dataset(dataset)
        self.stages: list[Stage] = []
        self._counter = itertools.count(1)
        self._associations: dict[str, str] = {}

    def field(self, name: str, association: str | None = None) -> Node:
        """A node for a field of the source dataset, or for an output of a stage
        (``pipe.field("QCriterion")`` after a gradient asked for it), to chain verbs from.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> g = daxpy.UniformGrid(dims=(2,), point_data={"p": np.zeros(2)})
        >>> daxpy.pipeline(g).field("p")
        Node('p')
        """
        if name in self._associations and name not in self.dataset.point_data \
                and name not in self.dataset.cell_data:
            return Node(self, name)  # an output of a stage (a derived quantity too)
        _, found = self.dataset.field(name, association)
        self._associations.setdefault(name, found)
        return Node(self, name)

    def __getattr__(self, verb: str):
        # pipe.gradient("p") == pipe.field("p").gradient(): verbs on the pipeline
        # take the source field as their first argument.
        if verb.startswith("_") or not callable(getattr(Node, verb, None)):
            raise AttributeError(verb)

        def start(field_name: str, *args, **kwargs):
            return getattr(self.field(field_name), verb)(*args, **kwargs)

        return start

    def _register_output(self, name: str, association: str) -> None:
        if name in self._associations:
            raise ArgumentError(f"pipeline already has a field named {name!r}")
        self._associations[name] = association

    def _association(self, name: str) -> str:
        return self._associations[name]

    def _add(self, verb, make_filter, inputs: tuple[str, ...], result: str | None,
             association: str | None) -> Node:
        last = self.stages[-1] if self.stages else None
        if last is not None and getattr(last.filter, "makes_dataset", False):
            raise ArgumentError(
                f"the pipeline ends at its {last.verb} stage, which makes a new dataset; "
                f"run it, then start a pipeline from its result to add {verb}")
        index = next(self._counter)
        name = result or f"{verb}_{index}"
        if name in self._associations:
            raise ArgumentError(f"pipeline already has a field named {name!r}")
        stage_filter = make_filter(inputs[0], name)
        producers = {s.output: s.index for s in self.stages}
        depends = tuple(producers[i] for i in inputs if i in producers)
        self.stages.append(Stage(index, verb, stage_filter, inputs, name, depends))
        self._associations[name] = association or self._associations[inputs[0]]
        return Node(self, name)

    def __repr__(self) -> str:
        head = (f"Pipeline over {type(self.dataset).__name__} "
                f"({self.dataset.topology_name}, {self.dataset.n_points} points)")
        lines = [f"  [{s.index}] {s.verb}({', '.join(s.inputs)}) -> {s.output}"
                 for s in self.stages]
        return "\n".join([head] + lines)

    def run(self, backend: str = "auto", outputs: Sequence[Node | str] | None = None,
            to: str = "host", profile: bool = False, fuse: bool = True,
            concurrent: bool = True) -> Any:
        """Execute the graph; return a dataset holding only the requested outputs.

        Parameters
        ----------
        backend : {"auto", "cpu", "cuda"}
            Where every stage runs.
        outputs : list of Node or str, optional
            Fields to return; by default the outputs no other stage reads.
        to : {"host", "device"}
            Where the returned arrays live (``"device"`` needs the CUDA backend).
        profile : bool
            Also return a :class:`daxpy.engine.run.Profile` (per-stage times,
            bytes, transfers, peak memory), as ``(dataset, profile)``.
        fuse : bool
            On the CUDA backend, run chains of maps and their topological
            worklet as one kernel each; on the CPU, chains of elementwise maps
            (False: one kernel per stage, for comparison).
        concurrent : bool
            On the CUDA backend, run independent branches on their own streams
            (False: every kernel on one stream, in build order, for comparison).

        Returns
        -------
        DataSet or (DataSet, Profile)
            The requested outputs only (and the profile).

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> g = daxpy.UniformGrid(dims=(3,), point_data={"p": np.arange(3.0)})
        >>> pipe = daxpy.pipeline(g)
        >>> m = pipe.gradient("p").magnitude()
        >>> pipe.run(backend="cpu").point_data["magnitude_2"].tolist()
        [1.0, 1.0, 1.0]
        """
        if to not in ("host", "device"):
            raise ArgumentError(f"to must be 'host' or 'device', got {to!r}")
        wanted = self._output_names(outputs)
        dataset, report = run_stages(self.dataset, self.stages, wanted, backend, to,
                                     fuse=fuse, concurrent=concurrent, timed=profile)
        return (dataset, report) if profile else dataset

    def _output_names(self, outputs) -> list[str]:
        if self.stages and getattr(self.stages[-1].filter, "makes_dataset", False):
            made = self.stages[-1].output
            names = [o.name if isinstance(o, Node) else o for o in outputs or [made]]
            if names != [made]:
                raise ArgumentError(
                    f"the pipeline ends at {made!r}, a new dataset; it is the run's one "
                    f"output, not {names}")
            return []
        if outputs is None:
            read = {name for s in self.stages for name in s.inputs}
            return [name for stage in self.stages for name in stage.filter.outputs()
                    if name not in read]
        names = [o.name if isinstance(o, Node) else o for o in outputs]
        for name in names:
            if name not in self._associations:
                raise ArgumentError(
                    f"unknown pipeline output {name!r}; fields: {sorted(self._associations)}"
                )
        return names


def pipeline(dataset: Any) -> Pipeline:
    """Start a lazy pipeline over ``dataset``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2), point_data={"p": np.zeros(4)})
    >>> daxpy.pipeline(g).gradient("p").name
    'gradient_1'
    """
    return Pipeline(dataset)


def _attach_verbs() -> None:
    """Make every declared verb a method of :class:`Node`, or of :class:`Pipeline`
    for a verb that reads several fields by name (done once, on import).

    Examples
    --------
    >>> Node.magnitude is registered_verbs()["magnitude"].method
    True
    """
    for name, verb in registered_verbs().items():
        setattr(Node, name, verb.method)
    for name, verb in registered_verbs("pipeline").items():
        setattr(Pipeline, name, verb.method)


_attach_verbs()
