"""The pipeline's stages as one picklable function of a piece, for Dask workers."""

from __future__ import annotations

from ..engine.probe import probe
from ..errors import ArgumentError, DaxpyError
from ..stream.program import position_dependent, position_free
from ..stream.streaming import run_stages


class StagesRunner:
    """``run(dataset) -> dataset`` for every piece: the stages through the
    pipeline's own runner. Picklable, so it can travel to workers.

    Parameters
    ----------
    stages : list of daxpy.engine.stage.Stage
    outputs : dict of str to str
        The fields to keep, and their associations.
    backend : {"auto", "cpu", "cuda"}
        Resolved where the piece runs.
    to : {"host", "device"}
        Where the kept fields live.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"p": np.arange(3.0)})
    >>> pipe = daxpy.pipeline(g)
    >>> m = pipe.map("p", "x + 1", result="q")
    >>> StagesRunner(pipe.stages, {"q": "points"}, "cpu", "host")(g).point_data["q"].tolist()
    [1.0, 2.0, 3.0]
    """

    def __init__(self, stages, outputs: dict[str, str], backend: str, to: str):
        self.stages, self.outputs, self.backend, self.to = stages, outputs, backend, to

    def __call__(self, dataset):
        result, _ = run_stages(dataset, self.stages, list(self.outputs), self.backend, self.to)
        return result


def checked_runner(standin, stages, wanted, backend: str, to: str):
    """``(probe, StagesRunner)`` of a pipeline that may run on pieces of ``standin``.

    Raises
    ------
    ArgumentError
        For a bad ``to``, or a pipeline whose results depend on where a piece
        starts (a bias spanning several tuples).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"p": np.arange(3.0)})
    >>> pipe = daxpy.pipeline(g)
    >>> grad = pipe.gradient("p")
    >>> found, run = checked_runner(g, pipe.stages, [grad.name], "cpu", "host")
    >>> found.depth, run.outputs
    (1, {'gradient_1': 'points'})
    """
    if to not in ("host", "device"):
        raise ArgumentError(f"to must be 'host' or 'device', got {to!r}")
    try:
        found = probe(standin, stages)
        free = position_free(standin, stages, found.fields)
    except DaxpyError as err:
        # The probe runs the stages on a block of a few points: a parameter sized
        # for the whole field (a bias over several tuples) fails there.
        raise ArgumentError(f"the pipeline cannot run on Dask blocks: on a block of a few "
                            f"points, {err}. A parameter sized for the whole field (such "
                            "as a BiasAdd whose bias spans several tuples) cannot be cut "
                            "into blocks: give one bias entry per component, or run it "
                            "with daxpy.pipeline on the whole grid") from err
    if not free:
        # Each block would restart the bias at its first value (wrong answers).
        raise ArgumentError(position_dependent("on Dask blocks"))
    outputs = {name: found.fields[name][0] for name in wanted}
    return found, StagesRunner(stages, outputs, backend, to)
