"""Pipeline benchmark (issue 4): Dax's FY11 pipelines and seed 000's BiasAdd graph.

FY11 pipelines, 3-component float32 input on a uniform grid (100M points by
default): 1. Magnitude -> Gradient; 2. Magnitude -> Gradient -> Sine -> Square
-> Cosine; 3. Magnitude -> Sine -> Square -> Cosine. Each runs fused and
concurrent (``daxpy``), unfused on one stream (``daxpy-serial``), and through
VTK's filters in the same process when VTK imports (``vtk-seq``,
``vtk-stdthread``). Beside them: a lone gradient of a scalar field, and chains
of k = 1..6 elementwise maps (fused and unfused).

Seed 000's graph: an MNIST-shaped batch (512 x 28 x 28 x 1, float32) through
30 layers, each the sum of 30 BiasAdds of different biases; concurrent
(one stream per branch) against serialized (one stream).

GPU times are the run's device time (``Profile.device_ms``: inputs on the
device to the last kernel's end, over all streams), median of repeats, each
started behind a spin kernel so that the host's launch overhead stays out.
Every result is checked against the NumPy backend before any time is printed.

Run on the GPU machine: ``daxpy bench pipelines`` (``--quick`` for
small sizes). Writes ``results/pipelines-<device>.json``.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import daxpy

from .common import SuiteParser, add_output_options, agree, make_row, output_dir, write_results
from .printout import format_table
from .datasets import cube_dims
from .timing import _spin, copy_bandwidth_gbps

MAPS = ("sin(x)", "x * x", "cos(x)", "x + 1", "sqrt(abs(x))", "x * 0.5")


def fy11(pipe, which: int):
    """Build FY11 pipeline ``which`` (1-3) from the field ``v``; return its output node."""
    node = pipe.field("v").magnitude()
    if which in (1, 2):
        node = node.gradient()
    if which in (2, 3):
        node = node.map("sin(x)").map("x * x").map("cos(x)")
    return node


def seed000(pipe, layers: int, width: int, bias_size: int, rng):
    """Seed 000's graph: ``layers`` sums of ``width`` BiasAdds each."""
    node = pipe.field("x")
    for _ in range(layers):
        terms = [node.bias_add(rng.standard_normal(bias_size).astype(np.float32))
                 for _ in range(width)]
        node = pipe.combine(" + ".join(t.name for t in terms))
    return node


def device_ms(pipe, out, repeat: int, gate_us: float, **options) -> float:
    """Median device time of ``pipe.run(backend='cuda')`` behind a spin gate."""
    pipe.run(backend="cuda", outputs=[out], to="device", **options)  # compile, upload
    samples = []
    for _ in range(repeat):
        _spin(gate_us)
        _, profile = pipe.run(backend="cuda", outputs=[out], to="device", profile=True,
                              **options)
        samples.append(profile.device_ms)
    return statistics.median(samples)


def host_ms(fn, repeat: int = 3) -> tuple[float, object]:
    result, samples = None, []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples), result


def vtk_fy11(grid, values, which: int):
    """FY11 pipeline ``which`` through VTK filters; returns a zero-argument runner."""
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkFiltersCore import vtkArrayCalculator
    from vtkmodules.vtkFiltersGeneral import vtkGradientFilter

    from .vtk_runs import attach

    source = attach(grid.to_vtk(), points={"v": values})
    magnitude = vtkArrayCalculator()
    magnitude.SetInputData(source)
    magnitude.AddVectorArrayName("v")
    magnitude.SetFunction("mag(v)")
    magnitude.SetResultArrayName("m")
    magnitude.SetResultArrayType(10)  # VTK_FLOAT, as daxpy keeps float32
    last, name, vector = magnitude, "m", False
    if which in (1, 2):
        gradient = vtkGradientFilter()
        gradient.SetInputConnection(last.GetOutputPort())
        gradient.SetInputArrayToProcess(0, 0, 0, 0, "m")
        gradient.SetResultArrayName("g")
        last, name, vector = gradient, "g", True
    if which in (2, 3):
        calculator = vtkArrayCalculator()
        calculator.SetInputConnection(last.GetOutputPort())
        if vector:
            for index, axis in enumerate("XYZ"):
                calculator.AddScalarVariable(f"{name}{axis}", name, index)
        else:
            calculator.AddScalarArrayName(name)
        calculator.SetFunction(_vtk_sin_square_cos(name, vector))
        calculator.SetResultArrayName("r")
        calculator.SetResultArrayType(10)
        last, name = calculator, "r"

    def run():
        last.Modified()
        magnitude.Modified()
        last.Update()
        return vtk_to_numpy(last.GetOutput().GetPointData().GetArray(name))

    return run


def _vtk_sin_square_cos(name: str, vector: bool) -> str:
    if not vector:
        return f"cos(sin({name})*sin({name}))"
    parts = [f"cos(sin({name}{c})*sin({name}{c}))*{u}Hat" for c, u in zip("XYZ", "ijk")]
    return " + ".join(parts)


def fy11_rows(args, copy_gbps: float, rng) -> list[dict]:
    dims = cube_dims(args.points)
    grid = daxpy.UniformGrid(dims=dims)
    n = grid.n_points
    values = rng.standard_normal((n, 3)).astype(np.float32)
    data = grid.with_fields(point_data={"v": values, "s": values[:, 0].copy()})
    rows = []
    in_bytes = values.nbytes
    for which in (1, 2, 3):
        pipe = daxpy.pipeline(data)
        out = fy11(pipe, which)
        out_bytes = n * 4 * (3 if which in (1, 2) else 1)
        case = f"fy11_pipeline{which}"
        reference = pipe.run(backend="cpu", outputs=[out]).point_data[out.name]
        results = {}
        for impl, options in (("daxpy", {}), ("daxpy-serial", {"fuse": False, "concurrent": False})):
            got = pipe.run(backend="cuda", outputs=[out], to="device", **options)
            agree(impl, got.point_data[out.name].get(), reference, rtol=2e-4, atol=2e-4)
            results[impl] = device_ms(pipe, out, args.repeat, args.gate_us, **options)
        for impl, ms in results.items():
            rows.append(make_row(case, "uniform3d", "float32", n, impl, ms, kernel_ms=ms,
                                 min_bytes=in_bytes + out_bytes, copy_gbps=copy_gbps))
        rows += vtk_rows(args, grid, values, which, case, reference)
    lone = daxpy.pipeline(data)
    grad = lone.gradient("s")
    agree("daxpy", lone.run(backend="cuda", outputs=[grad], to="device")
          .point_data[grad.name].get(), lone.run(backend="cpu", outputs=[grad])
          .point_data[grad.name], rtol=2e-4, atol=2e-4)
    ms = device_ms(lone, grad, args.repeat, args.gate_us)
    rows.append(make_row("gradient", "uniform3d", "float32", n, "daxpy", ms, kernel_ms=ms,
                         min_bytes=n * 4 * 4, copy_gbps=copy_gbps))
    rows += map_chain_rows(args, data, copy_gbps)
    return rows


def vtk_rows(args, grid, values, which, case, reference) -> list[dict]:
    try:
        from .vtk_runs import smp_backend
    except ImportError:
        return []
    rows = []
    run = vtk_fy11(grid, values, which)
    for impl, backend in (("vtk-stdthread", "STDThread"), ("vtk-seq", "Sequential")):
        if impl == "vtk-seq" and args.skip_vtk_seq:
            continue
        with smp_backend(backend):
            ms, result = host_ms(run, repeat=1)
        agree(impl, np.asarray(result).reshape(reference.shape), reference,
              rtol=2e-3, atol=2e-3)
        rows.append(make_row(case, "uniform3d", "float32", reference.shape[0], impl, ms))
    return rows


def map_chain_rows(args, data, copy_gbps: float) -> list[dict]:
    rows = []
    n = data.n_points
    for k in range(1, 7):
        pipe = daxpy.pipeline(data)
        node = pipe.field("s")
        for expression in MAPS[:k]:
            node = node.map(expression)
        reference = pipe.run(backend="cpu", outputs=[node]).point_data[node.name]
        for impl, options in (("daxpy", {}), ("daxpy-serial", {"fuse": False, "concurrent": False})):
            got = pipe.run(backend="cuda", outputs=[node], to="device", **options)
            agree(impl, got.point_data[node.name].get(), reference, rtol=1e-5, atol=1e-5)
            ms = device_ms(pipe, node, args.repeat, args.gate_us, **options)
            rows.append(make_row("field_map", "uniform3d", "float32", n, impl, ms,
                                 kernel_ms=ms, min_bytes=2 * n * 4, copy_gbps=copy_gbps,
                                 chain_length=k))
    return rows


def graph_rows(args, rng) -> list[dict]:
    batch, bias_size = args.batch, 28 * 28
    grid = daxpy.UniformGrid(dims=(batch * bias_size,))
    data = grid.with_fields(point_data={"x": rng.random(grid.n_points, np.float32)})
    pipe = daxpy.pipeline(data)
    out = seed000(pipe, args.layers, args.width, bias_size, rng)
    reference = pipe.run(backend="cpu", outputs=[out]).point_data[out.name]
    rows = []
    for impl, options in (("daxpy", {}), ("daxpy-serial", {"fuse": False, "concurrent": False})):
        got = pipe.run(backend="cuda", outputs=[out], to="device", **options)
        agree(impl, got.point_data[out.name].get(), reference, rtol=1e-4, atol=1e-3)
        wall, _ = host_ms(lambda: pipe.run(backend="cuda", outputs=[out], to="device", **options))
        # The gate must outlast the host's enqueueing, or the device time counts the
        # host's launches (their pace varies from machine to machine: 0.40-0.44 s).
        gate_us = max(args.graph_gate_us, 1.5e3 * wall)
        ms = device_ms(pipe, out, args.repeat, gate_us, **options)
        rows.append(make_row("biasadd_graph", "uniform1d", "float32", grid.n_points, impl, ms,
                             kernel_ms=ms, host_launch_ms=round(wall, 3),
                             layers=args.layers, width=args.width))
    return rows


def parse_args(argv=None):
    parser = SuiteParser(prog="daxpy bench pipelines", description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=100_000_000)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--layers", type=int, default=30)
    parser.add_argument("--width", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--gate-us", type=float, default=20_000.0)
    parser.add_argument("--graph-gate-us", type=float, default=400_000.0,
                        help="spin before the graph runs, at least 1.5x the host's measured "
                             "time to enqueue all of its kernels")
    parser.add_argument("--skip-vtk-seq", action="store_true")
    parser.add_argument("--quick", action="store_true")
    add_output_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.points, args.batch, args.layers, args.width, args.repeat = 200_000, 16, 3, 4, 3
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    rng = np.random.default_rng(0)
    copy_gbps = copy_bandwidth_gbps()
    rows = fy11_rows(args, copy_gbps, rng) + graph_rows(args, rng)
    columns = ["case", "impl", "chain_length", "n_points", "time_ms", "gbps",
               "ratio_to_copy", "host_launch_ms"]
    print(f"D2D copy: {copy_gbps:.0f} GB/s")
    print(format_table(rows, columns))
    write_results("pipelines", rows, folder=output_dir(args), gpu=True, copy_gbps=copy_gbps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
