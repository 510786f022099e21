"""Scale-out benchmark: daxpy pipelines on 1, 2 and 4 GPUs through daxpy.dask.

Strong scaling (one grid, more GPUs) and weak scaling (a fixed share of points
per GPU) of the point gradient and of FY11 pipeline 2 (magnitude -> gradient ->
sin -> square -> cos of a 3-component field) on uniform grids of 1 to 4
billion points, device-resident: every input slab is made on the GPU that
keeps it, and every result stays there (``to="device"``, persisted). One
dask-cuda cluster (one worker per GPU) serves every run; a run on ``g`` GPUs
keeps its slabs and tasks on ``g`` workers, in contiguous groups. A time is
the wall clock from building the task graph to the last block's result on its
GPU, the median of ``--repeat`` runs after one warm-up.

Each result is checked against a single-domain run of the same pipeline on
one GPU (plain ``daxpy.pipeline(...).run``, no Dask) before its row is
written, through two exact integer digests of the result's bits (their sum,
and their per-z-plane sums weighted by the plane index); integer sums do not
depend on how the grid was cut, so equal digests mean bitwise-equal results.

Rows add ``gpus``, ``scaling`` (``strong``/``weak``), ``speedup`` (t on 1 GPU
over t on ``g``) and ``efficiency`` (speedup / g for strong scaling, the
speedup itself for weak scaling). ``--cpu`` runs the same code on a CPU
LocalCluster with NumPy chunks and small grids, to check the script anywhere.

Usage: ``daxpy bench scale-out [--gpus 1 2 4] [--strong-points 2**31]
[--weak-points 2**30] [--cpu]``; writes ``results/scale_out-<slug>.json``.
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid

import dask.array as da
import numpy as np

import daxpy
import daxpy.dask as daxpy_dask
from daxpy.data.partition import plan_chunks
from daxpy.engine.probe import probe

from .common import SuiteParser, add_output_options, make_row, output_dir, write_results
from .printout import format_table

CASES = {
    # case: (components, chain, fewest bytes per point for float32 in and out)
    "point_gradient": (1, lambda node: node.gradient(), 4 + 12),
    "fy11_pipeline2": (3, lambda node: node.magnitude().gradient().map("sin(x)")
                       .map("x*x").map("cos(x)"), 12 + 12),
}
SPACING = (0.01, 0.02, 0.015)


def dims_for(n_points: int) -> tuple[int, int, int]:
    """Grid dims (x, y, z) of ``n_points`` (a power of two): square planes of up
    to 1024^2 points, z takes the rest (slabs are cut along z)."""
    side = 1 << min(10, (n_points.bit_length() - 1) // 3)
    return (side, side, n_points // (side * side))


def make_block(shape, first, components: int, dtype: str, on_gpu: bool):
    """A slab of the input: a smooth function of the global index, the same for
    any cut of the grid (float64 arithmetic per element, then cast)."""
    xp = __import__("cupy") if on_gpu else np
    k0, j0, i0 = first
    z = (xp.arange(k0, k0 + shape[0]) * SPACING[2])[:, None, None]
    y = (xp.arange(j0, j0 + shape[1]) * SPACING[1])[None, :, None]
    x = (xp.arange(i0, i0 + shape[2]) * SPACING[0])[None, None, :]
    out = xp.empty(tuple(shape) + ((components,) if components > 1 else ()), dtype=dtype)
    for c in range(components):
        value = xp.sin(x * (c + 1)) + xp.cos(y * (c + 2)) * xp.sin(z * (c + 3))
        if components > 1:
            out[..., c] = value
        else:
            out[...] = value
    return out


def digest(block, first_plane: int) -> np.ndarray:
    """Two uint64 digests of a C-order block's bits: their sum, and the sum of
    each z-plane's bits times ``(plane index % 65521) + 1`` (wrapping)."""
    xp = np if isinstance(block, np.ndarray) else __import__("cupy")
    bits = block.view(xp.uint32 if block.dtype.itemsize == 4 else xp.uint64)
    per_plane = bits.reshape(block.shape[0], -1).sum(axis=1, dtype=xp.uint64)
    weights = xp.arange(first_plane, first_plane + block.shape[0], dtype=xp.uint64) % 65521 + 1
    return np.array([int(per_plane.sum(dtype=xp.uint64)),
                     int((per_plane * weights).sum(dtype=xp.uint64))], dtype=np.uint64)


def _block_digest(block, block_info=None):
    first_plane = block_info[0]["array-location"][0][0]
    return digest(block, first_plane).reshape((1,) * block.ndim + (2,))


def dask_digest(array) -> tuple[int, int]:
    """:func:`digest` of a Dask array, summed over its blocks (exact, mod 2**64)."""
    parts = array.map_blocks(_block_digest, new_axis=array.ndim, dtype=np.uint64,
                             chunks=tuple((1,) * len(c) for c in array.chunks) + ((2,),),
                             meta=np.empty((0,) * (array.ndim + 1), dtype=np.uint64))
    total = parts.sum(axis=tuple(range(array.ndim)), dtype=np.uint64).compute()
    return int(total[0]), int(total[1])


def single_domain(case: str, n_points: int, dtype: str, backend: str, on_gpu: bool):
    """Run the case on one device without Dask; return (digest, ms of the pipeline
    run after the magnitude, warm)."""
    components, chain, _ = CASES[case]
    dims = dims_for(n_points)
    grid = daxpy.UniformGrid(dims=dims, spacing=SPACING)
    shape = grid.point_shape()
    values = make_block(shape, (0, 0, 0), components, dtype, on_gpu)
    if case == "fy11_pipeline2":
        # Magnitude alone first, so the 3-component input is freed before the
        # gradient and maps: the whole grid fits one GPU. Same filters, same bits.
        first = daxpy.pipeline(grid.with_fields(point_data={"v": values.reshape(-1, 3)}))
        m = first.field("v").magnitude("m")
        values = first.run(backend=backend, to="device" if on_gpu else "host").point_data[
            m.name]
        del first
        components, chain = 1, lambda node: node.gradient().map("sin(x)").map("x*x").map(
            "cos(x)")
    pipe = daxpy.pipeline(grid.with_fields(point_data={"v": values.reshape(
        (grid.n_points,) + ((components,) if components > 1 else ()))}))
    out = chain(pipe.field("v"))
    del values
    for _ in range(2):  # the first run compiles the kernels: time the second
        result = None
        start = time.perf_counter()
        result = pipe.run(backend=backend, to="device" if on_gpu else "host").point_data[
            out.name]
        if on_gpu:
            __import__("cupy").cuda.get_current_stream().synchronize()
    elapsed = (time.perf_counter() - start) * 1e3
    found = digest(result.reshape(shape + result.shape[1:]), 0)
    del result, pipe
    _free_pool()
    return found, elapsed


def _free_pool() -> None:
    try:
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
    except ImportError:
        pass


def input_array(client, workers, grid, components, dtype, chunks, on_gpu):
    """The input field, each slab made on its worker; slabs go to workers in
    contiguous groups, so halos cross between GPUs only at group edges."""
    from distributed import wait

    slabs = chunks[0]
    starts = np.concatenate([[0], np.cumsum(slabs)[:-1]])
    blocks = []
    for index, (start, size) in enumerate(zip(starts, slabs)):
        worker = workers[index * len(workers) // len(slabs)]
        shape = (size,) + grid.point_shape()[1:]
        future = client.submit(make_block, shape, (int(start), 0, 0), components, dtype,
                               on_gpu, workers=[worker], pure=False)
        meta = (__import__("cupy") if on_gpu else np).empty((0,) * (3 + (components > 1)),
                                                            dtype=dtype)
        blocks.append(da.from_delayed(future, shape + ((components,) if components > 1
                                                         else ()), dtype=dtype, meta=meta))
    array = client.persist(da.concatenate(blocks, axis=0))
    wait(array)
    return array


def _same(block):
    return block


def fresh_run(field, grid, chain, backend: str, to: str, prefix: str):
    """``(alias, lazy output)``: ``chain`` run over a fresh alias of ``field``.

    Task keys are deterministic: a fresh alias of the input (no copy) gives
    every run new keys, so no run reuses results the scheduler still holds.
    """
    alias = field.map_blocks(_same, name=f"{prefix}-{uuid.uuid4().hex}", dtype=field.dtype,
                             meta=field._meta)
    pipe = daxpy_dask.pipeline(daxpy_dask.DaskGrid(grid, point_data={"v": alias}))
    out = chain(pipe.field("v"))
    return alias, pipe.run(backend=backend, to=to, chunks=None).point_data[out.name]


def run_case(client, all_workers, case, n_points, gpus, dtype, backend, on_gpu, repeat):
    """Time one case on ``gpus`` workers; return (median ms, median ms of it spent
    building the graph on the client, digest, slabs)."""
    from distributed import wait

    components, chain, _ = CASES[case]
    workers = all_workers[:gpus]
    grid = daxpy.UniformGrid(dims=dims_for(n_points), spacing=SPACING)
    standin = daxpy_dask.DaskGrid(grid, point_data={"v": da.zeros(
        grid.point_shape() + ((components,) if components > 1 else ()), dtype=dtype)})
    plan_pipe = daxpy_dask.pipeline(standin)
    chain(plan_pipe.field("v"))
    found = probe(plan_pipe.dataset, plan_pipe.stages)
    _, memory = daxpy_dask.resources(on_gpu)
    slabs = plan_chunks(grid.dims, found.bytes_per_point(), int(memory * 0.25), gpus,
                        found.depth)[0]
    chunks = (slabs,) + tuple((n,) for n in grid.point_shape()[1:])
    field = input_array(client, workers, grid, components, dtype, chunks, on_gpu)
    times, graph_times = [], []
    for attempt in range(repeat + 1):
        start = time.perf_counter()
        alias, lazy = fresh_run(field, grid, chain, backend, "device" if on_gpu else "host",
                                "scale-out-input")
        built = time.perf_counter()
        result = client.persist(lazy, workers=workers)
        wait(result)
        if attempt:
            times.append((time.perf_counter() - start) * 1e3)
            graph_times.append((built - start) * 1e3)
        if attempt < repeat:
            del result
            time.sleep(0.3)  # let the workers drop the results before the next run
    found_digest = dask_digest(result)
    del result, field, alias
    time.sleep(0.3)
    client.run(_free_pool)
    return statistics.median(times), statistics.median(graph_times), found_digest, chunks[0]


def start_cluster(gpus: int, on_gpu: bool):
    """One worker per GPU (dask-cuda's LocalCUDACluster, or the same by hand:
    a nanny per GPU with its CUDA_VISIBLE_DEVICES), or per core on ``--cpu``."""
    from distributed import Client, LocalCluster, Nanny, Scheduler, SpecCluster

    kind = "distributed LocalCluster"
    if not on_gpu:
        cluster = LocalCluster(n_workers=gpus, threads_per_worker=1, dashboard_address=None)
    else:
        try:
            from dask_cuda import LocalCUDACluster

            cluster = LocalCUDACluster(n_workers=gpus, threads_per_worker=1,
                                       dashboard_address=None)
            kind = "dask-cuda LocalCUDACluster"
        except ImportError as err:
            print(f"dask-cuda unusable ({err}); one nanny per GPU instead", flush=True)
            workers = {i: {"cls": Nanny, "options": {
                "nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(i)}}} for i in range(gpus)}
            cluster = SpecCluster(workers=workers, scheduler={
                "cls": Scheduler, "options": {"dashboard_address": None}})
            kind = "distributed SpecCluster, one nanny per GPU"
    client = Client(cluster)
    info = client.scheduler_info(n_workers=-1)["workers"]
    return cluster, client, sorted(info, key=lambda a: str(info[a]["name"])), kind


def _count(text: str) -> int:
    base, _, power = text.partition("**")
    return int(base) ** int(power) if power else int(text)


def main(argv=None) -> int:
    parser = SuiteParser(prog="daxpy bench scale-out", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--strong-points", type=_count, default=2 ** 31)
    parser.add_argument("--weak-points", type=_count, default=2 ** 30,
                        help="points per GPU in the weak-scaling runs")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget-s", type=float, default=1e9,
                        help="stop starting new runs after this many seconds")
    parser.add_argument("--cpu", action="store_true", help="CPU LocalCluster, NumPy chunks")
    add_output_options(parser)
    args = parser.parse_args(argv)
    on_gpu = not args.cpu
    backend = "cuda" if on_gpu else "cpu"
    dtype = "float32"
    began = time.perf_counter()
    cluster, client, workers, kind = start_cluster(max(args.gpus), on_gpu)
    print(f"cluster of {len(workers)} workers up in {time.perf_counter() - began:.1f} s",
          flush=True)
    rows, references = [], {}
    try:
        for case in args.cases:
            plan = [("strong", g, args.strong_points) for g in args.gpus] + \
                   [("weak", g, args.weak_points * g) for g in args.gpus]
            base = {}
            for scaling, gpus, n_points in plan:
                if time.perf_counter() - began > args.budget_s:
                    print(f"budget spent: skipping {case} {scaling} {gpus}", flush=True)
                    continue
                if (case, n_points) not in references:
                    client.run(_free_pool)
                    try:
                        references[(case, n_points)] = client.submit(
                            single_domain, case, n_points, dtype, backend, on_gpu,
                            workers=[workers[0]], pure=False).result()
                    except Exception as err:  # e.g. the whole grid does not fit one GPU
                        print(f"no single-domain reference for {case} at {n_points}: "
                              f"{str(err)[:200]}", flush=True)
                        references[(case, n_points)] = (None, None)
                reference, single_ms = references[(case, n_points)]
                try:
                    ms, graph_ms, found, slabs = run_case(client, workers, case, n_points,
                                                          gpus, dtype, backend, on_gpu,
                                                          args.repeat)
                except Exception as err:
                    print(f"{case} {scaling} {gpus} GPU(s) failed: {str(err)[:300]}", flush=True)
                    continue
                agrees = reference is not None and tuple(int(v) for v in reference) == found
                if gpus == min(args.gpus):
                    base[scaling] = ms
                speedup = base[scaling] / ms
                efficiency = speedup / gpus if scaling == "strong" else speedup
                row = make_row(case, "uniform3d", dtype, n_points, "daxpy", ms,
                               min_bytes=CASES[case][2] * n_points, agrees=agrees,
                               gpus=gpus, scaling=scaling, speedup=round(speedup, 3),
                               efficiency=round(efficiency, 3), slabs=len(slabs),
                               graph_ms=round(graph_ms, 3),
                               reference="single-domain" if reference is not None else "none",
                               single_domain_ms=None if single_ms is None
                               else round(single_ms, 3))
                rows.append(row)
                print(format_table([row], ["case", "scaling", "gpus", "n_points", "time_ms",
                                           "graph_ms", "speedup", "efficiency", "agrees",
                                           "slabs", "single_domain_ms"]), flush=True)
                if not agrees:
                    print(f"DISAGREES with the single-domain run: {found} vs {reference}",
                          flush=True)
    finally:
        client.close()
        cluster.close()
    write_results("scale_out", rows, folder=output_dir(args), gpu=on_gpu, workers=len(workers),
                  cluster=kind)
    print(format_table(rows, ["case", "scaling", "gpus", "n_points", "time_ms", "gbps",
                              "speedup", "efficiency", "agrees"]))
    return 0 if all(r["agrees"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
