"""Distributed runs: pieces with ghost levels (NumPy only) and, on Dask (the ``dask``
extra, checked where :mod:`daxpy.distributed.grid` first imports it), blocks, halos and
the task graph, and resident slabs (one Dask actor per worker, kept across runs)."""
