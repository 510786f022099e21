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


HINTS = {"ldcs/stcs": "", "ldg/stcs": "#define __ldcs(p) __ldg(p)\n",
         "ldg/plain": "#define __ldcs(p) __ldg(p)\n#define __stcs(p, v) (*(p) = (v))\n",
         "ld/plain": "#define __ldcs(p) (*(p))\n#define __ldg(p) (*(p))\n"
                     "#define __stcs(p, v) (*(p) = (v))\n"}


def cache_hints():
    """Same kernels with other load/store cache hints (macros ahead of the source)."""
    n = 464
    grid = daxpy.UniformGrid(dims=(n, n, n), spacing=(0.1, 0.2, 0.3))
    values = cupy.random.default_rng(0).random(grid.n_points, dtype=np.float32)
    dst = cupy.empty_like(values)
    copy_gbps = 2 * values.nbytes / bench(lambda: cupy.copyto(dst, values)) / 1e6
    del dst
    print(f"{'kernel':40s} {'hints':>10s} {'ms':>7s} {'of copy':>7s}")
    for name, params in (("pass_through", {"dtype": "float64"}), ("bias_add", {"bias": [1.0]}),
                         ("point_to_cell", {}), ("point_gradient", {})):
        plan = plan_for(name, grid, values, **params)
        out = empty_output(plan.out_shape, plan.out_dtype)
        step = plan.launches[0]
        args = tuple(step.values(values, out))
        for label, prefix in HINTS.items():
            kernel = cc.get_kernel(step.kernel.name, prefix + step.kernel.source())
            grid_dims, block = step.dims()
            ms = bench(lambda: kernel(grid_dims, block, args))
            gbps = (values.nbytes + out.nbytes) / ms / 1e6
            print(f"{step.kernel.name:40s} {label:>10s} {ms:7.3f} {gbps / copy_gbps:7.2f}")
        del out


if __name__ == "__main__":
    import sys

    compile_times()
    bandwidth()
    if "--hints" in sys.argv:
        cache_hints()
