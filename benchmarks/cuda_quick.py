"""Quick CUDA backend figures: compile time per specialization (cold and
cached) and kernel bandwidth of a few generated kernels vs a D2D copy.
Run on the GPU machine; prints a table (benchmarks/kernels.py is the full one)."""

import os
import shutil
import time

import cupy
import numpy as np

import daxpy
from daxpy.cuda import compile as cc
from daxpy.cuda.dispatch import empty_output, launch
from daxpy.cuda.plan import make_plan
from daxpy.data.worklet import get_worklet

from .common import SuiteParser
from .timing import copy_bandwidth_gbps, time_gpu


def plan_for(name, grid, values, association="points", **params):
    return make_plan(get_worklet(name), grid, association, np.dtype(values.dtype),
                     tuple(values.shape[1:]), params)


def compile_times():
    shutil.rmtree(os.environ["DAXPY_CACHE_DIR"], ignore_errors=True)
    cc.clear_memory_cache()
    grid = daxpy.UniformGrid(dims=(64, 64, 64))
    values = cupy.ones(grid.n_points, dtype=np.float32)
    cases = [("pass_through", {"dtype": "float64"}), ("bias_add", {"bias": [1.0]}),
             ("magnitude", {}), ("point_to_cell", {}), ("cell_to_point", {"association": "cells"}),
             ("point_gradient", {}), ("cell_gradient", {})]
    rows = []
    for name, params in cases:
        association = params.pop("association", "points")
        field = values if association == "points" else cupy.ones(grid.n_cells, np.float32)
        plan = plan_for(name, grid, field, association, **params)
        kernel = plan.launches[0].kernel
        source = kernel.source()
        t0 = time.perf_counter(); cc.get_kernel(kernel.name, source); cold = time.perf_counter() - t0
        cc.clear_memory_cache()
        t0 = time.perf_counter(); cc.get_kernel(kernel.name, source); disk = time.perf_counter() - t0
        t0 = time.perf_counter(); cc.get_kernel(kernel.name, source); memory = time.perf_counter() - t0
        rows.append((kernel.name, cold, disk, memory))
    print(f"{'kernel':45s} {'compile s':>9s} {'disk s':>8s} {'memory s':>9s}")
    for r in rows:
        print(f"{r[0]:45s} {r[1]:9.3f} {r[2]:8.4f} {r[3]:9.6f}")


def bench(fn, repeat=20):
    """Kernel-only median ms (benchmarks/timing.py: a spin kernel hides launch overhead)."""
    return time_gpu(fn, repeat=repeat)


def check(name, association, params):
    """The generated kernel agrees with the NumPy backend on a grid with
    several blocks along each axis (before anything is timed)."""
    from daxpy.engine.dispatch import execute

    grid = daxpy.UniformGrid(dims=(132, 37, 41), spacing=(0.1, 0.2, 0.3))
    n = grid.n_points if association == "points" else grid.n_cells
    values = np.random.default_rng(5).random(n, dtype=np.float32)
    expected = execute(name, grid, values, association, backend="cpu", **params)
    got = cupy.asnumpy(execute(name, grid, values, association, backend="cuda", **params))
    scale = max(float(np.abs(expected).max()), 1.0)
    return bool(np.allclose(got, expected, rtol=2e-4, atol=2e-4 * scale))


def bandwidth():
    n = 464  # 464^3 ~ 100M points
    grid = daxpy.UniformGrid(dims=(n, n, n), spacing=(0.1, 0.2, 0.3))
    values = cupy.random.default_rng(0).random(grid.n_points, dtype=np.float32)
    copy_gbps = copy_bandwidth_gbps()
    print(f"D2D copy (2 GiB, cudaMemcpyAsync): {copy_gbps:.0f} GB/s")
    cases = [("pass_through", values, {"dtype": "float64"}),
             ("bias_add", values, {"bias": [1.0, 2.0, 3.0, 4.0]}),
             ("point_to_cell", values, {}),
             ("point_gradient", values, {}),
             ("cell_gradient", values, {}),
             ("cell_to_point", cupy.random.default_rng(1).random(grid.n_cells, dtype=np.float32),
              {})]
    print(f"{'kernel':46s} {'ms':>7s} {'GB/s':>7s} {'of copy':>7s} {'agrees':>6s}")
    for name, field, params in cases:
        association = "cells" if name == "cell_to_point" else "points"
        agrees = check(name, association, params)
        plan = plan_for(name, grid, field, association, **params)
        out = empty_output(plan.out_shape, plan.out_dtype)
        ms = bench(lambda: launch(plan, field, out))
        gbps = (field.nbytes + out.nbytes) / ms / 1e6
        print(f"{plan.launches[0].kernel.name:46s} {ms:7.3f} {gbps:7.0f} "
              f"{gbps / copy_gbps:7.2f} {str(agrees):>6s}")
        out = None  # free it before the next case allocates its own


STORE_HINTS = {"stcs": "", "plain": "#define __stcs(p, v) (*(p) = (v))\n"}


def march_sweep():
    """Marching kernels over planes per chunk and store hints, beside the
    hand-tuned kernel of the same case (benchmarks/reference), same run."""
    from dataclasses import replace

    from daxpy.data.worklet import register
    from .reference.hand_tuned import HandTuned

    n = 464
    grid = daxpy.UniformGrid(dims=(n, n, n), spacing=(0.1, 0.2, 0.3))
    points = cupy.random.default_rng(0).random(grid.n_points, dtype=np.float32)
    cells = cupy.random.default_rng(1).random(grid.n_cells, dtype=np.float32)
    copy_gbps = copy_bandwidth_gbps()
    hand = HandTuned()
    references = {"point_to_cell": lambda: hand.point_to_cell_uniform(points, grid.dims),
                  "cell_to_point": lambda: hand.cell_to_point_uniform(cells, grid.dims),
                  "point_gradient": lambda: hand.gradient_uniform(points, grid.dims,
                                                                  (0.1, 0.2, 0.3))}
    print(f"{'kernel':46s} {'zc':>3s} {'store':>6s} {'ms':>7s} {'of copy':>7s}")
    for name, (field, association) in {"point_to_cell": (points, "points"),
                                       "cell_to_point": (cells, "cells"),
                                       "point_gradient": (points, "points")}.items():
        declared = get_worklet(name)
        for zc in (4, 8, 16, 32):
            # The planes are a kernel argument: the same compiled kernel serves each zc.
            register(replace(declared, cuda=replace(declared.cuda, march_planes=zc)))
            plan = plan_for(name, grid, field, association)
            out = empty_output(plan.out_shape, plan.out_dtype)
            step = plan.launches[0]
            args = tuple(step.values(field, out))
            grid_dims, block = step.dims()
            for label, prefix in STORE_HINTS.items():
                kernel = cc.get_kernel(step.kernel.name, prefix + step.kernel.source())
                ms = bench(lambda: kernel(grid_dims, block, args))
                gbps = (field.nbytes + out.nbytes) / ms / 1e6
                print(f"{step.kernel.name:46s} {zc:3d} {label:>6s} {ms:7.3f} {gbps / copy_gbps:7.2f}")
            del out
        register(declared)
        launch_ref, out = references[name]()
        ms = bench(launch_ref)
        gbps = (field.nbytes + out.nbytes) / ms / 1e6
        print(f"{'hand-tuned ' + name:46s} {'':3s} {'':6s} {ms:7.3f} {gbps / copy_gbps:7.2f}")
        del out


def _row(label, ms, nbytes, copy_gbps, reference_ms=None, unfused_ms=None):
    ratio = f"{ms / reference_ms:9.2f}" if reference_ms else f"{'':9s}"
    more = f" {unfused_ms:8.3f}" if unfused_ms is not None else ""
    print(f"{label:62s} {ms:7.3f} {nbytes / ms / 1e6 / copy_gbps:7.2f} {ratio}{more}")


def _timed_plan(name, grid, field, association="points", **params):
    plan = plan_for(name, grid, field, association, **params)
    out = empty_output(plan.out_shape, plan.out_dtype)
    return plan.launches[0].kernel.name, bench(lambda: launch(plan, field, out)), out


def versus():
    """Generated kernels beside the hand-tuned ones where the last full run
    found gaps (magnitude, rectilinear/curvilinear gradient, hex point-to-cell)."""
    from . import datasets
    from .reference.hand_tuned import HandTuned

    hand = HandTuned()
    copy_gbps = copy_bandwidth_gbps()
    print(f"{'kernel':62s} {'ms':>7s} {'of copy':>7s} {'/ hand':>9s}")
    vec = cupy.random.default_rng(2).random((464 ** 3 // 4 * 4, 3), dtype=np.float32)
    grid = daxpy.UniformGrid(dims=(vec.shape[0],))
    name, ms, out = _timed_plan("magnitude", grid, vec)
    launch_ref, ref = hand.magnitude(vec)
    ref_ms = bench(launch_ref)
    _row(name, ms, vec.nbytes + out.nbytes, copy_gbps, ref_ms)
    del vec, out, ref
    dims = (216, 216, 216)
    rect = datasets.rectilinear_grid(dims)
    f = cupy.random.default_rng(3).random(rect.n_points, dtype=np.float32)
    name, ms, out = _timed_plan("point_gradient", rect, f)
    coords = [cupy.asarray(c.astype(np.float32)) for c in rect.coordinates]
    launch_ref, ref = hand.gradient_rectilinear(f, coords)
    _row(name, ms, f.nbytes + out.nbytes, copy_gbps, bench(launch_ref))
    curv = datasets.curvilinear_grid(dims)
    name, ms, out = _timed_plan("point_gradient", curv, f)
    launch_ref, ref = hand.gradient_curvilinear(f, cupy.asarray(curv.points()), dims)
    _row(name, ms, f.nbytes + out.nbytes + curv.points().nbytes, copy_gbps, bench(launch_ref))
    for grid in (rect, curv):
        name, ms, out = _timed_plan("point_to_cell", grid, f)
        _row(name, ms, f.nbytes + out.nbytes, copy_gbps)
    hexes = datasets.hex_grid(dims)
    name, ms, out = _timed_plan("point_to_cell", hexes, f)
    corners = cupy.asarray(hexes.cell_blocks()["hex"].corners.astype(np.int32))
    launch_ref, ref = hand.point_to_cell_hex(f, corners)
    _row(name, ms, f.nbytes + out.nbytes + corners.nbytes, copy_gbps, bench(launch_ref))


def fusion():
    """Fused chains against one map and against the same chain unfused
    (issue 4: k fused maps at most 1.2x one map)."""
    from daxpy.cuda.fusion import Step, make_fused_plan

    n = 464
    grid = daxpy.UniformGrid(dims=(n, n, n), spacing=(0.1, 0.2, 0.3))
    f = cupy.random.default_rng(4).random(grid.n_points, dtype=np.float32)
    copy_gbps = copy_bandwidth_gbps()
    maps = [Step("bias_add", {"bias": [0.5]}), Step("field_map", {"expression": "sin(x)"}),
            Step("field_map", {"expression": "x * x"}), Step("field_map", {"expression": "cos(x)"}),
            Step("magnitude"), Step("field_map", {"expression": "x + 1"})]
    one_ms = _timed_plan("bias_add", grid, f, bias=[0.5])[1]
    print(f"{'chain (unfused: the same worklets one kernel each)':62s} {'ms':>7s} "
          f"{'of copy':>7s} {'/ alone':>9s} {'unfused':>8s}")
    _row("bias_add alone", one_ms, 2 * f.nbytes, copy_gbps, one_ms)

    def run_fused(steps, association="points", field=f):
        plan = make_fused_plan(grid, association, field.dtype, field.shape[1:], steps)
        out = empty_output(plan.out_shape, plan.out_dtype)
        return bench(lambda: launch(plan, field, out)), out

    def run_unfused(steps, association="points", field=f):
        plans, values = [], field
        for step in steps:
            plan = plan_for(step.name, grid, values, association, **step.params)
            out = empty_output(plan.out_shape, plan.out_dtype)
            plans.append((plan, values, out))
            values = out
            association = get_worklet(step.name).output_association or association
        return bench(lambda: [launch(p, v, o) for p, v, o in plans])

    for k in range(1, 7):
        ms, out = run_fused(maps[:k])
        _row(f"{k} maps fused", ms, f.nbytes + out.nbytes, copy_gbps, one_ms,
             run_unfused(maps[:k]))
    chains = {"map > point_to_cell > map": [maps[1], Step("point_to_cell"), maps[3]],
              "point_gradient > magnitude": [Step("point_gradient"), Step("magnitude")],
              "gradient > sin > square > cos": [Step("point_gradient"), maps[1], maps[2],
                                                maps[3]]}
    lone = _timed_plan("point_gradient", grid, f)[1]
    _row("point_gradient alone", lone, 16 * grid.n_points, copy_gbps, lone)
    for label, steps in chains.items():
        ms, out = run_fused(steps)
        _row(label + " fused", ms, f.nbytes + out.nbytes, copy_gbps, lone, run_unfused(steps))


def chain_sweep():
    """Map-only fused chains over work items per thread (more loads in flight
    while the maps compute), and FY11's pipeline 2 on a 3-component field."""
    from daxpy.cuda.codegen import PER_THREAD
    from daxpy.cuda.fusion import Step, make_fused_plan

    n = 464
    grid = daxpy.UniformGrid(dims=(n, n, n), spacing=(0.1, 0.2, 0.3))
    f = cupy.random.default_rng(4).random(grid.n_points, dtype=np.float32)
    copy_gbps = copy_bandwidth_gbps()
    trig = [Step("field_map", {"expression": "sin(x)"}),
            Step("field_map", {"expression": "x * x"}), Step("field_map", {"expression": "cos(x)"})]
    chains = {"bias": [Step("bias_add", {"bias": [0.5]})],
              "bias sin square cos": [Step("bias_add", {"bias": [0.5]})] + trig,
              "sin square cos sin square cos": trig + trig}
    one = None
    for per_thread in (1, 2, 4):
        PER_THREAD["tuples"] = per_thread
        for label, steps in chains.items():
            plan = make_fused_plan(grid, "points", f.dtype, (), steps)
            out = empty_output(plan.out_shape, plan.out_dtype)
            ms = bench(lambda: launch(plan, f, out))
            one = one or ms
            _row(f"{label} (per thread {per_thread})", ms, 2 * f.nbytes, copy_gbps, one)
    PER_THREAD["tuples"] = 1
    vec = cupy.random.default_rng(5).random((grid.n_points, 3), dtype=np.float32)
    lone_plan = plan_for("point_gradient", grid, f)
    lone_out = empty_output(lone_plan.out_shape, lone_plan.out_dtype)
    lone = bench(lambda: launch(lone_plan, f, lone_out))
    _row("point_gradient alone (scalar)", lone, 16 * grid.n_points, copy_gbps, lone)
    fy11 = [Step("magnitude"), Step("point_gradient")] + trig
    plan = make_fused_plan(grid, "points", vec.dtype, (3,), fy11)
    out = empty_output(plan.out_shape, plan.out_dtype)
    ms = bench(lambda: launch(plan, vec, out))
    _row("FY11 2: magnitude > gradient > sin > square > cos", ms, vec.nbytes + out.nbytes,
         copy_gbps, lone)
    plan = make_fused_plan(grid, "points", vec.dtype, (3,), fy11[:2])
    out = empty_output(plan.out_shape, plan.out_dtype)
    ms = bench(lambda: launch(plan, vec, out))
    _row("FY11 1: magnitude > gradient", ms, vec.nbytes + out.nbytes, copy_gbps, lone)


def main(argv=None) -> int:
    """Compile times and bandwidths, plus the sections the options ask for."""
    p = SuiteParser(prog="daxpy bench cuda-quick", description=__doc__.split("\n")[0])
    for section in ("sweep", "versus", "fusion", "chains"):
        p.add_argument(f"--{section}", action="store_true")
    args = p.parse_args(argv)
    compile_times()
    bandwidth()
    if args.sweep:
        march_sweep()
    if args.versus:
        versus()
    if args.fusion:
        fusion()
    if args.chains:
        chain_sweep()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
