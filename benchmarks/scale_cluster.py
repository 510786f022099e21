"""The scale-out suite's Dask cluster: one single-threaded worker per GPU (or per
core with ``--cpu``), and its teardown.

Examples
--------
>>> callable(start_cluster) and callable(close_cluster)
True
"""

from __future__ import annotations

import os

from .common import workers_import_benchmarks


def close_cluster(client, cluster) -> None:
    """Close the client and the cluster; a cluster whose workers had to be killed
    (they held GPU memory past the nanny's grace period) says so instead of raising
    after the results are written.

    Examples
    --------
    >>> class Stub:
    ...     def close(self):
    ...         raise TimeoutError
    >>> close_cluster(Stub(), Stub())
    cluster teardown timed out (workers killed by their nannies)
    """
    for closing in (client, cluster):
        try:
            closing.close()
        except TimeoutError:
            print("cluster teardown timed out (workers killed by their nannies)", flush=True)
            return


def start_cluster(count: int, on_gpu: bool):
    """One single-threaded worker per GPU, each seeing every GPU with its own
    first (what dask-cuda's LocalCUDACluster does), or per core on ``--cpu``;
    no memory limit (the slabs are meant to fill the machine)."""
    from distributed import Client, LocalCluster, Nanny, Scheduler, SpecCluster

    if not on_gpu:
        cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                               memory_limit=0, dashboard_address=None)
        kind = "distributed LocalCluster"
    else:
        import cupy

        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        ids = visible.split(",") if visible else [
            str(i) for i in range(cupy.cuda.runtime.getDeviceCount())]
        workers = {i: {"cls": Nanny, "options": {
            "nthreads": 1, "memory_limit": 0,
            "env": {"CUDA_VISIBLE_DEVICES": ",".join(ids[i:] + ids[:i])}}}
            for i in range(count)}
        cluster = SpecCluster(workers=workers, scheduler={
            "cls": Scheduler, "options": {"dashboard_address": None}})
        kind = "distributed SpecCluster, one nanny per GPU (devices rotated)"
    client = Client(cluster)
    client.wait_for_workers(count)
    workers_import_benchmarks(client)
    client.wait_for_workers(count)
    info = client.scheduler_info(n_workers=-1)["workers"]
    return cluster, client, sorted(info, key=lambda a: str(info[a]["name"])), kind
