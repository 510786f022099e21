"""The CUDA backend's contour, threshold, clip and slice against the CPU backend's, on
random grids of every type (the CPU backend is checked against VTK in test_contour.py,
test_threshold.py, test_clip.py and test_slice.py). No VTK needed: these run on the GPU
machine as they are."""

import importlib.util
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.filters import Clip, Contour, Slice, Threshold

from strategies import (curvilinear_grids, seeds, structured_grids, uniform_grids,
                        unstructured_grids, value_between)

pytestmark = pytest.mark.gpu


def _host(array):
    import cupy
    return cupy.asnumpy(array) if isinstance(array, cupy.ndarray) else np.asarray(array)


def _same_surface(cpu, gpu, atol=0.0):
    for kind in ("verts", "lines", "polys"):
        for a, b in zip(cpu.cell_array(kind), gpu.cell_array(kind)):
            np.testing.assert_array_equal(_host(a), _host(b))
    np.testing.assert_allclose(_host(gpu.points()), _host(cpu.points()), rtol=0, atol=atol)


def _same_cells(cpu, gpu):
    np.testing.assert_array_equal(_host(cpu.connectivity), _host(gpu.connectivity))
    np.testing.assert_array_equal(_host(cpu.cell_types), _host(gpu.cell_types))
    np.testing.assert_allclose(_host(gpu.points()), _host(cpu.points()), rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(grid=st.one_of(uniform_grids(min_dimension=2, max_side=6),
                      curvilinear_grids(min_dimension=2, max_side=5),
                      unstructured_grids()), seed=seeds)
def test_cuda_gives_the_cpus_surface(grid, seed):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, grid.n_points).astype(np.float32)
    grid = grid.with_fields(point_data={"s": values, "w": rng.random(grid.n_points)})
    value = value_between(values, rng)
    cpu = Contour("s", values=[value], compute_normals=True, backend="cpu")(grid)
    gpu = Contour("s", values=[value], compute_normals=True, backend="cuda")(grid)
    _same_surface(cpu, gpu)
    np.testing.assert_array_equal(cpu.point_data["w"], _host(gpu.point_data["w"]))
    np.testing.assert_allclose(cpu.point_data["Normals"], _host(gpu.point_data["Normals"]),
                               atol=1e-5)


def _on_the_device(surface):
    """Every array of a surface a GPU run left on the device is a CuPy array."""
    import cupy
    arrays = [surface.points(), *surface.point_data.values(), *surface.cell_data.values()]
    arrays += [a for kind in ("verts", "lines", "polys") if surface.n_cells_of(kind)
               for a in surface.cell_array(kind)]
    assert arrays and all(isinstance(a, cupy.ndarray) for a in arrays)


def test_device_resident_contour_stays_on_the_device():
    import cupy
    grid = daxpy.UniformGrid(dims=(24, 20, 18))
    p = grid.points()
    field = np.sin(p[:, 0] / 3) + np.cos(p[:, 1] / 4) * p[:, 2] / 9
    cpu = Contour("s", values=[0.2, 0.7], backend="cpu")(
        grid.with_fields(point_data={"s": field, "c": p}))
    gpu = Contour("s", values=[0.2, 0.7], backend="cuda")(
        grid.with_fields(point_data={"s": cupy.asarray(field), "c": cupy.asarray(p)}))
    assert cpu.n_cells > 100
    _on_the_device(gpu)
    _same_surface(cpu, gpu)
    np.testing.assert_array_equal(cpu.point_data["c"], gpu.point_data["c"].get())
    # What reads a surface on the host reads a device one too.
    assert gpu.dimension == cpu.dimension == 2
    assert [b.cell_ids.tolist() for b in gpu.cell_blocks().values()] == \
        [b.cell_ids.tolist() for b in cpu.cell_blocks().values()]
    np.testing.assert_array_equal(gpu.connectivity.get(), cpu.connectivity)
    if importlib.util.find_spec("vtkmodules"):  # (VTK is not always on the GPU machine)
        assert gpu.to_vtk().GetNumberOfCells() == cpu.n_cells


def test_gradient_then_contour_pipeline_on_the_gpu():
    grid = daxpy.UniformGrid(dims=(20, 20, 20), spacing=(0.3, 0.3, 0.3))
    p = grid.points()
    grid.point_data["v"] = np.stack([np.sin(p[:, 0]) * np.cos(p[:, 1]),
                                     -np.cos(p[:, 0]) * np.sin(p[:, 1]), 0 * p[:, 2]], axis=1)
    results = []
    for backend in ("cpu", "cuda"):
        pipe = daxpy.pipeline(grid)
        pipe.gradient("v", qcriterion=True, compute_gradient=False).contour(values=[0.1])
        results.append(pipe.run(backend=backend))
    assert results[0].n_cells > 100
    # The Q field is computed in float64 on both; the isosurface's points agree to
    # rounding, and its cells exactly where no Q value sits within rounding of 0.1.
    np.testing.assert_allclose(_host(results[1].points()), results[0].points(), atol=1e-9)
    # Asked for the device, the isosurface stays there: Q never came to the host.
    pipe = daxpy.pipeline(grid)
    pipe.gradient("v", qcriterion=True, compute_gradient=False).contour(values=[0.1])
    there = pipe.run(backend="cuda", to="device")
    _on_the_device(there)
    _same_surface(results[1], there)


@settings(max_examples=25, deadline=None)
@given(grid=st.one_of(structured_grids(max_side=5), unstructured_grids()), seed=seeds)
def test_cuda_keeps_the_cpus_cells(grid, seed):
    rng = np.random.default_rng(seed)
    # Point and cell fields of several dtypes and shapes: a 3-D structured grid's
    # GPU threshold gathers them by its words of used points and kept cells.
    grid = grid.with_fields(
        point_data={"t": rng.random(grid.n_points),
                    "v": rng.random((grid.n_points, 3)).astype(np.float32),
                    "i": rng.integers(-5, 5, grid.n_points).astype(np.int16)},
        cell_data={"c": rng.random(grid.n_cells),
                   "m": rng.random((grid.n_cells, 4)).astype(np.float32)})
    for options in ({"field": "t", "lower": 0.3, "upper": 0.8, "all_scalars": False},
                    {"field": "t", "lower": 0.3, "upper": 0.8, "invert": True},
                    {"field": "t", "lower": 0.2, "upper": 0.9, "original_ids": True},
                    {"field": "c", "lower": 0.5, "upper": 2.0}):
        cpu = Threshold(**options, backend="cpu")(grid)
        gpu = Threshold(**options, backend="cuda")(grid)
        _same_cells(cpu, gpu)
        assert set(cpu.point_data) == set(gpu.point_data)
        for name in cpu.point_data:
            assert cpu.point_data[name].dtype == gpu.point_data[name].dtype
            np.testing.assert_array_equal(cpu.point_data[name], _host(gpu.point_data[name]))
        assert set(cpu.cell_data) == set(gpu.cell_data)
        for name in cpu.cell_data:
            np.testing.assert_array_equal(cpu.cell_data[name], _host(gpu.cell_data[name]))


@settings(max_examples=25, deadline=None)
@given(grid=st.one_of(structured_grids(max_side=5), unstructured_grids()), seed=seeds)
def test_cuda_clips_as_the_cpu(grid, seed):
    rng = np.random.default_rng(seed)
    grid = grid.with_fields(point_data={"s": rng.uniform(-1, 1, grid.n_points)})
    centre = tuple(grid.points().mean(axis=0))
    for options in ({"field": "s", "value": 0.1},
                    {"field": "s", "value": 0.1, "invert": True},
                    {"plane": (centre, (1.0, 0.5, 0.25))},
                    {"sphere": (centre, 1.0)},
                    {"field": "s", "value": 0.0, "crinkle": True}):
        cpu = Clip(**options, backend="cpu")(grid)
        gpu = Clip(**options, backend="cuda")(grid)
        _same_cells(cpu, gpu)


@settings(max_examples=15, deadline=None)
@given(grid=st.one_of(structured_grids(max_side=5), unstructured_grids()), seed=seeds)
def test_cuda_slices_as_the_cpu(grid, seed):
    rng = np.random.default_rng(seed)
    grid = grid.with_fields(point_data={"t": rng.random(grid.n_points)})
    centre = tuple(grid.points().mean(axis=0))
    normal = tuple(rng.uniform(-1, 1, 3) + (0, 0, 1e-3))
    cpu = Slice(normal, centre, backend="cpu")(grid)
    gpu = Slice(normal, centre, backend="cuda")(grid)
    _same_surface(cpu, gpu, atol=1e-12)
    np.testing.assert_allclose(_host(gpu.point_data["t"]), cpu.point_data["t"], atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=seeds, rectilinear=st.booleans(), through_points=st.booleans())
def test_a_plane_made_where_it_is_read_cuts_as_its_distance_field(seed, rectilinear,
                                                                  through_points):
    # The slice of an image or rectilinear grid on the GPU makes the plane's distance
    # in the contour's kernels: the same bits as cutting its distance field.
    import daxpy.filters.slice as slice_module
    rng = np.random.default_rng(seed)
    dims = tuple(int(d) for d in rng.integers(2, 40, 3))
    grid = (daxpy.RectilinearGrid(*(np.cumsum(rng.uniform(0.2, 1.5, d)) for d in dims))
            if rectilinear else daxpy.UniformGrid(dims=dims, spacing=(0.5, 1.0, 0.25)))
    p = grid.points()
    grid = grid.with_fields(point_data={"t": rng.random(grid.n_points), "v": p},
                            cell_data={"c": np.arange(grid.n_cells)})
    # Through grid points, a plane meets many points exactly (distance 0).
    origin = p[int(rng.integers(0, grid.n_points))] if through_points else p.mean(axis=0)
    normal = (1.0, -1.0, 0.0) if through_points else tuple(rng.uniform(-1, 1, 3) + 1e-3)
    made = Slice(normal, tuple(origin), structured=False, backend="cuda")(grid)
    with mock.patch.object(slice_module, "_plane_cut", lambda *args, **reads: None):
        field = Slice(normal, tuple(origin), structured=False, backend="cuda")(grid)
    assert made.n_cells == field.n_cells
    for a, b in ((made.points(), field.points()), *zip(made.cell_array("polys"),
                                                        field.cell_array("polys"))):
        assert _host(a).tobytes() == _host(b).tobytes()
    for name in ("t", "v", "c"):
        got = made.point_data.get(name, made.cell_data.get(name))
        want = field.point_data.get(name, field.cell_data.get(name))
        assert _host(got).tobytes() == _host(want).tobytes()


def test_a_plane_cut_leaves_no_field_of_the_grids_size(monkeypatch):
    # The distance field (8 bytes a point) is not made for an image on the GPU.
    import daxpy.filters.slice as slice_module
    grid = daxpy.UniformGrid(dims=(30, 20, 10), point_data={"t": np.arange(6000.0)})
    made = []
    monkeypatch.setattr(slice_module, "_signed_distance",
                        lambda *args: made.append(1) or pytest.fail("field made"))
    cut = Slice((1.0, 0.5, 0.25), (7.2, 5.1, 3.3), backend="cuda")(grid)
    assert cut.n_cells > 0 and not made


def test_cuda_axis_slice_is_the_cpus_grid():
    grid = daxpy.UniformGrid(dims=(9, 8, 7), point_data={"t": np.arange(504.0)})
    cpu = Slice((1, 2, 3), (4, 3, 3), backend="cpu")(grid)
    gpu = Slice((1, 2, 3), (4, 3, 3), backend="cuda")(grid)
    np.testing.assert_array_equal(cpu.points(), _host(gpu.points()))
    np.testing.assert_array_equal(cpu.point_data["t"], _host(gpu.point_data["t"]))
    axis = Slice("z", (4, 3, 3), backend="cuda")(grid)
    np.testing.assert_array_equal(_host(axis.point_data["t"]),
                                  Slice("z", (4, 3, 3), backend="cpu")(grid).point_data["t"])


@pytest.mark.parametrize("make", [
    lambda: Threshold("s", 0.0, 0.5, original_ids=True),
    lambda: Clip("s", 0.1),
    lambda: Clip(plane=((1.0, 1.0, 1.0), (1.0, -0.5, 0.25)), crinkle=True),
], ids=["threshold", "clip", "crinkle-clip"])
def test_device_input_gives_a_device_grid_equal_to_the_cpus(make):
    import cupy
    grid = daxpy.UniformGrid(dims=(16, 14, 12), spacing=(0.2, 0.2, 0.2))
    p = grid.points()
    field = np.sin(p[:, 0] * 2) * np.cos(p[:, 1]) + p[:, 2] / 3
    host = grid.with_fields(point_data={"s": field}, cell_data={"c": np.arange(grid.n_cells)})
    device = grid.with_fields(point_data={"s": cupy.asarray(field)},
                              cell_data={"c": cupy.asarray(np.arange(grid.n_cells))})
    cpu = _on(make(), "cpu")(host)
    gpu = _on(make(), "cuda")(device)
    assert cpu.n_cells > 50
    for array in (gpu.points(), gpu.connectivity, gpu.offsets, gpu.cell_types,
                  *gpu.point_data.values(), *gpu.cell_data.values()):
        assert isinstance(array, cupy.ndarray)
    _same_cells(cpu, gpu)
    np.testing.assert_array_equal(cpu.cell_data["c"], _host(gpu.cell_data["c"]))
    # Host input, asked for the device: the same grid there.
    asked = _on(make(), "cuda").execute(host, to="device")
    assert isinstance(asked.connectivity, cupy.ndarray)
    _same_cells(cpu, asked)


def _on(flt, backend):
    flt.backend = backend
    return flt


@pytest.mark.parametrize("make", [
    lambda on: Contour("s", values=[0.2, 0.7], backend=on),
    lambda on: Slice((1.0, 0.5, 0.25), (1.5, 1.3, 1.1), backend=on),
    lambda on: Slice((1.0, 0.5, 0.25), (1.5, 1.3, 1.1), backend=on, interpolate=["s"]),
], ids=["contour", "slice", "slice-one-field"])
@pytest.mark.parametrize("family", ["uniform", "hexahedra"])
def test_surfaces_go_where_they_are_asked(make, family):
    import cupy

    from daxpy.data.celltypes import HEXAHEDRON
    from strategies import _lattice_hexes

    grid = daxpy.UniformGrid(dims=(16, 14, 12), spacing=(0.2, 0.2, 0.2))
    if family == "hexahedra":
        grid = daxpy.UnstructuredGrid.from_blocks(
            grid.points(), {HEXAHEDRON: _lattice_hexes((16, 14, 12))})
    p = grid.points()
    field = np.sin(p[:, 0] * 2) * np.cos(p[:, 1]) + p[:, 2] / 3
    host = grid.with_fields(point_data={"s": field}, cell_data={"c": np.arange(grid.n_cells)})
    device = grid.with_fields(point_data={"s": cupy.asarray(field)},
                              cell_data={"c": cupy.asarray(np.arange(grid.n_cells))})
    cpu = make("cpu")(host)
    assert cpu.n_cells > 50
    # Device in, device out; host in, asked for the device: there too.
    for gpu in (make("cuda")(device), make("cuda").execute(host, to="device")):
        _on_the_device(gpu)
        _same_surface(cpu, gpu, atol=1e-12)
        for name in cpu.point_data:
            np.testing.assert_allclose(cpu.point_data[name], gpu.point_data[name].get(),
                                       atol=1e-12)
        for name in cpu.cell_data:
            np.testing.assert_array_equal(cpu.cell_data[name], gpu.cell_data[name].get())
    # Host in, on the GPU: a host surface (its arrays NumPy).
    back = make("cuda")(host)
    assert all(isinstance(a, np.ndarray) for a in
               (back.points(), *back.point_data.values(), *back.cell_data.values()))


def test_an_axis_slice_goes_where_it_is_asked():
    import cupy
    grid = daxpy.UniformGrid(dims=(9, 8, 7), point_data={"t": np.arange(504.0)},
                             cell_data={"c": np.arange(336.0)})
    cpu = Slice("z", (4, 3, 3), backend="cpu")(grid)
    on_host = Slice("z", (4, 3, 3), backend="cuda")(grid)
    on_device = Slice("z", (4, 3, 3), backend="cuda").execute(grid, to="device")
    for name in ("t", "c"):
        got = on_host.point_data.get(name, on_host.cell_data.get(name))
        assert isinstance(got, np.ndarray)
        want = cpu.point_data.get(name, cpu.cell_data.get(name))
        np.testing.assert_array_equal(got, want)
        there = on_device.point_data.get(name, on_device.cell_data.get(name))
        assert isinstance(there, cupy.ndarray)
        np.testing.assert_array_equal(there.get(), want)


@pytest.mark.parametrize("make", [
    lambda on: Contour("s", values=[0.1, 0.6], backend=on),
    lambda on: Slice((1.0, 0.5, 0.25), (6.0, 5.0, 4.0), backend=on),
    lambda on: Threshold("s", 0.2, 0.9, backend=on),
    lambda on: Clip("s", 0.3, both=True, backend=on),
    lambda on: Clip(plane=((6.0, 5.0, 4.0), (0.2, 0.3, 1.0)), crinkle=True, backend=on)],
    ids=["contour", "slice", "threshold", "clip", "crinkle-plane"])
@pytest.mark.parametrize("family", ["uniform", "hexahedra"])
def test_out_of_core_geometry_in_chunks_is_the_cpus_whole_grid(make, family):
    from daxpy.data.celltypes import HEXAHEDRON
    from daxpy.stream.geometry_run import DEVICE_BYTES_PER_CELL
    from daxpy.stream.streaming import configure
    from strategies import _lattice_hexes

    grid = daxpy.UniformGrid(dims=(14, 12, 30))
    if family == "hexahedra":
        jitter = np.random.default_rng(5).uniform(-0.2, 0.2, (grid.n_points, 3))
        grid = daxpy.UnstructuredGrid.from_blocks(grid.points() + jitter,
                                                  {HEXAHEDRON: _lattice_hexes((14, 12, 30))})
    p = grid.points()
    grid = grid.with_fields(point_data={"s": np.sin(p[:, 0] / 3) * np.cos(p[:, 2] / 5),
                                        "w": p[:, :2].copy()})
    whole = make("cpu")(grid)
    # A device budget of four cell layers of the image: the run goes chunk by chunk.
    with configure(max_device_bytes=4 * 13 * 11 * DEVICE_BYTES_PER_CELL):
        chunked = make("cuda")(grid)
    for a, b in zip(whole if isinstance(whole, tuple) else (whole,),
                    chunked if isinstance(chunked, tuple) else (chunked,)):
        assert a.n_cells > 0
        np.testing.assert_array_equal(_host(b.points()), a.points())
        for name in a.point_data:
            np.testing.assert_array_equal(_host(b.point_data[name]), a.point_data[name])
        if isinstance(a, daxpy.PolyData):
            _same_surface(a, b)
        else:
            _same_cells(a, b)
