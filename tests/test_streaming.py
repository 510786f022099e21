"""Streaming: chunked runs equal whole-grid runs bitwise, in and out of core.

The CPU tests run the chunk loop with the NumPy stand-in mover, so the chunk
plans, halos, ownership and output assembly are checked without a GPU; the
tests marked ``gpu`` run the CUDA mover (streams, page-locked inputs, pinned
outputs) and the pipeline hook.
"""

import gc
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.data.decomposition import ids_of, read_count
from daxpy.stream.chunks import structured_chunks, unstructured_chunks, unstructured_layout
from daxpy.errors import DeviceMemoryError
from daxpy.stream.loop import stream_chunks
from daxpy.stream.movers import NumpyMover
from daxpy.stream.program import NotStreamable, program_of
from daxpy.stream.device_bytes import UNSTRUCTURED_BYTES_PER_CORNER
from daxpy.stream.sizing import plan
from daxpy.stream.streaming import StreamProfile, configure, run_streamed

from strategies import field_arrays, mixed_grid_all_shapes, structured_grids, unstructured_grids

POINT_CHAINS = {
    "gradient": lambda n: n.gradient(),
    "gradient_magnitude_cells": lambda n: n.gradient().magnitude().point_to_cell(),
    "round_trip_gradient": lambda n: n.point_to_cell().cell_to_point().gradient(),
    "cell_gradient": lambda n: n.gradient(kind="cell").magnitude(),
    "maps": lambda n: n.map("sin(x) * 2").pass_through("float64").magnitude(),
    "pass_through": lambda n: n.pass_through("float64"),
    "bias_per_component": lambda n: n.bias_add([0.5]),
}
CELL_CHAINS = {
    "cell_to_point": lambda n: n.cell_to_point(),
    "cell_to_point_gradient": lambda n: n.cell_to_point().gradient(),
    "twice": lambda n: n.cell_to_point().point_to_cell().cell_to_point(),
}
CHAINS = {**{k: ("points", v) for k, v in POINT_CHAINS.items()},
          **{k: ("cells", v) for k, v in CELL_CHAINS.items()}}


def _pipeline(grid, chain: str, values):
    association, build = CHAINS[chain]
    data = {"point_data" if association == "points" else "cell_data": {"f": values}}
    source = grid.with_fields(**data)
    pipe = daxpy.pipeline(source)
    build(pipe.field("f"))
    return source, pipe


def _wanted(pipe):
    read = {n for s in pipe.stages for n in s.inputs}
    return [s.output for s in pipe.stages if s.output not in read]


def _assert_bitwise(expected, got):
    for name in _wanted_names(expected):
        np.testing.assert_array_equal(got.field(name)[0], expected.field(name)[0], err_msg=name)


def _wanted_names(dataset):
    return list(dataset.point_data) + list(dataset.cell_data)


def _field_for(data, grid, chain):
    rows = grid.n_points if CHAINS[chain][0] == "points" else grid.n_cells
    return data.draw(field_arrays(rows, ncomp=data.draw(st.sampled_from([1, 3]))))


def _chunked(source, pipe, size, streams=2):
    wanted = _wanted(pipe)
    program = program_of(source, pipe.stages, wanted)
    run = stream_chunks(NumpyMover(streams, "auto"), source, pipe.stages, program,
                        plan(source, program, size), {})
    result = source.with_fields()
    for name, values in run.outputs.items():
        result.fields(program.fields[name][0])[name] = values
    return result


# -- chunked == whole, CPU -----------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(structured_grids(max_side=8), st.sampled_from(sorted(CHAINS)), st.integers(1, 5),
       st.data())
def test_structured_chunks_of_any_size_equal_the_whole_run(grid, chain, planes, data):
    # One or two owned layers put chunk boundaries inside the halo of depth 2 chains.
    source, pipe = _pipeline(grid, chain, _field_for(data, grid, chain))
    _assert_bitwise(pipe.run(backend="cpu"), _chunked(source, pipe, planes))


@settings(max_examples=30, deadline=None)
@given(unstructured_grids(), st.sampled_from(sorted(CHAINS)), st.integers(1, 40), st.data())
def test_unstructured_chunks_of_any_size_equal_the_whole_run(grid, chain, cells, data):
    source, pipe = _pipeline(grid, chain, _field_for(data, grid, chain))
    _assert_bitwise(pipe.run(backend="cpu"), _chunked(source, pipe, cells))


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_every_cell_shape_streams(chain):
    grid = mixed_grid_all_shapes()
    rows = grid.n_points if CHAINS[chain][0] == "points" else grid.n_cells
    source, pipe = _pipeline(grid, chain, np.random.default_rng(1).random(rows) + 0.5)
    for cells in (1, 2, 3, 5, 100):
        _assert_bitwise(pipe.run(backend="cpu"), _chunked(source, pipe, cells))


@settings(max_examples=25, deadline=None)
@given(unstructured_grids(), st.integers(1, 20), st.integers(0, 2))
def test_unstructured_chunks_own_every_cell_and_point_once(grid, cells, levels):
    chunks = unstructured_chunks(grid, levels, cells)
    points = np.concatenate([ids_of(c.written("points")) for c in chunks])
    owned_cells = np.concatenate([ids_of(c.written("cells")) for c in chunks])
    np.testing.assert_array_equal(points, np.arange(grid.n_points))
    np.testing.assert_array_equal(owned_cells, np.arange(grid.n_cells))
    layout = unstructured_layout(grid, levels, cells)
    for c, (cells_owned, points_owned) in zip(chunks, layout.owned):
        # The loop copies owned results into the whole output through a view.
        for association, owned in (("points", points_owned), ("cells", cells_owned)):
            assert isinstance(c.written(association), slice)
            np.testing.assert_array_equal(ids_of(c.written(association)), np.arange(*owned))
        ids = np.arange(grid.n_points)[c.read("points")]
        assert c.grid.n_points == read_count(c.read("points")) == ids.size
        np.testing.assert_array_equal(ids[c.owned("points")], np.arange(*points_owned))
        np.testing.assert_array_equal(np.arange(grid.n_cells)[c.read("cells")][c.owned("cells")],
                                      np.arange(*cells_owned))
        # The chunk's cells name the same global points as the grid's cells.
        cell_ids = np.arange(grid.n_cells)[c.read("cells")]
        starts, ends = grid.offsets[cell_ids], grid.offsets[cell_ids + 1]
        expected = np.concatenate([grid.connectivity[a:b] for a, b in zip(starts, ends)]
                                  ) if cell_ids.size else np.zeros(0)
        np.testing.assert_array_equal(ids[c.grid.connectivity], expected)
        np.testing.assert_array_equal(c.grid.cell_types, grid.cell_types[cell_ids])
        # Built without checks (UnstructuredGrid.from_checked): the checks accept it.
        daxpy.UnstructuredGrid(c.grid.points(), c.grid.connectivity, c.grid.offsets,
                               c.grid.cell_types)


def test_a_badly_numbered_mesh_gathers_its_points():
    grid = daxpy.UnstructuredGrid.from_blocks(
        np.random.default_rng(0).random((5000, 3)),
        {daxpy.data.celltypes.LINE: np.stack([np.arange(0, 2500), np.arange(4999, 2499, -1)], 1)})
    chunks = unstructured_chunks(grid, 0, 100)
    assert any(not isinstance(c.read("points"), slice) for c in chunks)
    source = grid.with_fields(point_data={"f": np.arange(5000.0)})
    pipe = daxpy.pipeline(source)
    pipe.field("f").point_to_cell().cell_to_point()
    _assert_bitwise(pipe.run(backend="cpu"), _chunked(source, pipe, 100))


def test_structured_slabs_tile_the_grid():
    grid = daxpy.UniformGrid(dims=(3, 4, 7))
    chunks = structured_chunks(grid, 2, 2)
    assert [c.written("points") for c in chunks] == [slice(0, 24), slice(24, 48), slice(48, 72),
                                                     slice(72, 84)]
    assert [c.written("cells") for c in chunks] == [slice(0, 12), slice(12, 24), slice(24, 36),
                                                    slice(36, 36)]
    assert all(c.grid.n_points == read_count(c.read("points")) for c in chunks)


# -- settings, memory budget, storage -----------------------------------------------
def _big_gradient():
    grid = daxpy.UniformGrid(dims=(12, 10, 30), spacing=(0.5, 1.0, 2.0))
    values = np.random.default_rng(2).random(grid.n_points).astype(np.float32)
    source = grid.with_fields(point_data={"f": values})
    pipe = daxpy.pipeline(source)
    grad = pipe.field("f").gradient().magnitude()
    return source, pipe, grad.name


def test_out_of_core_equals_in_core_and_stays_in_budget():
    source, pipe, name = _big_gradient()
    whole = 4 * source.n_points * (1 + 3 + 1)          # f, gradient, magnitude
    budget = whole // 3
    out, prof = run_streamed(source, pipe.stages, [name], backend="cpu",
                             max_device_bytes=budget)
    expected = pipe.run(backend="cpu").point_data[name]
    np.testing.assert_array_equal(out.point_data[name], expected)
    assert prof.chunks >= 3 and 0 < prof.peak_bytes <= budget


def test_unstructured_out_of_core_equals_in_core():
    grid = daxpy.UnstructuredGrid.from_blocks(*_hex_lattice((6, 5, 12)))
    source = grid.with_fields(point_data={"f": np.random.default_rng(3).random(grid.n_points)})
    pipe = daxpy.pipeline(source)
    name = pipe.field("f").gradient().point_to_cell().name
    # Two chunks in flight of at most 30 kB each, where the whole grid's estimate
    # (fields, coordinates, host-built links) is 54 kB: several chunks.
    budget = 60_000
    with configure(max_device_bytes=budget, streams=2):
        out, prof = run_streamed(source, pipe.stages, [name], backend="cpu")
    np.testing.assert_array_equal(out.cell_data[name], pipe.run(backend="cpu").cell_data[name])
    assert prof.chunks >= 3 and prof.peak_bytes <= budget


def _hex_lattice(dims):
    nx, ny, nz = dims
    k, j, i = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    points = np.stack([i.ravel(), j.ravel(), k.ravel()], 1) + 0.1 * np.random.default_rng(
        4).random((nx * ny * nz, 3))
    k, j, i = np.meshgrid(np.arange(nz - 1), np.arange(ny - 1), np.arange(nx - 1), indexing="ij")
    base = (i + nx * (j + ny * k)).ravel()
    corners = [0, 1, 1 + nx, nx, nx * ny, 1 + nx * ny, 1 + nx + nx * ny, nx + nx * ny]
    return points, {daxpy.data.celltypes.HEXAHEDRON: base[:, None] + np.array(corners)}


def test_a_budget_too_small_for_one_slab_is_refused():
    source, pipe, name = _big_gradient()
    with pytest.raises(DeviceMemoryError, match="max_device_bytes=1000 is too small"):
        run_streamed(source, pipe.stages, [name], backend="cpu", max_device_bytes=1000)


@pytest.mark.parametrize("kind, bound", [("float16", 2.0 ** -11), ("bfloat16", 2.0 ** -8)])
def test_lower_precision_storage_reports_its_error(kind, bound):
    if kind == "bfloat16":
        pytest.importorskip("ml_dtypes")
    source, pipe, name = _big_gradient()
    out, prof = run_streamed(source, pipe.stages, [name], backend="cpu", chunk_bytes=20_000,
                             storage=kind)
    expected = pipe.run(backend="cpu").point_data[name]
    got = out.point_data[name]
    assert got.dtype.itemsize == 2 and str(got.dtype) == kind
    error = np.abs(got.astype(np.float64) - expected).max()
    report = prof.storage_error[name]
    assert report["max_abs_error"] == pytest.approx(error)
    assert report["max_abs"] == pytest.approx(np.abs(expected).max())
    assert 0 < report["relative"] <= bound
    assert "stored as" in str(prof)


def test_storage_is_only_applied_when_asked():
    source, pipe, name = _big_gradient()
    out, prof = run_streamed(source, pipe.stages, [name], backend="cpu", chunk_bytes=20_000)
    assert out.point_data[name].dtype == np.float32 and prof.storage_error == {}


def test_unknown_settings_are_refused():
    source, pipe, name = _big_gradient()
    with pytest.raises(daxpy.errors.ArgumentError, match="storage must be one of"):
        run_streamed(source, pipe.stages, [name], backend="cpu", storage="int8")
    with pytest.raises(daxpy.errors.ArgumentError, match="staging must be one of"):
        run_streamed(source, pipe.stages, [name], backend="cpu", staging="magic")


def test_the_default_settings_follow_the_environments_device_budget(monkeypatch):
    from daxpy.stream.settings import current_settings

    monkeypatch.delenv("DAXPY_MAX_DEVICE_BYTES", raising=False)
    assert current_settings().max_device_bytes is None
    monkeypatch.setenv("DAXPY_MAX_DEVICE_BYTES", "4096")
    assert current_settings().max_device_bytes == 4096
    monkeypatch.setenv("DAXPY_MAX_DEVICE_BYTES", "-1")
    with pytest.raises(daxpy.errors.ArgumentError, match="DAXPY_MAX_DEVICE_BYTES"):
        current_settings()


def test_position_dependent_maps_do_not_stream():
    grid = daxpy.UniformGrid(dims=(3, 3, 3))
    source = grid.with_fields(point_data={"f": np.ones(27)})
    pipe = daxpy.pipeline(source)
    name = pipe.field("f").bias_add([1.0, 2.0, 3.0]).name
    assert not program_of(source, pipe.stages, [name]).position_free
    with pytest.raises(NotStreamable, match="depends on where a value sits"):
        run_streamed(source, pipe.stages, [name], backend="cpu")
    # A bias that the probe's few points cannot take: not streamed either.
    other = daxpy.pipeline(daxpy.UniformGrid(dims=(4, 3, 3), point_data={"f": np.ones(36)}))
    name = other.field("f").bias_add(np.arange(4.0)).name
    with pytest.raises(NotStreamable, match="cannot run on a few points"):
        run_streamed(other.dataset, other.stages, [name], backend="cpu")


def test_source_fields_asked_for_come_back_untouched_and_profile_is_filled():
    source, pipe, name = _big_gradient()
    out, prof = run_streamed(source, pipe.stages, [name, "f"], backend="cpu",
                             chunk_bytes=20_000)
    assert out.point_data["f"] is source.point_data["f"]
    assert isinstance(prof, StreamProfile) and prof.uploads == 1 and prof.downloads == 1
    assert [r.output for r in prof.stages] == [s.output for s in pipe.stages]
    assert all(r.bytes_moved > 0 for r in prof.stages)


# -- the GPU path -------------------------------------------------------------------
def _cupy():
    return pytest.importorskip("cupy")


def _device_reference(pipe, name):
    """The whole-grid CUDA run (to the device, so it does not stream)."""
    return _cupy().asnumpy(pipe.run(backend="cuda", to="device").field(name)[0])


@pytest.mark.gpu
@pytest.mark.parametrize("staging", ["auto", "pool", "pageable"])
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_gpu_streamed_runs_equal_whole_runs(chain, staging):
    from daxpy.stream import transfer

    grid = daxpy.UniformGrid(dims=(64, 48, 40), spacing=(0.5, 1.0, 2.0))
    rows = grid.n_points if CHAINS[chain][0] == "points" else grid.n_cells
    source, pipe = _pipeline(grid, chain, np.random.default_rng(5).random(rows, np.float32))
    name = _wanted(pipe)[0]
    with configure(chunk_bytes=1 << 18, staging=staging):
        out, prof = pipe.run(backend="cuda", profile=True)
    assert isinstance(prof, StreamProfile) and prof.chunks > 3
    got = out.field(name)[0]
    np.testing.assert_array_equal(got, _device_reference(pipe, name))
    assert transfer.is_pinned(got)


@pytest.mark.gpu
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_gpu_unstructured_streams_equal_whole_runs(chain):
    grid = daxpy.UnstructuredGrid.from_blocks(*_hex_lattice((20, 16, 30)))
    rows = grid.n_points if CHAINS[chain][0] == "points" else grid.n_cells
    source, pipe = _pipeline(grid, chain, np.random.default_rng(6).random(rows, np.float32))
    name = _wanted(pipe)[0]
    with configure(chunk_bytes=1 << 15):
        out, prof = pipe.run(backend="cuda", profile=True)
    assert prof.chunks >= 3
    np.testing.assert_array_equal(out.field(name)[0], _device_reference(pipe, name))


@pytest.mark.gpu
@pytest.mark.parametrize("unstructured", [False, True])
def test_gpu_out_of_core_equals_in_core_within_the_budget(unstructured):
    if unstructured:
        grid = daxpy.UnstructuredGrid.from_blocks(*_hex_lattice((40, 40, 60)))
    else:
        grid = daxpy.UniformGrid(dims=(96, 96, 120))
    values = np.random.default_rng(7).random(grid.n_points, np.float32)
    source = grid.with_fields(point_data={"f": values})
    pipe = daxpy.pipeline(source)
    name = pipe.field("f").gradient().magnitude().name
    in_core = pipe.run(backend="cuda").point_data[name]
    # A third of what the whole run holds: f, gradient, magnitude (and topology).
    topology = grid.connectivity.size * UNSTRUCTURED_BYTES_PER_CORNER if unstructured else 0
    budget = (20 * grid.n_points + topology) // 3
    with configure(max_device_bytes=budget):
        out, prof = pipe.run(backend="cuda", profile=True)
    np.testing.assert_array_equal(out.point_data[name], in_core)
    assert prof.chunks >= 3 and prof.peak_bytes <= budget


@pytest.mark.gpu
def test_gpu_no_second_host_copy():
    from daxpy.stream import transfer

    grid = daxpy.UniformGrid(dims=(128, 128, 128))
    values = np.random.default_rng(8).random(grid.n_points, np.float32)
    pointer = values.__array_interface__["data"][0]
    source = grid.with_fields(point_data={"f": values})
    pipe = daxpy.pipeline(source)
    name = pipe.field("f").pass_through("float64").name
    pipe.run(backend="cuda")                                  # warm: kernels, pool
    tracemalloc.start()
    try:
        out, prof = pipe.run(backend="cuda", profile=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The input was page-locked where it lies, and the output is the pinned
    # buffer the GPU wrote: host allocations stay far below one field.
    assert prof.inputs == {"f": "registered"}
    assert values.__array_interface__["data"][0] == pointer and transfer.is_pinned(values)
    assert transfer.is_pinned(out.point_data[name])
    assert peak < values.nbytes // 20
    np.testing.assert_array_equal(out.point_data[name], values.astype(np.float64))


@pytest.mark.gpu
def test_gpu_mapped_map_equals_streamed():
    grid = daxpy.UniformGrid(dims=(200, 100, 100))
    values = np.random.default_rng(9).random(grid.n_points, np.float32)
    source = grid.with_fields(point_data={"f": values})
    pipe = daxpy.pipeline(source)
    name = pipe.field("f").map("x * 2 + 1").name
    with configure(mapped=True):
        out, prof = pipe.run(backend="cuda", profile=True)
    assert prof.inputs == {"f": "mapped"}
    np.testing.assert_array_equal(out.point_data[name], _device_reference(pipe, name))


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["float16", "bfloat16"])
def test_gpu_lower_precision_storage(kind):
    pytest.importorskip("ml_dtypes") if kind == "bfloat16" else None
    source, pipe, name = _big_gradient()
    with configure(storage=kind, chunk_bytes=20_000):
        out, prof = pipe.run(backend="cuda", profile=True)
    expected = _device_reference(pipe, name)
    error = np.abs(out.point_data[name].astype(np.float64) - expected).max()
    assert prof.storage_error[name]["max_abs_error"] == pytest.approx(error)
    assert prof.storage_error[name]["relative"] <= (2.0 ** -11 if kind == "float16" else 2.0 ** -8)


@pytest.mark.gpu
def test_gpu_position_dependent_maps_run_whole():
    grid = daxpy.UniformGrid(dims=(40, 40, 40))
    source = grid.with_fields(point_data={"f": np.ones(grid.n_points, np.float32)})
    pipe = daxpy.pipeline(source)
    name = pipe.field("f").bias_add([1.0, 2.0]).name
    out, prof = pipe.run(backend="cuda", profile=True)
    assert not isinstance(prof, StreamProfile)
    np.testing.assert_array_equal(out.point_data[name][:4], [2.0, 3.0, 2.0, 3.0])
    gc.collect()
