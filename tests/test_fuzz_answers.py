"""Wrong answers (CPU backend): NaN and Inf are never hidden, and no filter or
pipeline modifies its input.

The NaN rule (README, "NaN and Inf"): an output value that reads an input value
is NaN when that input is NaN. Which outputs read input ``i`` is found by
experiment, not assumed: the outputs that change when input ``i`` takes other
finite values. Each of them must be NaN (or, for Inf, not finite) when input
``i`` is NaN (Inf); every other output keeps its finite value.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.filters import FieldMap, Gradient, PassThrough

from fuzz_helpers import FILTERS, associations, check_propagation, digest, filter_for
from strategies import any_grids, field_arrays


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf - inf inside gradients
@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
@settings(max_examples=60)
@given(data=st.data(), name=st.sampled_from(sorted(FILTERS)))
def test_nan_and_inf_propagate_to_every_output_that_reads_them(special, data, name):
    grid = data.draw(any_grids())
    association = data.draw(st.sampled_from(associations(name)))
    n = grid.n_points if association == "points" else grid.n_cells
    values = data.draw(field_arrays(n, ncomp=FILTERS[name][1]))
    key = "point_data" if association == "points" else "cell_data"
    dataset = grid.with_fields(**{key: {"f": values}})
    index = data.draw(st.integers(0, n - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    flt = filter_for(name, association, "cpu")
    assert check_propagation(flt, dataset, association, index, special, rng) > 0


@pytest.mark.parametrize("expression, expected", [
    ("where(f > 0, 1, 2)", 2.0),      # a comparison with NaN is false
    ("f == f", 0.0), ("f != f", 1.0),
    ("minimum(f, 1)", np.nan), ("maximum(f, 1)", np.nan), ("clip(f, 0, 1)", np.nan),
    ("f * 0", np.nan), ("f ** 0", 1.0), ("not f", 0.0), ("f and 1", 1.0),
])
def test_documented_nan_rules_of_expressions(expression, expected):
    # IEEE 754 and NumPy: NaN compares unequal and false, is truthy, and NaN ** 0 is 1;
    # minimum/maximum/clip propagate it (unlike C's fmin/fmax).
    grid = daxpy.UniformGrid(dims=(2,), point_data={"f": np.array([np.nan, 1.0])})
    got = FieldMap(expression, backend="cpu")(grid).point_data["result"][0]
    np.testing.assert_equal(got, expected)


@settings(max_examples=40)
@given(data=st.data())
def test_input_is_never_modified_by_any_filter_or_pipeline(data):
    grid = data.draw(any_grids())
    points = data.draw(field_arrays(grid.n_points, ncomp=3))
    cells = data.draw(field_arrays(grid.n_cells, ncomp=1))
    dataset = grid.with_fields(point_data={"f": points, "g": points[:, 0].copy()},
                               cell_data={"c": cells})
    before = digest(dataset)
    sources = {"points": dataset, "cells": grid.with_fields(cell_data={"f": cells})}
    for name in FILTERS:
        for association in associations(name):
            source = sources[association]
            source_digest = digest(source)
            filter_for(name, association, "cpu")(source)
            assert digest(source) == source_digest, f"{name} modified its input"
    # Writing the result under the input's name replaces it in the new dataset only.
    for flt in (PassThrough("g", result="g", backend="cpu"), FieldMap(
            "g * 2", result="g", backend="cpu"), Gradient("g", result="f", backend="cpu")):
        flt(dataset)
    pipe = daxpy.pipeline(dataset)
    grad = pipe.gradient("g")
    grad.magnitude().point_to_cell()
    pipe.field("f").map("x * 2 + g", result="f2").point_to_cell()
    pipe.run(backend="cpu")
    assert digest(dataset) == before
