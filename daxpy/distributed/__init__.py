"""Distributed runs on Dask: blocks, halos and the task graph."""
