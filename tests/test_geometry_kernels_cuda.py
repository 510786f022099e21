"""The geometry filters' CUDA kernels: the one-pass weighted sums
(daxpy.cuda.interpolation) and structured cases (daxpy.cuda.cases); every other
geometry kernel's specializations compile here too (the unstructured clip's among
them). Every
specialization compiles without a GPU (nvcc or NVRTC, sm_80 and sm_90); on the GPU
each gives the array program's result: the bits of filters._geometry.weighted_sum on
random rows (two columns, and a centre table of rows with many terms, zero and NaN
weights among them: the bits of the wide rows' sums made before it), and the
cases of the shifted-view program on random fields with NaN, at random values."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.cuda import cases as cases_kernels
from daxpy.cuda import (cell_cases, clip_block, clip_block_source, contour_rows_source,
                        edge_points, kept_numbers, march_block, plane_distance, scan)
from daxpy.cuda.interpolation import _TYPES, source_for
from daxpy.filters._geometry import point_coordinates, weighted_sum
from daxpy.worklets._clip_arrays import TABLES as CLIP_TABLES
from daxpy.worklets._marching import TABLES
from daxpy.worklets._structured_cases import structured_cases

from test_clip_cpu import split_rows, summed_wide
from test_cuda_codegen import _have_compiler, specializations_ptx

SPECIALIZATIONS = ([source_for(kind, c) for kind in list(_TYPES) + ["axes"] for c in (1, 3)]
                   # Sums written in their own type: a field's, the float32 points'.
                   + [source_for(kind, c, kind) for kind in _TYPES for c in (1, 3)]
                   + [source_for("axes", 3, "f32")]
                   + [cases_kernels.source_for(dtype, k) for dtype in ("float32", "float64")
                      for k in (2, 4, 8)]
                   + [cell_cases.source_for(dtype, ids, k) for dtype in ("float32", "float64")
                      for ids in ("int32", "int64") for k in range(2, cell_cases.MAX_CORNERS + 1)]
                   + [edge_points.source_for(dtype, narrow) for dtype in ("float32", "float64")
                      for narrow in (True, False)]
                   + [plane_distance.source_for(dtype) for dtype in ("float32", "float64")]
                   + [edge_points.ids_source_for(dtype, narrow)
                      for dtype in ("float32", "float64") for narrow in (True, False)]
                   # The contour's row kernels: five entries from one source.
                   + [(f"{name}_{part}", text) for name, text in
                      [contour_rows_source.source_for(dtype, *TABLES["voxel"])
                       for dtype in ("float32", "float64")]
                      # A plane's distance made where the kernels read it (a slice).
                      + [contour_rows_source.source_for("float64", *TABLES["voxel"],
                                                        plane=True)]
                      for part in ("bits", "classify", "sizes", "emit", "scan")]
                   # The scan of counts that writes the sizes (threshold).
                   + [(name, scan.source()) for name in scan.NAMES]
                   # The kept points' numbers (the unstructured clip).
                   + [(name, kept_numbers.source()[1]) for name in kept_numbers.source()[0]]
                   # The unstructured clip's four kernels, per dtype, shape and ids.
                   + [(name, text) for dtype in ("float32", "float64") for kind in clip_block.KINDS
                      for ids in ("int32", "int64")
                      for names, text in [clip_block_source.source_for(
                          dtype, kind, CLIP_TABLES[(kind, False)]["edges"].tolist(), ids)]
                      for name in names]
                   # The march of unstructured cells from their cases, per kind and ids.
                   + [(name, text) for ids in ("int32", "int64")
                      for kind, (_, table, edges) in TABLES.items()
                      for names, text in [march_block.source_for(
                          ids, kind, int(edges.max()) + 1, table.shape[2], edges.tolist())]
                      for name in names])


@pytest.mark.skipif(not _have_compiler(), reason="needs nvcc or NVRTC (CuPy)")
def test_every_geometry_kernel_specialization_compiles_to_ptx(tmp_path):
    for ptx in specializations_ptx(SPECIALIZATIONS, tmp_path):
        # Each product and sum rounded on its own, as NumPy's: no fused multiply-add.
        assert "fma" not in ptx


def _rows(rng, n_points, m, width):
    ids = rng.integers(0, n_points, size=(m, width))
    weights = rng.random((m, width))
    weights[:, 2:][rng.random((m, width - 2)) < 0.7] = 0.0
    weights[rng.random(m) < 0.3, 2:] = 0.0          # rows of two terms only
    if m:
        weights[0, -1] = np.nan                      # NaN counts as a weight there
    return ids, weights


def _on_device(cupy, rows):
    ids, weights, centres = rows
    return cupy.asarray(ids), cupy.asarray(weights), tuple(cupy.asarray(a) for a in centres)


@pytest.mark.gpu
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), width=st.sampled_from([2, 3, 8, 16]),
       dtype=st.sampled_from(["float32", "float64", "int32", "uint8", "int64", "bool"]),
       components=st.sampled_from([(), (3,)]))
def test_weighted_values_give_the_array_programs_bits(seed, width, dtype, components):
    import cupy

    from daxpy.cuda.interpolation import weighted_values

    rng = np.random.default_rng(seed)
    values = (rng.standard_normal((50,) + components) * 100).astype(dtype)
    ids, weights = _rows(rng, 50, 40, width)
    rows = split_rows(ids, weights)
    want = weighted_sum(lambda i: values[i], *rows)
    assert want.tobytes() == summed_wide(lambda i: values[i], ids, weights).tobytes()
    got = weighted_values(cupy.asarray(values), *_on_device(cupy, rows))
    assert cupy.asnumpy(got).tobytes() == want.tobytes()
    # In the field's own dtype: the float64 sum rounded once (integers to the nearest).
    # (A NaN sum has no integer: those rows are compared for floats only.)
    own = cupy.asnumpy(weighted_values(cupy.asarray(values), *_on_device(cupy, rows),
                                       dtype=values.dtype))
    rows_with_value = np.isfinite(want) | (values.dtype.kind == "f")
    rounded = want if values.dtype.kind == "f" else np.rint(want)
    assert (own[rows_with_value].tobytes()
            == rounded[rows_with_value].astype(values.dtype).tobytes())


@pytest.mark.gpu
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), width=st.sampled_from([2, 16]))
def test_weighted_axes_give_the_array_programs_bits(seed, width):
    import cupy

    from daxpy.cuda.interpolation import weighted_axes

    rng = np.random.default_rng(seed)
    grid = daxpy.RectilinearGrid(np.cumsum(rng.random(4)), np.cumsum(rng.random(3)),
                                 np.cumsum(rng.random(5)) * 1e-3)
    ids, weights = _rows(rng, grid.n_points, 30, width)
    rows = split_rows(ids, weights)
    x, y, z = (grid.axis_coordinates(a) for a in range(3))
    # The grid's points from its axes, in float64, as a clip reads them.
    want = weighted_sum(lambda i: np.stack([x[i % 4], y[i // 4 % 3], z[i // 12]], axis=1),
                        *rows)
    axes = tuple(grid.axis_coordinates(a) for a in range(3))
    got = weighted_axes(axes, *_on_device(cupy, rows))
    assert cupy.asnumpy(got).tobytes() == want.tobytes()
    points = weighted_axes(axes, *_on_device(cupy, rows), dtype=np.float32)
    assert cupy.asnumpy(points).tobytes() == want.astype(np.float32).tobytes()


@pytest.mark.gpu
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), dims=st.sampled_from([(5, 4, 3), (6, 1, 4), (1, 3, 5),
                                                          (7, 1, 1), (4, 5, 1)]),
       dtype=st.sampled_from(["float32", "float64"]), invert=st.booleans())
def test_structured_cases_on_the_gpu_are_the_array_programs(seed, dims, dtype, invert):
    import cupy

    rng = np.random.default_rng(seed)
    scalars = rng.standard_normal(int(np.prod(dims))).astype(dtype)
    scalars[rng.random(scalars.shape[0]) < 0.1] = np.nan
    value = float(rng.choice(scalars[np.isfinite(scalars)])) if rng.random() < 0.5 \
        else float(rng.standard_normal())
    want = structured_cases(scalars, dims, value, invert)
    got = structured_cases(cupy.asarray(scalars), dims, value, invert)
    np.testing.assert_array_equal(cupy.asnumpy(got), want)


@pytest.mark.gpu
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), corners=st.integers(2, cell_cases.MAX_CORNERS),
       dtype=st.sampled_from(["float32", "float64"]), ids=st.sampled_from(["int32", "int64"]))
def test_cell_cases_on_the_gpu_are_the_array_programs(seed, corners, dtype, ids):
    import cupy

    from daxpy.worklets.contour import _array_cases

    rng = np.random.default_rng(seed)
    scalars = rng.standard_normal(60).astype(dtype)
    scalars[rng.random(60) < 0.05] = np.nan
    scalars[rng.random(60) < 0.03] = -np.inf
    cells = rng.integers(0, 60, (80, corners)).astype(ids)
    # A value some corners equal, or one between two float32 values.
    value = float(rng.choice(scalars[np.isfinite(scalars)])) if rng.random() < 0.5 \
        else float(rng.standard_normal())
    want = _array_cases(cells, scalars, value)  # NumPy: the array program
    got = _array_cases(cupy.asarray(cells), cupy.asarray(scalars), value)
    np.testing.assert_array_equal(cupy.asnumpy(got), want)


@pytest.mark.gpu
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), dtype=st.sampled_from(["float32", "float64"]))
def test_plane_distance_on_the_gpu_is_the_array_programs(seed, dtype):
    import cupy

    from daxpy.filters._implicit import _array_distance, plane_distance as distance

    rng = np.random.default_rng(seed)
    points = (rng.standard_normal((300, 3)) * 10).astype(dtype)
    origin, normal = rng.standard_normal(3).tolist(), rng.standard_normal(3).tolist()
    want = _array_distance(points, origin, normal)   # NumPy: the array program
    got = distance(cupy.asarray(points), origin, normal)
    assert got.dtype == want.dtype and cupy.asnumpy(got).tobytes() == want.tobytes()


def _axis_grid(rng, axis_dtype: str, uniform: bool):
    """A random uniform grid, or a rectilinear one with axes of ``axis_dtype``."""
    dims = tuple(int(d) for d in rng.integers(1, 9, 3))
    if uniform:
        return daxpy.UniformGrid(dims=dims, origin=tuple(rng.standard_normal(3)),
                                 spacing=tuple(rng.random(3) + 0.1)), dims
    return daxpy.RectilinearGrid(*(np.sort(rng.standard_normal(d)).astype(axis_dtype)
                                   for d in dims)), dims


@pytest.mark.gpu
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), axis_dtype=st.sampled_from(["float32", "float64"]),
       uniform=st.booleans())
def test_axis_points_give_the_array_programs_bits(seed, axis_dtype, uniform):
    import cupy

    from daxpy.filters._surface import _array_coordinates
    from daxpy.worklets._edge_cut import EdgeCut

    rng = np.random.default_rng(seed)
    grid, dims = _axis_grid(rng, axis_dtype, uniform)
    n = int(np.prod(dims))
    lo, hi = rng.integers(0, n, 50), rng.integers(0, n, 50)
    cut = EdgeCut(lo, hi, rng.random(50), {}, {})
    want = _array_coordinates(grid, cut)  # NumPy: the array program
    on_device = EdgeCut(*(cupy.asarray(a) for a in (lo, hi, cut.t)), {}, {})
    got = _array_coordinates(grid, on_device)
    assert got.dtype == want.dtype and cupy.asnumpy(got).tobytes() == want.tobytes()


@pytest.mark.gpu
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), axis_dtype=st.sampled_from(["float32", "float64"]),
       uniform=st.booleans())
def test_grid_points_give_the_array_programs_bits(seed, axis_dtype, uniform):
    import cupy

    rng = np.random.default_rng(seed)
    grid, dims = _axis_grid(rng, axis_dtype, uniform)
    ids = rng.integers(0, int(np.prod(dims)), 40)
    want = point_coordinates(grid, ids)  # NumPy
    got = point_coordinates(grid, cupy.asarray(ids))
    assert got.dtype == want.dtype and cupy.asnumpy(got).tobytes() == want.tobytes()
