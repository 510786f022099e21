"""Scale out with Dask (``pip install 'daxpy-viz[dask]'``): the public names of :mod:`daxpy.distributed.grid`.

Examples
--------
>>> import daxpy.dask
>>> sorted(daxpy.dask.__all__)
['DaskGrid', 'DaskPipeline', 'apply', 'pipeline', 'resources']
"""

from .distributed.grid import DaskGrid, DaskPipeline, apply, pipeline, resources

__all__ = ["DaskGrid", "DaskPipeline", "apply", "pipeline", "resources"]
