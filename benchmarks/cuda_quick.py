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
from daxpy.worklet import get_worklet
from timing import copy_bandwidth_gbps, time_gpu


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
    from daxpy.dispatch import execute

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
        del out


STORE_HINTS = {"stcs": "", "plain": "#define __stcs(p, v) (*(p) = (v))\n"}


def march_sweep():
    """Marching kernels over planes per chunk and store hints, beside the
    hand-tuned kernel of the same case (benchmarks/reference), same run."""
    from daxpy.cuda import plan as plan_mod
    from reference.hand_tuned import HandTuned

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
        domain = get_worklet(name).cuda.march
        default = plan_mod.MARCH_PLANES[domain]
        for zc in (4, 8, 16, 32):
            plan_mod.MARCH_PLANES[domain] = zc
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
        plan_mod.MARCH_PLANES[domain] = default
        launch_ref, out = references[name]()
        ms = bench(launch_ref)
        gbps = (field.nbytes + out.nbytes) / ms / 1e6
        print(f"{'hand-tuned ' + name:46s} {'':3s} {'':6s} {ms:7.3f} {gbps / copy_gbps:7.2f}")
        del out


if __name__ == "__main__":
    import sys

    compile_times()
    bandwidth()
    if "--sweep" in sys.argv:
        march_sweep()
