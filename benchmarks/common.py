"""What every benchmark shares: device names, versions, agreement, results.

Each benchmark writes ``<benchmark>-<device-slug>.json`` in the format of
``DESIGN.md`` ("Results format") and prints a table. The folder is the user's
(``$DAXPY_BENCH_DIR``, else ``./daxpy-bench-results``) unless the run is given
``--save`` (the checkout's ``benchmarks/results/``, which the suites' docstrings
name) or ``--out`` (:func:`output_dir`). Results are
checked with :func:`agree` before any time is printed; timing is in
:mod:`timing`, what a suite prints in :mod:`printout`.

Examples
--------
>>> row = make_row("bias_add", "uniform3d", "float32", 1000, "numpy", 2.0,
...                min_bytes=8000)
>>> row["gbps"]
0.004
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
from pathlib import Path
from typing import Any

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parent / "results"
"""The checkout's committed results: written only by a run given ``--save``."""

USER_DIR = "daxpy-bench-results"
"""Where a run without ``--save`` or ``--out`` writes (``$DAXPY_BENCH_DIR`` overrides)."""


class AgreementError(AssertionError):
    """Two implementations gave different results; the message names the culprit."""


# -- device and versions ------------------------------------------------------
def gpu_name() -> str | None:
    """Name of CUDA device 0 as CuPy reports it, or None without CuPy or a GPU.

    Examples
    --------
    >>> gpu_name() is None or isinstance(gpu_name(), str)
    True
    """
    try:
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(0)
    except Exception:  # no CuPy, no driver or no device all mean "no GPU"
        return None
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def cpu_name() -> str:
    """The host processor's model name (``/proc/cpuinfo``), or the platform's guess.

    Examples
    --------
    >>> len(cpu_name()) > 0
    True
    """
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_slug(gpu: bool) -> str:
    """Short machine-kind name used in result file names.

    ``nvidia-h200`` / ``nvidia-h100`` for GPU benchmarks (vendor and model, the
    memory size and form factor dropped), ``cpu-<n>core`` for CPU benchmarks.

    Parameters
    ----------
    gpu : bool
        True when the benchmark measures the GPU.

    Examples
    --------
    >>> device_slug(gpu=False) == f"cpu-{os.cpu_count()}core"
    True
    """
    if not gpu:
        return f"cpu-{os.cpu_count()}core"
    name = gpu_name()
    if name is None:
        raise RuntimeError("a GPU benchmark needs CuPy and a visible CUDA device")
    words = name.lower().replace("_", " ").split()
    return "-".join(words[:2])


def versions() -> dict[str, str | None]:
    """Versions of daxpy, CuPy, the CUDA runtime, VTK and NumPy (None if absent).

    Examples
    --------
    >>> sorted(versions())
    ['cuda', 'cupy', 'daxpy', 'numpy', 'vtk']
    """
    found: dict[str, str | None] = {"daxpy": None, "cupy": None, "cuda": None,
                                    "vtk": None, "numpy": np.__version__}
    try:
        import daxpy

        found["daxpy"] = daxpy.__version__
    except ImportError:
        pass
    try:
        import cupy

        found["cupy"] = cupy.__version__
        runtime = cupy.cuda.runtime.runtimeGetVersion()
        found["cuda"] = f"{runtime // 1000}.{runtime % 1000 // 10}"
    except Exception:  # CuPy absent or without a usable runtime
        pass
    try:
        from vtkmodules.vtkCommonCore import vtkVersion

        found["vtk"] = vtkVersion.GetVTKVersion()
    except ImportError:
        pass
    return found


# -- rows, tables, files ------------------------------------------------------
def make_row(case: str, grid: str, dtype: str, n_points: int, impl: str,
             time_ms: float | None, *, kernel_ms: float | None = None,
             min_bytes: int | None = None, copy_gbps: float | None = None,
             agrees: bool = True, **extra) -> dict[str, Any]:
    """One result row with the derived rate and ratio filled in.

    ``gbps`` is ``min_bytes`` over ``kernel_ms`` when given, else over ``time_ms``;
    ``ratio_to_copy`` divides it by the D2D copy rate of the same run. A row
    whose result disagreed has ``time_ms`` None (it is never timed).

    Examples
    --------
    >>> r = make_row("pass_through", "uniform3d", "float32", 10, "daxpy", 1.0,
    ...              kernel_ms=0.5, min_bytes=1_000_000, copy_gbps=4.0)
    >>> (r["gbps"], r["ratio_to_copy"])
    (2.0, 0.5)
    """
    row: dict[str, Any] = {"case": case, "grid": grid, "dtype": dtype,
                           "n_points": int(n_points), "impl": impl,
                           "time_ms": None if time_ms is None else round(float(time_ms), 4)}
    if kernel_ms is not None:
        row["kernel_ms"] = round(float(kernel_ms), 4)
    if min_bytes is not None:
        row["min_bytes"] = int(min_bytes)
        seconds = (kernel_ms if kernel_ms is not None else time_ms) / 1e3
        row["gbps"] = round(min_bytes / seconds / 1e9, 3)
        if copy_gbps:
            row["ratio_to_copy"] = round(row["gbps"] / copy_gbps, 3)
    row["agrees"] = bool(agrees)
    row.update(extra)
    return row


# -- options and where results go ---------------------------------------------
class SuiteParser(argparse.ArgumentParser):
    """A suite's argparse: a bad option is daxpy's ``ArgumentError``.

    ``daxpy bench`` reports it on one line with exit status 2, as every other
    usage error of the ``daxpy`` command.

    Examples
    --------
    >>> SuiteParser(prog="daxpy bench demo").parse_args(["--nope"])
    Traceback (most recent call last):
    ...
    daxpy.errors.ArgumentError: daxpy bench demo: unrecognized arguments: --nope
    """

    def error(self, message: str):
        from daxpy.errors import ArgumentError

        raise ArgumentError(f"{self.prog}: {message}")


def add_output_options(parser) -> None:
    """Add every suite's ``--save`` and ``--out`` options to ``parser``.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_output_options(parser)
    >>> parser.parse_args(["--save"]).save
    True
    """
    parser.add_argument("--save", action="store_true",
                        help="write into the checkout's benchmarks/results/ (default: "
                        f"$DAXPY_BENCH_DIR, else ./{USER_DIR})")
    parser.add_argument("--out", default=None, help="results folder (overrides --save)")


def output_dir(args) -> Path:
    """The folder a run writes to: ``--out``, else ``results/`` with ``--save``, else the user's.

    A run without ``--save`` never writes into the checkout, so it never goes
    dirty by accident.

    Examples
    --------
    >>> import argparse
    >>> output_dir(argparse.Namespace(out=None, save=True)) == RESULTS_DIR
    True
    >>> str(output_dir(argparse.Namespace(out="/tmp/r", save=True)))
    '/tmp/r'
    """
    if args.out:
        return Path(args.out)
    if args.save:
        return RESULTS_DIR
    return Path(os.environ.get("DAXPY_BENCH_DIR") or USER_DIR)


def write_results(benchmark: str, rows: list[dict], *, folder: Path, gpu: bool,
                  copy_gbps: float | None = None, **extra) -> Path:
    """Write ``<folder>/<benchmark>-<slug>.json`` (replacing it); copy it to $OUT.

    Parameters
    ----------
    benchmark : str
        Benchmark name (``kernels``, ``cpu_vs_vtk``...).
    folder : pathlib.Path
        Results folder (:func:`output_dir`).
    rows : list of dict
        Rows from :func:`make_row`.
    gpu : bool
        Whether the figures are GPU figures (picks the device name and slug).
    copy_gbps : float, optional
        D2D copy rate measured in the same run.
    **extra
        More top-level keys (added, never renaming the standard ones).

    Returns
    -------
    pathlib.Path
    """
    document: dict[str, Any] = {
        "benchmark": benchmark,
        "date": datetime.date.today().isoformat(),
        "device": gpu_name() if gpu else cpu_name(),
        "host_cores": os.cpu_count(),
        "versions": versions(),
    }
    if copy_gbps is not None:
        document["copy_gbps"] = round(float(copy_gbps), 1)
    document.update(extra)
    document["rows"] = rows
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{benchmark}-{device_slug(gpu)}.json"
    path.write_text(json.dumps(document, indent=1) + "\n")
    out = os.environ.get("OUT")
    if out and Path(out).resolve() != folder.resolve():
        shutil.copy(path, Path(out) / path.name)
    print(f"wrote {path}")
    return path


# -- agreement ---------------------------------------------------------------
def max_error(result: Any, reference: Any) -> tuple[float, float]:
    """Largest absolute difference and largest reference magnitude (NaN counts as inf).

    Works on NumPy and CuPy arrays without moving device data to the host.

    Examples
    --------
    >>> max_error(np.array([1.0, 2.0]), np.array([1.0, 2.5]))
    (0.5, 2.5)
    """
    xp = _array_module(result, reference)
    a = xp.asarray(result, dtype=xp.float64)
    b = xp.asarray(reference, dtype=xp.float64)
    diff = xp.abs(a - b)
    if bool(xp.isnan(diff).any()):
        return float("inf"), float(xp.nanmax(xp.abs(b))) if b.size else 0.0
    return (float(diff.max()) if diff.size else 0.0,
            float(xp.abs(b).max()) if b.size else 0.0)


def agree(impl: str, result: Any, reference: Any, *, rtol: float = 1e-5,
          atol: float = 0.0, what: str = "") -> float:
    """Raise :class:`AgreementError` naming ``impl`` unless ``result`` matches.

    The check is ``max|result - reference| <= atol + rtol * max|reference|``:
    a tolerance relative to the field's scale, since gradients of random data
    hold values near zero whose relative error means nothing. Shapes must match
    exactly; NaN never passes.

    Parameters
    ----------
    impl : str
        Name of the implementation being checked (in the message).
    result, reference : array
        NumPy or CuPy arrays of equal shape.
    rtol, atol : float
        Tolerances, relative to the largest reference magnitude and absolute.
    what : str
        Case description for the message.

    Returns
    -------
    float
        The largest absolute difference.

    Examples
    --------
    >>> agree("numpy", np.ones(3), np.ones(3))
    0.0
    >>> agree("bad", np.zeros(2), np.ones(2), what="demo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    benchmarks.common.AgreementError: bad disagrees with the reference on demo: ...
    """
    shape_a, shape_b = tuple(result.shape), tuple(reference.shape)
    if shape_a != shape_b:
        raise AgreementError(
            f"{impl} disagrees with the reference on {what}: shape {shape_a}, "
            f"expected {shape_b}"
        )
    err, scale = max_error(result, reference)
    if not err <= atol + rtol * scale:
        raise AgreementError(
            f"{impl} disagrees with the reference on {what}: max |diff| {err:.3g} "
            f"> atol {atol:.3g} + rtol {rtol:.3g} * max |ref| {scale:.3g}"
        )
    return err


def _array_module(*arrays: Any):
    if all(isinstance(a, np.ndarray) for a in arrays):
        return np
    import cupy

    return cupy


def rng(seed: int = 0) -> np.random.Generator:
    """The benchmarks' random generator (fixed seed: reruns see the same data).

    Examples
    --------
    >>> int(rng(1).integers(10)) == int(rng(1).integers(10))
    True
    """
    return np.random.default_rng(seed)


def workers_import_benchmarks(client) -> None:
    """Let ``client``'s Dask workers import this checkout's ``benchmarks`` (they
    unpickle a suite's functions by name): Dask's ``UploadDirectory`` copies the
    package (its code, not its results) to each nanny, puts it on the import path
    and restarts the workers; the installed daxpy stays the one they import.

    Examples
    --------
    >>> callable(workers_import_benchmarks)
    True
    """
    from distributed.diagnostics.plugin import UploadDirectory

    skip = ("results", "__pycache__", ".pytest_cache")
    client.register_plugin(UploadDirectory(str(Path(__file__).resolve().parent),
                                           restart_workers=True, update_path=True,
                                           skip_words=skip))
