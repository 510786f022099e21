"""The GPU's clip kernels for 3-D structured grids (daxpy.cuda.clip_cells): every
specialization compiles without a GPU (nvcc or NVRTC, sm_80 and sm_90); on the GPU
they give the array program's Clipped bit for bit (every field, keys included, dtype
and shape too) on random grids, fields (NaN and infinities, few distinct values:
ties with the clip value) and values, both sides, rows ending at and between words
of 32 points; empty and whole results; and the Clip filter runs them."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.cuda.clip_cells_source import source_for
from daxpy.filters import Clip
from daxpy.worklets.clip import clip_cells as array_program

from strategies import cut_field, cut_value, wavy_field
from test_cuda_codegen import _have_compiler, specializations_ptx

SPECIALIZATIONS = [(name, source_for(dtype, plane)[1])
                   for dtype, plane in (("float32", False), ("float64", False), ("float64", True))
                   for name in source_for(dtype, plane)[0]]

FIELDS = ("kept", "ids", "weights", "centre_rows", "centre_ids", "centre_weights", "connectivity",
          "offsets", "cell_types", "source", "keys")


@pytest.mark.skipif(not _have_compiler(), reason="needs nvcc or NVRTC (CuPy)")
def test_every_clip_kernel_specialization_compiles_to_ptx(tmp_path):
    ptx = specializations_ptx(SPECIALIZATIONS, tmp_path)
    # The weights are the CPU's bits only if no multiply and add is fused.
    assert all("fma.rn.f64" not in text for text in ptx)


def test_scalars_of_another_length_are_refused_before_any_kernel():
    # No GPU needed: the check comes before CuPy is imported.
    from daxpy.cuda.clip_cells import clip_cells as kernels
    from daxpy.errors import FieldError
    from daxpy.worklets._clip_arrays import CASE_ARRAYS, PLACES

    for values in (np.zeros(26), np.zeros((27, 2))):
        with pytest.raises(FieldError, match="27 points"):
            kernels(values, (3, 3, 3), 0.5, 0.5, False, CASE_ARRAYS[("voxel", False)],
                    PLACES["voxel"])


def _same(got, want):
    got = got.with_ids()   # the kept points' ids from the GPU's words
    for name in FIELDS:
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and a.shape == b.shape, (name, a.dtype, b.dtype, a.shape,
                                                            b.shape)
        assert a.get().tobytes() == b.tobytes(), name


def _reference(grid, values, value, invert):
    with np.errstate(invalid="ignore", divide="ignore"):
        return array_program(grid, values, value, invert)


def _check(grid, values, value, invert):
    """The worklet on the device against the array program on the host, and the
    kernels themselves (not a fall back); returns the reference."""
    import cupy

    from daxpy.cuda.clip_cells import clip_cells as kernels
    from daxpy.worklets._clip_arrays import CASE_ARRAYS, PLACES
    from daxpy.worklets._marching import at_least_bound

    want = _reference(grid, values, value, invert)
    on_device = cupy.asarray(values)
    _same(array_program(grid, on_device, value, invert), want)
    found = kernels(on_device, tuple(int(d) for d in grid.dims), value,
                    at_least_bound(values.dtype, value), invert,
                    CASE_ARRAYS[("voxel", invert)], PLACES["voxel"])
    assert found is not None
    _same(type(want)(None, *found[1:], kept_words=found[0]), want)
    # Gathers by the kept words are gathers by the kept ids: the field, and an image's
    # points as its axes' float64 values.
    words, kept = found[0], cupy.asarray(want.kept)
    assert words.take(on_device).get().tobytes() == values[want.kept].tobytes()
    axes = [cupy.asarray(grid.axis_coordinates(a)) for a in range(3)]
    points = words.axis_points(axes, int(grid.dims[1]), np.float64)
    i, j, k = kept % grid.dims[0], kept // grid.dims[0] % grid.dims[1], \
        kept // (grid.dims[0] * grid.dims[1])
    assert cupy.array_equal(points, cupy.stack([axes[0][i], axes[1][j], axes[2][k]], axis=1))
    return want


def _plane_terms(grid, origin, normal):
    """A plane's terms on the device, each axis' ``(axis - o) * n``, and the host
    distance field they add up to, x term first (the implicit function's order)."""
    import cupy

    from daxpy.cuda.plane_distance import PlaneDistance

    parts = [(np.asarray(grid.axis_coordinates(a), np.float64) - origin[a]) * normal[a]
             for a in range(3)]
    field = ((parts[0][None, None, :] + parts[1][None, :, None])
             + parts[2][:, None, None]).reshape(-1)
    return PlaneDistance(*(cupy.asarray(p) for p in parts), x_first=True), field


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(dims=st.tuples(st.integers(2, 70), st.integers(2, 6), st.integers(2, 5)),
       seed=st.integers(0, 2**31), invert=st.booleans(), on_points=st.booleans())
def test_a_planes_distance_made_where_read_is_the_fields(dims, seed, invert, on_points):
    # The clip of a plane's terms gives the bits of the clip of the distance field
    # they add up to: planes through grid points too (distances exactly 0, ties).
    from daxpy.worklets.clip import clip_plane_cells

    rng = np.random.default_rng(seed)
    grid = daxpy.RectilinearGrid(*(np.cumsum(rng.random(d) + 0.1) for d in dims))
    normal = rng.choice([-1.0, 0.0, 0.5, 1.0], 3) if on_points else rng.standard_normal(3)
    normal = normal if normal.any() else np.array([0.0, 0.0, 1.0])
    origin = grid.points()[rng.integers(grid.n_points)] if on_points \
        else rng.random(3) * grid.points().max(axis=0)
    terms, field = _plane_terms(grid, origin, normal)
    value = 0.0 if on_points else float(rng.standard_normal() * 0.1)
    want = _reference(grid, field, value, invert)
    found = clip_plane_cells(grid, terms, value, invert)
    assert found is not None
    _same(found, want)


def test_plane_terms_of_other_lengths_or_order_are_refused_before_any_kernel():
    from daxpy.cuda.clip_cells import clip_cells as kernels
    from daxpy.cuda.plane_distance import PlaneDistance
    from daxpy.errors import FieldError
    from daxpy.worklets._clip_arrays import CASE_ARRAYS, PLACES

    tables = CASE_ARRAYS[("voxel", False)], PLACES["voxel"]
    with pytest.raises(FieldError, match="lengths"):
        kernels(PlaneDistance(np.zeros(3), np.zeros(3), np.zeros(2), x_first=True),
                (3, 3, 3), 0.0, 0.0, False, *tables)
    with pytest.raises(ValueError, match="x term first"):
        kernels(PlaneDistance(*np.zeros((3, 3))), (3, 3, 3), 0.0, 0.0, False, *tables)


# Rows of one word of 32 points to several, ending anywhere in a word.
dims_strategy = st.tuples(st.integers(2, 100), st.integers(2, 7), st.integers(2, 6))


@pytest.mark.gpu
@settings(max_examples=80, deadline=None)
@given(dims=dims_strategy, seed=st.integers(0, 2**31),
       dtype=st.sampled_from([np.float32, np.float64]),
       kind=st.sampled_from(["smooth", "ties", "holes"]), invert=st.booleans())
def test_kernels_give_the_array_programs_bits(dims, seed, dtype, kind, invert):
    rng = np.random.default_rng(seed)
    grid = daxpy.UniformGrid(dims=dims)
    values = cut_field(rng, grid.n_points, kind, dtype)
    _check(grid, values, cut_value(rng, values), invert)


@pytest.mark.gpu
@pytest.mark.parametrize("nx", [2, 3, 31, 32, 33, 63, 64, 65, 97, 300])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_that_end_at_and_between_word_ends(nx, dtype):
    grid = daxpy.UniformGrid(dims=(nx, 4, 3))
    values = wavy_field(grid.dims, dtype)   # saddles, points exactly at 0, NaN
    for value in (0.0, 0.25, -0.31):
        for invert in (False, True):
            made = _check(grid, values, value, invert)
            assert made.connectivity.shape[0] > 0


@pytest.mark.gpu
def test_centre_points_are_the_array_programs():
    # A rough field makes many of the cases with centre points, on both sides.
    grid = daxpy.UniformGrid(dims=(37, 5, 4))
    values = np.random.default_rng(11).standard_normal(grid.n_points)
    for dtype in (np.float32, np.float64):
        for invert in (False, True):
            made = _check(grid, values.astype(dtype), 0.05, invert)
            assert made.centre_rows.shape[0] > 10


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nothing_kept_and_everything_kept(dtype):
    grid = daxpy.UniformGrid(dims=(40, 3, 5))
    values = np.random.default_rng(3).standard_normal(grid.n_points).astype(dtype)
    for value, invert in ((9.0, False), (-9.0, True)):
        made = _check(grid, values, value, invert)
        assert made.cell_types.shape[0] == 0 and made.ids.shape == (0, 2)
    for value, invert in ((-9.0, False), (9.0, True)):
        made = _check(grid, values, value, invert)
        assert made.cell_types.shape[0] == grid.n_cells
        assert made.n_kept == grid.n_points and made.ids.shape == (0, 2)


@pytest.mark.gpu
def test_nan_everywhere_is_kept_only_inside_out():
    grid = daxpy.UniformGrid(dims=(33, 3, 2))
    values = np.full(grid.n_points, np.nan)
    assert _check(grid, values, 0.0, False).cell_types.shape[0] == 0
    assert _check(grid, values, 0.0, True).cell_types.shape[0] == grid.n_cells


@pytest.mark.gpu
def test_a_float32_field_compares_with_the_value_in_float64():
    # 0.1 is not a float32: float32(0.1) is above it.
    grid = daxpy.UniformGrid(dims=(35, 3, 3))
    values = np.full(grid.n_points, np.float32(0.1))
    values[::3] = np.nextafter(np.float32(0.1), np.float32(0))
    values[::7] = 0
    for value in (0.1, float(np.float32(0.1)), float(np.nextafter(np.float32(0.1), 1))):
        for invert in (False, True):
            _check(grid, values, value, invert)


@pytest.mark.gpu
def test_a_field_view_with_strides_is_read():
    import cupy

    grid = daxpy.UniformGrid(dims=(65, 4, 3))
    values = np.random.default_rng(5).standard_normal((grid.n_points, 2))
    want = _reference(grid, values[:, 1], 0.2, False)
    _same(array_program(grid, cupy.asarray(values)[:, 1], 0.2, False), want)


@pytest.mark.gpu
@pytest.mark.parametrize("family", ["uniform", "rectilinear32", "rectilinear64"])
def test_a_planes_terms_on_the_device_are_the_hosts(family):
    # The filters make the terms on the device from the axes kept with the grid:
    # the host's float64 bits, for float32 axes too.
    import cupy

    from daxpy.filters._implicit import axis_terms

    rng = np.random.default_rng(7)
    if family == "uniform":
        grid = daxpy.UniformGrid(dims=(9, 5, 4), spacing=(0.1, 0.3, 0.7), origin=(1, 2, 3))
    else:
        dtype = np.float32 if family == "rectilinear32" else np.float64
        grid = daxpy.RectilinearGrid(*(np.cumsum(rng.random(d) + 0.1).astype(dtype)
                                       for d in (9, 5, 4)))
    origin, normal = rng.standard_normal(3).tolist(), rng.standard_normal(3).tolist()
    for host, device in zip(axis_terms(grid, origin, normal),
                            axis_terms(grid, origin, normal, cupy)):
        assert device.dtype == np.float64 and device.get().tobytes() == host.tobytes()


@pytest.mark.gpu
def test_planar_and_line_grids_keep_the_array_program():
    import cupy

    for dims in ((40, 1, 6), (1, 9, 8), (50, 1, 1)):
        grid = daxpy.UniformGrid(dims=dims)
        values = np.random.default_rng(1).standard_normal(grid.n_points)
        _same(array_program(grid, cupy.asarray(values), 0.1, True),
              _reference(grid, values, 0.1, True))


def _host(array):
    import cupy
    return cupy.asnumpy(array) if isinstance(array, cupy.ndarray) else np.asarray(array)


@pytest.mark.gpu
@pytest.mark.parametrize("family", ["uniform", "rectilinear", "curvilinear"])
def test_the_clip_filter_on_the_device_is_the_cpus(family):
    import cupy

    dims = (45, 7, 6)
    uniform = daxpy.UniformGrid(dims=dims, spacing=(0.1, 0.2, 0.3))
    points = uniform.points()
    if family == "rectilinear":
        grid = daxpy.RectilinearGrid(*(np.unique(points[:, a]) ** 1.1 for a in range(3)))
    elif family == "curvilinear":
        grid = daxpy.CurvilinearGrid(dims, points + 0.01 * np.sin(points[:, ::-1] * 7))
    else:
        grid = uniform
    field = wavy_field(dims)
    # Kept points copy their values as they are: integers past 2^53, infinities.
    carried = {"big": 2**60 + np.arange(grid.n_points, dtype=np.int64),
               "inf": np.where(np.arange(grid.n_points) % 3, np.inf, -1.5).astype(np.float32)}
    host = grid.with_fields(point_data={"s": field, **carried},
                            cell_data={"c": np.arange(grid.n_cells)})
    device = grid.with_fields(point_data={"s": cupy.asarray(field),
                                          **{n: cupy.asarray(v) for n, v in carried.items()}},
                              cell_data={"c": cupy.asarray(np.arange(grid.n_cells))})
    centre = tuple(points.mean(axis=0))
    for options in ({"field": "s", "value": 0.0}, {"field": "s", "value": 0.2, "invert": True},
                    {"plane": (centre, (1.0, 0.5, 0.25))}):
        cpu = Clip(**options, backend="cpu")(host)
        gpu = Clip(**options, backend="cuda")(device)
        assert cpu.n_cells > 50
        np.testing.assert_array_equal(cpu.connectivity, _host(gpu.connectivity))
        np.testing.assert_array_equal(cpu.offsets, _host(gpu.offsets))
        np.testing.assert_array_equal(cpu.cell_types, _host(gpu.cell_types))
        np.testing.assert_array_equal(cpu.cell_data["c"], _host(gpu.cell_data["c"]))
        np.testing.assert_allclose(_host(gpu.points()), cpu.points(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(_host(gpu.point_data["s"]), cpu.point_data["s"],
                                   rtol=1e-12, atol=1e-14, equal_nan=True)
        for name in carried:
            np.testing.assert_array_equal(_host(gpu.point_data[name]), cpu.point_data[name])
