"""daxpy.dask: pipelines over Dask-chunked grids equal the single-domain run."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")

import daxpy  # noqa: E402
import daxpy.dask as dd  # noqa: E402
from daxpy.errors import ArgumentError, FieldError  # noqa: E402
from daxpy.filters import Gradient, PointToCell  # noqa: E402

from strategies import (field_arrays, mixed_grid_all_shapes, structured_grids,  # noqa: E402
                        unstructured_grids)

MAPS = ("sin(x)", "x * x + 1", "cos(x) * 2")


@st.composite
def chains(draw, start="points", max_length=4):
    """A random valid chain of verbs, as (verb, argument) pairs."""
    association, steps = start, []
    for _ in range(draw(st.integers(1, max_length))):
        verbs = ["magnitude", "map"] + (["gradient", "point_to_cell", "cell_gradient"]
                                        if association == "points" else ["cell_to_point"])
        verb = draw(st.sampled_from(verbs))
        steps.append((verb, draw(st.sampled_from(MAPS)) if verb == "map" else None))
        if verb in ("point_to_cell", "cell_gradient"):
            association = "cells"
        elif verb == "cell_to_point":
            association = "points"
    return steps


def _build(node, steps, branch):
    first = None
    for verb, argument in steps:
        if verb == "map":
            node = node.map(argument)
        elif verb == "cell_gradient":
            node = node.gradient(kind="cell")
        else:
            node = getattr(node, verb)()
        first = first or node
    if branch:
        first.magnitude()
    return node


def _run_both(grid, steps, values, association, branch, **run):
    kind = "point_data" if association == "points" else "cell_data"
    single = daxpy.pipeline(grid.with_fields(**{kind: {"f": values}}))
    _build(single.field("f"), steps, branch)
    expected = single.run(backend="cpu")
    pipe = dd.pipeline(dd.DaskGrid(grid, **{kind: {"f": values}}))
    _build(pipe.field("f"), steps, branch)
    result = pipe.run(backend="cpu", **run)
    return expected, result


def _assert_same(expected, result, exact=True):
    got = result.compute()
    names = [(n, a) for a in ("points", "cells") for n in expected.fields(a)]
    assert sorted(names) == sorted((n, a) for a in ("points", "cells") for n in got.fields(a))
    for name, association in names:
        want = expected.field(name, association)[0]
        have = got.field(name, association)[0]
        assert have.dtype == want.dtype and have.shape == want.shape, name
        if exact:
            np.testing.assert_array_equal(have, want, err_msg=name)
        else:
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6, err_msg=name)


@st.composite
def chunkings(draw, shape):
    """Dask chunks over a C-order point shape, cut at random places."""
    chunks = []
    for n in shape:
        cuts = sorted(draw(st.sets(st.integers(1, max(n - 1, 1)), max_size=3))) if n > 1 else []
        edges = [0] + [c for c in cuts if c < n] + [n]
        chunks.append(tuple(b - a for a, b in zip(edges, edges[1:]) if b > a))
    return tuple(chunks)


@settings(max_examples=40, deadline=None)
@given(structured_grids(max_side=11), st.data())
def test_structured_pipelines_equal_the_single_domain_run_bitwise(grid, data):
    start = data.draw(st.sampled_from(["points", "cells"]))
    steps = data.draw(chains(start))
    size = grid.n_points if start == "points" else grid.n_cells
    values = data.draw(field_arrays(size, ncomp=data.draw(st.sampled_from([1, 3]))))
    chunks = data.draw(chunkings(grid.point_shape()))
    expected, result = _run_both(grid, steps, values, start, data.draw(st.booleans()),
                                 chunks=chunks)
    _assert_same(expected, result)


@settings(max_examples=30, deadline=None)
@given(unstructured_grids(), st.integers(1, 5), st.data())
def test_unstructured_pipelines_equal_the_single_domain_run_bitwise(grid, pieces, data):
    start = data.draw(st.sampled_from(["points", "cells"]))
    steps = data.draw(chains(start, max_length=3))
    size = grid.n_points if start == "points" else grid.n_cells
    values = data.draw(field_arrays(size, ncomp=data.draw(st.sampled_from([1, 3]))))
    expected, result = _run_both(grid, steps, values, start, data.draw(st.booleans()),
                                 chunks=pieces)
    _assert_same(expected, result)


def test_fy11_pipeline2_on_slabs_of_a_float32_grid():
    grid = daxpy.UniformGrid(dims=(17, 13, 40), origin=(0.1, 0.2, 0.3),
                             spacing=(0.07, 0.11, 0.05))
    values = np.random.default_rng(3).standard_normal((grid.n_points, 3)).astype(np.float32)
    steps = [("magnitude", None), ("gradient", None), ("map", "sin(x)"), ("map", "x*x"),
             ("map", "cos(x)")]
    expected, result = _run_both(grid, steps, values, "points", False,
                                 chunks=((7, 11, 9, 13), (13,), (17,)))
    assert result.point_data[next(iter(result.point_data))].chunks[0] == (7, 11, 9, 13)
    _assert_same(expected, result)


def test_chunks_keep_the_pipeline_depth_of_layers():
    grid = daxpy.UniformGrid(dims=(5, 4, 20))
    values = np.arange(grid.n_points, dtype=np.float64) ** 1.5
    steps = [("gradient", None), ("point_to_cell", None), ("cell_to_point", None),
             ("gradient", None)]
    expected, result = _run_both(grid, steps, values, "points", False,
                                 chunks=((1, 2, 3, 4, 5, 5), (4,), (5,)))
    name = next(iter(result.point_data))
    assert all(c >= 4 for c in result.point_data[name].chunks[0])
    _assert_same(expected, result)


def test_structured_graph_has_a_task_per_block_and_moves_only_halo_layers():
    grid = daxpy.UniformGrid(dims=(6, 8, 10))
    values = da.from_array(np.random.default_rng(5).random((10, 8, 6)), chunks=(5, 4, 6))
    pipe = dd.pipeline(dd.DaskGrid(grid, point_data={"v": values}))
    g = pipe.gradient("v")
    out = pipe.run(backend="cpu", chunks=None).point_data[g.name]
    graph = dict(out.__dask_graph__())
    added = set(graph) - set(dict(values.__dask_graph__()))
    blocks = set(dask.core.flatten(out.__dask_keys__()))
    cuts = sorted(added - blocks)
    assert blocks <= added and len(cuts) == 4 * 3  # two faces and a corner per block
    assert not any("rechunk" in name for name in out.__dask_graph__().layers)
    for cut in dask.get(graph, cuts):
        assert min(cut.shape[:2]) == 1  # one layer (the depth) of a neighbour's chunk
    single = daxpy.pipeline(grid.with_fields(point_data={"v": values.compute().ravel()}))
    single.gradient("v", result=g.name)
    np.testing.assert_array_equal(out.compute().reshape(-1, 3),
                                  single.run(backend="cpu").point_data[g.name])


def test_flat_and_c_order_fields_give_the_same_result():
    grid = daxpy.RectilinearGrid([0, 1, 3, 4], [0, 2, 3], [0, 1, 5, 6])
    values = np.random.default_rng(0).random(grid.n_points)
    results = []
    for given_values in (values, da.from_array(values.reshape(grid.point_shape()),
                                               chunks=(2, 3, 4))):
        pipe = dd.pipeline(dd.DaskGrid(grid, point_data={"p": given_values}))
        pipe.gradient("p", result="g")
        results.append(pipe.run(backend="cpu", chunks=None).compute().point_data["g"])
    np.testing.assert_array_equal(results[0], results[1])


def test_apply_runs_one_filter_with_all_its_outputs():
    grid = daxpy.UniformGrid(dims=(6, 5, 9), spacing=(0.3, 0.2, 0.1))
    velocity = np.random.default_rng(1).random((grid.n_points, 3))
    flt = Gradient("v", result="G", vorticity=True, qcriterion="Q", backend="cpu")
    expected = flt(grid.with_fields(point_data={"v": velocity}))
    out = dd.apply(flt, dd.DaskGrid(grid, point_data={"v": velocity}), backend="cpu",
                   chunks=((3, 3, 3), (5,), (6,))).compute()
    assert sorted(out.point_data) == ["G", "Q", "Vorticity"]
    for name in out.point_data:
        np.testing.assert_array_equal(out.point_data[name], expected.point_data[name])
    cells = dd.apply(PointToCell("v", result="c"), dd.DaskGrid(grid, {"v": velocity}),
                     backend="cpu", chunks=((4, 5), (5,), (6,))).compute()
    np.testing.assert_array_equal(
        cells.cell_data["c"], PointToCell("v", result="c", backend="cpu")(
            grid.with_fields(point_data={"v": velocity})).cell_data["c"])


def test_local_cluster_with_planned_chunks():
    distributed = pytest.importorskip("distributed")
    grid = daxpy.UniformGrid(dims=(12, 10, 30), spacing=(0.5, 0.25, 0.1))
    values = np.random.default_rng(2).random((grid.n_points, 3))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        pieces, memory = dd.resources(on_gpu=False)
        assert pieces == 2 and memory > 0
        steps = [("magnitude", None), ("gradient", None), ("map", "sin(x)")]
        expected, result = _run_both(grid, steps, values, "points", True)
        name = next(iter(result.point_data))
        assert len(result.point_data[name].chunks[0]) % 2 == 0
        _assert_same(expected, result)
        ugrid = mixed_grid_all_shapes()
        pvalues = np.random.default_rng(3).random(ugrid.n_points)
        expected, result = _run_both(ugrid, [("gradient", None), ("point_to_cell", None)],
                                     pvalues, "points", False)
        _assert_same(expected, result)


def test_wrong_shapes_and_arguments_are_refused():
    grid = daxpy.UniformGrid(dims=(4, 3))
    with pytest.raises(FieldError, match="'p'.*expected"):
        dd.DaskGrid(grid, point_data={"p": np.zeros(5)})
    with pytest.raises(FieldError, match="cell field 'c'"):
        dd.DaskGrid(grid, cell_data={"c": np.zeros((2, 2, 2))})
    pipe = dd.pipeline(dd.DaskGrid(grid, point_data={"p": np.zeros(12)}))
    pipe.gradient("p")
    with pytest.raises(ArgumentError, match="to must be"):
        pipe.run(backend="cpu", to="disk")
    with pytest.raises(ArgumentError, match="chunks must be"):
        pipe.run(backend="cpu", chunks=[3.5])


@pytest.mark.gpu
def test_cupy_chunks_stay_on_the_device_and_match_the_single_gpu_run():
    cupy = pytest.importorskip("cupy")
    grid = daxpy.UniformGrid(dims=(33, 31, 64), spacing=(0.1, 0.2, 0.05))
    host = np.random.default_rng(4).random((grid.n_points, 3)).astype(np.float32)
    device = da.from_array(cupy.asarray(host).reshape(grid.point_shape() + (3,)),
                           chunks=(16, 31, 33, 3), asarray=False)
    pipe = dd.pipeline(dd.DaskGrid(grid, point_data={"v": device}))
    out = pipe.field("v").magnitude().gradient().map("sin(x)").map("x*x").map("cos(x)")
    lazy = pipe.run(backend="cuda", to="device", chunks=None)
    result = lazy.point_data[out.name].compute()
    assert isinstance(result, cupy.ndarray)
    single = daxpy.pipeline(grid.with_fields(point_data={"v": cupy.asarray(host)}))
    single.field("v").magnitude().gradient().map("sin(x)").map("x*x").map("cos(x)")
    expected = single.run(backend="cuda", to="device").point_data[out.name]
    np.testing.assert_allclose(cupy.asnumpy(result).reshape(expected.shape),
                               cupy.asnumpy(expected), rtol=1e-6, atol=1e-6)


def test_cli_run_on_a_dask_cluster_writes_the_single_domain_result(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("vtk")
    from daxpy.cli import main
    from daxpy.io import read

    steps = ["--step", "gradient", "--step", "magnitude", "--step", "point_to_cell"]
    assert main(["run", "wavelet:12", str(tmp_path / "here.vti"), "--field", "RTData",
                 "--backend", "cpu"] + steps) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        assert main(["run", "wavelet:12", str(tmp_path / "there.vti"), "--field", "RTData",
                     "--backend", "cpu", "--dask", cluster.scheduler_address,
                     "--pieces", "3"] + steps) == 0
    assert "Dask cluster at" in capsys.readouterr().out
    here, there = read(tmp_path / "here.vti"), read(tmp_path / "there.vti")
    np.testing.assert_array_equal(there.cell_data["point_to_cell_3"],
                                  here.cell_data["point_to_cell_3"])


def test_cli_run_refuses_unknown_steps(capsys):
    from daxpy.cli import main

    assert main(["run", "wavelet:4", "--field", "RTData", "--step", "blur"]) == 2
    assert "the verb must be one of" in capsys.readouterr().err
