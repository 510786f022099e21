"""The GPU's points of an axis-aligned grid from point ids and from cut edges
(daxpy.cuda.edge_points) give the array program's bits, with ids split in 32-bit
arithmetic (grids of fewer than 2^32 points) and in 64-bit (more: a grid of 2^33
points here, whose axes alone are allocated)."""

import numpy as np
import pytest


def _axes(dims, dtype, rng):
    return [np.cumsum(rng.uniform(0.1, 2.0, d)).astype(dtype) for d in dims]


def _want_points(ids, dims, axes):
    i, j, k = ids % dims[0], ids // dims[0] % dims[1], ids // (dims[0] * dims[1])
    return np.stack([axes[0][i], axes[1][j], axes[2][k]], axis=1).astype(np.float32)


@pytest.mark.gpu
@pytest.mark.parametrize("dims", [(37, 11, 5), (1 << 16, 1 << 16, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grid_points_from_ids(dims, dtype):
    import cupy

    from daxpy.cuda.edge_points import grid_points

    rng = np.random.default_rng(5)
    axes = _axes(dims, dtype, rng)
    ids = rng.integers(0, int(np.prod(dims)), 5000)
    got = grid_points(cupy.asarray(ids), dims, [cupy.asarray(a) for a in axes])
    assert cupy.asnumpy(got).tobytes() == _want_points(ids, dims, axes).tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize("dims", [(37, 11, 5), (1 << 16, 1 << 16, 2)])
def test_edge_points_from_ids(dims):
    import cupy

    from daxpy.cuda.edge_points import axis_points

    rng = np.random.default_rng(6)
    axes = _axes(dims, "float64", rng)
    lo = rng.integers(0, int(np.prod(dims)) - dims[0] * dims[1], 5000)
    hi = lo + rng.choice([1, dims[0], dims[0] * dims[1]], lo.shape[0])
    t = rng.random(lo.shape[0])
    # The array program's arithmetic: the span in the axes' dtype, then float64.
    i = [lo % dims[0], lo // dims[0] % dims[1], lo // (dims[0] * dims[1])]
    j = [hi % dims[0], hi // dims[0] % dims[1], hi // (dims[0] * dims[1])]
    want = np.stack([axes[c][i[c]] + t * (axes[c][j[c]] - axes[c][i[c]]) for c in range(3)],
                    axis=1).astype(np.float32)
    got = axis_points(*(cupy.asarray(a) for a in (lo, hi, t)), dims,
                      [cupy.asarray(a) for a in axes])
    assert cupy.asnumpy(got).tobytes() == want.tobytes()
