"""Distributed runs on Dask: blocks, halos and the task graph (Dask comes with the ``dask`` extra)."""

from ..data.extras import require

require("dask.array", "dask", "daxpy.dask")
