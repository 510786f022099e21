"""Normalize against NumPy's ``v / norm(v)`` on every grid family and association,
its zero and NaN rule, its verb (pipeline, ``daxpy run``) and its CUDA kernel."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.cli.args import VERBS
from daxpy.cli.commands import build_parser
from daxpy.errors import ArgumentError, FieldError
from daxpy.filters import Normalize
from daxpy.worklets.normalize import normalize

from strategies import field_arrays, located_grids, with_fields_at


def _reference(values):
    flat = values.reshape(len(values), -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = flat / np.linalg.norm(flat.astype(np.float64), axis=1, keepdims=True)
    return unit.reshape(values.shape)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_filter_on_any_grid_and_association_matches_numpy(data):
    grid, association, size = data.draw(located_grids())
    values = data.draw(field_arrays(size))
    zeros = data.draw(st.lists(st.integers(0, max(size - 1, 0)), max_size=2))
    values[zeros] = 0  # zero tuples among them
    result = Normalize("v", backend="cpu")(with_fields_at(grid, association, {"v": values}))
    unit = result.fields(association)["v_normalized"]
    assert unit.dtype == values.dtype and unit.shape == values.shape
    np.testing.assert_allclose(unit, _reference(values),
                               rtol=2e-6 if values.dtype == np.float32 else 1e-14)


def test_zero_nan_and_inf_tuples_follow_numpy():
    values = np.array([[0.0, 0.0, 0.0], [np.nan, 1.0, 0.0], [np.inf, 1.0, 0.0], [0.0, 2.0, 0.0]])
    unit = normalize(None, values)
    assert np.isnan(unit[:2]).all() and unit[3].tolist() == [0.0, 1.0, 0.0]
    assert np.isnan(unit[2, 0]) and unit[2, 1:].tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(unit, _reference(values))


def test_one_component_gives_sign_and_integers_give_float64():
    result = normalize(None, np.array([-4, 3, 0], dtype=np.int16))
    assert result.dtype == np.float64 and result[:2].tolist() == [-1.0, 1.0]
    assert np.isnan(result[2])


def test_out_is_filled_and_returned_and_wrong_out_raises():
    out = np.empty((1, 3), np.float32)
    assert normalize(None, np.array([[0, 3, 4]], np.float32), out=out) is out
    np.testing.assert_allclose(out, [[0.0, 0.6, 0.8]], rtol=1e-6)
    with pytest.raises(ArgumentError, match="out must be a C-contiguous float32 array"):
        normalize(None, np.zeros((2, 3), np.float32), out=np.zeros(2, np.float32))


def test_field_of_wrong_rank_raises():
    with pytest.raises(FieldError, match=r"shape \(n,\) or \(n, components\)"):
        normalize(None, np.zeros((2, 2, 2)))


def test_verb_appears_in_pipeline_and_cli(capsys):
    grid = daxpy.UniformGrid(dims=(3,), point_data={"v": np.array([[3.0, 4.0]] * 3)})
    pipe = daxpy.pipeline(grid)
    node = pipe.field("v").normalize()
    assert node.name == "normalize_1"
    assert pipe.run(backend="cpu").point_data[node.name].tolist() == [[0.6, 0.8]] * 3
    assert "normalize" in VERBS and "Normalize" in daxpy.filters.__all__
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    assert "normalize: each tuple divided by its Euclidean norm" in " ".join(
        capsys.readouterr().out.split())
    args = build_parser().parse_args(["run", "wavelet:4", "--field", "RTData",
                                      "--step", "gradient", "--step", "normalize"])
    assert args.run(args) == 0
    assert "normalize_2: points, float32, shape (64, 3)" in capsys.readouterr().out


@pytest.mark.gpu
def test_cuda_matches_cpu():
    import cupy

    values = np.random.default_rng(0).uniform(-10, 10, (1000, 3)).astype(np.float32)
    values[:3] = 0
    grid = daxpy.UniformGrid(dims=(10, 10, 10), point_data={"v": values})
    cpu = Normalize("v", backend="cpu")(grid).point_data["v_normalized"]
    gpu = Normalize("v", backend="cuda")(grid.with_fields(
        point_data={"v": cupy.asarray(values)})).point_data["v_normalized"]
    np.testing.assert_allclose(cupy.asnumpy(gpu), cpu, rtol=1e-6, atol=1e-7)
