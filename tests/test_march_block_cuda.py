"""The GPU's marching of unstructured cells from their cases (daxpy.cuda.march_block;
test_geometry_kernels_cuda compiles every specialization without a GPU): the array
program's keys and source cells bit for bit (daxpy.worklets._marching.march), for
every kind of cell, int32 and int64 corner ids, blocks of many chunks and of none."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from daxpy.worklets._marching import TABLES, march


def _same(kind, n_cells, n_points, id_dtype, seed):
    import cupy

    from daxpy.cuda.march_block import march_block

    rng = np.random.default_rng(seed)
    counts, table, edges = TABLES[kind]
    corners = rng.integers(0, n_points, (n_cells, int(edges.max()) + 1)).astype(id_dtype)
    cell_ids = np.sort(rng.choice(10 * n_cells + 1, n_cells, replace=False)).astype(np.int64)
    cases = rng.integers(0, counts.shape[0], n_cells).astype(np.uint8)
    on = [cupy.asarray(a) for a in (corners, cell_ids, cases)]
    keys, source = march_block(on[2], on[0], on[1], n_points, kind, TABLES[kind])
    scalars = cupy.zeros(n_points)   # read by march only where cases are not given
    want_keys, want_source = march(on[0], on[1], scalars, 0.0, kind, cases=on[2].astype(np.int64))
    assert keys.dtype == want_keys.dtype and keys.shape == want_keys.shape
    assert keys.get().tobytes() == want_keys.get().tobytes()
    assert source.get().tolist() == want_source.astype(np.int64).get().tolist()


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(sorted(TABLES)), n_cells=st.integers(0, 700),
       n_points=st.integers(1, 500), id_dtype=st.sampled_from([np.int32, np.int64]),
       seed=st.integers(0, 2**31))
def test_kernels_give_the_array_programs_keys(kind, n_cells, n_points, id_dtype, seed):
    _same(kind, n_cells, n_points, id_dtype, seed)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["hexahedron", "tetra", "wedge", "pyramid"])
def test_blocks_of_many_chunks(kind):
    _same(kind, 100_000, 30_000, np.int64, 4)
