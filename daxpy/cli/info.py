"""``daxpy info``: what this installation has: versions, backends, GPU, kernel cache.

Nothing here fails for lack of an optional package or a GPU: what is missing is
reported as missing, with the command that installs it.

Examples
--------
>>> lines = info_lines()
>>> lines[0].startswith("daxpy ")
True
>>> any(line.startswith("backends: cpu") for line in lines)
True
"""

from __future__ import annotations

import argparse
import platform
from importlib import metadata
from pathlib import Path

from .. import __version__
from ..cuda.compile import cache_dir
from ..data.extras import DISTRIBUTION, install_command
from ..engine.backend import cuda_available

__all__ = ["add_info_parser", "info_lines"]

# Distribution -> daxpy's extra that installs it (None: a core dependency).
_PACKAGES = {"numpy": None, "tqdm": None, "numba": None, "vtk": "vtk", "pyvista": "vtk",
             "cupy-cuda12x": "cuda", "cupy-cuda13x": "cuda13", "dask": "dask",
             "distributed": "dask"}


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _versions() -> list[str]:
    lines = []
    for name, extra in _PACKAGES.items():
        found = _version(name)
        if found is None and name.startswith("cupy") and _version("cupy"):
            continue  # a CuPy built from source is listed once, as cupy
        hint = f"not installed ({install_command(extra)})" if extra else "not installed"
        lines.append(f"  {name}: {found or hint}")
    if _version("cupy"):
        lines.append(f"  cupy: {_version('cupy')}")
    return lines


def _gpu() -> list[str]:
    """The visible GPUs and CUDA versions; only called where CuPy sees a device."""
    import cupy

    runtime = cupy.cuda.runtime
    lines = [f"CUDA: runtime {_cuda_version(runtime.runtimeGetVersion())}, driver "
             f"{_cuda_version(runtime.driverGetVersion())}"]
    for index in range(runtime.getDeviceCount()):
        props = runtime.getDeviceProperties(index)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        lines.append(f"GPU {index}: {name}, compute capability {props['major']}."
                     f"{props['minor']}, {props['totalGlobalMem'] / 2**30:.1f} GiB")
    return lines


def _cuda_version(number: int) -> str:
    """CUDA's encoded version (12040) as text ("12.4").

    Examples
    --------
    >>> _cuda_version(12040)
    '12.4'
    """
    return f"{number // 1000}.{number % 1000 // 10}"


def _cache() -> str:
    folder = cache_dir()
    files = [p for p in folder.glob("*") if p.is_file()] if folder.is_dir() else []
    size = sum(p.stat().st_size for p in files)
    where = folder if folder.is_dir() else f"{folder} (not created yet)"
    return f"kernel cache: {where}, {len(files)} file(s), {size / 2**20:.1f} MiB"


def info_lines() -> list[str]:
    """What ``daxpy info`` prints, one line each.

    Examples
    --------
    >>> any(line.startswith("kernel cache: ") for line in info_lines())
    True
    """
    gpu = cuda_available()
    cupy_hint = ("CuPy sees no GPU" if _version("cupy") or _version("cupy-cuda12x")
                 or _version("cupy-cuda13x") else f"no CuPy: {install_command('cuda')}")
    lines = [f"daxpy {__version__} (distribution {DISTRIBUTION}) at {Path(__file__).parents[1]}",
             f"Python {platform.python_version()} on {platform.platform()}",
             "packages:", *_versions(),
             "backends: cpu" + (", cuda" if gpu else f" (cuda unavailable: {cupy_hint})")]
    if gpu:
        lines += _gpu()
    lines.append(_cache())
    return lines


def _run_info(args: argparse.Namespace) -> int:
    print("\n".join(info_lines()))
    return 0


def add_info_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``daxpy info`` (it takes no argument).

    Examples
    --------
    >>> from daxpy.cli.commands import build_parser
    >>> build_parser().parse_args(["info"]).command
    'info'
    """
    parser = subparsers.add_parser(
        "info", help="versions, backends, GPU, CUDA and the kernel cache",
        description="Print daxpy's version, the versions of its dependencies (and how to "
        "install the missing ones), the backends usable here, the GPUs and CUDA versions, "
        "and the kernel cache's folder and size.")
    parser.set_defaults(run=_run_info)
    return parser
