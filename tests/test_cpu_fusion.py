"""Fused CPU map chains: one kernel, the bits of the maps run one by one, at any thread count."""


import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.cuda.pipeline_fusion import plan_units
from daxpy.data.expressions import parse
from daxpy.engine.stage import Stage
from daxpy.errors import NaNPolicyError
from daxpy.filters import Magnitude
from daxpy.stream.streaming import run_stages
from daxpy.worklets._fused_cpu import chain_codes, fused_source
from daxpy.worklets._tuple_code import TupleType
from four_threads import four_thread_report

# Expressions in x (the chain's field); s is a one-component field, w a
# three-component one, so a map may keep, widen or mix the chain's components.
ONE_COMPONENT = ["x * 2.5 - 1", "where(x > 0, sqrt(x), -x) + x % 0.7", "x / (abs(x) + 1)",
                 "clip(x, -1, 1) * s", "maximum(x, s) ** 2"]
# "w - x / 3" reads w first: that map starts a chain of its own (as on the GPU).
THREE_COMPONENTS = ["x * w + 1", "where(x < w, w, x) * 0.5", "w - x / 3"]


@st.composite
def chains(draw):
    """A grid with a float32 or float64 vector field and a chain of 2 to 6 maps over it."""
    n = draw(st.integers(1, 40)) * 2
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    v = rng.normal(size=(n, 3)).astype(dtype)
    v[rng.random(n) < 0.2] = 0.0  # zero tuples: normalize gives NaN
    v[rng.random((n, 3)) < 0.05] = np.nan
    grid = daxpy.UniformGrid(dims=(n,), point_data={
        "v": v, "s": rng.normal(size=n), "w": rng.normal(size=(n, 3)).astype(np.float32)})
    steps = draw(st.lists(st.sampled_from(
        ["pass_through", "bias_add", "magnitude", "normalize", "map1", "map3"]),
        min_size=2, max_size=6))
    params = [draw(st.integers(0, 99)) for _ in steps]
    return grid, list(zip(steps, params))


def _build(grid, chain):
    pipe = daxpy.pipeline(grid)
    node, components = pipe.field("v"), 3
    for step, pick in chain:
        if step == "pass_through":
            node = node.pass_through([None, "float32", "float64"][pick % 3])
        elif step == "bias_add":
            # A bias per component, one for all, or two spanning tuples (flat order).
            sizes = [components, 1] + ([2] if components == 1 else [])
            node = node.bias_add(np.linspace(-1.0, 2.0, sizes[pick % len(sizes)]))
        elif step == "magnitude":
            node, components = node.magnitude(), 1
        elif step == "normalize":
            node = node.normalize()
        elif step == "map1":
            node = node.map(ONE_COMPONENT[pick % len(ONE_COMPONENT)])
        else:
            node, components = node.map(THREE_COMPONENTS[pick % len(THREE_COMPONENTS)]), 3
    return pipe, node.name


def _assert_same_bits(fused, alone):
    """The same bits everywhere (signed zeros too), NaN where NaN: which NaN an
    operation on two NaNs returns is the hardware's choice of operand, and LLVM
    may swap the operands of a sum, so NaN signs and payloads are not compared."""
    nan = np.isnan(fused)
    np.testing.assert_array_equal(nan, np.isnan(alone))
    assert fused[~nan].tobytes() == alone[~nan].tobytes()


def _run(pipe, name, fuse):
    out, profile = pipe.run(backend="cpu", outputs=[name], profile=True, fuse=fuse)
    return out.point_data[name], profile


@settings(max_examples=40, deadline=None)
@given(case=chains())
def test_fused_chain_gives_the_unfused_bits(case):
    pipe, name = _build(*case)
    fused, profile = _run(pipe, name, True)
    alone, unfused = _run(pipe, name, False)
    assert fused.dtype == alone.dtype and fused.shape == alone.shape
    _assert_same_bits(fused, alone)
    units = plan_units(pipe.stages, [name], pipe.dataset)
    assert [r.verb for r in profile.stages] == ["+".join(s.verb for s in u) for u in units]
    assert [r.verb for r in unfused.stages] == [s.verb for s in pipe.stages]


def _long_chain(n=3000, dtype=np.float32):
    rng = np.random.default_rng(7)
    grid = daxpy.UniformGrid(dims=(n,), point_data={"v": rng.normal(size=(n, 3)).astype(dtype),
                                                    "s": rng.normal(size=n)})
    pipe = daxpy.pipeline(grid)
    node = (pipe.field("v").bias_add([1.0, -2.0, 0.5]).map("x * s + 1").normalize()
            .pass_through("float64").map("where(x > 0, sqrt(x), -x)").magnitude())
    return pipe, node.name


def test_thread_counts_give_the_same_bits():
    pipe, name = _long_chain()
    results = []
    try:
        for count in (1, 2):
            daxpy.configure_cpu(threads=count)
            results.append(_run(pipe, name, True)[0].tobytes())
    finally:
        daxpy.configure_cpu(threads=None)
    assert results[0] == results[1] == _run(pipe, name, False)[0].tobytes()


_FOUR_THREADS = """
import json
from daxpy.worklets._numba import threads
from test_cpu_fusion import _long_chain, _run
pipe, name = _long_chain()
out, profile = _run(pipe, name, True)
print(json.dumps({"threads": threads(), "pieces": len(profile.stages),
                  "bytes": out.tobytes().hex()}))
"""


def test_four_threads_give_the_same_bits():
    # Numba's pool size is fixed per process: a child gets 4 threads.
    report = four_thread_report(_FOUR_THREADS)
    pipe, name = _long_chain()
    daxpy.configure_cpu(threads=1)
    try:
        ours = _run(pipe, name, True)[0]
    finally:
        daxpy.configure_cpu(threads=None)
    assert report["threads"] == 4 and report["pieces"] == 1
    assert ours.tobytes().hex() == report["bytes"]


def test_chain_runs_as_one_kernel_and_stores_no_intermediate():
    pipe, name = _long_chain()
    out, profile = pipe.run(backend="cpu", profile=True)
    (record,) = profile.stages
    assert record.verb == "bias_add+map+normalize+pass_through+map+magnitude"
    assert record.output == name and list(out.point_data) == [name]
    # Only the output was made: no intermediate field was ever stored.
    assert profile.peak_bytes == out.point_data[name].nbytes


def test_a_map_that_cannot_fuse_splits_the_chain_and_still_agrees():
    rng = np.random.default_rng(3)
    grid = daxpy.UniformGrid(dims=(50,), point_data={"v": rng.normal(size=(50, 3)) * 50})
    pipe = daxpy.pipeline(grid)
    # The integer copy is checked by its filter first: it runs on its own.
    node = pipe.field("v").bias_add([1.0]).magnitude().pass_through("int32").map("x * 2")
    fused, profile = _run(pipe, node.name, True)
    alone, _ = _run(pipe, node.name, False)
    assert [r.verb for r in profile.stages] == ["bias_add+magnitude", "pass_through", "map"]
    assert fused.tobytes() == alone.tobytes()


def test_requested_intermediates_and_branches_are_not_fused_away():
    grid = daxpy.UniformGrid(dims=(8,), point_data={"v": np.ones((8, 3), np.float32)})
    pipe = daxpy.pipeline(grid)
    a = pipe.field("v").bias_add([1.0]).magnitude()
    b, c = a.map("x + 1").normalize(), a.map("x * 2")
    out, profile = pipe.run(backend="cpu", outputs=[a, b, c], profile=True)
    assert [r.verb for r in profile.stages] == ["bias_add+magnitude", "map+normalize", "map"]
    assert out.point_data[b.name].tolist() == [1.0] * 8
    assert out.point_data[c.name].tolist() == [2 * np.float32(np.sqrt(12.0))] * 8


def test_fused_source_holds_no_user_text():
    kind = TupleType(np.dtype("float32"), (3,), 4)
    expression = parse("zqspeed * 2.5 + sin(zqother)")
    fields = {"fields": {"zqother": np.ones(4)}}
    codes = chain_codes([("magnitude", {}), ("field_map", {"expression": expression, **fields})],
                        kind)
    source, name = fused_source(codes, kind)
    assert "zq" not in source and "np.sin(s1_x1)" in source
    assert name == "fused__magnitude__field_map__f32__c3"


def test_a_stage_that_checks_its_input_runs_itself():
    grid = daxpy.UniformGrid(dims=(2,), point_data={"v": np.array([1.0, np.nan])})
    stages = [Stage(1, "magnitude", Magnitude("v", result="m"), ("v",), "m"),
              Stage(2, "magnitude", Magnitude("m", result="r", nan_policy="raise"), ("m",),
                    "r", (1,))]
    with pytest.raises(NaNPolicyError, match="'m'"):
        run_stages(grid, stages, ["r"], "cpu", "host")


def test_the_generated_kernel_is_cached_on_disk_by_its_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("DAXPY_CACHE_DIR", str(tmp_path))
    grid = daxpy.UniformGrid(dims=(4,), point_data={"v": np.ones((4, 3))})
    pipe = daxpy.pipeline(grid)
    # A constant no other test uses: a kernel this process has not loaded yet.
    pipe.field("v").magnitude().map("x * 2.0718")
    pipe.run(backend="cpu")
    (module,) = (tmp_path / "cpu").glob("daxpy_fused_*.py")
    assert "def fused__magnitude__field_map__f64__c3(" in module.read_text()


@pytest.mark.parametrize("layout", ["big-endian", "strided"])
def test_inputs_in_any_layout_give_the_unfused_bits(layout):
    values = np.random.default_rng(1).normal(size=(30, 6))
    values = values.astype(">f8")[:, :3] if layout == "big-endian" else values[:, ::2]
    pipe = daxpy.pipeline(daxpy.UniformGrid(dims=(30,), point_data={"v": values}))
    node = pipe.field("v").bias_add([1.0, 2.0, 3.0]).normalize().map("x * 3")
    fused, profile = _run(pipe, node.name, True)
    assert len(profile.stages) == 1
    assert fused.tobytes() == _run(pipe, node.name, False)[0].tobytes()
