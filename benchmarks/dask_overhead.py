"""Dask overhead benchmark: the task graph of a structured-grid run, on a CPU cluster.

A small grid (64^3 points, float32) is cut into 1, 2 and 4 slabs on a CPU
``LocalCluster`` of 2 worker processes with 1 thread each, so the time is
mostly what the graph costs: its tasks, their scheduling and the halos that
travel between workers. Two cases of :mod:`scale_out`: the point gradient and
FY11 pipeline 2 (magnitude of a 3-component field, gradient, sin, square, cos).

Every input slab is made on its worker (contiguous groups of slabs per
worker, as in :mod:`scale_out`). Each case's result is first checked against
the single-domain run (plain ``daxpy.pipeline(...).run``, no Dask): equal bit
for bit, or the row says ``agrees: false`` and has no time. A time is the wall
clock from building the graph to the last result block persisted on its
worker, the median of ``--repeat`` runs after one warm-up; every run gets
fresh task keys (an alias of the input under a new name), so none reuses
another's results. ``tasks`` counts the tasks of the result's graph (the
persisted input slabs and their alias included), ``pipeline_tasks`` those the
pipeline adds.

Usage: ``daxpy bench dask-overhead [--repeat 9] [--slabs 1 2 4]``;
writes ``results/dask_overhead-cpu-<n>core.json`` and prints a table.

Examples
--------
>>> parse_args(["--slabs", "2"]).slabs
[2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid

import dask.array as da
import numpy as np

import daxpy
import daxpy.dask as daxpy_dask
from daxpy.data.partition import even_split

from .common import (SuiteParser, add_output_options, make_row, output_dir,
                     workers_import_benchmarks, write_results)
from .printout import format_table
from .scale_out import CASES, SPACING, make_block

DIMS = (64, 64, 64)
DTYPE = "float32"


def parse_args(argv=None) -> argparse.Namespace:
    """Command-line options (see the module's usage line)."""
    parser = SuiteParser(prog="daxpy bench dask-overhead", description=__doc__.split("\n\n")[0])
    parser.add_argument("--slabs", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--repeat", type=int, default=9, help="timed runs (at least 7)")
    add_output_options(parser)
    return parser.parse_args(argv)


def block(shape, first, components: int) -> np.ndarray:
    """A slab of the input (:func:`scale_out.make_block`) of ``shape`` from ``first``."""
    out = np.empty(tuple(shape) + ((components,) if components > 1 else ()), dtype=DTYPE)
    make_block(tuple((f, f + n) for f, n in zip(first, shape)), out, components, False)
    return out


def input_array(client, workers, grid, components, chunks):
    """The input field, each slab made on its worker; slabs go to workers in
    contiguous groups, so halos cross between workers only at group edges."""
    from distributed import wait

    slabs = chunks[0]
    starts = np.concatenate([[0], np.cumsum(slabs)[:-1]])
    blocks = []
    for index, (start, size) in enumerate(zip(starts, slabs)):
        worker = workers[index * len(workers) // len(slabs)]
        shape = (size,) + grid.point_shape()[1:]
        future = client.submit(block, shape, (int(start), 0, 0), components,
                               workers=[worker], pure=False)
        meta = np.empty((0,) * (3 + (components > 1)), dtype=DTYPE)
        blocks.append(da.from_delayed(future, shape + ((components,) if components > 1
                                                         else ()), dtype=DTYPE, meta=meta))
    array = client.persist(da.concatenate(blocks, axis=0))
    wait(array)
    return array


def _same(values):
    return values


def fresh_run(field, grid, chain, prefix: str):
    """``(alias, lazy output)``: ``chain`` run over a fresh alias of ``field``.

    Task keys are deterministic: a fresh alias of the input (no copy) gives
    every run new keys, so no run reuses results the scheduler still holds.
    """
    alias = field.map_blocks(_same, name=f"{prefix}-{uuid.uuid4().hex}", dtype=field.dtype,
                             meta=field._meta)
    pipe = daxpy_dask.pipeline(daxpy_dask.DaskGrid(grid, point_data={"v": alias}))
    out = chain(pipe.field("v"))
    return alias, pipe.run(backend="cpu", to="host", chunks=None).point_data[out.name]


def single_domain(case: str, grid) -> np.ndarray:
    """The case's result without Dask, in C-order shape."""
    components, chain, _ = CASES[case]
    values = block(grid.point_shape(), (0, 0, 0), components)
    pipe = daxpy.pipeline(grid.with_fields(point_data={"v": values.reshape(
        (grid.n_points,) + values.shape[3:])}))
    out = chain(pipe.field("v"))
    result = pipe.run(backend="cpu").point_data[out.name]
    return result.reshape(grid.point_shape() + result.shape[1:])


def run_case(client, workers, case: str, grid, slabs: int, repeat: int) -> dict:
    """Check, then time the case on ``slabs`` slabs; return its result row."""
    from distributed import wait

    components, chain, min_bytes = CASES[case]
    shape = grid.point_shape()
    chunks = (even_split(shape[0], slabs),) + tuple((n,) for n in shape[1:])
    field = input_array(client, workers, grid, components, chunks)
    times, graph_times = [], []
    agrees, tasks, pipeline_tasks = False, None, None
    for attempt in range(repeat + 2):
        start = time.perf_counter()
        alias, lazy = fresh_run(field, grid, chain, "dask-overhead-input")
        built = time.perf_counter()
        result = client.persist(lazy)
        wait(result)
        elapsed = time.perf_counter() - start
        if attempt == 0:
            # Checked before anything is timed: a disagreeing case gets no time.
            agrees = bool(np.array_equal(result.compute(), single_domain(case, grid)))
            tasks = len(lazy.__dask_graph__())
            pipeline_tasks = tasks - len(alias.__dask_graph__())
            if not agrees:
                break
        elif attempt > 1:  # attempt 1 is the warm-up
            times.append(elapsed * 1e3)
            graph_times.append((built - start) * 1e3)
        del result
        time.sleep(0.1)  # let the workers drop the results before the next run
    return make_row(case, "uniform3d", DTYPE, grid.n_points, "daxpy.dask",
                    statistics.median(times) if agrees else None,
                    min_bytes=min_bytes * grid.n_points if agrees else None, agrees=agrees,
                    slabs=slabs, tasks=tasks, pipeline_tasks=pipeline_tasks,
                    graph_ms=round(statistics.median(graph_times), 3) if agrees else None,
                    runs=len(times))


def main(argv=None) -> int:
    from distributed import Client, LocalCluster

    args = parse_args(argv)
    grid = daxpy.UniformGrid(dims=DIMS, spacing=SPACING)
    rows = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        workers_import_benchmarks(client)
        client.wait_for_workers(2)
        info = client.scheduler_info(n_workers=-1)["workers"]
        workers = sorted(info, key=lambda a: str(info[a]["name"]))
        round_trips = []
        for _ in range(5):
            start = time.perf_counter()
            client.submit(_same, 1, pure=False).result()
            round_trips.append((time.perf_counter() - start) * 1e3)
        round_trip_ms = statistics.median(round_trips)
        for case in args.cases:
            for slabs in args.slabs:
                rows.append(run_case(client, workers, case, grid, slabs, args.repeat))
                print(format_table(rows[-1:], ["case", "slabs", "tasks", "time_ms",
                                               "agrees"]), flush=True)
    write_results("dask_overhead", rows, folder=output_dir(args), gpu=False, workers=2,
                  threads_per_worker=1, cluster="distributed LocalCluster (processes)",
                  submit_round_trip_ms=round(round_trip_ms, 3), repeat=args.repeat)
    print(format_table(rows, ["case", "slabs", "tasks", "pipeline_tasks", "time_ms",
                              "graph_ms", "agrees"]))
    return 0 if all(r["agrees"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
