"""Contour benchmark: isosurfaces of the wavelet against VTK, scikit-image and Warp.

Rows (``case=contour``), on the wavelet (``vtkRTAnalyticSource``'s field, float32) at
each size, with one isovalue and with ten:

- ``daxpy``: the CUDA backend. ``kernel_ms`` is device time, by CUDA events, from
  the field on the device to the surface's points and triangles on the device
  (classify, count, scan with its one host sync, emit, points; the host's launches
  before the first kernel hidden behind a spin kernel, as for every kernel time);
  ``time_ms`` is host to host, a NumPy field in and a :class:`daxpy.PolyData` out;
- ``floor-pinned``: the input field's bytes host->device from pinned memory;
- ``daxpy-cpu``: the compiled CPU backend on every host core;
- ``vtk-flying-edges-seq``/``-stdthread``, ``vtk-contour-seq``/``-stdthread``: VTK under
  its Sequential and STDThread SMP backends; Flying Edges Sequential is the reference;
- ``skimage``: ``skimage.measure.marching_cubes`` (one isovalue only);
- ``warp``: ``warp.MarchingCubes`` where the ``warp-lang`` wheel is installed: host to
  host as daxpy's (the field goes up from Warp's x-major host copy, made once, and the
  surface comes down), with its device time as daxpy's; it contours all cells but the
  last layer on each axis, so its area is checked against Flying Edges on the grid
  without that layer.

``case=qcriterion_contour`` times the Q-criterion isosurface of a float32 velocity
field host to host: daxpy's pipeline (gradient -> Q -> contour, Q never leaves the
device) against PyVista's ``compute_derivative(qcriterion=True)`` then ``contour``
with VTK on STDThread.

Every result is checked before it is timed: the same number of triangles as the
reference (or that number less the reference's degenerate triangles, which Flying
Edges keeps where a value equals the isovalue and daxpy and vtkContourFilter drop)
and the same surface area to ``--rtol`` (scikit-image and Warp merge or
split degenerate triangles differently: area only, to 1e-4).
The ones that agree are then timed in turns, a call of each a round
(:func:`~benchmarks.timing.time_in_turns`; medians of ``--repeat``), so that a slow
spell of the shared host falls on VTK and daxpy alike.

Writes ``contour-<device>.json`` (the wavelet rows) and
``contour_qcriterion-<device>.json`` (the Q-criterion rows).

Run: ``daxpy bench contour`` (``--quick`` for a small check; ``--sizes 256,512``;
``--sizes ""`` for the Q-criterion case alone, ``--qcriterion-points 0`` without it).

Examples
--------
>>> parse_args(["--quick"]).sizes
[24]
"""

from __future__ import annotations

import argparse
import contextlib
import sys

import numpy as np

from daxpy.cli.demo import wavelet

from .common import (AgreementError, SuiteParser, add_output_options, gpu_name, make_row,
                     output_dir, write_results)
from .printout import exit_status, format_table
from .timing import time_cpu, time_in_turns
from . import contour_peers as peers


def parse_args(argv=None) -> argparse.Namespace:
    """Command-line options.

    Examples
    --------
    >>> parse_args(["--sizes", "64"]).sizes
    [64]
    >>> parse_args(["--sizes", ""]).sizes
    []
    """
    p = SuiteParser(prog="daxpy bench contour", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="256,512", help="wavelet points per axis")
    p.add_argument("--qcriterion-points", type=float, default=1e8,
                   help="points of the Q-criterion case's velocity grid (0: skip it)")
    p.add_argument("--quick", action="store_true", help="a 24^3 wavelet, one repeat")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--rtol", type=float, default=1e-5, help="surface area agreement")
    add_output_options(p)
    args = p.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.quick:
        args.sizes, args.repeat, args.qcriterion_points = [24], 1, 24 ** 3
    return args


def isovalues(field: np.ndarray, count: int) -> list[float]:
    """``count`` values evenly inside the field's range (its ends excluded).

    Examples
    --------
    >>> isovalues(np.array([0.0, 4.0]), 3)
    [1.0, 2.0, 3.0]
    """
    low, high = float(field.min()), float(field.max())
    return [float(v) for v in np.linspace(low, high, count + 2)[1:-1]]


def check(impl: str, surface: peers.Surface, reference: peers.Surface, rtol: float,
          exact_count: bool, what: str) -> None:
    """Raise AgreementError unless ``surface`` matches the reference's triangles
    and area."""
    # Where grid values equal the isovalue, Flying Edges keeps the triangles that
    # collapse there (two corners at one point); daxpy and vtkContourFilter drop them.
    if exact_count and surface.triangles not in (reference.triangles,
                                                 reference.triangles - reference.degenerate):
        raise AgreementError(f"{impl} on {what}: {surface.triangles} triangles, the "
                             f"reference {reference.triangles}")
    scale = max(abs(reference.area), 1e-30)
    if abs(surface.area - reference.area) > rtol * scale:
        raise AgreementError(f"{impl} on {what}: area {surface.area!r}, the reference "
                             f"{reference.area!r} (rtol {rtol:g})")


def _contour_rows(grid, label: str, values: list[float], args, gpu: bool,
                  failures: list) -> list[dict]:
    field = grid.point_data["RTData"]
    what = f"{label}, {len(values)} value(s)"
    impls: list[tuple[str, peers.Timed, bool, float]] = [
        ("vtk-flying-edges-seq", peers.vtk_contour(grid, values, "flying-edges", "Sequential"),
         True, args.rtol),
        ("vtk-flying-edges-stdthread",
         peers.vtk_contour(grid, values, "flying-edges", "STDThread"), True, args.rtol),
        ("vtk-contour-seq", peers.vtk_contour(grid, values, "contour", "Sequential"), True,
         args.rtol),
        ("vtk-contour-stdthread", peers.vtk_contour(grid, values, "contour", "STDThread"),
         True, args.rtol),
        ("daxpy-cpu", peers.daxpy_contour(grid, values, "cpu"), True, args.rtol),
    ]
    if len(values) == 1 and peers.have("skimage"):
        impls.append(("skimage", peers.skimage_contour(grid, values[0]), False, 1e-4))
    if gpu:
        impls.append(("daxpy", peers.daxpy_contour(grid, values, "cuda"), True, args.rtol))
        if peers.have("warp"):
            impls.append(("warp", peers.warp_contour(grid, values), False, 1e-4))
    rows, reference, timed, made = [], None, {}, {}
    for impl, run, exact, rtol in impls:
        surface = run()
        reference = reference or surface
        against = reference
        if impl == "warp":  # Warp leaves out the last layer of cells on each axis
            against = peers.vtk_contour(peers.warp_cells_grid(grid), values, "flying-edges",
                                        "STDThread")()
        try:
            check(impl, surface, against, rtol, exact, what)
        except AgreementError as err:
            failures.append(str(err))
            rows.append(make_row("contour", label, "float32", grid.n_points, impl, None,
                                 agrees=False, error=str(err), n_values=len(values)))
            continue
        # The surface is made in the timed region; its area was measured for the check.
        timed[impl], made[impl] = (contextlib.nullcontext, run.make), surface
    # In turns, a call of each a round: a slow spell of the shared host weighs on VTK
    # and daxpy alike, where timed one after the other it would fall on one of them.
    times = time_in_turns(timed, repeat=args.repeat)
    for impl in timed:
        ms, extra = times[impl], {"n_values": len(values), "triangles": made[impl].triangles}
        kernel_ms = None
        if impl == "daxpy":
            kernel_ms = peers.daxpy_device_ms(grid, values, repeat=args.repeat)
        elif impl == "warp":
            kernel_ms = peers.warp_device_ms(grid, values, repeat=args.repeat)
        rows.append(make_row("contour", label, "float32", grid.n_points, impl, ms,
                             kernel_ms=kernel_ms, **extra))
        print(f"    {impl:28s} {ms:10.2f} ms" + (f"  (device {kernel_ms:.3f} ms)"
                                                  if kernel_ms is not None else ""), flush=True)
    if gpu:
        rows.append(make_row("contour", label, "float32", grid.n_points, "floor-pinned",
                             peers.upload_floor_ms(field), n_values=len(values)))
    return rows


def _qcriterion_rows(n_points: int, args, gpu: bool, failures: list) -> list[dict]:
    grid, value = peers.vortex_grid(n_points)
    label = "uniform3d"
    print(f"qcriterion_contour, {grid.n_points:,} points", flush=True)
    rows, reference, impls = [], None, []
    if peers.have("pyvista"):
        impls.append(("pyvista-stdthread", peers.pyvista_qcriterion(grid, value)))
    else:  # the GPU machine has no PyVista: a row that says so, not a stopped suite
        rows.append({"case": "qcriterion_contour", "grid": label, "dtype": "float32",
                     "n_points": grid.n_points, "impl": "pyvista-stdthread", "time_ms": None,
                     "agrees": None, "absent": "pyvista is not installed"})
    impls.append(("daxpy" if gpu else "daxpy-cpu",
                  peers.daxpy_qcriterion(grid, value, "cuda" if gpu else "cpu")))
    for impl, run in impls:
        ms, made = time_cpu(run.make, repeat=args.repeat, warmup=1)
        surface = run.measure(made)
        reference = reference or surface
        try:
            # Q is float32 in both; a triangle count within 0.01 % and the area to
            # 1e-4 allow for the few cells whose Q rounds across the isovalue.
            if abs(surface.triangles - reference.triangles) > 1e-4 * reference.triangles:
                raise AgreementError(f"{impl}: {surface.triangles} triangles, the reference "
                                     f"{reference.triangles}")
            check(impl, surface, reference, 1e-4, False, "the Q-criterion isosurface")
        except AgreementError as err:
            failures.append(str(err))
            rows.append(make_row("qcriterion_contour", label, "float32", grid.n_points, impl,
                                 None, agrees=False, error=str(err)))
            continue
        rows.append(make_row("qcriterion_contour", label, "float32", grid.n_points, impl, ms,
                             triangles=surface.triangles))
        print(f"    {impl:28s} {ms:10.1f} ms", flush=True)
    return rows


def main(argv=None) -> int:
    args = parse_args(argv)
    gpu = gpu_name() is not None
    rows: list[dict] = []
    failures: list[str] = []
    copy = None
    if gpu:
        from .timing import copy_bandwidth_gbps

        copy = copy_bandwidth_gbps()
    for size in args.sizes:
        grid = wavelet(size)
        label = "uniform3d"
        print(f"wavelet {size}^3 ({grid.n_points:,} points)", flush=True)
        for count in (1, 10):
            rows += _contour_rows(grid, label, isovalues(grid.point_data["RTData"], count),
                                  args, gpu, failures)
    columns = ["case", "n_points", "n_values", "impl", "time_ms", "kernel_ms", "triangles",
               "agrees"]
    if rows:
        print(format_table(rows, columns))
        write_results("contour", rows, folder=output_dir(args), gpu=gpu, copy_gbps=copy)
    if args.qcriterion_points:
        # Its own file: a pipeline on another grid, against other peers, run apart
        # from the wavelet sizes where a device call cannot hold both.
        q_rows = _qcriterion_rows(int(args.qcriterion_points), args, gpu, failures)
        print(format_table(q_rows, columns))
        write_results("contour_qcriterion", q_rows, folder=output_dir(args), gpu=gpu,
                      copy_gbps=copy)
    return exit_status(failures)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
