"""Reliability on the GPU (skipped without one): element counts above 2**31,
out-of-memory, and a deterministic sweep of every stencil and unstructured
worklet over edge-case grids that benchmarks/device.sh --sanitize runs under
compute-sanitizer (memcheck, racecheck).

No VTK here: the GPU machine has none.
"""

import numpy as np
import pytest

import daxpy
from daxpy.data.celltypes import HEX_TO_TETS, HEXAHEDRON, TETRA, VERTEX
from daxpy.engine.dispatch import execute
from daxpy.errors import DeviceMemoryError
from daxpy.filters import PassThrough

from strategies import mixed_grid_all_shapes
from test_cuda_backend import poison_outputs

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")

INT32_LIMIT = 2**31


def _free_all():
    cupy.get_default_memory_pool().free_all_blocks()


@pytest.fixture
def poisoned_outputs(monkeypatch):
    """Kernel outputs start as NaN (integer max), so an element no kernel wrote shows."""
    poison_outputs(monkeypatch)


# -- more than 2**31 elements --------------------------------------------------

def test_pass_through_of_more_than_2_31_elements():
    n = INT32_LIMIT + (1 << 20) + 3  # vectors, then a tail of 3
    values = cupy.ElementwiseKernel("", "float32 y", "y = (float)(i % 1000003)",
                                    "daxpy_fill_mod")(size=n)
    grid = daxpy.UniformGrid(dims=(n,))
    out = execute("pass_through", grid, values, "points", backend="cuda", dtype="float64")
    del values
    assert out.shape == (n,) and out.dtype == np.float64
    # Every element is checked against its own index, the ones past 2**31 included.
    bad = cupy.ElementwiseKernel("float64 x", "bool bad", "bad = x != (double)(i % 1000003)",
                                 "daxpy_check_mod")(out)
    wrong = int(cupy.count_nonzero(bad))
    assert wrong == 0, f"{wrong} of {n} elements wrong"
    del out, bad
    _free_all()


@pytest.mark.parametrize("dims", [(1292, 1292, 1292), (46342, 46343, 1)],
                         ids=["3d-marching", "2d-per-cell"])
def test_point_to_cell_of_more_than_2_31_cells(dims):
    grid = daxpy.UniformGrid(dims=dims)
    assert grid.n_cells > INT32_LIMIT
    nx, ny, _ = dims
    values = cupy.ElementwiseKernel("int64 nx, int64 ny", "float32 y",
                                    "y = (float)(i % nx + (i / nx) % ny + i / (nx * ny))",
                                    "daxpy_fill_linear")(nx, ny, size=grid.n_points)
    out = execute("point_to_cell", grid, values, "points", backend="cuda")
    del values
    assert out.shape == (grid.n_cells,)
    cx, cy, _ = grid.cell_dims
    half = np.float32(0.5 * sum(d > 1 for d in dims))
    bad = cupy.ElementwiseKernel(
        "float32 x, int64 cx, int64 cy, float32 half", "bool bad",
        "bad = x != (float)(i % cx + (i / cx) % cy + i / (cx * cy)) + half",
        "daxpy_check_centres")(out, cx, cy, half)
    wrong = int(cupy.count_nonzero(bad))
    assert wrong == 0, f"{wrong} of {grid.n_cells} cells wrong"
    del out, bad
    _free_all()


# -- out of memory -------------------------------------------------------------

def test_huge_request_is_a_device_memory_error_that_leaves_nothing():
    _free_all()
    pool = cupy.get_default_memory_pool()
    grid = daxpy.UniformGrid(dims=(2**14, 2**14, 2**12), name="huge grid")
    # A zero-stride view costs nothing; making it contiguous asks for 4 TiB.
    values = cupy.broadcast_to(cupy.ones((), cupy.float32), (grid.n_points,))
    # Measured once the test's own arrays exist; other tests' arrays may be
    # freed meanwhile, so "nothing stays allocated" reads: no more than before.
    used, (free, _) = pool.used_bytes(), cupy.cuda.runtime.memGetInfo()
    with pytest.raises(DeviceMemoryError) as info:
        PassThrough("v", backend="cuda")(grid.with_fields(point_data={"v": values}))
    message = str(info.value)
    assert f"{4 * 2**40:,}" in message and "bytes of" in message and "free" in message
    assert "huge grid" in message and "chunks='auto'" in message
    assert pool.used_bytes() <= used
    assert cupy.cuda.runtime.memGetInfo()[0] >= free - (64 << 20)


def test_out_of_memory_after_uploads_releases_them():
    _free_all()
    pool = cupy.get_default_memory_pool()
    free, _ = cupy.cuda.runtime.memGetInfo()
    # Leave 2.5 GiB: the 1 GiB upload fits, its 2 GiB float64 copy does not.
    ballast = cupy.empty(free - (5 << 29), dtype=cupy.uint8)
    used = pool.used_bytes()
    grid = daxpy.UniformGrid(dims=(1 << 14, 1 << 14), name="tight grid")
    host = np.ones(grid.n_points, np.float32)
    dataset = grid.with_fields(point_data={"v": host})
    cached = set(grid._cache)
    # The whole grid on the device (to="device": no streaming) does not fit.
    with pytest.raises(DeviceMemoryError, match="tight grid"):
        PassThrough("v", dtype="float64", backend="cuda")(dataset, to="device")
    assert set(grid._cache) == cached, "the failed call's upload stayed cached"
    assert pool.used_bytes() <= used
    # Host in, host out streams in chunks: the same call fits beside the ballast.
    out = PassThrough("v", dtype="float64", backend="cuda")(dataset).point_data["v_copy"]
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and bool((out == 1).all())
    del ballast, out
    _free_all()
    # The whole-grid call runs once memory is there.
    out = PassThrough("v", dtype="float64", backend="cuda")(dataset, to="device")
    out = out.point_data["v_copy"]
    assert out.dtype == np.float64 and bool((out == 1).all())
    del out
    _free_all()


# -- the sweep that runs under compute-sanitizer -------------------------------

def _lattice(dims, seed, jitter=0.04):
    rng = np.random.default_rng(seed)
    axes = [np.cumsum(rng.uniform(0.3, 1.5, n)) for n in dims]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    points = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    return points + rng.uniform(-jitter, jitter, points.shape), axes


def _hexes(dims):
    nx, ny, nz = dims
    k, j, i = np.meshgrid(np.arange(nz - 1), np.arange(ny - 1), np.arange(nx - 1),
                          indexing="ij")
    base = (i + nx * (j + ny * k)).ravel()
    return base[:, None] + np.array([0, 1, 1 + nx, nx, nx * ny, 1 + nx * ny,
                                     1 + nx + nx * ny, nx + nx * ny])


def _tets(dims):
    hexes = _hexes(dims)
    return np.concatenate([hexes[:, list(c)] for c in HEX_TO_TETS])


SWEEP_GRIDS = {
    "uniform1d_1": lambda: daxpy.UniformGrid(dims=(1,)),
    "uniform1d_7": lambda: daxpy.UniformGrid(dims=(7,), spacing=(0.3,)),
    "uniform2d_3x5": lambda: daxpy.UniformGrid(dims=(3, 5)),
    "uniform2d_1x4x6": lambda: daxpy.UniformGrid(dims=(1, 4, 6)),
    "uniform3d_5x7x9": lambda: daxpy.UniformGrid(dims=(5, 7, 9), spacing=(0.5, 1, 2)),
    "uniform3d_8x3x3": lambda: daxpy.UniformGrid(dims=(8, 3, 3)),
    "uniform3d_33x9x17": lambda: daxpy.UniformGrid(dims=(33, 9, 17)),
    "uniform3d_70x20x30": lambda: daxpy.UniformGrid(dims=(70, 20, 30)),
    "curvilinear3d_13x10x9": lambda: daxpy.CurvilinearGrid((13, 10, 9),
                                                           _lattice((13, 10, 9), 7)[0]),
    "rectilinear3d_6x5x4": lambda: daxpy.RectilinearGrid(*_lattice((6, 5, 4), 1)[1]),
    "rectilinear2d_9x2": lambda: daxpy.RectilinearGrid(*_lattice((9, 2, 1), 2)[1][:2]),
    "curvilinear3d_5x4x6": lambda: daxpy.CurvilinearGrid((5, 4, 6), _lattice((5, 4, 6), 3)[0]),
    "curvilinear2d_4x6": lambda: daxpy.CurvilinearGrid((4, 6), _lattice((4, 6, 1), 4)[0]),
    "unstructured_all_shapes": mixed_grid_all_shapes,
    "unstructured_hexes": lambda: daxpy.UnstructuredGrid.from_blocks(
        _lattice((4, 3, 5), 5)[0], {HEXAHEDRON: _hexes((4, 3, 5))}),
    "unstructured_tets": lambda: daxpy.UnstructuredGrid.from_blocks(
        _lattice((3, 4, 3), 6)[0], {TETRA: _tets((3, 4, 3))}),
    "unstructured_vertices": lambda: daxpy.UnstructuredGrid.from_blocks(
        np.eye(3), {VERTEX: [[0], [2]]}),
    "unstructured_no_cells": lambda: daxpy.UnstructuredGrid(np.eye(3), [], [0], []),
    "unstructured_empty": lambda: daxpy.UnstructuredGrid(np.zeros((0, 3)), [], [0], []),
}
SWEEP_WORKLETS = {  # name -> (association, needs a gradient input)
    "point_to_cell": ("points", False), "cell_to_point": ("cells", False),
    "point_gradient": ("points", False), "cell_gradient": ("points", False),
    "divergence": ("points", True), "vorticity": ("cells", True),
    "qcriterion": ("points", True), "magnitude": ("cells", False),
}


def _device_values(host, misaligned):
    """The values on the device, 16-byte aligned or offset by one element."""
    if not misaligned:
        return cupy.asarray(host)
    flat = cupy.empty(host.size + 1, host.dtype)
    view = flat[1:].reshape(host.shape)
    view[...] = cupy.asarray(host)
    return view


@pytest.mark.usefixtures("poisoned_outputs")
@pytest.mark.parametrize("grid_name", sorted(SWEEP_GRIDS))
@pytest.mark.parametrize("name", sorted(SWEEP_WORKLETS))
def test_sanitizer_sweep(name, grid_name):
    grid = SWEEP_GRIDS[grid_name]()
    association, gradient_input = SWEEP_WORKLETS[name]
    n = grid.n_points if association == "points" else grid.n_cells
    rng = np.random.default_rng(len(grid_name) + len(name))
    for dtype in (np.float32, np.float64):
        for shape in ([(n, 9)] if gradient_input else [(n,), (n, 3)]):
            host = rng.uniform(-5, 5, shape).astype(dtype)
            expected = execute(name, grid, host, association, backend="cpu")
            for misaligned in (False, True):
                got = cupy.asnumpy(execute(name, grid, _device_values(host, misaligned),
                                           association, backend="cuda"))
                assert got.shape == expected.shape and not np.isnan(got).any(), \
                    f"{name} on {grid_name}: unwritten output"
                tolerance = 2e-4 if dtype == np.float32 else 1e-9
                scale = max(float(np.abs(expected).max(initial=0.0)), 1.0)
                np.testing.assert_allclose(got, expected, rtol=tolerance,
                                           atol=tolerance * scale,
                                           err_msg=f"{name} {grid_name} {shape} {dtype}")
