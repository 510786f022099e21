"""A filter call is a one-stage pipeline run by the engine (issue 12, item 1).

The call goes through :func:`daxpy.stream.streaming.run_stages`, as every
pipeline, ``daxpy run`` and Dask run does: the same residency rules, streaming
of host data on the GPU, out-of-core budgets, NaN policy and profiles. Results
come back where the input lived unless ``to=`` says otherwise.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.engine.run import Profile
from daxpy.errors import ArgumentError, NaNPolicyError
from daxpy.filters import (BiasAdd, CellToPoint, FieldMap, Gradient, Magnitude, Normalize,
                           PassThrough, PointToCell)
from daxpy.stream.streaming import StreamProfile, configure


def _grid(dims=(5, 4, 3), seed=0):
    rng = np.random.default_rng(seed)
    grid = daxpy.UniformGrid(dims=dims, spacing=(0.5, 1.0, 2.0))
    grid.point_data["t"] = rng.random(grid.n_points)
    grid.point_data["v"] = rng.random((grid.n_points, 3)).astype(np.float32)
    grid.cell_data["c"] = rng.random(grid.n_cells)
    return grid


def _filters(backend):
    return [Gradient("v", backend=backend, vorticity=True),
            Gradient("t", kind="cell", backend=backend),
            Gradient("v", qcriterion="q", compute_gradient=False, backend=backend),
            PointToCell("t", result="tc", backend=backend),
            CellToPoint("c", result="cp", backend=backend),
            Magnitude("v", backend=backend),
            Normalize("v", backend=backend),
            BiasAdd("v", [1.0, 2.0, 3.0], backend=backend),
            PassThrough("t", dtype="float32", backend=backend),
            FieldMap("t * 2 + sqrt(t)", result="m", backend=backend)]


def _same_fields(a, b):
    for mine, theirs in ((a.point_data, b.point_data), (a.cell_data, b.cell_data)):
        assert sorted(mine) == sorted(theirs)
        for name in mine:
            left, right = mine[name], theirs[name]
            assert left.dtype == right.dtype, name
            np.testing.assert_array_equal(daxpy.data.arrays.to_host(left),
                                          daxpy.data.arrays.to_host(right), err_msg=name)


@pytest.mark.parametrize("index", range(10))
def test_a_call_equals_its_worklets_run_directly(index):
    grid = _grid()
    flt = _filters("cpu")[index]
    _same_fields(flt(grid), flt.apply(grid))


@given(st.tuples(st.integers(2, 6), st.integers(1, 5), st.integers(1, 4)),
       st.integers(0, 9), st.integers(0, 2 ** 16))
@settings(max_examples=25)
def test_a_call_equals_a_one_stage_pipeline(dims, index, seed):
    grid = _grid(dims, seed)
    flt = _filters("cpu")[index]
    called = flt(grid)
    pipe = daxpy.pipeline(grid)
    pipe.stages.append(daxpy.engine.stage.Stage(1, flt.verb, flt, tuple(flt.reads()),
                                                flt.outputs()[0]))
    ran = pipe.run(backend="cpu")  # its outputs: those of the one stage
    for data, theirs in ((called.point_data, ran.point_data), (called.cell_data, ran.cell_data)):
        for name in theirs:
            np.testing.assert_array_equal(data[name], theirs[name])


def test_profile_on_the_call_names_the_stage_and_its_bytes():
    grid = _grid()
    out, profile = Magnitude("v", backend="cpu")(grid, profile=True)
    assert isinstance(profile, Profile)
    [record] = profile.stages
    assert (record.verb, record.output) == ("magnitude", "v_magnitude")
    assert record.bytes_moved == grid.point_data["v"].nbytes + out.point_data["v_magnitude"].nbytes
    assert isinstance(Gradient("t", backend="cpu")(grid), daxpy.DataSet)


def test_the_input_is_kept_and_new_fields_added():
    grid = _grid()
    out = PointToCell("t", backend="cpu")(grid)   # VTK's default: the input's name
    assert out.point_data["t"] is grid.point_data["t"]
    assert sorted(out.cell_data) == ["c", "t"]
    assert sorted(grid.cell_data) == ["c"]


def test_where_results_go_is_checked():
    grid = _grid()
    with pytest.raises(ArgumentError, match="to must be 'host' or 'device'"):
        Magnitude("v", backend="cpu")(grid, to="gpu")
    with pytest.raises(ArgumentError, match="to='device' needs the CUDA backend"):
        Magnitude("v", backend="cpu")(grid, to="device")


def test_nan_policy_holds_on_the_call():
    grid = _grid()
    grid.point_data["t"] = grid.point_data["t"].copy()
    grid.point_data["t"][3] = np.nan
    with pytest.raises(NaNPolicyError, match="'t'"):
        PointToCell("t", backend="cpu", nan_policy="raise")(grid)
    assert np.isnan(PointToCell("t", backend="cpu")(grid).cell_data["t"]).any()


def test_a_filter_reading_no_field_in_the_grid_names_it():
    with pytest.raises(daxpy.errors.UnknownFieldError, match="nope"):
        Magnitude("nope", backend="cpu")(_grid())


@pytest.mark.gpu
@pytest.mark.parametrize("index", range(10))
def test_cuda_calls_on_host_data_stream_and_match_the_cpu(index):
    grid = _grid((9, 8, 40))
    cpu = _filters("cpu")[index](grid)
    with configure(chunk_bytes=20_000):
        out, profile = _filters("cuda")[index](grid, profile=True)
    assert isinstance(profile, StreamProfile) and profile.chunks > 1
    for data in (out.point_data, out.cell_data):
        for values in data.values():
            assert isinstance(values, np.ndarray)
    _close(out, cpu)


@pytest.mark.gpu
@pytest.mark.parametrize("index", range(10))
def test_device_in_device_out_and_to_overrides(index):
    import cupy

    grid = _grid((9, 8, 7))
    on_device = grid.with_fields({n: cupy.asarray(v) for n, v in grid.point_data.items()},
                                 {n: cupy.asarray(v) for n, v in grid.cell_data.items()})
    flt = _filters("cuda")[index]
    out = flt(on_device)
    for name in flt.outputs():
        assert isinstance(out.field(name)[0], cupy.ndarray), name
    host = flt(on_device, to="host")
    for name in flt.outputs():
        assert isinstance(host.field(name)[0], np.ndarray), name
    device = flt(grid, to="device")
    for name in flt.outputs():
        assert isinstance(device.field(name)[0], cupy.ndarray), name
    _close(host, _filters("cpu")[index](grid))


@pytest.mark.gpu
def test_out_of_core_budget_holds_on_a_call():
    grid = _grid((16, 16, 64))
    with configure(max_device_bytes=400_000):
        out, profile = Gradient("t", backend="cuda")(grid, profile=True)
    assert profile.chunks > 1 and profile.peak_bytes <= 400_000
    _close(out, Gradient("t", backend="cpu")(grid))


def _close(out, cpu):
    for mine, theirs in ((out.point_data, cpu.point_data), (out.cell_data, cpu.cell_data)):
        assert sorted(mine) == sorted(theirs)
        for name in theirs:
            np.testing.assert_allclose(daxpy.data.arrays.to_host(mine[name]), theirs[name],
                                       rtol=2e-5, atol=1e-5, err_msg=name)
