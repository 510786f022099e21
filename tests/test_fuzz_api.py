"""Fuzzing the data model and the filters with malformed input (CPU backend).

Extends test_robustness.py: arbitrary values for every grid argument, random
arrays of any dtype and shape as fields, random unstructured topologies,
unusual memory layouts of fields *and* of grid arrays, and degenerate grids.
Each case is accepted with a correct result or refused with its specific
daxpy exception; no other exception type ever escapes.
"""

import math

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import daxpy
from daxpy.data.celltypes import HEXAHEDRON, PIXEL, QUAD, TETRA, VERTEX, VOXEL
from daxpy.errors import FieldError, InvalidDataSetError
from daxpy.filters import CellToPoint, PointToCell

from fuzz_helpers import (FILTERS, associations, digest, filter_for, host_layouts,
                          random_topologies, run_new_fields)
from strategies import any_grids, field_arrays

# Anything a caller might pass where a number or a sequence is expected.
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 8), st.floats(),
                    st.text(max_size=3), st.binary(max_size=2),
                    st.complex_numbers(max_magnitude=4))
garbage = st.one_of(scalars, st.lists(scalars, max_size=4), st.tuples(scalars, scalars),
                    hnp.arrays(st.sampled_from(["f8", "i4", "u1", "c8", "?"]),
                               hnp.array_shapes(min_dims=0, max_dims=2, max_side=4)))

ODD_DTYPES = ["f2", "f4", "f8", ">f8", "i1", "u2", "i8", "u8", "?", "c16", "U2", "S2", "M8[s]",
              "m8[s]", "O", "V8"]


@settings(max_examples=300)
@given(dims=garbage, origin=garbage, spacing=garbage)
def test_uniform_grid_arguments(dims, origin, spacing):
    try:
        grid = daxpy.UniformGrid(dims, origin=origin, spacing=spacing)
    except InvalidDataSetError as err:
        assert any(word in str(err) for word in ("dims", "origin", "spacing"))
        event("refused: InvalidDataSetError")
        return
    event("accepted")
    assert len(grid.dims) == 3 and all(isinstance(d, int) and d >= 1 for d in grid.dims)
    assert all(math.isfinite(s) and s > 0 for s in grid.spacing)
    assert all(math.isfinite(o) for o in grid.origin)
    assert grid.n_points == math.prod(grid.dims)


@settings(max_examples=200)
@given(axes=st.lists(st.one_of(garbage, hnp.arrays(st.sampled_from(ODD_DTYPES[:8]),
                                                   st.integers(0, 5))), min_size=1, max_size=3))
def test_rectilinear_grid_arguments(axes):
    try:
        grid = daxpy.RectilinearGrid(*axes)
    except InvalidDataSetError as err:
        assert "coordinates" in str(err)
        event("refused: InvalidDataSetError")
        return
    event("accepted")
    for axis in range(3):
        coords = grid.axis_coordinates(axis)
        assert coords.ndim == 1 and np.all(np.isfinite(coords)) and np.all(np.diff(coords) > 0)


@settings(max_examples=150)
@given(dims=st.one_of(garbage, st.tuples(st.integers(1, 3), st.integers(1, 3))),
       points=st.one_of(garbage, hnp.arrays(st.sampled_from(ODD_DTYPES[:8]),
                                            hnp.array_shapes(max_dims=3, max_side=9))))
def test_curvilinear_grid_arguments(dims, points):
    try:
        grid = daxpy.CurvilinearGrid(dims, points)
    except InvalidDataSetError as err:
        assert "dims" in str(err) or "points" in str(err)
        event("refused: InvalidDataSetError")
        return
    event("accepted")
    assert grid.points().shape == (grid.n_points, 3)
    assert np.all(np.isfinite(grid.points()))


def _valid_field(array, n) -> bool:
    return (array.ndim in (1, 2) and array.shape[0] == n
            and (array.ndim == 1 or array.shape[1] >= 1) and array.dtype.kind in "fiu")


@settings(max_examples=300)
@given(data=st.data(), dtype=st.sampled_from(ODD_DTYPES),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=10))
def test_any_array_as_a_field(data, dtype, shape):
    grid = daxpy.UniformGrid(dims=(5, 2), name="fuzzed grid")
    association = data.draw(st.sampled_from(["points", "cells"]))
    n = grid.n_points if association == "points" else grid.n_cells
    if data.draw(st.booleans()) and len(shape) >= 1:
        shape = (n,) + tuple(shape[1:])
    array = np.zeros(shape, dtype=dtype)
    key = "point_data" if association == "points" else "cell_data"
    try:
        dataset = grid.with_fields(**{key: {"f": array}})
    except FieldError as err:
        assert not _valid_field(array, n)
        assert "'f'" in str(err) and "fuzzed grid" in str(err)
        event("refused: FieldError")
        return
    event("accepted")
    assert _valid_field(array, n)
    components = 1 if array.ndim == 1 else array.shape[1]
    for name, (_, needs, _) in FILTERS.items():
        if association in associations(name) and needs in (None, components):
            run_new_fields(filter_for(name, association, "cpu"), dataset)


@pytest.mark.parametrize("values", [
    [[1.0, 2.0], [3.0]], [[1, 2], [3, "x"]], "abc", None, 3.5, {"a": 1}, {1, 2, 3},
    np.ma.masked_array(np.arange(10.0), mask=[1] + [0] * 9), object(),
])
def test_non_arrays_as_a_field(values):
    grid = daxpy.UniformGrid(dims=(10,))
    with pytest.raises(FieldError, match="'f'"):
        grid.with_fields(point_data={"f": values})


def _reason(message: str) -> str:
    for phrase, reason in (("point id", "point id out of range"), ("repeats", "repeated point"),
                           ("unsupported VTK cell type", "unknown cell type"),
                           ("points; expected", "wrong corner count"), ("offset", "offsets")):
        if phrase in message:
            return reason
    return message


@settings(max_examples=400)
@given(random_topologies())
def test_random_unstructured_topologies(topology):
    points, conn, offsets, types = topology
    try:
        grid = daxpy.UnstructuredGrid(points, conn, offsets, types, name="fuzzed mesh")
    except InvalidDataSetError as err:
        assert "fuzzed mesh" in str(err)
        event(f"refused: {_reason(str(err))}")
        return
    event("accepted")
    for block in grid.cell_blocks().values():
        assert block.corners.shape[1] == block.shape.n_corners
        assert block.corners.size == 0 or (0 <= block.corners.min()
                                           and block.corners.max() < grid.n_points)
        assert all(len(set(row)) == len(row) for row in block.corners.tolist())
    dataset = grid.with_fields(point_data={"p": np.arange(grid.n_points, dtype=float)},
                               cell_data={"c": np.arange(grid.n_cells, dtype=float)})
    cells = PointToCell("p", result="pc", backend="cpu")(dataset).cell_data["pc"]
    points_out = CellToPoint("c", result="cp", backend="cpu")(dataset).point_data["cp"]
    assert np.all(np.isfinite(cells)) and np.all(np.isfinite(points_out))


@pytest.mark.parametrize("legacy, size", [(PIXEL, 3), (PIXEL, 5), (VOXEL, 7), (VOXEL, 2)])
def test_pixels_and_voxels_with_wrong_sizes_are_refused_not_read_past(legacy, size):
    # As the last cell: renumbering reads 4 or 8 ids and ran off the array.
    conn = list(range(size))
    with pytest.raises(InvalidDataSetError, match=f"with {size} points; expected"):
        daxpy.UnstructuredGrid(np.random.default_rng(0).random((9, 3)), conn, [0, size],
                               [legacy])


@pytest.mark.parametrize("blocks, match", [
    ({TETRA: [[0, 1.5, 2, 3]]}, "must hold integers"),
    ({TETRA: [[0, np.nan, 2, 3]]}, "must hold integers"),
    ({TETRA: [["a", "b", "c", "d"]]}, "must hold integers"),
    ({TETRA: [[0, 1, 2, 2**70]]}, "must hold integers"),
    ({TETRA: [0, 1, 2, 3]}, "must be 2-D"),
    ({TETRA: [[0, 1, 2], [3]]}, "rectangular"),
    ({"tet": [[0, 1, 2, 3]]}, "keyed by VTK cell type"),
    ({42: [[0, 1, 2, 3]]}, "unsupported VTK cell type 42"),
    ({HEXAHEDRON: [[0, 1, 2, 3]]}, "expected 8"),
])
def test_malformed_blocks_are_refused(blocks, match):
    with pytest.raises(InvalidDataSetError, match=match):
        daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), blocks)


def _grid_layouts(grid):
    """The same grid built from strided, Fortran, read-only and big-endian arrays."""
    if grid.family == "unstructured":
        out = {}
        for name, points in host_layouts(np.asarray(grid.points(), np.float64)).items():
            if points.ndim == 2 and name != "negative_stride":
                conn = host_layouts(grid.connectivity.astype(np.int32))[name]
                out[name] = daxpy.UnstructuredGrid(points, conn, grid.offsets, grid.cell_types)
        return out
    if grid.family == "rectilinear":
        axes = [host_layouts(np.asarray(c, np.float64)) for c in grid.coordinates]
        return {name: daxpy.RectilinearGrid(*(a[name] for a in axes)) for name in axes[0]}
    if grid.family == "curvilinear":
        return {name: daxpy.CurvilinearGrid(grid.dims, points)
                for name, points in host_layouts(np.asarray(grid.points())).items()}
    return {}


@settings(max_examples=90)
@given(data=st.data(), name=st.sampled_from(sorted(FILTERS)))
def test_layouts_of_fields_and_grid_arrays_match_contiguous(data, name):
    grid = data.draw(any_grids())
    association = data.draw(st.sampled_from(associations(name)))
    n = grid.n_points if association == "points" else grid.n_cells
    values = data.draw(field_arrays(n, ncomp=FILTERS[name][1]))
    key = "point_data" if association == "points" else "cell_data"
    flt = filter_for(name, association, "cpu")
    expected = run_new_fields(flt, grid.with_fields(**{key: {"f": values}}))
    cases = {f"field {k}": grid.with_fields(**{key: {"f": v}})
             for k, v in host_layouts(values).items()}
    cases.update({f"grid {k}": g.with_fields(**{key: {"f": values}})
                  for k, g in _grid_layouts(grid).items()})
    for label, dataset in cases.items():
        before = digest(dataset)
        got = run_new_fields(flt, dataset)
        assert digest(dataset) == before, f"{name} modified its {label} input"
        for out, reference in expected.items():
            np.testing.assert_array_equal(got[out], reference, err_msg=f"{name}, {label}")


DEGENERATE_GRIDS = {
    "uniform single point": lambda: daxpy.UniformGrid(dims=(1,)),
    "uniform 1x1x1": lambda: daxpy.UniformGrid(dims=(1, 1, 1)),
    "uniform two points": lambda: daxpy.UniformGrid(dims=(2,)),
    "uniform line along y": lambda: daxpy.UniformGrid(dims=(1, 5, 1), spacing=(1, 0.5, 1)),
    "uniform slab xz": lambda: daxpy.UniformGrid(dims=(3, 1, 4)),
    "rectilinear single point": lambda: daxpy.RectilinearGrid([2.0]),
    "curvilinear single point": lambda: daxpy.CurvilinearGrid((1,), np.zeros((1, 3))),
    "unstructured no points": lambda: daxpy.UnstructuredGrid(np.zeros((0, 3)), [], [0], []),
    "unstructured no cells": lambda: daxpy.UnstructuredGrid(np.eye(3), [], [0], []),
    "unstructured vertices only": lambda: daxpy.UnstructuredGrid.from_blocks(
        np.eye(3), {VERTEX: [[0], [2]]}),
    "unstructured one quad": lambda: daxpy.UnstructuredGrid.from_blocks(
        np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0.0]]), {QUAD: [[0, 1, 2, 3]]}),
}


@pytest.mark.parametrize("grid_name", sorted(DEGENERATE_GRIDS))
@pytest.mark.parametrize("name", sorted(FILTERS))
def test_degenerate_and_empty_grids(grid_name, name):
    grid = DEGENERATE_GRIDS[grid_name]()
    for association in associations(name):
        n = grid.n_points if association == "points" else grid.n_cells
        shape = (n, 3) if FILTERS[name][1] == 3 else (n,)
        values = np.random.default_rng(1).uniform(-1, 1, shape)
        key = "point_data" if association == "points" else "cell_data"
        outputs = run_new_fields(filter_for(name, association, "cpu"),
                                 grid.with_fields(**{key: {"f": values}}))
        for out, result in outputs.items():
            assert result.shape[0] in (grid.n_points, grid.n_cells), out
            assert np.all(np.isfinite(result)), f"{name} on {grid_name}: {out} not finite"
