"""Pipelines: chained and branched graphs equal the filters run one by one."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.errors import ArgumentError, ExpressionError
from daxpy.filters import CellToPoint, FieldMap, Gradient, Magnitude, PointToCell

from strategies import any_grids, field_arrays


def _grid_with_field(grid, values):
    return grid.with_fields(point_data={"p": values})


@settings(max_examples=25)
@given(st.data())
def test_chain_equals_filters_one_by_one(data):
    grid = data.draw(any_grids())
    grid = _grid_with_field(grid, data.draw(field_arrays(grid.n_points, ncomp=1)))
    pipe = daxpy.pipeline(grid)
    out = pipe.gradient("p").magnitude().point_to_cell().map("sqrt(x) + 1")
    result = pipe.run(backend="cpu", outputs=[out])

    step = Gradient("p", result="g", backend="cpu")(grid)
    step = Magnitude("g", result="m", backend="cpu")(step)
    step = PointToCell("m", result="c", backend="cpu")(step)
    step = FieldMap("sqrt(c) + 1", result="r", association="cells", backend="cpu")(step)
    assert list(result.cell_data) == [out.name] and not list(result.point_data)
    np.testing.assert_array_equal(result.cell_data[out.name], step.cell_data["r"])


@settings(max_examples=15)
@given(st.data())
def test_branches_give_the_same_results_in_any_order(data):
    grid = data.draw(any_grids())
    grid = _grid_with_field(grid, data.draw(field_arrays(grid.n_points, ncomp=3)))
    verbs = ["magnitude", "point_to_cell", "map"]
    order = data.draw(st.permutations(verbs))
    results = []
    for sequence in (verbs, order):
        pipe = daxpy.pipeline(grid)
        grad = pipe.gradient("p", result="g")
        for verb in sequence:
            if verb == "map":
                grad.map("x * 2", result=verb)
            else:
                getattr(grad, verb)(result=verb)
        out = pipe.run(backend="cpu", outputs=verbs)
        results.append({v: out.field(v)[0] for v in verbs})
    for verb in verbs:
        np.testing.assert_array_equal(results[0][verb], results[1][verb])


def test_default_outputs_are_the_leaves_and_intermediates_are_released():
    grid = daxpy.UniformGrid(dims=(5, 4, 3), point_data={"p": np.random.default_rng(0).random(60)})
    pipe = daxpy.pipeline(grid)
    grad = pipe.gradient("p")
    grad.magnitude("m")
    grad.point_to_cell("c")
    out, profile = pipe.run(backend="cpu", profile=True)
    assert sorted(out.point_data) == ["m"] and sorted(out.cell_data) == ["c"]
    assert [r.output for r in profile.stages] == [grad.name, "m", "c"]
    assert profile.uploads == 0 and profile.peak_bytes > 0
    assert "transfers" in str(profile)
    assert "p" in grid.point_data and len(grid.point_data) == 1


def test_cell_to_point_chain_and_printing():
    grid = daxpy.UniformGrid(dims=(3, 3, 3), cell_data={"c": np.arange(8.0)})
    pipe = daxpy.pipeline(grid)
    node = pipe.cell_to_point("c").gradient()
    text = str(pipe)
    assert "cell_to_point(c)" in text and f"gradient(cell_to_point_1) -> {node.name}" in text
    expected = Gradient("cp", backend="cpu")(CellToPoint("c", result="cp", backend="cpu")(grid))
    np.testing.assert_array_equal(pipe.run(backend="cpu").point_data[node.name],
                                  expected.point_data["Gradient"])


def test_pipeline_errors():
    grid = daxpy.UniformGrid(dims=(3,), point_data={"p": np.zeros(3)})
    pipe = daxpy.pipeline(grid)
    pipe.magnitude("p", result="m")
    with pytest.raises(ArgumentError, match="already has a field named 'm'"):
        pipe.magnitude("p", result="m")
    with pytest.raises(ArgumentError, match="unknown pipeline output"):
        pipe.run(backend="cpu", outputs=["nope"])
    with pytest.raises(ArgumentError, match="to must be"):
        pipe.run(backend="cpu", to="disk")
    with pytest.raises(ArgumentError, match="CUDA backend"):
        pipe.run(backend="cpu", to="device")
    with pytest.raises(ExpressionError):
        pipe.field("p").map("x.__class__")
    with pytest.raises(AttributeError):
        pipe.not_a_verb("p")


def test_combine_reads_several_outputs():
    grid = daxpy.UniformGrid(dims=(4, 3), point_data={"p": np.arange(12.0)})
    pipe = daxpy.pipeline(grid)
    terms = [pipe.bias_add("p", [float(i)]) for i in range(3)]
    total = pipe.combine(" + ".join(t.name for t in terms) + " - p")
    assert pipe.stages[-1].depends_on == (1, 2, 3)
    out = pipe.run(backend="cpu", outputs=[total])
    np.testing.assert_array_equal(out.point_data[total.name], 2 * np.arange(12.0) + 3)
    with pytest.raises(ArgumentError, match="both points and cells"):
        cells = pipe.point_to_cell("p")
        pipe.combine(f"{cells.name} + p")


def _seed000_graph(grid, layers, width, rng):
    pipe = daxpy.pipeline(grid)
    node = pipe.field("x")
    for _ in range(layers):
        terms = [node.bias_add(rng.standard_normal(4).astype(np.float32)) for _ in range(width)]
        node = pipe.combine(" + ".join(t.name for t in terms))
    return pipe, node


@pytest.mark.gpu
def test_concurrent_and_serial_runs_agree_with_the_cpu_and_upload_each_input_once():
    rng = np.random.default_rng(5)
    grid = daxpy.UniformGrid(dims=(64, 32), point_data={"x": rng.random((2048, 4), np.float32)})
    pipe, last = _seed000_graph(grid, layers=3, width=5, rng=rng)
    expected = pipe.run(backend="cpu").point_data[last.name]
    for concurrent in (True, False):
        out, profile = pipe.run(backend="cuda", profile=True, concurrent=concurrent, to="device")
        np.testing.assert_allclose(out.point_data[last.name].get(), expected, rtol=1e-5)
        assert profile.device_ms > 0 and profile.downloads == 0
    fresh = daxpy.pipeline(grid.with_fields(point_data={"y": rng.random((2048, 4), np.float32)}))
    fresh.gradient("x").magnitude()
    fresh.point_to_cell("y")
    fresh.combine("x + y")
    _, profile = fresh.run(backend="cuda", profile=True, to="device")
    assert profile.uploads == 2


def test_map_reading_another_output_waits_for_it():
    grid = daxpy.UniformGrid(dims=(3, 3), point_data={"p": np.arange(9.0)})
    pipe = daxpy.pipeline(grid)
    doubled = pipe.field("p").map("2 * x", result="d")
    total = pipe.field("p").map("x + d")
    assert pipe.stages[-1].inputs == ("p", "d")
    assert pipe.stages[-1].depends_on == (pipe.stages[0].index,)
    np.testing.assert_array_equal(pipe.run(backend="cpu", outputs=[total, doubled])
                                  .point_data[total.name], 3 * np.arange(9.0))


def test_derived_gradient_outputs_can_be_requested():
    rng = np.random.default_rng(2)
    grid = daxpy.UniformGrid(dims=(4, 4, 4), point_data={"v": rng.random((64, 3))})
    pipe = daxpy.pipeline(grid)
    pipe.gradient("v", qcriterion="q", vorticity=True, compute_gradient=False)
    out = pipe.run(backend="cpu")
    assert sorted(out.point_data) == ["Vorticity", "q"]
    expected = Gradient("v", qcriterion="q", backend="cpu")(grid).point_data["q"]
    np.testing.assert_array_equal(pipe.run(backend="cpu", outputs=["q"]).point_data["q"], expected)
    with pytest.raises(ArgumentError, match="already has a field named 'q'"):
        pipe.gradient("v", divergence="q")
