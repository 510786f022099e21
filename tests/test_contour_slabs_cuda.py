"""The host-to-host contour made slab by slab on the GPU (daxpy.filters._contour_slabs)
gives the surface of the whole grid's cut, bit for bit: on random uniform and
rectilinear grids cut in 2 to 16 slabs, values equal to grid points, surfaces in
one end of the grid only, empty surfaces, carried fields of several dtypes and
components, host buffers too small (brought down again whole), and fields with
NaN (cut whole); the surface's fingerprint is taken of its arrays once they are down."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import daxpy
from daxpy.filters import Contour


def _same_surface(got, want):
    assert got.n_points == want.n_points and got.n_cells == want.n_cells
    assert got.points().dtype == want.points().dtype
    assert got.points().tobytes() == want.points().tobytes()
    for kind in ("verts", "lines", "polys", "strips"):
        for a, b in zip(got.cell_array(kind), want.cell_array(kind)):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), kind
    assert list(got.point_data) == list(want.point_data)
    for name in want.point_data:
        a, b = got.point_data[name], want.point_data[name]
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name


def _pinned(array):
    """``array`` in pinned memory: small arrays are not page-locked in place (they
    share pages), and the slabs need their fields locked."""
    from daxpy.stream.transfer import pinned_empty

    held = pinned_empty(array.shape, array.dtype)
    held[...] = array
    return held


def _whole(flt, grid):
    """The surface of the whole cut: the fields on the device, one cut."""
    import cupy

    on_device = grid.with_fields({n: cupy.asarray(v) for n, v in grid.point_data.items()})
    return flt.make(on_device)


def _grid(dims, rng, dtype, rectilinear):
    if rectilinear:
        axes = [np.cumsum(rng.uniform(0.5, 2.0, d)) for d in dims]
        grid = daxpy.RectilinearGrid(*axes)
    else:
        grid = daxpy.UniformGrid(dims=dims, origin=(0.5, -1.0, 2.0), spacing=(0.3, 0.7, 1.1))
    n = int(np.prod(dims))
    # A smooth field with noise: surfaces that cross slab borders many times.
    x = np.linspace(0.0, 6.0, n)
    field = (np.sin(x) + 0.3 * rng.standard_normal(n)).astype(dtype)
    return grid.with_fields({"s": _pinned(field),
                             "w": _pinned(rng.standard_normal((n, 3)).astype(np.float32)),
                             "k": _pinned(rng.integers(-5, 5, n).astype(np.int32))})


@pytest.fixture
def small_slabs():
    """The slab module with slabs of a byte at least (as many slabs as cell layers,
    up to 16; a context manager, not monkeypatch: hypothesis runs many inputs in
    one call of the test)."""
    from daxpy.filters import _contour_slabs

    with mock.patch.object(_contour_slabs, "SLAB_BYTES", 1):
        yield _contour_slabs


dims_strategy = st.tuples(st.integers(2, 40), st.integers(2, 9), st.integers(3, 40))


@pytest.mark.gpu
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # set once, kept
@given(dims=dims_strategy, seed=st.integers(0, 2**31),
       dtype=st.sampled_from(["float32", "float64"]), rectilinear=st.booleans(),
       where=st.floats(0.02, 0.98), scalars=st.booleans(),
       interpolate=st.sampled_from([True, False, ["w"], ["k", "s"]]))
def test_slabs_give_the_whole_cuts_surface(small_slabs, dims, seed, dtype, rectilinear,
                                           where, scalars, interpolate):
    rng = np.random.default_rng(seed)
    grid = _grid(dims, rng, dtype, rectilinear)
    s = grid.point_data["s"]
    value = float(s.min() + where * (s.max() - s.min()))
    flt = Contour("s", values=[value], compute_scalars=scalars, interpolate=interpolate,
                  backend="cuda")
    made = small_slabs.contour_in_slabs(flt, grid)
    assert made is not None
    _same_surface(made, _whole(flt, grid))
    _same_surface(flt(grid), made)  # the filter's host-to-host run takes this path


@pytest.mark.gpu
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # set once, kept
@given(dims=dims_strategy, seed=st.integers(0, 2**31), value=st.sampled_from([1.0, 1.5, 9.0]))
def test_values_equal_to_grid_points_and_empty_surfaces(small_slabs, dims, seed, value):
    rng = np.random.default_rng(seed)
    grid = daxpy.UniformGrid(dims=dims, point_data={
        "s": _pinned(rng.integers(0, 4, int(np.prod(dims))).astype(np.float32))})
    flt = Contour("s", values=[value], backend="cuda")
    made = small_slabs.contour_in_slabs(flt, grid)
    _same_surface(made, _whole(flt, grid))
    if value == 9.0:
        assert made.n_points == 0 and made.n_cells == 0


@pytest.mark.gpu
@pytest.mark.parametrize("part", ["low", "high", "middle"])
@pytest.mark.parametrize("margin", [1.25, 0.01])
def test_surfaces_in_one_part_and_buffers_too_small(small_slabs, monkeypatch, part, margin):
    # A surface only at one end: the buffers are sized late, or from nothing yet;
    # a margin below 1 makes them too small, and the surface comes down again whole.
    monkeypatch.setattr(small_slabs, "MARGIN", margin)
    dims = (17, 11, 40)
    z = np.repeat(np.arange(dims[2], dtype=np.float64), dims[0] * dims[1])
    centre = {"low": 5.0, "high": 33.0, "middle": 20.0}[part]
    rng = np.random.default_rng(3)
    field = np.abs(z - centre) + 0.1 * rng.standard_normal(z.size)
    grid = daxpy.UniformGrid(dims=dims, point_data={"s": _pinned(field)})
    flt = Contour("s", values=[2.5], backend="cuda")
    made = small_slabs.contour_in_slabs(flt, grid)
    _same_surface(made, _whole(flt, grid))
    # Buffers sized from a first slab that held the whole surface are trimmed: each
    # array's memory holds at most twice its surface's rows (and 1024 more).
    points, triangles = made.n_points, made.n_cells
    offsets, connectivity = made.cell_array("polys")
    for array, most in ((made.points(), (2 * points + 1024) * 12),
                        (offsets, (2 * triangles + 1025) * 8),
                        (connectivity, 3 * (2 * triangles + 1024) * 8)):
        while isinstance(array.base, np.ndarray):
            array = array.base
        assert array.nbytes <= most


@pytest.mark.gpu
def test_a_surfaces_fingerprint_is_of_its_arrays_once_down(small_slabs, monkeypatch):
    # Each download waits behind a spin of the GPU first, so that the surface is made
    # while its last slabs are still to land: the fingerprint it keeps must be of the
    # arrays as they are after the call (else the next check validates them all again).
    import cupy

    from daxpy.data.fingerprint import fingerprint

    spin = cupy.RawKernel(r"""extern "C" __global__ void spin(long long cycles) {
        const long long start = clock64(); while (clock64() - start < cycles) {} }""", "spin")
    copy = small_slabs.copy_to_host

    def late_copy(device, host, stream):
        spin((1,), (1,), (np.int64(2_000_000),), stream=stream)
        copy(device, host, stream)

    monkeypatch.setattr(small_slabs, "copy_to_host", late_copy)
    rng = np.random.default_rng(11)
    dims = (24, 20, 30)
    grid = daxpy.UniformGrid(dims=dims, point_data={
        "s": _pinned(rng.standard_normal(int(np.prod(dims))))})
    for value in (0.3, -0.2, 0.3):
        made = Contour("s", values=[value], backend="cuda")(grid)
        assert made.n_cells > 0
        assert made._derived_cache().fingerprint == fingerprint(made._validated_arrays())


@pytest.mark.gpu
def test_a_field_with_nan_is_cut_whole(small_slabs):
    rng = np.random.default_rng(7)
    dims = (12, 9, 30)
    field = rng.standard_normal(int(np.prod(dims)))
    field[2000] = np.nan
    grid = daxpy.UniformGrid(dims=dims, point_data={"s": _pinned(field)})
    flt = Contour("s", values=[0.1], backend="cuda")
    _same_surface(small_slabs.contour_in_slabs(flt, grid), _whole(flt, grid))


def test_grids_and_options_that_do_not_qualify_are_cut_whole(small_slabs):
    from daxpy.filters._contour_slabs import slabs_for

    grid = daxpy.UniformGrid(dims=(8, 8, 8), point_data={"s": np.arange(512.0)},
                             cell_data={"c": np.zeros(343)})
    assert slabs_for(grid.dims, 4096)  # large enough for slabs
    for flt in (Contour("s", values=[1.5, 2.5]), Contour("s", n_values=3),
                Contour("s", values=[1.5], compute_normals=True),
                Contour("s", values=[1.5], merge_points=False),
                Contour("s", values=[1.5], nan_policy="raise"),
                Contour("s", values=[1.5])):  # carries the cell field c
        assert small_slabs.contour_in_slabs(flt, grid) is None
    flat = daxpy.UniformGrid(dims=(8, 8, 1), point_data={"s": np.arange(64.0)})
    assert small_slabs.contour_in_slabs(Contour("s", values=[1.5]), flat) is None


def test_slabs_cover_every_cell_layer_once():
    from daxpy.filters._contour_slabs import MAX_SLABS, SLAB_BYTES, slabs_for

    for nz in (3, 17, 256, 1000):
        slabs = slabs_for((64, 64, nz), 64 * SLAB_BYTES)
        assert len(slabs) == min(MAX_SLABS, nz - 1, 64)
        assert slabs[0][0] == 0 and slabs[-1][1] == nz - 1
        assert all(a[1] == b[0] for a, b in zip(slabs, slabs[1:]))
        assert all(last == min(end + 1, nz - 1) for _, end, last in slabs)
    assert slabs_for((64, 64, 64), SLAB_BYTES) == []


@pytest.mark.gpu
def test_threads_cut_in_slabs_at_once(small_slabs):
    # The streams are shared per device: runs from two threads interleave on them.
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(11)
    grids = [_grid((23, 7, 31), rng, dtype, False) for dtype in ("float32", "float64") * 2]
    flt = Contour("s", values=[0.2], backend="cuda")
    with ThreadPoolExecutor(4) as pool:
        made = list(pool.map(lambda g: small_slabs.contour_in_slabs(flt, g), grids))
    for grid, surface in zip(grids, made):
        _same_surface(surface, _whole(flt, grid))


@pytest.mark.gpu
def test_a_device_out_of_memory_is_a_daxpy_error(small_slabs):
    import cupy

    from daxpy.errors import DeviceMemoryError

    rng = np.random.default_rng(12)
    grid = _grid((64, 64, 64), rng, "float64", False)
    pool = cupy.get_default_memory_pool()
    limit = pool.get_limit()
    pool.set_limit(size=pool.used_bytes() + (1 << 20))  # less than the fields need
    try:
        with pytest.raises(DeviceMemoryError, match="contour"):
            small_slabs.contour_in_slabs(Contour("s", values=[0.2], backend="cuda"), grid)
    finally:
        pool.set_limit(size=limit)
    flt = Contour("s", values=[0.2], backend="cuda")
    _same_surface(small_slabs.contour_in_slabs(flt, grid), _whole(flt, grid))
