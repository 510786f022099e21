"""Fuzzing the CUDA backend (skipped without a GPU): the CPU fuzz cases with
device-resident input, against the NumPy backend.

Layouts of host and device arrays, device-resident connectivity (validated by
one reduction on the device), NaN/Inf propagation, the input left untouched,
and random whitelisted expressions over special values. No VTK here.
"""

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import daxpy
from daxpy.errors import InvalidDataSetError
from daxpy.data.expressions import parse
from daxpy.filters import FieldMap

from fuzz_helpers import (FILTERS, associations, check_propagation, device_layouts, digest,
                          filter_for, host_layouts, random_topologies, run_new_fields)
from strategies import SPECIAL, any_grids, expressions, field_arrays

pytestmark = pytest.mark.gpu
cupy = pytest.importorskip("cupy")


def _close(got, expected, label):
    single = np.float32 in (got.dtype.type, expected.dtype.type)
    tolerance = 2e-4 if single else 1e-9
    scale = max(float(np.nanmax(np.abs(expected), initial=0.0)), 1.0)
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance * scale,
                               err_msg=label)


def _dataset(data, name):
    grid = data.draw(any_grids())
    association = data.draw(st.sampled_from(associations(name)))
    n = grid.n_points if association == "points" else grid.n_cells
    values = data.draw(field_arrays(n, ncomp=FILTERS[name][1]))
    return grid, association, values


def _with(grid, association, values):
    key = "point_data" if association == "points" else "cell_data"
    return grid.with_fields(**{key: {"f": values}})


@settings(max_examples=40, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(FILTERS)))
def test_layouts_on_the_gpu_match_the_cpu(data, name):
    grid, association, values = _dataset(data, name)
    flt_cpu = filter_for(name, association, "cpu")
    flt_gpu = filter_for(name, association, "cuda")
    expected = run_new_fields(flt_cpu, _with(grid, association, values))
    cases = {f"host {k}": v for k, v in host_layouts(values).items()}
    cases.update({f"device {k}": v for k, v in device_layouts(values).items()})
    cases["device contiguous"] = cupy.asarray(values)
    for label, array in cases.items():
        dataset = _with(grid, association, array)
        before = digest(dataset)
        got = run_new_fields(flt_gpu, dataset)
        assert digest(dataset) == before, f"{name} modified its {label} input on the GPU"
        for out, reference in expected.items():
            _close(got[out], reference, f"{name}, {label}, {out}")


@settings(max_examples=150, deadline=None)
@given(topology=random_topologies())
def test_device_resident_connectivity_is_validated_like_host(topology):
    points, conn, offsets, types = topology
    outcomes = []
    for xp in (np, cupy):
        try:
            grid = daxpy.UnstructuredGrid(xp.asarray(points), xp.asarray(conn),
                                          xp.asarray(offsets), xp.asarray(types), name="m")
        except InvalidDataSetError as err:
            outcomes.append(("refused", str(err)))
        else:
            outcomes.append(("accepted", grid.connectivity.tolist(), grid.offsets.tolist(),
                             grid.cell_types.tolist()))
    assert outcomes[0] == outcomes[1]
    event(outcomes[0][0])


ID_DTYPES = ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64"]


@settings(max_examples=150, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(ID_DTYPES), n=st.integers(0, 300))
def test_out_of_range_count_on_the_device(data, dtype, n):
    from daxpy.data.validate import count_out_of_range

    ids = data.draw(hnp.arrays(dtype, st.integers(0, 5000)))
    expected = int(np.count_nonzero((ids.astype(object) < 0) | (ids.astype(object) >= n)))
    assert count_out_of_range(cupy.asarray(ids), n) == expected


def test_device_connectivity_errors_name_the_bad_id():
    points = cupy.asarray(np.eye(4, 3))
    for bad in (-1, 4, 2**40):
        conn = cupy.asarray(np.array([0, 1, 2, bad], np.int64))
        with pytest.raises(InvalidDataSetError, match=f"point id {bad}, outside"):
            daxpy.UnstructuredGrid(points, conn, [0, 4], [10])
    huge = cupy.asarray(np.array([0, 1, 2, 2**64 - 1], np.uint64))
    with pytest.raises(InvalidDataSetError, match="outside"):
        daxpy.UnstructuredGrid(points, huge, [0, 4], [10])
    with pytest.raises(InvalidDataSetError, match="NaN or Inf"):
        daxpy.UnstructuredGrid(cupy.full((4, 3), cupy.nan), [0, 1, 2, 3], [0, 4], [10])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("special", [np.nan, np.inf])
@settings(max_examples=25, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(FILTERS)))
def test_nan_and_inf_propagate_on_the_gpu(special, data, name):
    grid, association, values = _dataset(data, name)
    dataset = _with(grid, association, cupy.asarray(values))
    index = data.draw(st.integers(0, values.shape[0] - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    flt = filter_for(name, association, "cuda")
    assert check_propagation(flt, dataset, association, index, special, rng) > 0


@settings(max_examples=80, deadline=None)
@given(source=expressions(), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 2**32 - 1))
def test_random_expressions_match_numpy_special_values_included(source, dtype, seed):
    assume(parse(source).fields)
    rng = np.random.default_rng(seed)
    n = 64
    a = rng.choice(SPECIAL, n).astype(dtype)
    b = rng.choice(SPECIAL, n).astype(dtype)
    grid = daxpy.UniformGrid(dims=(n,), point_data={"a": a, "b": b})
    with np.errstate(all="ignore"):
        expected = FieldMap(source, backend="cpu")(grid).point_data["result"]
    got = cupy.asnumpy(FieldMap(source, backend="cuda")(grid).point_data["result"])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=source)
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected), err_msg=source)
    np.testing.assert_array_equal(np.sign(got[np.isinf(got)]),
                                  np.sign(expected[np.isinf(expected)]), err_msg=source)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    scale = max(float(np.abs(expected[finite]).max(initial=0.0)), 1.0)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=tolerance,
                               atol=tolerance * scale, err_msg=source)


def test_big_endian_host_field_gives_native_results():
    grid = daxpy.UniformGrid(dims=(6, 5, 4))
    values = np.random.default_rng(2).random(grid.n_points)
    for name in ("point_to_cell", "point_gradient", "pass_through"):
        from daxpy.engine.dispatch import execute

        native = cupy.asnumpy(execute(name, grid, values, "points", backend="cuda"))
        swapped = cupy.asnumpy(execute(name, grid, values.astype(">f8"), "points",
                                       backend="cuda"))
        np.testing.assert_array_equal(swapped, native, err_msg=name)
