"""The GPU's threshold kernels for 3-D structured grids (daxpy.cuda.threshold_cells):
every specialization compiles without a GPU (nvcc or NVRTC, sm_80 and sm_90); on the
GPU they give the array program's bits (cell ids, point ids, connectivity, offsets,
types) on random grids, fields (NaN, few distinct values: ties with the bounds) and
ranges, for every test (cell scalars; all, any corners; the corners' range) and
inverted, rows ending at and between words and spans of words; and the worklet runs
them."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.cuda.bit_words import axis_points_source, take_source
from daxpy.cuda.threshold_cells_source import MODES, SPAN, classify_source, index_source
from daxpy.worklets.threshold import threshold_cells as array_program

from test_cuda_codegen import _have_compiler, specializations_ptx

SPECIALIZATIONS = ([classify_source(dtype, mode) for dtype in ("float32", "float64")
                    for mode in MODES]
                   + [(name, index_source()[1]) for name in index_source()[0]]
                   + [take_source(size, c) for size in (1, 2, 4, 8) for c in (1, 3)] + [take_source(8, 1, True)]
                   + [axis_points_source(dtype, out) for dtype in ("float32", "float64")
                      for out in ("float32", "float64")])


@pytest.mark.skipif(not _have_compiler(), reason="needs nvcc or NVRTC (CuPy)")
def test_every_threshold_kernel_specialization_compiles_to_ptx(tmp_path):
    specializations_ptx(SPECIALIZATIONS, tmp_path)


_PARAMS = {"cells": dict(at="cells"), "all": dict(at="points"),
           "any": dict(at="points", all_points=False),
           "range": dict(at="points", all_points=False, continuous=True)}


def _same(got, want):
    for name in ("cell_ids", "point_ids", "connectivity", "offsets", "cell_types"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.get().tobytes() == b.tobytes(), name


def _field(rng, n, dtype, kind):
    if kind == "few":  # few distinct values: many equal a bound
        values = rng.integers(0, 4, n).astype(dtype)
    else:
        values = rng.standard_normal(n).astype(dtype)
    if kind == "nan" and n:
        values[rng.integers(0, n, max(1, n // 50))] = np.nan
    return values


def _check(dims, values, mode, lower, upper, invert):
    import cupy

    from daxpy.cuda.threshold_cells import threshold_cells as kernels

    grid = daxpy.UniformGrid(dims=dims)
    params = dict(_PARAMS[mode], lower=lower, upper=upper, invert=invert)
    want = array_program(grid, values, **params)
    on_device = cupy.asarray(values)
    # The worklet's GPU path, and the kernels themselves (not a fall back).
    _same(array_program(grid, on_device, **params), want)
    from daxpy.data.celltypes import HEXAHEDRON
    from daxpy.worklets._marching import at_least_bound

    found = kernels(on_device, dims, mode, at_least_bound(values.dtype, lower),
                    -at_least_bound(values.dtype, -upper), invert, HEXAHEDRON)
    assert found is not None
    _same(type(want)(*found), want)
    _check_words(grid, found, want)
    without = kernels(on_device, dims, mode, at_least_bound(values.dtype, lower),
                      -at_least_bound(values.dtype, -upper), invert, HEXAHEDRON, False)
    assert without[0] is None and without[1] is None
    _same(type(want)(*without).with_ids(), want)
    _check_words(grid, without, want)


def _check_words(grid, found, want):
    """The gathers by the kept cells' and used points' words give those by their
    ids, bit for bit, with or without the ids made."""
    import cupy

    from daxpy.cuda.edge_points import grid_points

    by_points, by_cells = found[5], found[6]
    assert by_points.ids is found[1] and by_cells.ids is found[0]
    assert by_points.item_ids().get().tobytes() == want.point_ids.tobytes()
    assert by_cells.item_ids().get().tobytes() == want.cell_ids.tobytes()
    rng = np.random.default_rng(grid.n_points)
    for words, ids, n in ((by_points, want.point_ids, grid.n_points),
                          (by_cells, want.cell_ids, grid.n_cells)):
        arrays = [rng.standard_normal(n), rng.integers(-9, 9, (n, 3), np.int8),
                  rng.standard_normal((n, 2, 2)).astype(np.float32),
                  rng.integers(0, 9, n).astype(np.uint16),
                  rng.standard_normal(n).astype(np.complex128)]
        for array in arrays:
            got = words.take(cupy.asarray(array))
            assert got.dtype == array.dtype and got.get().tobytes() == array[ids].tobytes()
    for dtype in (np.float32, np.float64):
        axes = [cupy.asarray(grid.axis_coordinates(a).astype(dtype) * 1.1) for a in range(3)]
        expected = grid_points(cupy.asarray(want.point_ids), tuple(grid.dims), axes)
        got = by_points.axis_points(axes, grid.dims[1])
        assert got.get().tobytes() == expected.get().tobytes()


# Rows of one word to several spans of words (daxpy.cuda.threshold_cells_source.SPAN).
dims_strategy = st.tuples(st.integers(2, 300), st.integers(2, 9), st.integers(2, 7))


@pytest.mark.gpu
@settings(max_examples=60, deadline=None)
@given(dims=dims_strategy, seed=st.integers(0, 2**31), dtype=st.sampled_from(["float32",
                                                                               "float64"]),
       mode=st.sampled_from(MODES), kind=st.sampled_from(["normal", "few", "nan"]),
       ends=st.tuples(st.floats(0, 1), st.floats(0, 1)), invert=st.booleans(),
       one_sided=st.sampled_from([None, "lower", "upper"]))
def test_kernels_give_the_array_programs_bits(dims, seed, dtype, mode, kind, ends, invert,
                                              one_sided):
    rng = np.random.default_rng(seed)
    n = int(np.prod(dims)) if mode != "cells" else int(np.prod([d - 1 for d in dims]))
    values = _field(rng, n, dtype, kind)
    finite = values[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    a, b = sorted(low + e * (high - low) for e in ends)
    if kind == "few":  # bounds on the values themselves
        a, b = float(np.floor(a)), float(np.ceil(b))
    if one_sided == "lower":
        a = -np.inf
    elif one_sided == "upper":
        b = np.inf
    _check(dims, values, mode, a, b, invert)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("nx", [2, 32, 33, 34, 32 * SPAN, 32 * SPAN + 1, 32 * SPAN + 2, 300])
def test_rows_that_end_at_word_and_span_ends(mode, nx):
    dims = (nx, 3, 2)
    n = int(np.prod(dims)) if mode != "cells" else (nx - 1) * 2
    values = _field(np.random.default_rng(nx), n, "float32", "normal")
    for invert in (False, True):
        _check(dims, values, mode, -0.3, 0.8, invert)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
def test_bounds_between_float32_numbers_compare_as_in_float64(mode):
    # 0.1 is not a float32: float32(0.1) is above it, so at 0.1 both ends differ.
    dims = (33, 3, 2)
    n = int(np.prod(dims)) if mode != "cells" else 32 * 2
    values = np.full(n, np.float32(0.1))
    values[::3] = np.nextafter(np.float32(0.1), np.float32(0))
    for lower, upper in ((0.1, 1.0), (0.0, 0.1), (float(np.float32(0.1)), 1.0)):
        for invert in (False, True):
            _check(dims, values, mode, lower, upper, invert)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
def test_no_cell_kept_gives_empty_arrays_and_one_offset(mode):
    dims = (40, 3, 3)
    n = int(np.prod(dims)) if mode != "cells" else 39 * 4
    _check(dims, np.zeros(n), mode, 5.0, 6.0, False)
    _check(dims, np.zeros(n), mode, -1.0, 1.0, True)


@pytest.mark.gpu
def test_a_field_view_with_strides_is_read():
    import cupy

    from daxpy.cuda.threshold_cells import threshold_cells as kernels

    dims = (65, 4, 3)
    values = np.random.default_rng(5).standard_normal((int(np.prod(dims)), 2))
    grid = daxpy.UniformGrid(dims=dims)
    want = array_program(grid, values[:, 1], at="points", lower=-0.5, upper=0.5)
    found = kernels(cupy.asarray(values)[:, 1], dims, "all", np.float64(-0.5),
                    np.float64(0.5), False, 12)
    _same(type(want)(*found), want)
