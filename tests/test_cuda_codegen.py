"""Every specialization of every worklet's CUDA kernels compiles (no GPU needed).

Sources are generated for every grid type the CUDA backend knows, float32 and
float64, one and three components, 32- and 64-bit indexing; each worklet's
kernels are compiled to PTX for sm_80 and sm_90 with nvcc (or NVRTC through
CuPy). Skipped only where neither compiler exists. Also checks that no
generated kernel switches at run time on topology, shape or dtype.
"""

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import daxpy

from daxpy.cli.source import GRID_NAMES, example_grid
from daxpy.cuda.codegen import BASE_HEADERS, read_header
from daxpy.cuda.plan import make_plan
from daxpy.data.worklet import FIELD_KIND, registered_worklets

ARCHS = ("sm_80", "sm_90")
PARAMS = {"pass_through": [{}, {"dtype": "float64"}, {"dtype": "int32"}],
          "bias_add": [{"bias": [0.5]}],
          "field_map": [{"expression": "where(u > 0, sqrt(u), -u) ** 2 % 3 + hypot(u, 2)"},
                        {"expression": "minimum(u, v) * clip(v, -1, 1) + (u > v and not v)",
                         "fields": {"v": np.ones((14, 3))}}]}
TAILS = {name: [(9,)] for name in ("divergence", "vorticity", "qcriterion")}


# 3-D grids whose rows hold whole 16-byte vectors: the marching kernels' wide
# loads and stores (example grids have 3 points a side: one item per thread).
WIDE_GRIDS = [daxpy.UniformGrid(dims=(8, 3, 3)), daxpy.UniformGrid(dims=(5, 3, 3)),
              daxpy.RectilinearGrid(np.arange(8.0), np.arange(3.0), np.arange(3.0)),
              daxpy.CurvilinearGrid((8, 3, 3), np.random.default_rng(0).random((72, 3)))]


def _params(name):
    worklet = registered_worklets()[name]
    return PARAMS.get(name, [{}]), worklet


def specializations(name):
    """name -> KernelSource for every specialization of one worklet."""
    kernels = {}
    param_sets, worklet = _params(name)
    association = "cells" if worklet.input_association == "cells" else "points"
    for grid in [example_grid(g) for g in GRID_NAMES] + WIDE_GRIDS:
        for dtype in ("float32", "float64"):
            for tail in TAILS.get(name, [(), (3,)]):
                for index in ("int", "long long"):
                    for params in param_sets:
                        if "fields" in params:  # other fields match the grid's points
                            params = {**params, "fields": {"v": np.ones((grid.n_points, 3))}}
                        plan = make_plan(worklet, grid, association, np.dtype(dtype), tail,
                                         params, index=index)
                        for launch in plan.launches:
                            for kernel, _, _ in launch.sequence():
                                kernels.setdefault(kernel.name, kernel)
    return kernels


# Topology-generating worklets run CuPy array programs, not generated kernels.
CUDA_WORKLETS = sorted(n for n, w in registered_worklets().items()
                       if w.cuda is not None and w.kind == FIELD_KIND)


def _compile_ptx(source: str, arch: str, workdir) -> str:
    if shutil.which("nvcc"):
        path = workdir / f"all_{arch}.cu"
        path.write_text(source)
        result = subprocess.run(["nvcc", "-ptx", f"-arch={arch}", "-std=c++17", str(path),
                                 "-o", str(path.with_suffix(".ptx"))],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-4000:]
        return path.with_suffix(".ptx").read_text()
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(source, "all.cu", [], [])
    try:
        nvrtc.compileProgram(prog, [f"--gpu-architecture=compute_{arch[3:]}", "-std=c++17"])
        return nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)


def compiled_entries(source: str, names, workdir) -> list[str]:
    """The PTX of ``source`` for each of ARCHS (compiled side by side), after checking
    that each of ``names`` is an entry of every one."""
    with ThreadPoolExecutor(len(ARCHS)) as pool:
        ptx = list(pool.map(lambda arch: _compile_ptx(source, arch, workdir), ARCHS))
    for text in ptx:
        for name in names:
            assert f".entry {name}(" in text, f"{name} missing from the PTX"
    return ptx


def specializations_ptx(specializations, workdir) -> list[str]:
    """:func:`compiled_entries` of ``(name, source)`` pairs: each source once (several
    names may share one), each name an entry."""
    source = "\n".join(dict.fromkeys(text for _, text in specializations))
    return compiled_entries(source, [name for name, _ in specializations], workdir)


def _have_compiler():
    if shutil.which("nvcc"):
        return True
    try:
        from cupy_backends.cuda.libs import nvrtc  # noqa: F401
        return True
    except ImportError:
        return False


@pytest.mark.skipif(not _have_compiler(), reason="needs nvcc or NVRTC (CuPy)")
@pytest.mark.parametrize("name", CUDA_WORKLETS)
def test_every_specialization_compiles_to_ptx(name, tmp_path):
    kernels = specializations(name)
    assert kernels, f"{name} has no kernels"
    headers = list(BASE_HEADERS) + sorted({h for k in kernels.values() for h in k.headers})
    source = "\n".join([read_header(h) for h in headers]
                       + [k.kernel() for k in kernels.values()])
    compiled_entries(source, kernels, tmp_path)


_RUNTIME_SWITCH = re.compile(
    r"\bif\s*\((?!\s*constexpr)[^;{]*\b(shape|cell_type|celltype|topology|family|dtype|type_id|"
    r"grid_type|kind)\b")


@pytest.mark.parametrize("name", CUDA_WORKLETS)
def test_no_runtime_switch_on_topology_shape_or_dtype(name):
    for kernel in specializations(name).values():
        source = kernel.source()
        assert not re.search(r"\bswitch\b", source), f"{kernel.name} has a switch"
        match = _RUNTIME_SWITCH.search(source)
        assert match is None, f"{kernel.name}: run-time branch {match.group(0)!r}"


def test_kernel_names_are_specialization_names():
    kernels = specializations("point_gradient")
    assert "point_gradient__uniform2d__f32__c1" in kernels
    assert "point_gradient__uniform3d__f32__c1__march4__w4" in kernels
    assert "point_gradient__curvilinear2d__f64__c3__i64" in kernels
    assert any(n.startswith("point_gradient__unstructured_hex") for n in kernels)
    for name, kernel in kernels.items():
        assert f"void __launch_bounds__(256) {name}(" in kernel.kernel()
