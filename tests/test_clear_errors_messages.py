"""Reliability, class 5 (every error is clear and true): streaming settings,
pipeline combine, Dask parameters sized for the whole field, and expression
names that Python's parser would normalise."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.errors import ArgumentError, ExpressionError
from daxpy.filters import FieldMap
from daxpy.stream.streaming import configure, run_streamed


def _point_to_cell_pipeline():
    grid = daxpy.UniformGrid(dims=(5, 5), point_data={"p": np.arange(25.0)})
    pipe = daxpy.pipeline(grid)
    return grid, pipe, pipe.point_to_cell("p")


_BAD_COUNTS = st.one_of(
    st.integers(max_value=0), st.floats(allow_nan=True), st.text(max_size=3),
    st.booleans(), st.just(None), st.lists(st.integers(1, 9), max_size=2),
)


@settings(max_examples=60, deadline=None)
@given(setting=st.sampled_from(["chunk_bytes", "streams"]), value=_BAD_COUNTS)
def test_streaming_settings_refuse_what_is_not_a_positive_int(setting, value):
    # chunk_bytes=None is its default: sized by the run (daxpy.stream.sizing.chunk_target).
    assume(not (setting == "chunk_bytes" and value is None))
    grid, pipe, cells = _point_to_cell_pipeline()
    with pytest.raises(ArgumentError, match=f"{setting} must be a positive integer"):
        run_streamed(grid, pipe.stages, [cells.name], backend="cpu", **{setting: value})
    with pytest.raises(ArgumentError, match=setting):
        with configure(**{setting: value}):
            pass


@pytest.mark.parametrize("overrides, message", [
    ({"chunk_byte": 64}, r"unknown streaming setting\(s\) \['chunk_byte'\]"),
    ({"max_device_bytes": -5}, "max_device_bytes must be a positive integer or None"),
    ({"staging": "pinned"}, "staging must be one of"),
    ({"mapped": "yes"}, "mapped must be True or False"),
])
def test_streaming_settings_name_the_setting(overrides, message):
    grid, pipe, cells = _point_to_cell_pipeline()
    with pytest.raises(ArgumentError, match=message):
        run_streamed(grid, pipe.stages, [cells.name], backend="cpu", **overrides)


@pytest.mark.parametrize("text", ["abc", "-1", "nan", "1.5", "0"])
def test_device_budget_variable_is_checked(monkeypatch, text):
    from daxpy.stream.streaming import Settings

    monkeypatch.setenv("DAXPY_MAX_DEVICE_BYTES", text)
    with pytest.raises(ArgumentError, match="DAXPY_MAX_DEVICE_BYTES must be a positive"):
        Settings()


@pytest.mark.parametrize("expression", ["1/0", "9**9**9", "1 < 2", "sqrt(4.0)"])
def test_combine_of_no_field_says_so(expression):
    _, pipe, _ = _point_to_cell_pipeline()
    with pytest.raises(ArgumentError, match="reads no field"):
        pipe.combine(expression)


def _needs_dask():
    return pytest.importorskip("dask")


@pytest.mark.parametrize("bias_length", [6, 24])
def test_dask_refuses_a_bias_that_spans_tuples(bias_length):
    _needs_dask()
    import daxpy.dask

    grid = daxpy.UniformGrid(dims=(5, 4, 2))
    dgrid = daxpy.dask.DaskGrid(grid, point_data={"v": np.zeros((2, 4, 5, 3))})
    pipe = daxpy.dask.pipeline(dgrid)
    pipe.field("v").bias_add(np.arange(float(bias_length)))
    # 6 entries divide every block's values (silently wrong per block before);
    # 24 divide the field's 120 values but not a small block's.
    with pytest.raises(ArgumentError, match="cannot run on Dask blocks") as caught:
        pipe.run(backend="cpu", chunks=2)
    assert "spans several tuples" in str(caught.value)
    assert "120" not in str(caught.value)


def _changes_under_nfkc(text: str) -> bool:
    return unicodedata.normalize("NFKC", text) != text


_LETTERS = st.characters(categories=("Lu", "Ll", "Lo", "Nd", "Mn"))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(name=st.text(_LETTERS, min_size=1, max_size=4).filter(_changes_under_nfkc))
def test_expression_names_are_bound_as_written(name):
    normal = unicodedata.normalize("NFKC", name)
    data = {normal: np.ones(3)}
    if normal.isidentifier():
        data["z"] = np.ones(3)
    grid = daxpy.UniformGrid(dims=(3,), point_data=data)
    with pytest.raises(ExpressionError):
        FieldMap(f"{name} * 2", result="r")(grid)


def test_fullwidth_name_is_refused_naming_what_python_would_read():
    grid = daxpy.UniformGrid(dims=(3,), point_data={"f": np.ones(3)})
    with pytest.raises(ExpressionError, match="'ｆ'.*would be read as 'f'"):
        FieldMap("ｆ * 2")(grid)
    composed = unicodedata.normalize("NFC", "e\u0301")
    grid = daxpy.UniformGrid(dims=(3,), point_data={composed: np.ones(3)})
    assert FieldMap(f"{composed} + 1", result="r")(grid).point_data["r"].tolist() == [2.0] * 3
    with pytest.raises(ExpressionError, match="NFKC"):
        FieldMap("e\u0301 + 1", result="r")(grid)


_OUT_OF_MEMORY = textwrap.dedent("""
    import resource, numpy as np, daxpy
    from daxpy.filters import CellToPoint, FieldMap, Gradient, Magnitude, PointToCell
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    grid = daxpy.UniformGrid(dims=(2000, 1000, 1000))
    # Zero-stride fields: 2e9 values that take no memory, whose results would.
    grid.point_data["t"] = np.broadcast_to(np.float64(1), (grid.n_points,))
    grid.cell_data["c"] = np.broadcast_to(np.float64(1), (grid.n_cells,))
    for flt in (Gradient("t"), PointToCell("t"), FieldMap("t * 2", result="r"),
                CellToPoint("c"), Magnitude("t")):
        try:
            flt(grid)
            print("ran")
        except daxpy.errors.ResourceError as err:
            print("ResourceError", "host memory" in str(err))
""")


def test_results_larger_than_memory_are_resource_errors():
    done = subprocess.run([sys.executable, "-c", _OUT_OF_MEMORY], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:-1] == ["ResourceError True"] * 5, done.stdout
