"""Scale out with Dask (``pip install 'daxpy-viz[dask]'``): the public names of
:mod:`daxpy.distributed.grid` (task graphs) and :mod:`daxpy.distributed.resident`
(slabs kept on the workers across runs).

Examples
--------
>>> import daxpy.dask
>>> sorted(daxpy.dask.__all__)
['DaskGrid', 'DaskPipeline', 'ResidentPipeline', 'apply', 'pipeline', 'resources']
"""

from .distributed.grid import DaskGrid, DaskPipeline, apply, pipeline, resources
from .distributed.resident import ResidentPipeline

__all__ = ["DaskGrid", "DaskPipeline", "ResidentPipeline", "apply", "pipeline", "resources"]
