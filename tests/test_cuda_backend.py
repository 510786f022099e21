"""The CUDA backend against the NumPy backend, on the GPU (skipped without one).

Every worklet runs on random grids of every family (2-D and mixed
unstructured grids included) and random fields, float32 and float64; each
output is poisoned with NaN before the run, so an element no kernel wrote
fails the comparison.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.engine.dispatch import execute
from strategies import any_grids, field_arrays, mixed_grid_all_shapes, structured_grids

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")

# name -> (input association, params for a field of c components)
WORKLETS = {
    "pass_through": ("points", lambda c: {"dtype": "float64"}),
    "bias_add": ("points", lambda c: {"bias": np.linspace(-1, 1, c)}),
    "magnitude": ("points", lambda c: {}),
    "point_to_cell": ("points", lambda c: {}),
    "cell_to_point": ("cells", lambda c: {}),
    "point_gradient": ("points", lambda c: {}),
    "cell_gradient": ("points", lambda c: {}),
    "divergence": ("points", lambda c: {}),
    "vorticity": ("points", lambda c: {}),
    "qcriterion": ("points", lambda c: {}),
    "field_map": ("points", lambda c: {"expression": "where(t > 0, sqrt(t), t * 2) % 3 + 1"}),
}
GRADIENT_INPUT = ("divergence", "vorticity", "qcriterion")
TOPOLOGICAL = ["point_to_cell", "cell_to_point", "point_gradient", "cell_gradient"]


def poison_outputs(monkeypatch):
    """Kernel outputs start as NaN (integer max), so an element no kernel wrote shows."""
    import daxpy.cuda.dispatch as dispatch

    def poisoned(shape, dtype):
        dtype = np.dtype(dtype)
        fill = np.nan if dtype.kind == "f" else np.iinfo(dtype).max
        return cupy.full(shape, fill, dtype=dtype)

    monkeypatch.setattr(dispatch, "empty_output", poisoned)


@pytest.fixture(autouse=True)
def poisoned_outputs(monkeypatch):
    poison_outputs(monkeypatch)


def _field(grid, association, data, ncomp=None):
    n = grid.n_points if association == "points" else grid.n_cells
    return data.draw(field_arrays(n, ncomp))


def compare(name, grid, values, association, **params):
    expected = execute(name, grid, values, association, backend="cpu", **params)
    got = execute(name, grid, values, association, backend="cuda", **params)
    assert isinstance(got, cupy.ndarray)
    got = cupy.asnumpy(got)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert not np.isnan(got).any(), f"{name}: unwritten (NaN) output elements"
    single = np.float32 in (np.dtype(values.dtype).type, expected.dtype.type)
    rtol = 2e-4 if single else 1e-9
    scale = max(float(np.abs(expected).max(initial=0.0)), 1.0)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale, err_msg=name)


@pytest.mark.parametrize("name", sorted(WORKLETS))
@settings(max_examples=25, deadline=None)
@given(grid=any_grids(), data=st.data())
def test_cuda_matches_numpy(name, grid, data):
    association, params = WORKLETS[name]
    values = _field(grid, association, data, 9 if name in GRADIENT_INPUT else None)
    components = 1 if values.ndim == 1 else values.shape[1]
    compare(name, grid, values, association, **params(components))


@settings(max_examples=25, deadline=None)
@given(grid=any_grids(), data=st.data())
def test_field_map_over_several_fields(grid, data):
    n = grid.n_points
    a = data.draw(field_arrays(n, 1))
    b = data.draw(field_arrays(n, 3))
    c = data.draw(field_arrays(n, 1, np.float64))
    compare("field_map", grid, a, "points",
            expression="minimum(a, b) * clip(c, -1, 1) + hypot(a, c) - (a > b and not c)",
            fields={"b": cupy.asarray(b), "c": c})


@pytest.mark.parametrize("name", TOPOLOGICAL)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mixed_grid_all_shapes(name, dtype):
    grid = mixed_grid_all_shapes()
    association = WORKLETS[name][0]
    n = grid.n_points if association == "points" else grid.n_cells
    values = np.random.default_rng(3).uniform(-5, 5, (n, 3)).astype(dtype)
    compare(name, grid, values, association)


@pytest.mark.parametrize("name", TOPOLOGICAL)
@settings(max_examples=15, deadline=None)
@given(grid=structured_grids(min_dimension=2, max_dimension=2), data=st.data())
def test_two_dimensional_grids(name, grid, data):
    association = WORKLETS[name][0]
    compare(name, grid, _field(grid, association, data), association)


@pytest.mark.parametrize("name", ["point_gradient", "cell_to_point"])
def test_unstructured_point_results_are_bitwise_reproducible(name):
    grid = mixed_grid_all_shapes()
    association = WORKLETS[name][0]
    n = grid.n_points if association == "points" else grid.n_cells
    values = cupy.random.default_rng(1).standard_normal((n, 3), dtype=np.float32)
    first = execute(name, grid, values, association, backend="cuda")
    for _ in range(3):
        again = execute(name, grid, values, association, backend="cuda")
        assert bool((again == first).all())


def test_cupy_input_is_used_in_place():
    from daxpy.cuda.device import to_device

    grid = daxpy.UniformGrid(dims=(8, 8, 8))
    values = cupy.arange(grid.n_points, dtype=np.float32)
    assert to_device(values, grid) is values
    out = execute("point_to_cell", grid, values, "points", backend="cuda")
    assert isinstance(out, cupy.ndarray)


class _Interface:
    """A foreign device array: only ``__cuda_array_interface__``."""

    def __init__(self, array):
        self._array = array
        self.__cuda_array_interface__ = array.__cuda_array_interface__


def test_cuda_array_interface_input_is_zero_copy():
    from daxpy.cuda.device import to_device

    grid = daxpy.UniformGrid(dims=(5, 4))
    values = cupy.random.default_rng(0).random(grid.n_points)
    view = to_device(_Interface(values), grid)
    assert view.data.ptr == values.data.ptr
    compare("point_gradient", grid, cupy.asnumpy(values), "points")
    got = execute("point_gradient", grid, _Interface(values), "points", backend="cuda")
    expected = execute("point_gradient", grid, values, "points", backend="cuda")
    assert bool((got == expected).all())


def test_torch_input_through_dlpack_is_zero_copy():
    torch = pytest.importorskip("torch")
    from daxpy.cuda.device import to_device

    grid = daxpy.UniformGrid(dims=(6, 5, 4))
    values = torch.rand(grid.n_points, device="cuda", dtype=torch.float64)
    assert to_device(values, grid).data.ptr == values.data_ptr()
    out = execute("cell_gradient", grid, values, "points", backend="cuda")
    back = torch.from_dlpack(out)
    assert back.data_ptr() == out.data.ptr
    expected = execute("cell_gradient", grid, values.cpu().numpy(), "points", backend="cpu")
    np.testing.assert_allclose(back.cpu().numpy(), expected, rtol=1e-10, atol=1e-12)


def test_host_field_is_copied_once_per_dataset():
    from daxpy.cuda.device import to_device

    grid = daxpy.UniformGrid(dims=(4, 4))
    values = np.arange(16.0)
    first = to_device(values, grid)
    assert to_device(values, grid) is first
    derived = grid.with_fields(point_data={"v": values})
    assert to_device(values, derived) is first
    assert to_device(values.copy(), grid) is not first


def test_host_corner_ids_are_narrowed_once_device_ids_kept():
    from daxpy.cuda.device import narrow_ids

    grid = daxpy.UniformGrid(dims=(4, 4))
    corners = np.arange(12, dtype=np.int64).reshape(3, 4)
    first = narrow_ids(corners, grid)
    assert first.dtype == np.int32 and (first.get() == corners).all()
    assert narrow_ids(corners, grid) is first
    on_device = cupy.asarray(corners)
    assert narrow_ids(on_device, grid) is on_device


def test_backend_selection(monkeypatch):
    grid = daxpy.UniformGrid(dims=(3, 3))
    values = np.arange(9.0)
    monkeypatch.setenv("DAXPY_BACKEND", "cpu")
    assert isinstance(execute("magnitude", grid, values, "points"), np.ndarray)
    monkeypatch.setenv("DAXPY_BACKEND", "cuda")
    assert isinstance(execute("magnitude", grid, values, "points"), cupy.ndarray)
    monkeypatch.delenv("DAXPY_BACKEND")
    assert isinstance(execute("magnitude", grid, values, "points", backend="auto"),
                      cupy.ndarray)
    assert isinstance(execute("magnitude", grid, values, "points", backend="cpu"),
                      np.ndarray)


def test_kernel_cache_on_disk(tmp_path, monkeypatch):
    from daxpy.cuda import compile as cc

    monkeypatch.setenv("DAXPY_CACHE_DIR", str(tmp_path))
    cc.clear_memory_cache()
    grid = daxpy.UniformGrid(dims=(5, 5, 5), spacing=(0.3, 0.2, 0.1))
    values = np.random.default_rng(0).random(grid.n_points).astype(np.float32)
    before = dict(cc.STATS, compile_seconds=list(cc.STATS["compile_seconds"]))
    execute("point_gradient", grid, values, "points", backend="cuda")
    assert cc.STATS["compiled"] == before["compiled"] + 1
    cc.clear_memory_cache()
    execute("point_gradient", grid, values, "points", backend="cuda")
    assert cc.STATS["compiled"] == before["compiled"] + 1
    assert cc.STATS["disk_hits"] == before["disk_hits"] + 1
    # A corrupted entry is rebuilt, with a warning.
    for entry in (tmp_path / "kernels").iterdir():
        entry.write_bytes(b"garbage")
    cc.clear_memory_cache()
    with pytest.warns(RuntimeWarning, match="recompiling"):
        out = execute("point_gradient", grid, values, "points", backend="cuda")
    assert cc.STATS["compiled"] == before["compiled"] + 2
    compare("point_gradient", grid, values, "points")
    assert out.shape == (grid.n_points, 3)


def _structured(family, dims, rng):
    if family == "uniform":
        return daxpy.UniformGrid(dims=dims, origin=(0.5, -1, 2), spacing=(0.3, 0.7, 1.1))
    if family == "rectilinear":
        return daxpy.RectilinearGrid(*(np.cumsum(rng.uniform(0.2, 1.0, n)) for n in dims))
    base = np.stack(np.meshgrid(*(np.arange(n, dtype=float) for n in dims), indexing="ij"), -1)
    points = base.transpose(2, 1, 0, 3).reshape(-1, 3) + rng.uniform(-0.2, 0.2, (np.prod(dims), 3))
    return daxpy.CurvilinearGrid(dims, points)


# Marching kernels: several x blocks (> 32 groups), y blocks (> 8 rows) and
# z chunks, rows of whole and partial 16-byte vectors, two-point axes.
MARCH_DIMS = [(136, 11, 13), (67, 9, 18), (2, 2, 2)]
MARCH_CASES = [("point_gradient", "uniform"), ("point_gradient", "rectilinear"),
               ("point_gradient", "curvilinear"), ("point_to_cell", "uniform"),
               ("cell_to_point", "curvilinear")]


@pytest.mark.parametrize("dims", MARCH_DIMS)
@pytest.mark.parametrize("name,family", MARCH_CASES)
@pytest.mark.parametrize("dtype,ncomp", [(np.float32, 1), (np.float64, 1), (np.float32, 3)])
def test_marching_kernels(name, family, dims, dtype, ncomp):
    rng = np.random.default_rng(sum(dims))
    grid = _structured(family, dims, rng)
    association = WORKLETS[name][0]
    n = grid.n_points if association == "points" else grid.n_cells
    values = rng.uniform(-5, 5, (n, ncomp) if ncomp > 1 else n).astype(dtype)
    compare(name, grid, values, association)


@pytest.mark.parametrize("name", ["point_gradient", "point_to_cell", "cell_to_point"])
def test_marching_kernels_on_misaligned_views(name):
    grid = daxpy.UniformGrid(dims=(40, 7, 9))
    association = WORKLETS[name][0]
    n = grid.n_points if association == "points" else grid.n_cells
    backing = cupy.random.default_rng(2).standard_normal(n + 1, dtype=np.float32)
    compare(name, grid, cupy.asnumpy(backing[1:]), association)
    got = execute(name, grid, backing[1:], association, backend="cuda")
    expected = execute(name, grid, backing[1:].copy(), association, backend="cuda")
    np.testing.assert_allclose(cupy.asnumpy(got), cupy.asnumpy(expected), rtol=1e-6, atol=1e-6)
