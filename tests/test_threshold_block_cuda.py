"""The GPU's threshold kernels for unstructured grids of one cell shape
(daxpy.cuda.threshold_block): every specialization compiles without a GPU (nvcc or
NVRTC, sm_80 and sm_90); on the GPU the worklet gives the array program's bits
(cell ids, point ids, connectivity, offsets, types) on random grids of each shape,
int32 and int64 corner ids, fields with NaN and ties with the bounds, every test
(cell scalars; all, any corners; the corners' range), inverted or not."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.cuda.threshold_block import MODES, classify_source, count_source, emit_source
from daxpy.data.celltypes import HEXAHEDRON, LINE, PYRAMID, TETRA, TRIANGLE, WEDGE
from daxpy.worklets.threshold import threshold_cells

from test_cuda_codegen import _have_compiler, specializations_ptx
from test_threshold_cells_cuda import _PARAMS

_SHAPES = {2: LINE, 3: TRIANGLE, 4: TETRA, 5: PYRAMID, 6: WEDGE, 8: HEXAHEDRON}

SPECIALIZATIONS = ([classify_source(dtype, ids, k, mode) for dtype in ("float32", "float64")
                    for ids in ("int32", "int64") for k in _SHAPES for mode in MODES.values()]
                   + [emit_source(ids, k) for ids in ("int32", "int64") for k in _SHAPES]
                   + [count_source()])


@pytest.mark.skipif(not _have_compiler(), reason="needs nvcc or NVRTC (CuPy)")
def test_every_threshold_block_specialization_compiles_to_ptx(tmp_path):
    specializations_ptx(SPECIALIZATIONS, tmp_path)


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), k=st.sampled_from(sorted(_SHAPES)),
       dtype=st.sampled_from(["float32", "float64"]), ids=st.sampled_from(["int32", "int64"]),
       test=st.sampled_from(sorted(_PARAMS)), invert=st.booleans())
def test_one_shape_threshold_on_the_gpu_is_the_array_programs(seed, k, dtype, ids, test,
                                                              invert):
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(seed)
    # Grids of one word of cells to several hundred (their scan in tiles).
    n_points, n_cells = (50, int(rng.integers(1, 60))) if seed % 3 else (3000, 9000)
    corners = np.stack([rng.choice(n_points, k, replace=False) for _ in range(n_cells)])
    grid = daxpy.UnstructuredGrid.from_blocks(rng.random((n_points, 3)),
                                              {_SHAPES[k]: corners.astype(ids)})
    n = n_cells if test == "cells" else n_points
    # Few distinct values (ties with the bounds), NaN among them.
    values = rng.integers(0, 6, n).astype(dtype) / 2
    values[rng.random(n) < 0.1] = np.nan
    lower, upper = sorted(float(v) for v in rng.choice([0.5, 1.0, 1.3, 2.0, -np.inf], 2))
    params = dict(_PARAMS[test], lower=lower, upper=upper, invert=invert)
    want = threshold_cells(grid, values, **params)
    got = threshold_cells(grid, cupy.asarray(values), place=cupy.asarray, **params)
    _same(got, want)
    # Without ids: None for both, made from the words on demand; the gathers by the
    # words are those by the ids.
    without = threshold_cells(grid, cupy.asarray(values), place=cupy.asarray, ids=False,
                              **params)
    assert without.cell_ids is None and without.point_ids is None
    _same(without.with_ids(), want)
    for words, ids, n in ((without.point_words, want.point_ids, n_points),
                          (without.cell_words, want.cell_ids, n_cells)):
        for array in (rng.standard_normal(n), rng.random((n, 3)).astype(np.float32),
                      rng.integers(0, 9, n).astype(np.int8)):
            assert words.take(cupy.asarray(array)).get().tobytes() == array[ids].tobytes()


def _same(got, want):
    import cupy

    for name in ("cell_ids", "point_ids", "connectivity", "offsets", "cell_types"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert cupy.asnumpy(a).tobytes() == np.asarray(b).tobytes(), name
