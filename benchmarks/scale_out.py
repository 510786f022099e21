"""Scale-out benchmark: resident slabs on 1, 2 and 4 GPUs (daxpy.dask.ResidentPipeline).

Two workloads, each with strong scaling (one grid, more GPUs) and weak scaling
(a fixed share of points per GPU, ``strong points / most GPUs``):

- ``device``: device-resident, 2^31 points, the point gradient and FY11
  pipeline 2 (magnitude -> gradient -> sin -> square -> cos of a 3-component
  field). Each worker makes its slab of the input in its GPU buffer, and the
  results stay on its GPU.
- ``host``: host-resident, 2^32 float32 points, the point gradient, host to
  host. Each worker keeps its slab in its own host memory and streams it
  through its GPU over its own bus (daxpy's chunked host->host engine); the
  results land in its host memory.

One cluster serves every run: a nanny per GPU, each seeing every GPU with its
own first (``CUDA_VISIBLE_DEVICES`` rotated, as dask-cuda does), so workers can
open each other's memory for the ghost planes. A run on ``g`` GPUs keeps one
slab on each of the first ``g`` workers. A time is the wall clock of one
``ResidentPipeline.run()`` on the client, ghost planes included, until every
slab's results are in place: the median of ``--repeat`` runs after a warm-up.

Each configuration is checked against a single-domain run of the same
pipeline on one GPU (plain ``daxpy.pipeline(...).run``, no Dask, inputs and
outputs where the workload keeps them) before its row is written, through two
exact integer digests of the result's bits (their sum, and their per-z-plane
sums weighted by the plane index); integer sums do not depend on how the grid
was cut, so equal digests mean bitwise-equal results.

Rows add ``gpus``, ``scaling`` (``strong``/``weak``), ``speedup`` (t on 1 GPU
over t on ``g``), ``efficiency`` (speedup / g for strong scaling, the speedup
itself for weak), ``residence`` (the workload), ``ghosts`` (``peer``: device
to device; ``client``: through the client; ``none`` on one GPU), ``worker_ms`` (the slowest slab's
own time) and ``ratio_to_single`` (time over the single-domain time).
``--cpu`` runs the same code on a CPU LocalCluster with small grids.

Usage: ``daxpy bench scale-out [--gpus 1 2] [--workloads device host] [--cpu]``;
writes ``results/scale_out-<slug>.json``.
"""

from __future__ import annotations

import functools
import statistics
import sys
import time

import numpy as np

import daxpy
from daxpy.dask import ResidentPipeline

from .common import (SuiteParser, add_output_options, make_row, output_dir,
                     write_results)
from .printout import format_table
from .scale_cluster import close_cluster, start_cluster

CASES = {
    # case: (components, chain, fewest bytes per point for float32 in and out)
    "point_gradient": (1, lambda node: node.gradient(), 4 + 12),
    "fy11_pipeline2": (3, lambda node: node.magnitude().gradient().map("sin(x)")
                       .map("x*x").map("cos(x)"), 12 + 12),
}
WORKLOADS = {
    # residence: (cases, points for strong scaling on GPUs, on --cpu)
    "device": (("point_gradient", "fy11_pipeline2"), 2 ** 31, 2 ** 21),
    "host": (("point_gradient",), 2 ** 32, 2 ** 22),
}
SPACING = (0.01, 0.02, 0.015)
BATCH = 1 << 26
"""Points made or digested at once (their float64 temporaries stay small)."""
GOALS = {"ratio_to_single": 1.2, "strong": {2: 1.8, 4: 3.4}, "weak": 0.9}


def dims_for(n_points: int) -> tuple[int, int, int]:
    """Grid dims (x, y, z) of ``n_points`` (a power of two): square planes of up
    to 1024^2 points, z takes the rest (slabs are cut along z)."""
    side = 1 << min(10, (n_points.bit_length() - 1) // 3)
    return (side, side, n_points // (side * side))


def _xp(on_gpu: bool):
    return __import__("cupy") if on_gpu else np


def make_block(box, out, components: int, on_gpu: bool) -> None:
    """Write the input over ``box`` (C order) into ``out``: a smooth function of
    the global index, the same for any cut of the grid (float64 arithmetic per
    element, then cast). Made on the GPU when there is one, ``BATCH`` points at
    a time, and copied to ``out`` wherever it lives."""
    xp = _xp(on_gpu)
    (k0, k1), (j0, j1), (i0, i1) = box
    y = (xp.arange(j0, j1) * SPACING[1])[None, :, None]
    x = (xp.arange(i0, i1) * SPACING[0])[None, None, :]
    step = max(1, BATCH // ((j1 - j0) * (i1 - i0)))
    for k in range(k0, k1, step):
        stop = min(k + step, k1)
        z = (xp.arange(k, stop) * SPACING[2])[:, None, None]
        block = xp.empty(out[k - k0:stop - k0].shape, dtype=out.dtype)
        for c in range(components):
            value = xp.sin(x * (c + 1)) + xp.cos(y * (c + 2)) * xp.sin(z * (c + 3))
            if components > 1:
                block[..., c] = value
            else:
                block[...] = value
        if on_gpu and isinstance(out, np.ndarray):
            block.get(out=out[k - k0:stop - k0])
        else:
            out[k - k0:stop - k0] = block


def digest(block, first_plane: int, on_gpu: bool) -> tuple[int, int]:
    """Two digests (mod 2**64) of a C-order block's bits: their sum, and the sum
    of each z-plane's bits times ``(plane index % 65521) + 1``. Host blocks go
    through the GPU (when there is one) ``BATCH`` points at a time."""
    xp = _xp(on_gpu)
    kind = xp.uint32 if block.dtype.itemsize == 4 else xp.uint64
    step = max(1, BATCH // max(block[:1].size, 1))
    total, weighted = 0, 0
    for k in range(0, block.shape[0], step):
        part = xp.asarray(block[k:k + step])
        per_plane = part.view(kind).reshape(part.shape[0], -1).sum(axis=1, dtype=xp.uint64)
        weights = xp.arange(first_plane + k, first_plane + k + part.shape[0],
                            dtype=xp.uint64) % 65521 + 1
        total += int(per_plane.sum(dtype=xp.uint64))
        weighted += int((per_plane * weights).sum(dtype=xp.uint64))
    return total % 2 ** 64, weighted % 2 ** 64


def _slab_digest(results, piece, name: str, on_gpu: bool) -> tuple[int, int]:
    return digest(results[name], piece.owned_box("points")[2][0], on_gpu)


def _free_pool() -> None:
    try:
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
    except ImportError:
        pass


def _backend(on_gpu: bool) -> str:
    return "cuda" if on_gpu else "cpu"


def single_domain(case: str, n_points: int, residence: str, on_gpu: bool):
    """Run the case on one GPU without Dask, inputs and results where
    ``residence`` keeps them; return (digest, ms of the second run)."""
    components, chain, _ = CASES[case]
    grid = daxpy.UniformGrid(dims=dims_for(n_points), spacing=SPACING)
    shape = grid.point_shape()
    on_device = on_gpu and residence == "device"
    xp = _xp(on_device)
    values = xp.empty(shape + ((components,) if components > 1 else ()), dtype=np.float32)
    make_block(tuple((0, n) for n in shape), values, components, on_gpu)
    to = "device" if on_device else "host"
    if case == "fy11_pipeline2" and on_device:
        # Magnitude alone first, so the 3-component input is freed before the
        # gradient and maps: the whole grid fits one GPU. Same filters, same bits.
        first = daxpy.pipeline(grid.with_fields(point_data={"v": values.reshape(-1, 3)}))
        m = first.field("v").magnitude("m")
        values = first.run(backend="cuda", to=to).point_data[m.name]
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
        result = pipe.run(backend=_backend(on_gpu), to=to).point_data[out.name]
        if on_gpu:
            __import__("cupy").cuda.Device().synchronize()
        elapsed = (time.perf_counter() - start) * 1e3
    found = digest(result.reshape(shape + result.shape[1:]), 0, on_gpu)
    del result, pipe
    _free_pool()
    return found, elapsed


def measure(workers, case: str, residence: str, n_points: int, on_gpu: bool, repeat: int,
            ghosts: str = "auto"):
    """Time one configuration on ``workers`` (one slab each); return
    (median ms, median slowest-slab ms, digest, ghosts, why not peer)."""
    components, chain, _ = CASES[case]
    grid = daxpy.UniformGrid(dims=dims_for(n_points), spacing=SPACING)
    comps = (components,) if components > 1 else ()
    # Zero-stride stand-ins: the pipeline needs only the input's dtype and shape.
    standin = grid.with_fields(point_data={"v": np.broadcast_to(
        np.zeros(1, dtype=np.float32), (grid.n_points,) + comps)})
    pipe = daxpy.pipeline(standin)
    out = chain(pipe.field("v"))
    place = "device" if on_gpu and residence == "device" else "host"
    with ResidentPipeline(pipe, workers=workers, backend=_backend(on_gpu), inputs=place,
                          to=place, ghosts=ghosts if place == "device" else "auto") as slabs:
        slabs.fill("v", functools.partial(make_block, components=components, on_gpu=on_gpu))
        times, slowest = [], []
        for attempt in range(repeat + 1):
            start = time.perf_counter()
            each = slabs.run()
            if attempt:  # the first run compiles the kernels and pins the buffers
                times.append((time.perf_counter() - start) * 1e3)
                slowest.append(max(each))
        parts = slabs.apply(_slab_digest, out.name, on_gpu)
        found = (sum(p[0] for p in parts) % 2 ** 64, sum(p[1] for p in parts) % 2 ** 64)
        ghosts, why = slabs.ghosts, slabs.peer_error
    return statistics.median(times), statistics.median(slowest), found, ghosts, why


def _count(text: str) -> int:
    base, _, power = text.partition("**")
    return int(base) ** int(power) if power else int(text)


def plan(gpus: list[int], strong: int) -> list[tuple[str, int, int]]:
    """``(scaling, gpus, points)`` of every row: strong at ``strong`` points,
    weak at ``strong // max(gpus)`` points per GPU.

    Examples
    --------
    >>> plan([1, 2], 8)
    [('strong', 1, 8), ('strong', 2, 8), ('weak', 1, 4), ('weak', 2, 8)]
    """
    share = strong // max(gpus)
    return [("strong", g, strong) for g in gpus] + [("weak", g, share * g) for g in gpus]


def goals(rows: list[dict]) -> list[str]:
    """One line per goal of the scale-out issue, with the measured value."""
    lines = []
    for row in rows:
        name = f"{row['residence']} {row['case']} {row['scaling']} {row['gpus']} GPU(s)"
        if row["scaling"] == "strong" and row["gpus"] == 1 and row["ratio_to_single"]:
            value, goal = row["ratio_to_single"], GOALS["ratio_to_single"]
            lines.append(f"{name}: {value:.3f}x the single-domain time (goal <= {goal}): "
                         f"{'met' if value <= goal else 'MISSED'}")
        elif row["scaling"] == "strong" and row["gpus"] in GOALS["strong"]:
            goal = GOALS["strong"][row["gpus"]]
            lines.append(f"{name}: speedup {row['speedup']:.3f} (goal >= {goal}): "
                         f"{'met' if row['speedup'] >= goal else 'MISSED'}")
        elif row["scaling"] == "weak" and row["gpus"] > 1:
            lines.append(f"{name}: efficiency {row['efficiency']:.3f} (goal >= "
                         f"{GOALS['weak']}): "
                         f"{'met' if row['efficiency'] >= GOALS['weak'] else 'MISSED'}")
    return lines


def _row(case, residence, scaling, gpus, n_points, measured, base, reference):
    ms, worker_ms, found, ghosts, _ = measured
    digest_ref, single_ms = reference
    speedup = base / ms
    return make_row(case, "uniform3d", "float32", n_points, "daxpy", ms,
                    min_bytes=CASES[case][2] * n_points,
                    agrees=digest_ref is not None and tuple(digest_ref) == tuple(found),
                    gpus=gpus, scaling=scaling, speedup=round(speedup, 3),
                    efficiency=round(speedup / gpus if scaling == "strong" else speedup, 3),
                    residence=residence, ghosts=ghosts, slabs=gpus,
                    worker_ms=round(worker_ms, 3), reference="single-domain",
                    single_domain_ms=None if single_ms is None else round(single_ms, 3),
                    ratio_to_single=None if single_ms is None else round(ms / single_ms, 3))


def run_workload(client, workers, residence, args, on_gpu, began) -> list[dict]:
    """Every row of one workload: references first (one GPU, nothing else on
    it), then each distinct configuration once (weak and strong share some)."""
    cases, gpu_points, cpu_points = WORKLOADS[residence]
    strong = args.points.get(residence) or (gpu_points if on_gpu else cpu_points)
    repeat = args.host_repeat if residence == "host" else args.repeat
    rows = []
    for case in (c for c in cases if c in args.cases):
        steps = plan(args.gpus, strong)
        references, measured = {}, {}
        for _, gpus, n_points in steps:
            if time.perf_counter() - began > args.budget_s:
                print(f"budget spent: skipping {residence} {case}", flush=True)
                return rows
            if n_points not in references:
                print(f"{residence} {case} {n_points} points: single-domain reference",
                      flush=True)
                client.run(_free_pool)
                try:
                    references[n_points] = client.submit(
                        single_domain, case, n_points, residence, on_gpu,
                        workers=[workers[0]], pure=False).result()
                except Exception as err:  # e.g. the whole grid does not fit one GPU
                    print(f"no single-domain reference: {str(err)[:300]}", flush=True)
                    references[n_points] = (None, None)
            if (gpus, n_points) not in measured:
                print(f"{residence} {case} {n_points} points on {gpus} GPU(s)", flush=True)
                try:
                    measured[(gpus, n_points)] = measure(workers[:gpus], case, residence,
                                                         n_points, on_gpu, repeat, args.ghosts)
                except Exception as err:
                    print(f"failed: {type(err).__name__}: {str(err)[:300]}", flush=True)
                client.run(_free_pool)
                why = measured.get((gpus, n_points), (None,) * 5)[4]
                if why:
                    print(f"ghosts went through the client: {why}", flush=True)
        for scaling, gpus, n_points in steps:
            first = next(s for s in steps if s[0] == scaling)  # the fewest GPUs
            if (gpus, n_points) not in measured or first[1:] not in measured:
                continue
            base = measured[(first[1], first[2])][0]
            row = _row(case, residence, scaling, gpus, n_points, measured[(gpus, n_points)],
                       base, references[n_points])
            rows.append(row)
            if not row["agrees"]:
                print(f"DISAGREES with the single-domain run ({case}, {gpus} GPU(s), "
                      f"{n_points} points)", flush=True)
        print(format_table(rows[-2 * len(args.gpus):], COLUMNS), flush=True)
    return rows


COLUMNS = ["residence", "case", "scaling", "gpus", "n_points", "time_ms", "worker_ms",
           "single_domain_ms", "ratio_to_single", "speedup", "efficiency", "ghosts", "agrees"]


def main(argv=None) -> int:
    parser = SuiteParser(prog="daxpy bench scale-out", description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 2],
                        help="GPU counts to run (workers on --cpu); 1 first")
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--device-points", type=_count, default=None,
                        help="points of the device workload's strong runs (2**31 on GPUs)")
    parser.add_argument("--host-points", type=_count, default=None,
                        help="points of the host workload's strong runs (2**32 on GPUs)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--host-repeat", type=int, default=3)
    parser.add_argument("--ghosts", default="auto", choices=["auto", "peer", "client"],
                        help="how the device workload's ghost planes travel (see "
                             "daxpy.dask.ResidentPipeline)")
    parser.add_argument("--budget-s", type=float, default=1e9,
                        help="stop starting new configurations after this many seconds")
    parser.add_argument("--cpu", action="store_true", help="CPU LocalCluster, NumPy slabs")
    add_output_options(parser)
    args = parser.parse_args(argv)
    args.gpus = sorted(set(args.gpus))
    args.points = {"device": args.device_points, "host": args.host_points}
    on_gpu = not args.cpu
    began = time.perf_counter()
    cluster, client, workers, kind = start_cluster(max(args.gpus), on_gpu)
    print(f"cluster of {len(workers)} workers up in {time.perf_counter() - began:.1f} s",
          flush=True)
    rows = []
    try:
        for residence in args.workloads:
            rows += run_workload(client, workers, residence, args, on_gpu, began)
        # Written before the cluster goes down: a slow teardown must not lose them.
        write_results("scale_out", rows, folder=output_dir(args), gpu=on_gpu,
                      workers=len(workers), cluster=kind,
                      design="ResidentPipeline: one slab per worker, kept across runs; one "
                      "actor call per worker per run")
    finally:
        close_cluster(client, cluster)
    print(format_table(rows, COLUMNS))
    print("\n".join(goals(rows)))
    return 0 if rows and all(r["agrees"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
