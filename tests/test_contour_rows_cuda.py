"""The GPU's row kernels for the contour of 3-D structured grids
(daxpy.cuda.contour_rows; test_geometry_kernels_cuda compiles every specialization
without a GPU): on the GPU they give the array program's bits (points,
weights, triangles, source cells) on random grids and values, rows longer and
shorter than a warp, values equal to the cut (merged, collapsed triangles
dropped), and hand fields with NaN or Inf back to the array program."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.worklets._marching import TABLES, at_least_bound
from daxpy.worklets.contour import contour_structured, marched_structured


def test_every_cut_edge_of_a_voxel_case_makes_a_triangle_corner():
    # contour_rows emits every cut edge as a point: VTK's table must use them all.
    counts, table, edges = TABLES["voxel"]
    for case in range(256):
        cut = {e for e, (a, b) in enumerate(edges.tolist()) if (case >> a ^ case >> b) & 1}
        assert set(table[case, :counts[case]].ravel().tolist()) == cut, case


def _same(got, want):
    for name in ("lo", "hi", "t"):
        assert getattr(got, name).dtype == getattr(want, name).dtype, name
        assert getattr(got, name).get().tobytes() == getattr(want, name).get().tobytes(), name
    assert sorted(got.cells) == sorted(want.cells)
    for k in want.cells:
        assert got.cells[k].shape == want.cells[k].shape
        assert got.cells[k].get().tobytes() == want.cells[k].get().tobytes()
        assert got.source[k].get().tobytes() == want.source[k].get().tobytes()


dims_strategy = st.tuples(st.integers(2, 70), st.integers(2, 9), st.integers(2, 7))


def _rows_and_program(field, dims, value):
    from daxpy.cuda.contour_rows import contour_rows

    rows = contour_rows(field, dims, value, at_least_bound(field.dtype, value), TABLES["voxel"])
    grid = daxpy.UniformGrid(dims=dims)
    _same(contour_structured(grid, field, value), marched_structured(dims, field, value))
    return rows


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(dims=dims_strategy, seed=st.integers(0, 2**31), dtype=st.sampled_from(["float32",
                                                                               "float64"]),
       where=st.floats(0.05, 0.95))
def test_rows_give_the_array_programs_bits(dims, seed, dtype, where):
    import cupy

    rng = np.random.default_rng(seed)
    field = cupy.asarray(rng.standard_normal(int(np.prod(dims))).astype(dtype))
    lo, hi = float(field.min()), float(field.max())
    assert _rows_and_program(field, dims, lo + where * (hi - lo)) is not None


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(dims=dims_strategy, seed=st.integers(0, 2**31), dtype=st.sampled_from(["float32",
                                                                               "float64"]),
       value=st.sampled_from([1.0, 2.0, 1.5]))
def test_values_equal_to_the_cut_merge_as_the_array_program_merges_them(dims, seed, dtype,
                                                                          value):
    import cupy

    # Few distinct values: many points equal the cut, many triangles collapse.
    rng = np.random.default_rng(seed)
    field = cupy.asarray(rng.integers(0, 4, int(np.prod(dims))).astype(dtype))
    assert _rows_and_program(field, dims, value) is not None


@pytest.mark.gpu
@settings(max_examples=20, deadline=None)
@given(dims=dims_strategy, seed=st.integers(0, 2**31), odd=st.sampled_from(["nan", "inf"]))
def test_fields_not_finite_are_handed_to_the_array_program(dims, seed, odd):
    import cupy

    rng = np.random.default_rng(seed)
    values = rng.integers(0, 4, int(np.prod(dims))).astype(np.float64)
    values[rng.integers(0, values.size)] = np.nan if odd == "nan" else np.inf
    assert _rows_and_program(cupy.asarray(values), dims, 1.5) is None


@pytest.mark.gpu
def test_a_value_outside_the_field_gives_an_empty_cut():
    import cupy

    field = cupy.arange(4 * 3 * 2, dtype=cupy.float32)
    cut = contour_structured(daxpy.UniformGrid(dims=(4, 3, 2)), field, 100.5)
    assert cut.n_points == 0 and cut.cells[3].shape == (0, 3) and cut.source[3].shape == (0,)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_field_not_16_byte_aligned_is_read_point_by_point(dtype):
    import cupy

    # A view one value into its array: rows of 64 points no longer start on 16 bytes.
    dims = (64, 5, 4)
    whole = cupy.asarray(np.random.default_rng(3).standard_normal(1 + int(np.prod(dims))),
                         dtype=dtype)
    field = whole[1:]
    assert field.data.ptr % 16 != 0
    assert _rows_and_program(field, dims, 0.1) is not None


@pytest.mark.gpu
@pytest.mark.parametrize("one_block", [False, True])
def test_many_rows_scan_in_one_block_or_with_cupy_alike(monkeypatch, one_block):
    import cupy

    from daxpy.cuda import contour_rows

    # 30,000 rows: 60,000 counts, scanned by CuPy past SCAN_ONE_BLOCK, or by the one
    # block in 15 tiles (with the constant raised); the sizes written either way.
    dims = (9, 300, 100)
    assert 2 * dims[1] * dims[2] > contour_rows.SCAN_ONE_BLOCK / 2
    monkeypatch.setattr(contour_rows, "SCAN_ONE_BLOCK", 1 << 20 if one_block else 0)
    rng = np.random.default_rng(21)
    field = cupy.asarray(rng.standard_normal(int(np.prod(dims))).astype(np.float32))
    assert _rows_and_program(field, dims, 0.3) is not None


@pytest.mark.gpu
@pytest.mark.parametrize("nx", [1024, 1025, 1057, 2083])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_of_more_than_a_warp_of_words(nx, dtype):
    import cupy

    # More than 32 words (stretches) a row: classify's lanes go round its words again,
    # a word's next word comes from the lane after it or from the next round's first.
    dims = (nx, 3, 3)
    rng = np.random.default_rng(nx)
    values = rng.integers(0, 4, int(np.prod(dims))).astype(dtype)
    values[::7] += rng.random(values[::7].shape[0]).astype(dtype)
    for value in (1.5, 2.0):   # 2.0: points equal to the cut too
        assert _rows_and_program(cupy.asarray(values), dims, value) is not None
