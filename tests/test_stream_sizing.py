"""Out-of-core chunk plans: sized to the budget, planned once, topology kept or rebuilt
from host links that equal the device's.

The host tests check the plans (chunk counts for a budget, cells and points
covered once, halos, the cache, which chunks keep their topology) and the
host-built links without a GPU; the tests marked ``gpu`` check that
out-of-core runs of unstructured grids equal in-core ones bitwise, run after
run, whether a chunk's topology stays on the device or is uploaded again.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.cuda import host_links
from daxpy.data.decomposition import ids_of
from daxpy.errors import DeviceMemoryError
from daxpy.stream import sizing
from daxpy.stream.program import program_of
from daxpy.stream.device_bytes import estimated_bytes, resident_chunks
from daxpy.stream.sizing import item_bytes, plan_within
from daxpy.stream.streaming import configure, run_streamed
from daxpy.worklets._links_cpu import build_links

from strategies import unstructured_grids


def _hex_grid(dims, seed=4):
    nx, ny, nz = dims
    k, j, i = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    points = np.stack([i.ravel(), j.ravel(), k.ravel()], 1) + 0.1 * np.random.default_rng(
        seed).random((nx * ny * nz, 3))
    k, j, i = np.meshgrid(np.arange(nz - 1), np.arange(ny - 1), np.arange(nx - 1), indexing="ij")
    base = (i + nx * (j + ny * k)).ravel()
    corners = [0, 1, 1 + nx, nx, nx * ny, 1 + nx * ny, 1 + nx + nx * ny, nx + nx * ny]
    return daxpy.UnstructuredGrid.from_blocks(
        points, {daxpy.data.celltypes.HEXAHEDRON: base[:, None] + np.array(corners)})


def _gradient(grid, dtype=np.float32):
    values = np.random.default_rng(5).random(grid.n_points).astype(dtype)
    source = grid.with_fields(point_data={"f": values})
    pipe = daxpy.pipeline(source)
    name = pipe.field("f").gradient().name
    return source, pipe, name, program_of(source, pipe.stages, [name])


def _working_set(source, program):
    """The whole grid as one chunk: fields, coordinates, host-built links."""
    per_point, per_cell = item_bytes(source, program)
    return estimated_bytes("unstructured", (source.n_points, source.n_cells,
                                            source.connectivity.size), per_point, per_cell, True)


# -- sizing ---------------------------------------------------------------------------
def test_a_budget_is_cut_into_as_few_chunks_as_fit_it():
    # The case, small: a third of the working set, three chunks in flight.
    source, pipe, name, program = _gradient(_hex_grid((40, 40, 60)))
    budget = _working_set(source, program) // 3
    found = plan_within(source, program, 64 << 20, budget, 3)
    share = budget // 3
    sizes = [(c.grid.n_points, c.grid.n_cells, c.grid.connectivity.size) for c in found.chunks]
    per_point, per_cell = item_bytes(source, program)
    whole = [estimated_bytes("unstructured", s, per_point, per_cell, True) for s in sizes]
    assert max(whole) <= share
    # A ninth of the working set each, halos included: 9 chunks at least, and only
    # a few more (before the fix, 64 MiB of topology per chunk made ~200 of them).
    assert 9 <= len(found.chunks) <= 12
    # Chunks of ~5 of the grid's 59 cell layers: halos add a layer of cells each side.
    assert sum(whole) <= 1.5 * _working_set(source, program)


def test_a_generous_budget_keeps_the_in_core_chunks():
    # chunk_bytes aims at fields only, in and out of core: a budget larger than the
    # in-core chunks need leaves them as they are, and keeps every chunk's topology.
    source, pipe, name, program = _gradient(_hex_grid((30, 30, 40)))
    in_core = plan_within(source, program, 200_000)
    out = plan_within(source, program, 200_000, 4 * _working_set(source, program), 3)
    assert len(in_core.chunks) == len(out.chunks) >= 3
    assert [c.written("cells") for c in in_core.chunks] == [c.written("cells")
                                                             for c in out.chunks]
    assert out.resident == frozenset(range(len(out.chunks)))


def test_chunks_own_every_cell_and_point_once_and_hold_their_halo():
    source, pipe, name, program = _gradient(_hex_grid((20, 16, 30)))
    found = plan_within(source, program, 64 << 20, _working_set(source, program) // 4, 2)
    assert len(found.chunks) >= 4
    owned_cells = np.concatenate([ids_of(c.written("cells")) for c in found.chunks])
    owned_points = np.concatenate([ids_of(c.written("points")) for c in found.chunks])
    np.testing.assert_array_equal(owned_cells, np.arange(source.n_cells))
    np.testing.assert_array_equal(owned_points, np.arange(source.n_points))
    corners = source.connectivity.reshape(-1, 8)
    for chunk in found.chunks:
        held = set(np.arange(source.n_cells)[chunk.read("cells")].tolist())
        owned = ids_of(chunk.written("points"))
        # The halo: every cell that uses an owned point, so the gradient is exact there.
        using = np.flatnonzero(np.isin(corners, owned).any(axis=1))
        assert set(using.tolist()) <= held


def test_a_plan_is_made_once_per_grid_shape_and_budget(monkeypatch):
    grid = _hex_grid((12, 10, 20))
    calls = []
    sized = sizing._size_within
    monkeypatch.setattr(sizing, "_size_within", lambda *a: calls.append(a) or sized(*a))
    results = []
    for _ in range(2):
        # A new pipeline each time, over the grid's topology: the plan is shared.
        source, pipe, name, program = _gradient(grid)
        with configure(max_device_bytes=_working_set(source, program) // 3, streams=2):
            out, prof = run_streamed(source, pipe.stages, [name], backend="cpu")
        results.append(out.point_data[name])
        assert prof.chunks >= 3
    assert len(calls) == 1
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], pipe.run(backend="cpu").point_data[name])


def test_out_of_core_chunks_build_their_links_on_the_host():
    source, pipe, name, program = _gradient(_hex_grid((12, 10, 20)))
    in_core = plan_within(source, program, 20_000)
    assert not any(host_links.marked(c.grid) for c in in_core.chunks)
    for chunk in in_core.chunks:        # as an in-core GPU run leaves its device links
        chunk.grid._cache["cuda:links:int"] = "built by the device"
    out = plan_within(source, program, 20_000, 4 * _working_set(source, program), 2)
    assert all(host_links.marked(c.grid) for c in out.chunks)
    # The same chunks (the same size): the budget does not keep what it did not build.
    assert [c.grid for c in out.chunks] == [c.grid for c in in_core.chunks]
    assert not any("cuda:links:int" in c.grid._cache for c in out.chunks)


@pytest.mark.parametrize("budget, kept", [(5000, [0]), (6000, [0, 1, 2, 3]), (4000, [])])
def test_resident_topology_and_chunks_in_flight_fit_the_budget(budget, kept):
    # 40 bytes of fields and 1464 of topology each: two in flight take 3008, or
    # 80 when their topology stays; each chunk that stays adds its 1464.
    sizes = [(10, 8, 64)] * 4
    assert sorted(resident_chunks("unstructured", sizes, 4, 0, budget, 2)) == kept


# -- host links equal the device's ------------------------------------------------------
def _device_order(points, items, n_points):
    """The device's links (daxpy.cuda.unstructured_arrays._links_by_point), in NumPy."""
    order = np.argsort(points.astype(np.int64) * max(items.size, 1) + items, kind="stable")
    offsets = np.zeros(n_points + 1, np.int64)
    offsets[1:] = np.cumsum(np.bincount(points, minlength=n_points))
    return offsets, items[order]


@settings(max_examples=30, deadline=None)
@given(unstructured_grids())
def test_host_links_equal_the_device_links(grid):
    host_links.mark(grid, build_links)
    conn = grid.connectivity.astype(np.int64)
    cells = np.repeat(np.arange(grid.n_cells), np.diff(grid.offsets))
    for got, expected in zip(host_links.point_cells(grid, grid.connectivity, np.int32),
                             _device_order(conn, cells, grid.n_points)):
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, expected)
    for shape, block in grid.cell_blocks().items():
        flat = block.corners.ravel().astype(np.int64)
        got = host_links.corner_slots(grid, block.corners, shape, np.int32)
        for a, b in zip(got, _device_order(flat, np.arange(flat.size), grid.n_points)):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(host_links.cells_per_point(grid, grid.connectivity, np.int32),
                                  np.bincount(conn, minlength=grid.n_points))


# -- the GPU path ------------------------------------------------------------------------
CHAINS = {
    "gradient": lambda n: n.gradient(),
    "point_to_cell": lambda n: n.point_to_cell(),
    "gradient_magnitude_cells": lambda n: n.gradient().magnitude().point_to_cell(),
    "round_trip": lambda n: n.point_to_cell().cell_to_point().gradient(),
}


@pytest.mark.gpu
@pytest.mark.parametrize("fraction, chunk_bytes", [(1 / 3, 64 << 20), (0.6, 1 << 17)])
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_gpu_out_of_core_hexahedra_equal_in_core_run_after_run(chain, fraction, chunk_bytes):
    cupy = pytest.importorskip("cupy")
    grid = _hex_grid((48, 40, 64))
    values = np.random.default_rng(7).random(grid.n_points, np.float32)
    source = grid.with_fields(point_data={"f": values})
    pipe = daxpy.pipeline(source)
    name = CHAINS[chain](pipe.field("f")).name
    # The whole-grid run on the device (no chunks, links sorted on the device).
    expected = cupy.asnumpy(pipe.run(backend="cuda", to="device").field(name)[0])
    program = program_of(source, pipe.stages, [name])
    budget = int(_working_set(source, program) * fraction)
    found = plan_within(source, program, chunk_bytes, budget, 3)
    # A third of the working set keeps no chunk's topology; 0.6 with small chunks, some.
    assert (0 < len(found.resident) < len(found.chunks)) == (fraction > 0.5)
    for _ in range(3):        # cold, then with kept or re-uploaded chunk topology
        with configure(max_device_bytes=budget, chunk_bytes=chunk_bytes):
            out, prof = pipe.run(backend="cuda", profile=True)
        np.testing.assert_array_equal(out.field(name)[0], expected)
        assert prof.chunks == len(found.chunks) >= 3 and prof.peak_bytes <= budget


def _gradient_chain():
    grid = daxpy.UniformGrid(dims=(12, 10, 30), spacing=(0.5, 1.0, 2.0))
    source = grid.with_fields(point_data={"f": np.random.default_rng(2).random(grid.n_points)})
    pipe = daxpy.pipeline(source)
    return source, pipe, pipe.field("f").gradient().magnitude().name


def test_a_budget_for_one_chunk_in_flight_runs_on_one_stream():
    import re

    source, pipe, name = _gradient_chain()
    # The smallest chunk's bytes, as the refusal of a budget too small names them.
    with pytest.raises(DeviceMemoryError) as refused:
        run_streamed(source, pipe.stages, [name], backend="cpu", max_device_bytes=1000,
                     streams=1)
    smallest = int(re.search(r"needs about (\d+) bytes", str(refused.value)).group(1))
    # Room for one such chunk, not for two or three: the run falls back to one stream.
    out, prof = run_streamed(source, pipe.stages, [name], backend="cpu",
                             max_device_bytes=smallest, streams=3)
    np.testing.assert_array_equal(out.point_data[name], pipe.run(backend="cpu").point_data[name])
    assert prof.streams == 1 and prof.peak_bytes <= smallest


def _small_gradient_programs():
    """A small uniform grid and hexahedra, each with its gradient's program."""
    uniform = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"f": np.zeros(27)})
    pipe = daxpy.pipeline(uniform)
    program = program_of(uniform, pipe.stages, [pipe.field("f").gradient().name])
    hexahedra, _, _, hex_program = _gradient(_hex_grid((3, 3, 3)))
    return uniform, program, hexahedra, hex_program


@settings(max_examples=25, deadline=None)
@given(fields=st.integers(1, 1 << 31))
def test_default_chunks_quarter_a_small_uniform_run_and_keep_a_large_runs_size(fields):
    # The run's field bytes stand in for a grid's: on a uniform grid a quarter of
    # them, within [SMALL_CHUNK_BYTES, CHUNK_BYTES]; CHUNK_BYTES on other grids,
    # whose chunks plan their kernels one by one; a chunk_bytes setting as it is.
    uniform, program, hexahedra, hex_program = _small_gradient_programs()
    per_run = fields * uniform.n_points
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sizing, "item_bytes", lambda *_: (fields, 0))
        target = sizing.chunk_target(uniform, program, None)
        assert sizing.chunk_target(hexahedra, hex_program, None) == sizing.CHUNK_BYTES
        assert sizing.chunk_target(uniform, program, 12345) == 12345
    assert sizing.SMALL_CHUNK_BYTES <= target <= sizing.CHUNK_BYTES
    if sizing.SMALL_CHUNK_BYTES * sizing.SMALL_RUN_CHUNKS <= per_run:
        assert target == min(sizing.CHUNK_BYTES, per_run // sizing.SMALL_RUN_CHUNKS)
    else:
        assert target == sizing.SMALL_CHUNK_BYTES


@settings(max_examples=25, deadline=None)
@given(fields=st.integers(1, 1 << 31))
def test_a_replayed_structured_run_is_cut_finer_and_an_unstructured_one_is_not(fields):
    # A run replayed from CUDA graphs costs the host little a chunk: on a structured
    # grid an eighth of its field bytes, within [REPLAYED_CHUNK_BYTES, CHUNK_BYTES],
    # while it is small enough to be captured; an unstructured run, whose chunks
    # plan their ids on their first run, and a larger run keep their chunks.
    uniform, program, hexahedra, hex_program = _small_gradient_programs()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sizing, "item_bytes", lambda *_: (fields, 0))
        total = fields * uniform.n_points
        target = sizing.chunk_target(uniform, program, None, replayed=True)
        if total > sizing.CAPTURED_RUN_BYTES:
            assert target == sizing.chunk_target(uniform, program, None)
        else:
            assert target == min(sizing.CHUNK_BYTES, max(sizing.REPLAYED_CHUNK_BYTES,
                                                         total // sizing.REPLAYED_RUN_CHUNKS))
        assert (sizing.chunk_target(hexahedra, hex_program, None, replayed=True)
                == sizing.chunk_target(hexahedra, hex_program, None))
        assert sizing.chunk_target(uniform, program, 777, replayed=True) == 777
