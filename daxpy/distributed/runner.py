"""The pipeline's stages as one picklable function of a piece, for Dask workers."""

from __future__ import annotations

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
