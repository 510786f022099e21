"""Point-to-cell and cell-to-point against VTK on every grid family (both directions),
and the checks the two directions share (``out=``, field sizes, the filters' arguments)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.data.worklet import get_worklet  # noqa: E402
from daxpy.errors import FieldError, UnknownFieldError  # noqa: E402
from daxpy.filters import CellToPoint, PointToCell  # noqa: E402
from daxpy.worklets import _averaging, cell_to_point, point_to_cell  # noqa: E402

from averaging_reference import (DEGENERATE, DIRECTIONS, assert_matches_vtk, size,  # noqa: E402
                                 vtk_average)
from strategies import (field_arrays, mixed_grid_all_shapes, structured_grids,  # noqa: E402
                        unstructured_grids)

BOTH_FAMILIES = pytest.mark.parametrize(
    "grid", [daxpy.UniformGrid(dims=(3, 3)), mixed_grid_all_shapes()],
    ids=["structured", "unstructured"])


def _draws_match_vtk(direction, data, grids):
    grid = data.draw(grids)
    source = DIRECTIONS[direction][1]
    assert_matches_vtk(direction, grid, data.draw(field_arrays(size(grid, source))))


@pytest.mark.parametrize("direction", DIRECTIONS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_structured_grids_match_vtk(direction, data):
    _draws_match_vtk(direction, data, structured_grids())


@pytest.mark.parametrize("direction", DIRECTIONS)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_unstructured_grids_match_vtk(direction, data):
    _draws_match_vtk(direction, data, unstructured_grids())


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("grid", DEGENERATE, ids=lambda g: f"{g.topology_name}-{g.n_points}")
@pytest.mark.parametrize("ncomp", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_degenerate_grids_match_vtk(direction, grid, ncomp, dtype):
    rng = np.random.default_rng(ncomp)
    n = size(grid, DIRECTIONS[direction][1])
    shape = (n,) if ncomp == 1 else (n, ncomp)
    assert_matches_vtk(direction, grid, rng.uniform(-10, 10, shape).astype(dtype))


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("dims", [(7, 5, 9), (9, 6), (11,)])
def test_one_plane_slabs_on_several_threads_match_vtk(monkeypatch, direction, dims):
    monkeypatch.setattr(_averaging, "SLAB_BYTES", 1)
    monkeypatch.setattr(_averaging, "THREADS", 3)
    grid = daxpy.UniformGrid(dims=dims)
    n = size(grid, DIRECTIONS[direction][1])
    assert_matches_vtk(direction, grid, np.random.default_rng(0).uniform(-1, 1, (n, 2)))


@pytest.mark.parametrize("direction, module, block", [
    ("point_to_cell", point_to_cell, "CELL_BLOCK"),
    ("cell_to_point", cell_to_point, "LINKS_BLOCK")])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_small_blocks_on_several_threads_match_vtk(direction, module, block, data):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, block, 5)
        patch.setattr(_averaging, "THREADS", 3)
        _draws_match_vtk(direction, data, unstructured_grids(max_side=6))


@pytest.mark.parametrize("direction", DIRECTIONS)
@BOTH_FAMILIES
def test_out_is_filled_and_returned(direction, grid):
    _, source, target = DIRECTIONS[direction]
    values = np.arange(size(grid, source), dtype=np.float32)
    out = np.full(size(grid, target), np.nan, dtype=np.float32)
    impl = get_worklet(direction).numpy_impl(grid.family)
    assert impl(grid, values, out=out) is out
    np.testing.assert_allclose(out, vtk_average(direction, grid, values), rtol=1e-6)


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("grid", [daxpy.UniformGrid(dims=(3,)), mixed_grid_all_shapes()],
                         ids=["structured", "unstructured"])
def test_values_of_wrong_size_raise(direction, grid):
    source = DIRECTIONS[direction][1]
    n = size(grid, source)
    with pytest.raises(FieldError, match=f"for the {n} {source}"):
        get_worklet(direction).numpy_impl(grid.family)(grid, np.zeros(n + 1))


@pytest.mark.parametrize("verb, source, name, values, result, target, expected", [
    (PointToCell, "point_data", "t", [1.0, 2.0], "tc", "cells", [1.5]),
    (CellToPoint, "cell_data", "c", [4.0], "cp", "points", [4, 4])])
def test_filter_result_name(verb, source, name, values, result, target, expected):
    grid = daxpy.UniformGrid(dims=(2,), **{source: {name: np.array(values)}})
    result_fields = verb(name, result=result, backend="cpu")(grid).fields(target)
    assert result_fields[result].tolist() == expected


@pytest.mark.parametrize("verb, name, wrong, match", [
    (PointToCell, "t", "cells", "PointToCell reads point fields.*'cells'"),
    (CellToPoint, "c", "points", "CellToPoint reads cell fields.*'points'")])
def test_filter_rejects_the_other_association(verb, name, wrong, match):
    with pytest.raises(FieldError, match=match):
        verb(name, association=wrong)


@pytest.mark.parametrize("verb, name, data, match", [
    (PointToCell, "c", {"cell_data": {"c": np.ones(1)}}, "no point field 'c'"),
    (CellToPoint, "p", {"point_data": {"p": np.ones(4)}}, "no cell field 'p'")])
def test_filter_reports_a_missing_field(verb, name, data, match):
    grid = daxpy.UniformGrid(dims=(2, 2), **data)
    with pytest.raises(UnknownFieldError, match=match):
        verb(name, backend="cpu")(grid)


@pytest.mark.parametrize("direction, values, expected", [
    ("point_to_cell", [0, 1, 2, 3, 4, 6], [2.0, 3.25]),
    ("cell_to_point", [1, 2], [1.0, 1.5, 2.0, 1.0, 1.5, 2.0])])
def test_integer_field_averages_in_float64(direction, values, expected):
    impl = get_worklet(direction).numpy_impl
    result = impl("uniform")(daxpy.UniformGrid(dims=(3, 2)), np.array(values, dtype=np.int16))
    assert result.dtype == np.float64
    assert result.tolist() == expected
    mixed = mixed_grid_all_shapes()
    ints = np.arange(size(mixed, DIRECTIONS[direction][1]), dtype=np.int32)
    np.testing.assert_allclose(impl("unstructured")(mixed, ints),
                               vtk_average(direction, mixed, ints.astype(np.float64)))
