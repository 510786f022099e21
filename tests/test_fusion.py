"""Fused CUDA kernels: chains of maps around the topological worklets.

Random chains of 1-6 elementwise maps (bias add, pass-through, field maps of
one and two fields, magnitude, and divergence/vorticity/Q-criterion after a
gradient of a vector field) are placed before and after point-to-cell,
cell-to-point, point and cell gradients, or stand alone, on every grid type.
Without a GPU their kernels must compile (nvcc or NVRTC, sm_80 and sm_90);
on the GPU the fused kernel must give what the same worklets give one by one.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.cuda.fusion import Step, accepts_post_maps, chain_source, make_fused_plan
from daxpy.errors import ArgumentError

from strategies import any_grids
from test_cuda_codegen import ARCHS, _compile_ptx, _have_compiler

CORES = [None, "point_to_cell", "cell_to_point", "point_gradient", "cell_gradient"]
OUTPUT = {"point_to_cell": "cells", "cell_to_point": "points", "point_gradient": "points",
          "cell_gradient": "cells"}
EXPRESSIONS = ["x * 2 + 1", "sin(x) - x", "where(x > 0, sqrt(x), -x)", "abs(x) * 0.5",
               "x * x - 3", "x + y"]


def _n(grid, association):
    return grid.n_points if association == "points" else grid.n_cells


@st.composite
def maps(draw, grid, association, dtype, components, count):
    """``count`` map steps from a field of ``dtype`` and ``components``, and
    the dtype and components they end with."""
    steps = []
    for _ in range(count):
        kinds = ["bias_add", "pass_through", "field_map", "magnitude"]
        if components == 9:
            kinds += ["divergence", "vorticity", "qcriterion"]
        kind = draw(st.sampled_from(kinds))
        if kind == "bias_add":
            bias = draw(st.lists(st.floats(-2, 2, width=32), min_size=components,
                                 max_size=components))
            steps.append(Step("bias_add", {"bias": bias}))
        elif kind == "pass_through":
            dtype = np.dtype(draw(st.sampled_from(["float32", "float64"])))
            steps.append(Step("pass_through", {"dtype": dtype.name}))
        elif kind == "field_map":
            expression = draw(st.sampled_from(EXPRESSIONS))
            fields = {}
            if "y" in expression:
                seed = draw(st.integers(0, 2**16))
                y = np.random.default_rng(seed).uniform(-3, 3, _n(grid, association))
                fields["y"] = y.astype(dtype)
            steps.append(Step("field_map", {"expression": expression, "fields": fields}))
        else:
            steps.append(Step(kind))
            components = 3 if kind == "vorticity" else 1
    return steps, dtype, components


@st.composite
def chains(draw, grid):
    """(association, dtype, components, steps) of a valid chain on ``grid``."""
    core = draw(st.sampled_from(CORES))
    if core is None:
        association = draw(st.sampled_from(["points", "cells"]))
    else:
        association = "cells" if core == "cell_to_point" else "points"
    dtype = np.dtype(draw(st.sampled_from(["float32", "float64"])))
    components = draw(st.sampled_from([1, 3]))
    total = draw(st.integers(1, 6))
    post_allowed = core is not None and accepts_post_maps(core, grid)
    n_pre = draw(st.integers(0, total)) if post_allowed else total
    steps, mid_dtype, mid_c = draw(maps(grid, association, dtype, components, n_pre))
    if core is not None:
        steps.append(Step(core))
        if core.endswith("gradient"):
            mid_c *= 3
        post, _, _ = draw(maps(grid, OUTPUT[core], mid_dtype, mid_c, total - n_pre))
        steps += post
    return association, dtype, components, steps


def _tail(components):
    return () if components == 1 else (components,)


@pytest.mark.skipif(not _have_compiler(), reason="needs nvcc or NVRTC (CuPy)")
@settings(max_examples=4, deadline=None)
@given(data=st.data())
def test_fused_kernels_compile(data, tmp_path_factory):
    kernels = {}
    for _ in range(6):
        grid = data.draw(any_grids())
        association, dtype, components, steps = data.draw(chains(grid))
        plan = make_fused_plan(grid, association, dtype, _tail(components), steps)
        for launch in plan.launches:
            kernels.update((kernel.name, kernel) for kernel, _, _ in launch.sequence())
    source = "\n".join(k.source() for k in kernels.values())
    workdir = tmp_path_factory.mktemp("fused")
    for arch in ARCHS:
        ptx = _compile_ptx(source, arch, workdir)
        for name in kernels:
            assert f".entry {name}(" in ptx


def test_fused_kernel_names_say_their_parts():
    grid = daxpy.UniformGrid(dims=(8, 4, 4))
    plan = make_fused_plan(grid, "points", "float32", (), [
        Step("field_map", {"expression": "x * 2"}), Step("point_to_cell"), Step("magnitude")])
    (launch,) = plan.launches
    name = launch.kernel.name
    assert name.startswith("fused__field_map_") and "__point_to_cell__magnitude__uniform3d" in name
    assert plan.out_shape == (grid.n_cells,)
    plan = make_fused_plan(grid, "points", "float32", (3,),
                           [Step("point_gradient"), Step("qcriterion")])
    assert [s.kernel.name for s in plan.launches] == [
        "fused__point_gradient__qcriterion__uniform3d__f32__c3__march1__w4"]
    assert plan.out_shape == (grid.n_points,)


def test_gradient_then_magnitude_never_writes_the_gradient():
    grid = daxpy.UniformGrid(dims=(8, 4, 4))
    plan = make_fused_plan(grid, "points", "float32", (),
                           [Step("point_gradient"), Step("magnitude")])
    assert plan.out_shape == (grid.n_points,)
    source = plan.launches[0].kernel.kernel()
    assert "dax::ArraySink<float, 1>" in source and "ArraySink<float, 3>" not in source


def test_chains_are_checked():
    grid = daxpy.UniformGrid(dims=(4, 4))
    with pytest.raises(ArgumentError, match="at most one topological"):
        make_fused_plan(grid, "points", "float32", (), [Step("point_to_cell"),
                                                         Step("cell_to_point")])
    with pytest.raises(ArgumentError, match="at least one step"):
        make_fused_plan(grid, "points", "float32", (), [])


def test_fused_source_is_printable(capsys):
    from daxpy.cli import main

    assert main(["source", "map>point_to_cell>magnitude", "--grid", "uniform3d",
                 "--param", "expression=sin(x)"]) == 0
    out = capsys.readouterr().out
    assert "fused__field_map_" in out and "__point_to_cell__magnitude__uniform3d" in out
    assert "\\bswitch\\b" not in out and "switch (" not in out
    assert chain_source([Step("bias_add", {"bias": [1.0]}), Step("magnitude")],
                        daxpy.UniformGrid(dims=(3,))).count("extern \"C\"") == 1


# ---------------------------------------------------------------- on the GPU
def _unfused(grid, values, association, steps):
    from daxpy.cuda.dispatch import run

    for step in steps:
        values = run(step.name, grid, values, association, **step.params)
        association = OUTPUT.get(step.name, association)
    return values


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(st.data())
def test_fused_equals_unfused(data):
    cupy = pytest.importorskip("cupy")
    from daxpy.cuda.fusion import run_chain

    grid = data.draw(any_grids())
    association, dtype, components, steps = data.draw(chains(grid))
    seed = data.draw(st.integers(0, 2**16))
    shape = (_n(grid, association),) + _tail(components)
    values = np.random.default_rng(seed).uniform(-4, 4, shape).astype(dtype)
    fused = cupy.asnumpy(run_chain(grid, values, association, steps))
    unfused = cupy.asnumpy(_unfused(grid, values, association, steps))
    assert fused.shape == unfused.shape and fused.dtype == unfused.dtype
    # The same worklets, the same rounding at every map boundary: equal up to
    # the last bit, barring the compiler's freedom inside one map.
    rtol = 1e-5 if fused.dtype == np.float32 else 1e-12
    scale = float(np.nanmax(np.abs(unfused), initial=1.0)) if unfused.size else 1.0
    np.testing.assert_allclose(fused, unfused, rtol=rtol, atol=rtol * scale, equal_nan=True,
                               err_msg=" > ".join(s.name for s in steps))


def _verbs(units):
    return [[s.verb for s in unit] for unit in units]


def test_pipeline_units():
    from daxpy.cuda.pipeline_fusion import plan_units, unit_chain

    grid = daxpy.UniformGrid(dims=(5, 4, 3), point_data={"p": np.zeros(60),
                                                         "v": np.zeros((60, 3))})
    pipe = daxpy.pipeline(grid)
    out = pipe.field("p").map("x * 3").gradient().magnitude().point_to_cell().map("sqrt(x)")
    assert _verbs(plan_units(pipe.stages, [out.name], grid)) == [
        ["map", "gradient", "magnitude"], ["point_to_cell", "map"]]
    assert _verbs(plan_units(pipe.stages, [out.name], grid, fuse=False)) == [[s.verb] for s in
                                                                              pipe.stages]
    # A requested intermediate is written, so the chain breaks after it.
    wanted = [pipe.stages[2].output, out.name]
    assert _verbs(plan_units(pipe.stages, wanted, grid)) == [
        ["map", "gradient", "magnitude"], ["point_to_cell", "map"]]
    wanted = [pipe.stages[1].output, out.name]
    assert _verbs(plan_units(pipe.stages, wanted, grid)) == [
        ["map", "gradient"], ["magnitude", "point_to_cell", "map"]]
    # A field read by two stages (a branch, or another map's expression) is written.
    pipe = daxpy.pipeline(grid)
    m = pipe.field("p").bias_add([1.0])
    a = m.magnitude()
    b = pipe.field("p").map(f"x + {m.name}")
    assert _verbs(plan_units(pipe.stages, [a.name, b.name], grid)) == [
        ["bias_add"], ["magnitude"], ["map"]]
    # Gradient -> Q-criterion (the gradient itself not kept) is one kernel.
    pipe = daxpy.pipeline(grid)
    pipe.field("v").gradient(qcriterion="Q", compute_gradient=False)
    (unit,) = plan_units(pipe.stages, [], grid)
    steps, name, where = unit_chain(unit, grid, "points")
    assert [s.name for s in steps] == ["point_gradient", "qcriterion"] and name == "Q"


@pytest.mark.gpu
def test_pipeline_fused_equals_unfused_and_cpu():
    pytest.importorskip("cupy")
    from daxpy.data.arrays import to_host

    rng = np.random.default_rng(0)
    grid = daxpy.UniformGrid(dims=(40, 13, 11), point_data={"p": rng.random(40 * 13 * 11)})
    results = {}
    for backend, fuse in (("cpu", True), ("cuda", True), ("cuda", False)):
        pipe = daxpy.pipeline(grid)
        out = pipe.field("p").map("x * 3 - 1").gradient().magnitude().point_to_cell().map("sqrt(x)")
        to = "device" if backend == "cuda" else "host"
        ds, profile = pipe.run(backend=backend, outputs=[out], fuse=fuse, profile=True, to=to)
        results[backend, fuse] = (to_host(ds.cell_data[out.name]), len(profile.stages))
    # map > gradient > magnitude is one kernel, point_to_cell > map another.
    assert results["cuda", True][1] == 2 and results["cuda", False][1] == 5
    np.testing.assert_allclose(results["cuda", True][0], results["cuda", False][0],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(results["cuda", True][0], results["cpu", True][0],
                               rtol=1e-9, atol=1e-9)


@pytest.mark.gpu
def test_pipeline_gradient_to_qcriterion_is_one_kernel():
    pytest.importorskip("cupy")
    from daxpy.data.arrays import to_host
    from daxpy.filters import Gradient

    rng = np.random.default_rng(1)
    grid = daxpy.UniformGrid(dims=(12, 9, 7), point_data={"v": rng.random((756, 3))})
    pipe = daxpy.pipeline(grid)
    pipe.field("v").gradient(qcriterion="Q", compute_gradient=False)
    from daxpy.engine.run import run_in_core

    ds, profile = run_in_core(grid, pipe.stages, ["Q"], "cuda", "device")
    assert [r.verb for r in profile.stages] == ["gradient"]
    expected = Gradient("v", qcriterion="Q", compute_gradient=False, backend="cpu")(grid)
    np.testing.assert_allclose(to_host(ds.point_data["Q"]), expected.point_data["Q"],
                               rtol=1e-9, atol=1e-9)
