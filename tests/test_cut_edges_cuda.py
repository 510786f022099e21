"""The merge of cut edges on the GPU (daxpy.cuda.cut_edges) and a points grid's cut
coordinates in one kernel (daxpy.cuda.edge_values, widened) give the array programs'
results, bit for bit: on random cut edges and output cells, with grid values equal to
the value (points snapped, cells collapsed), cells that list an edge twice, and
neither. Rows gathered on the device (daxpy.cuda.gather) are CuPy's, bit for bit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daxpy.cuda import cut_edges
from daxpy.worklets._edge_cut import EdgeCut


def test_fields_of_other_dtypes_are_left_to_the_array_program():
    assert not cut_edges.serves(np.zeros(2, np.int32))
    assert not cut_edges.serves(np.zeros((2, 3), np.float32))


def _parts(rng, scalars: np.ndarray, value: float, sizes: list) -> dict:
    """Random output cells of each size in ``sizes``, each listing edges that the value
    cuts (one end at or above it, the other below), with ascending input cells."""
    above = np.flatnonzero(scalars >= value)
    below = np.flatnonzero(scalars < value)
    n = scalars.shape[0]
    parts = {}
    for k in sizes:
        m = int(rng.integers(0, 40))
        a = rng.choice(above, (m, k)) if above.size else np.zeros((0, k), np.int64)
        b = rng.choice(below, (m, k)) if below.size else np.zeros((0, k), np.int64)
        if not (above.size and below.size):
            m, a, b = 0, a[:0], b[:0]
        keys = np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b)
        parts[k] = (keys, np.sort(rng.integers(0, 1000, m)).astype(np.int64))
    return parts


@pytest.mark.gpu
@settings(max_examples=60, deadline=None)
@given(n_points=st.integers(2, 60), dtype=st.sampled_from(["float32", "float64"]),
       exact=st.integers(0, 3), sizes=st.sampled_from([[3], [2], [1], [1, 2, 3], [2, 3]]),
       seed=st.integers(0, 2**31))
def test_the_merge_on_the_gpu_is_the_array_programs(n_points, dtype, exact, sizes, seed):
    import cupy

    from daxpy.worklets._merge_cuts import merge

    rng = np.random.default_rng(seed)
    scalars = rng.standard_normal(n_points).astype(dtype)
    value = float(scalars[0]) if exact else float(rng.standard_normal())
    # Grid values equal to the value: their edges snap to the point, cells collapse.
    scalars[rng.integers(0, n_points, exact)] = scalars[0]
    parts = _parts(rng, scalars, value, sizes)
    want = merge(parts, scalars, value, n_points)
    got = merge({k: (cupy.asarray(a), cupy.asarray(b)) for k, (a, b) in parts.items()},
                cupy.asarray(scalars), value, n_points)
    for name in ("lo", "hi", "t"):
        ours, theirs = cupy.asnumpy(getattr(got, name)), getattr(want, name)
        assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes(), name
    assert sorted(got.cells) == sorted(want.cells)
    for k in want.cells:
        for ours, theirs in ((got.cells[k], want.cells[k]), (got.source[k], want.source[k])):
            ours = cupy.asnumpy(ours)
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
            np.testing.assert_array_equal(ours, theirs)


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(n_points=st.integers(2, 300), n_cut=st.integers(0, 500),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2**31))
def test_a_points_grids_cut_coordinates_are_the_array_programs(n_points, n_cut, dtype, seed):
    import cupy

    import daxpy
    from daxpy.data.celltypes import VERTEX
    from daxpy.filters._surface import coordinates

    rng = np.random.default_rng(seed)
    points = (rng.standard_normal((n_points, 3)) * 10.0 ** rng.integers(-3, 4)).astype(dtype)
    grid = daxpy.UnstructuredGrid.from_blocks(points, {VERTEX: np.arange(n_points)[:, None]})
    lo, hi = rng.integers(0, n_points, n_cut), rng.integers(0, n_points, n_cut)
    t = rng.uniform(0, 1, n_cut)
    cut = EdgeCut(cupy.asarray(lo), cupy.asarray(hi), cupy.asarray(t), {}, {})
    got = cupy.asnumpy(coordinates(grid, cut))
    low, high = points[lo].astype(np.float64), points[hi].astype(np.float64)
    want = (low + t[:, None] * (high - low)).astype(dtype)   # the array program, NumPy
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(n_rows=st.integers(1, 300), n_ids=st.integers(0, 400),
       shape=st.sampled_from([(), (3,), (2, 2)]),
       dtype=st.sampled_from(["float32", "float64", "int8", "int16", "uint32", "int64"]),
       seed=st.integers(0, 2**31))
def test_gathered_rows_are_cupys(n_rows, n_ids, shape, dtype, seed):
    import cupy

    from daxpy.filters._geometry import take_rows

    rng = np.random.default_rng(seed)
    values = cupy.asarray((rng.standard_normal((n_rows,) + shape) * 100).astype(dtype))
    if values.dtype.kind == "f":
        values.reshape(-1)[:2] = cupy.asarray([np.nan, -0.0], values.dtype)[:values.size]
    ids = cupy.asarray(rng.integers(0, n_rows, n_ids))
    got, want = take_rows(values, ids), values[ids]
    assert got.dtype == want.dtype and got.shape == want.shape
    assert cupy.asnumpy(got).tobytes() == cupy.asnumpy(want).tobytes()
