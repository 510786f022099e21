"""Geometry benchmark: threshold, clip and slice against VTK, on the wavelet and on hexahedra.

Rows (``case=threshold|clip_scalar|clip_plane|slice_plane``), on the wavelet
(``vtkRTAnalyticSource``'s field, float32) at each ``--sizes`` and on about
``--hex-points`` points of jittered hexahedra carrying the same analytic field:

- ``daxpy``: the CUDA backend. ``time_ms`` is host to host (a NumPy field in, a host
  dataset out); ``kernel_ms`` is device time with the field and the result on the
  device, by CUDA events around the call (its host syncs for output sizes included).
  ``out_bytes`` is what the result holds (points, topology, fields) and
  ``write_floor_ms`` the time to write those bytes at the D2D copy rate of the same run;
- ``daxpy-cpu``: the CPU backend on every host core;
- ``vtk-seq`` and ``vtk-stdthread``: vtkThreshold, vtkTableBasedClipDataSet (by the
  scalar, or by a vtkPlane) and vtkCutter (a vtkPlane) under VTK's Sequential and
  STDThread SMP backends.

Threshold keeps the upper half of the scalar's range (all points in range, VTK's
default); clips keep the upper side of the scalar's middle value or of an oblique plane
through the grid's centre; the slice cuts that plane. Every result is checked before it
is timed: the same number of cells and points as the first implementation, and, where
VTK is installed, the same total volume (area for slices) to ``--rtol``. VTK rows are
skipped (an ``absent`` row) above ``--vtk-up-to`` points, daxpy-cpu rows above ``--cpu-up-to``.

Run: ``daxpy bench geometry`` (``--quick`` for a small check; ``--sizes 256,512``).

Examples
--------
>>> parse_args(["--quick"]).sizes
[16]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from daxpy.cli.demo import wavelet

from .common import (AgreementError, SuiteParser, add_output_options, gpu_name, make_row,
                     output_dir, write_results)
from .datasets import cube_dims, hex_grid
from .printout import exit_status, format_table
from .timing import time_cpu
from . import contour_peers
from . import geometry_peers as peers

FIELD = "RTData"


def parse_args(argv=None) -> argparse.Namespace:
    """Command-line options.

    Examples
    --------
    >>> args = parse_args(["--sizes", "64", "--cases", "threshold"])
    >>> args.sizes, args.cases
    ([64], ['threshold'])
    """
    p = SuiteParser(prog="daxpy bench geometry", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="256,512", help="wavelet points per axis")
    p.add_argument("--hex-points", type=float, default=1e7,
                   help="points of the hexahedral grid (0: skip it)")
    p.add_argument("--cases", default=",".join(peers.CASES))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--vtk-up-to", type=float, default=2e7,
                   help="no VTK rows on grids with more points (they take minutes)")
    p.add_argument("--cpu-up-to", type=float, default=float("inf"),
                   help="no daxpy-cpu rows on grids with more points")
    p.add_argument("--rtol", type=float, default=1e-5, help="total size agreement")
    p.add_argument("--quick", action="store_true", help="a 16^3 wavelet and 4096 hex points")
    add_output_options(p)
    args = p.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    args.cases = [c for c in args.cases.split(",") if c]
    unknown = sorted(set(args.cases) - set(peers.CASES))
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}; cases: {', '.join(peers.CASES)}")
    if args.quick:
        args.sizes, args.hex_points, args.repeat = [16], 4096, 1
    return args


def analytic_field(points: np.ndarray) -> np.ndarray:
    """The wavelet's formula at arbitrary points scaled into [-10, 10]³ (float32), so
    that the hexahedra carry a field like the wavelet's.

    Examples
    --------
    >>> analytic_field(np.zeros((1, 3))).dtype
    dtype('float32')
    """
    p = np.asarray(points, np.float64)
    lo, hi = p.min(axis=0), p.max(axis=0)
    x, y, z = ((20 * (p - lo) / np.where(hi > lo, hi - lo, 1) - 10) / -20).T
    values = 255 * np.exp(-(x * x + y * y + z * z) / (2 * 0.5 ** 2))
    values += 10 * np.sin(60 * x) + 18 * np.sin(30 * y) + 5 * np.cos(40 * z)
    return values.astype(np.float32)


def _check(impl: str, got: peers.Summary, reference: peers.Summary, rtol: float,
           what: str) -> None:
    if (got.cells, got.points) != (reference.cells, reference.points):
        raise AgreementError(f"{impl} on {what}: {got.cells} cells and {got.points} points, "
                             f"the reference {reference.cells} and {reference.points}")
    if got.size is not None and reference.size is not None:
        if abs(got.size - reference.size) > rtol * max(abs(reference.size), 1e-30):
            raise AgreementError(f"{impl} on {what}: total size {got.size!r}, the "
                                 f"reference {reference.size!r} (rtol {rtol:g})")


def _implementations(grid, spec, vtk_data, gpu: bool, cpu: bool) -> list[tuple[str, object]]:
    impls = []
    if vtk_data is not None:
        impls += [("vtk-seq", peers.vtk_runner(vtk_data, spec, FIELD, "Sequential")),
                  ("vtk-stdthread", peers.vtk_runner(vtk_data, spec, FIELD, "STDThread"))]
    if cpu:
        impls.append(("daxpy-cpu", peers.daxpy_runner(grid, spec, FIELD, "cpu")))
    if gpu:
        impls.append(("daxpy", peers.daxpy_runner(grid, spec, FIELD, "cuda")))
    return impls


def _case_rows(grid, label: str, case: str, vtk_data, args, gpu: bool, copy,
               failures: list) -> list[dict]:
    values = np.asarray(grid.point_data[FIELD])
    low, high = float(values.min()), float(values.max())
    centre = grid.points().mean(axis=0) if label != "uniform3d" else \
        np.asarray(grid.origin) + (np.asarray(grid.dims) - 1) * np.asarray(grid.spacing) / 2
    spec = peers.case_spec(case, centre, (low + high) / 2, high)
    what = f"{case} on {label} ({grid.n_points:,} points)"
    rows, reference = [], None
    skipped = []
    if vtk_data is None and peers_have_vtk() and grid.n_points > args.vtk_up_to:
        skipped += [(impl, f"--vtk-up-to {args.vtk_up_to:g}") for impl in ("vtk-seq",
                                                                           "vtk-stdthread")]
    cpu = grid.n_points <= args.cpu_up_to
    if not cpu:
        skipped.append(("daxpy-cpu", f"--cpu-up-to {args.cpu_up_to:g}"))
    rows += [{"case": case, "grid": label, "dtype": "float32", "n_points": grid.n_points,
              "impl": impl, "time_ms": None, "agrees": None,
              "absent": f"skipped: {why} points"} for impl, why in skipped]
    impls = _implementations(grid, spec, vtk_data, gpu, cpu)
    for impl, run in impls:
        # The total size needs VTK, and is only worth its time when there is a second
        # implementation to compare with.
        got = peers.summary(run(), with_size=peers_have_vtk() and len(impls) > 1)
        reference = reference or got
        try:
            _check(impl, got, reference, args.rtol, what)
        except AgreementError as err:
            failures.append(str(err))
            rows.append(make_row(case, label, "float32", grid.n_points, impl, None,
                                 agrees=False, error=str(err)))
            continue
        ms, _ = time_cpu(run, repeat=args.repeat)
        extra = {"cells": got.cells, "points": got.points}
        kernel_ms = None
        if impl == "daxpy":
            kernel_ms, output = peers.device_ms(grid, spec, FIELD, args.repeat)
            nbytes = peers.output_bytes(output)
            extra.update(out_bytes=nbytes, write_floor_ms=round(nbytes / (copy * 1e6), 4))
        rows.append(make_row(case, label, "float32", grid.n_points, impl, ms,
                             kernel_ms=kernel_ms, **extra))
        print(f"    {impl:16s} {ms:10.2f} ms" + (f"  (device {kernel_ms:.3f} ms)"
                                                  if kernel_ms is not None else ""), flush=True)
    return rows


def peers_have_vtk() -> bool:
    """Whether VTK is installed (its rows and the size check need it)."""
    return contour_peers.have("vtk")


def _grids(args):
    for size in args.sizes:
        yield "uniform3d", wavelet(size)
    if args.hex_points:
        grid = hex_grid(cube_dims(int(args.hex_points)))
        yield "unstructured_hex", grid.with_fields(
            point_data={FIELD: analytic_field(grid.points())})


def main(argv=None) -> int:
    args = parse_args(argv)
    gpu = gpu_name() is not None
    rows: list[dict] = []
    failures: list[str] = []
    copy = None
    if gpu:
        from .timing import copy_bandwidth_gbps

        copy = copy_bandwidth_gbps()
    for label, grid in _grids(args):
        print(f"{label}, {grid.n_points:,} points", flush=True)
        vtk_data = None
        if peers_have_vtk() and grid.n_points <= args.vtk_up_to:
            vtk_data = grid.to_vtk()
        for case in args.cases:
            print(f"  {case}", flush=True)
            rows += _case_rows(grid, label, case, vtk_data, args, gpu, copy, failures)
    print(format_table(rows, ["case", "grid", "n_points", "impl", "time_ms", "kernel_ms",
                              "write_floor_ms", "cells", "agrees"]))
    write_results("geometry", rows, folder=output_dir(args), gpu=gpu, copy_gbps=copy,
                  goals=goals(rows))
    return exit_status(failures)


def goals(rows: list[dict]) -> list[dict]:
    """The issue's goals on the largest wavelet: for threshold and clip, GPU host to
    host over VTK STDThread (at least 50×) and CPU over VTK STDThread (at least 10×);
    for every case, device time over the write floor (at most 2×).

    Examples
    --------
    >>> goals([])
    []
    """
    times = {(r["case"], r["grid"], r["n_points"], r["impl"]): r for r in rows
             if r.get("time_ms")}
    wavelets = [r["n_points"] for r in rows if r["grid"] == "uniform3d"
                and (r["case"], r["grid"], r["n_points"], "vtk-stdthread") in times]
    found = []
    for case in peers.CASES:
        for n in sorted(set(wavelets)):
            vtk = times.get((case, "uniform3d", n, "vtk-stdthread"))
            # The issue sets the speed-ups over VTK for threshold and clip only.
            targets = (("daxpy", 50.0), ("daxpy-cpu", 10.0)) if case != "slice_plane" else ()
            for impl, target in targets:
                ours = times.get((case, "uniform3d", n, impl))
                if vtk and ours:
                    value = vtk["time_ms"] / ours["time_ms"]
                    found.append({"goal": f"{case} {n:,} pts: VTK STDThread / {impl}",
                                  "value": round(value, 2), "target": f">= {target:g}",
                                  "met": value >= target})
            gpu = times.get((case, "uniform3d", n, "daxpy"))
            if gpu and gpu.get("kernel_ms") and gpu.get("write_floor_ms"):
                value = gpu["kernel_ms"] / gpu["write_floor_ms"]
                found.append({"goal": f"{case} {n:,} pts: device time / write floor",
                              "value": round(value, 2), "target": "<= 2", "met": value <= 2})
    return found


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
