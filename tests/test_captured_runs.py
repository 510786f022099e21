"""Streamed runs replayed from CUDA graphs (daxpy.stream.captured) give the
results of runs without graphs, bit for bit, whatever changes between runs.

The eligibility and key rules run without a GPU; the tests marked ``gpu`` run
the CUDA mover through its first (plain), second (captured) and later
(replayed) runs.
"""

import sys
import threading

import numpy as np
import pytest

import daxpy
from daxpy.errors import NaNPolicyError
from daxpy.stream import captured
from daxpy.stream.streaming import configure

from test_no_stale_topology import _hex_arrays
from test_streaming import CHAINS, _hex_lattice, _pipeline, _wanted

RUNS = 4  # plain, captured (a structured run cut finer), then replayed twice


def test_the_cpu_storage_budgets_and_large_runs_are_never_replayed():
    assert not captured.replayable(True, "cpu", False, {}, 1)
    assert captured.replayable(True, "cuda", False, {}, 1)
    assert not captured.replayable(True, "cuda", False, {"f": "float16"}, 1)
    assert not captured.replayable(False, "cuda", False, {}, 1)
    assert not captured.replayable(True, "cuda", True, {}, 1)
    assert not captured.replayable(True, "cuda", False, {}, captured.CAPTURED_RUN_BYTES + 1)


def test_a_key_follows_what_the_stages_do_and_the_inputs_dtype():
    grid = daxpy.UniformGrid(dims=(4, 4, 4), point_data={"p": np.zeros(64, np.float32)})

    def key(expression="x * 2", dtype=np.float32, bias=None):
        pipe = daxpy.pipeline(grid)
        node = pipe.field("p").map(expression)
        if bias is not None:
            node = node.bias_add(bias)
        return captured.signature(pipe.stages, {node.name: "points"}, {"p": "points"},
                                  {"p": np.zeros(64, dtype)}), pipe

    first, pipe = key()
    assert first == key()[0]  # a new pipeline of the same stages (repeated filter calls)
    assert first != key("x * 3")[0]
    assert first != key(dtype=np.float64)[0]
    assert key(bias=[0.5])[0] != key(bias=[0.25])[0]
    assert key(bias=np.zeros(captured.SNAPSHOT_ITEMS + 1))[0] is None
    pipe.stages[0].filter.nan_policy = "raise"
    assert first != captured.signature(pipe.stages, {pipe.stages[0].output: "points"},
                                       {"p": "points"}, {"p": np.zeros(64, np.float32)})


def _on_threads_switching_often(work, count: int = 8) -> list:
    """Run ``work(thread, errors)`` on ``count`` threads that switch every
    microsecond (races show up); return the errors they appended."""
    interval, errors = sys.getswitchinterval(), []

    def guarded(thread):
        try:
            work(thread, errors)
        except Exception as error:  # noqa: BLE001 - reported by the caller
            errors.append(repr(error))

    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=guarded, args=(t,)) for t in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    return errors


def test_threads_storing_entries_and_runs_of_one_grid_at_once_raise_nothing():
    from daxpy.data.decomposition import Piece

    chunk = Piece(0, grid=daxpy.UniformGrid(dims=(2,)))

    def work(thread, _errors):
        for i in range(5000):  # each store evicts the oldest key: this raced before
            captured.store(chunk, (thread, i), captured.NEVER)
            captured.mark_ran(chunk.grid, (thread, i))

    assert _on_threads_switching_often(work) == []
    assert len(chunk.grid._cache[captured._KEY]) == captured.KEYS_KEPT


def test_threads_forgetting_and_filling_one_grids_device_cache_raise_nothing():
    from daxpy.cuda.device import _PREFIX, forget

    grid = daxpy.UniformGrid(dims=(2,))

    def work(_thread, _errors):
        for i in range(2000):  # every thread fills the cache and empties it
            for key in range(20):
                grid._cache[f"{_PREFIX}test:{key}"] = i
            forget(grid)

    assert _on_threads_switching_often(work) == []


def _runs(pipe, name, values_by_run, graphs=True, **settings):
    """The outputs of consecutive runs, each with that run's input values."""
    results = []
    with configure(graphs=graphs, **settings):
        for values in values_by_run:
            _set_input(pipe, values)
            results.append(pipe.run(backend="cuda").field(name)[0].copy())
    return results


def _set_input(pipe, values):
    for data in (pipe.dataset.point_data, pipe.dataset.cell_data):
        if "f" in data:
            data["f"][...] = values


def _entries(pipe):
    """The captured entries of the pipeline's chunks."""
    found = []
    for value in pipe.dataset._cache.values():
        for chunk in value if isinstance(value, list) else ():
            grid = getattr(chunk, "grid", None)
            table = grid._cache.get(captured._KEY, {}) if grid is not None else {}
            found += [s for s in table.values() if isinstance(s, captured.Entry)]
    return found


@pytest.mark.gpu
@pytest.mark.parametrize("structured", [True, False])
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_gpu_replayed_runs_equal_runs_without_graphs(chain, structured):
    grid = (daxpy.UniformGrid(dims=(40, 36, 30), spacing=(0.5, 1.0, 2.0)) if structured
            else daxpy.UnstructuredGrid.from_blocks(*_hex_lattice((16, 12, 20))))
    rows = grid.n_points if CHAINS[chain][0] == "points" else grid.n_cells
    rng = np.random.default_rng(7)
    inputs = [rng.random(rows, np.float32) for _ in range(RUNS)]
    source, pipe = _pipeline(grid, chain, inputs[0].copy())
    name = _wanted(pipe)[0]
    chunked = {"chunk_bytes": 1 << 16 if structured else 1 << 14}
    plain = _runs(pipe, name, inputs, graphs=False, **chunked)
    source2, pipe2 = _pipeline(grid, chain, inputs[0].copy())
    replayed = _runs(pipe2, name, inputs, **chunked)
    for want, got in zip(plain, replayed):
        np.testing.assert_array_equal(got, want)
    assert _entries(pipe2), "the later runs were not replayed from graphs"
    if structured:  # slabs own contiguous rows: the entries keep them as views
        assert all(entry.owned is not None for entry in _entries(pipe2))


@pytest.mark.gpu
def test_gpu_profiled_replays_time_their_stages_and_others_give_the_same_values():
    grid = daxpy.UniformGrid(dims=(48, 40, 36), spacing=(0.5, 1.0, 2.0))
    values = np.random.default_rng(5).random(grid.n_points, np.float32)
    pipe = daxpy.pipeline(grid.with_fields(point_data={"f": values}))
    gradient = pipe.field("f").gradient()
    with configure(chunk_bytes=1 << 17):
        quiet = [pipe.run(backend="cuda").field(gradient.name)[0].copy() for _ in range(RUNS)]
        out, profile = pipe.run(backend="cuda", profile=True)
    assert _entries(pipe), "the later runs were not replayed from graphs"
    for got in quiet[1:] + [out.field(gradient.name)[0]]:
        np.testing.assert_array_equal(got, quiet[0])
    assert profile.chunks > 1 and profile.stages[0].time_ms > 0


@pytest.mark.gpu
def test_gpu_repeated_filter_calls_are_replayed():
    from daxpy.filters import Gradient

    grid = daxpy.UniformGrid(dims=(48, 40, 36), spacing=(0.5, 1.0, 2.0))
    rng = np.random.default_rng(13)
    results = []
    with configure(chunk_bytes=1 << 17):
        for _ in range(RUNS):
            values = rng.random(grid.n_points, np.float32)
            source = grid.with_fields(point_data={"f": values})
            results.append((values, Gradient("f", result="g", backend="cuda")(source)
                            .point_data["g"].copy()))
    with configure(graphs=False, chunk_bytes=1 << 17):
        for values, got in results:
            want = Gradient("f", result="g", backend="cuda")(
                grid.with_fields(point_data={"f": values})).point_data["g"]
            np.testing.assert_array_equal(got, want)
    tables = [c.grid._cache.get(captured._KEY, {}) for v in grid._cache.values()
              if isinstance(v, list) for c in v if hasattr(c, "grid")]
    assert any(isinstance(s, captured.Entry) for t in tables for s in t.values())


@pytest.mark.gpu
def test_gpu_curvilinear_chunks_build_their_points_then_are_replayed():
    dims = (24, 20, 30)
    k, j, i = np.meshgrid(*[np.arange(n, dtype=float) for n in dims[::-1]], indexing="ij")
    points = np.stack([i + 0.1 * np.sin(j), j + 0.1 * np.cos(k), k], -1).reshape(-1, 3)
    grid = daxpy.CurvilinearGrid(dims, points)
    rng = np.random.default_rng(14)
    inputs = [rng.random(grid.n_points, np.float32) for _ in range(RUNS + 2)]
    source, pipe = _pipeline(grid, "gradient", inputs[0].copy())
    name = _wanted(pipe)[0]
    replayed = _runs(pipe, name, inputs, chunk_bytes=1 << 15)
    source2, pipe2 = _pipeline(grid, "gradient", inputs[0].copy())
    plain = _runs(pipe2, name, inputs, graphs=False, chunk_bytes=1 << 15)
    for want, got in zip(plain, replayed):
        np.testing.assert_array_equal(got, want)
    assert _entries(pipe)


@pytest.mark.gpu
def test_gpu_a_new_input_array_and_a_new_pipeline_over_the_grid_are_replayed_right():
    grid = daxpy.UniformGrid(dims=(48, 40, 36))
    rng = np.random.default_rng(8)
    first = rng.random(grid.n_points, np.float32)
    pipe = daxpy.pipeline(grid.with_fields(point_data={"f": first}))
    grad = pipe.field("f").gradient()
    with configure(chunk_bytes=1 << 17):
        for _ in range(3):
            pipe.run(backend="cuda")
        other = rng.random(grid.n_points, np.float32)
        pipe2 = daxpy.pipeline(pipe.dataset.with_fields(point_data={"f": other}))
        grad2 = pipe2.field("f").gradient()
        got = pipe2.run(backend="cuda").field(grad2.name)[0]
        again = pipe.run(backend="cuda").field(grad.name)[0]
    with configure(graphs=False):
        np.testing.assert_array_equal(got, pipe2.run(backend="cuda").field(grad2.name)[0])
        np.testing.assert_array_equal(again, pipe.run(backend="cuda").field(grad.name)[0])


@pytest.mark.gpu
def test_gpu_a_check_that_reads_values_back_keeps_running_after_capture():
    grid = daxpy.UniformGrid(dims=(40, 40, 40))
    values = np.random.default_rng(9).random(grid.n_points, np.float32)
    pipe = daxpy.pipeline(grid.with_fields(point_data={"f": values}))
    node = pipe.field("f").map("x * 2")
    pipe.stages[0].filter.nan_policy = "raise"
    with configure(chunk_bytes=1 << 17):
        for _ in range(RUNS):
            pipe.run(backend="cuda")
        values[1234] = np.nan
        with pytest.raises(NaNPolicyError):
            pipe.run(backend="cuda")
    assert node.name


@pytest.mark.gpu
def test_gpu_runs_with_and_without_fusion_keep_graphs_of_their_own():
    grid = daxpy.UniformGrid(dims=(40, 40, 40))
    values = np.random.default_rng(15).random(grid.n_points, np.float32)
    source, pipe = _pipeline(grid, "maps", values)
    name = _wanted(pipe)[0]
    with configure(chunk_bytes=1 << 17):
        fused = [pipe.run(backend="cuda").field(name)[0].copy() for _ in range(RUNS)]
        unfused = [pipe.run(backend="cuda", fuse=False).field(name)[0].copy()
                   for _ in range(RUNS)]
    for got in fused[1:] + unfused:
        np.testing.assert_array_equal(got, fused[0])
    flags = {key[1] for value in pipe.dataset._cache.values() if isinstance(value, list)
             for chunk in value if hasattr(chunk, "grid")
             for key, state in chunk.grid._cache.get(captured._KEY, {}).items()
             if isinstance(state, captured.Entry)}
    assert flags == {True, False}


@pytest.mark.gpu
def test_gpu_threads_running_one_pipeline_get_their_own_results():
    grid = daxpy.UniformGrid(dims=(48, 48, 48))
    rng = np.random.default_rng(11)
    arrays = [rng.random(grid.n_points, np.float32) for _ in range(4)]
    pipes = []
    for values in arrays:
        pipe = daxpy.pipeline(grid.with_fields(point_data={"f": values}))
        pipes.append((pipe, pipe.field("f").point_to_cell().name))
    with configure(graphs=False, chunk_bytes=1 << 17):
        want = [p.run(backend="cuda").field(n)[0].copy() for p, n in pipes]
    failures = []

    def work(i):
        try:
            with configure(chunk_bytes=1 << 17):
                for _ in range(RUNS + 2):
                    pipe, name = pipes[i]
                    got = pipe.run(backend="cuda").field(name)[0]
                    if not np.array_equal(got, want[i]):
                        failures.append(i)
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(repr(error))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


@pytest.mark.gpu
def test_gpu_a_changed_source_drops_its_graphs():
    points, *topology = _hex_arrays(14)
    grid = daxpy.UnstructuredGrid(points, *topology)
    values = np.random.default_rng(12).random(grid.n_points, np.float32)
    pipe = daxpy.pipeline(grid.with_fields(point_data={"f": values}))
    node = pipe.field("f").gradient()
    with configure(chunk_bytes=1 << 14):
        for _ in range(RUNS):
            pipe.run(backend="cuda")
        points[:, 2] *= 3.0
        got = pipe.run(backend="cuda").field(node.name)[0]
    with configure(graphs=False, chunk_bytes=1 << 14):
        want = pipe.run(backend="cuda").field(node.name)[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
def test_gpu_threads_making_parameter_arrays_at_once_share_one_table(monkeypatch):
    from daxpy.cuda import device

    monkeypatch.setattr(device, "_CONSTANT_BYTES_LIMIT", 512)  # evict at every insert

    def work(thread, errors):
        for i in range(400):
            values = np.full(4, float((thread + i) % 40))
            if not np.array_equal(device.constant(values).get(), values):
                errors.append((thread, i))
            device.constants()

    assert _on_threads_switching_often(work) == []
    assert device._constant_bytes == sum(v.nbytes for v in device.constants().values())
