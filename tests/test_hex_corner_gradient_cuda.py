"""The CUDA point gradient of hexahedra takes each (point, cell) term from the
point's corner and its three neighbours where all eight corners are finite
(``worklets/_unstructured_gradient.cuh``, ``hex_corner_term``). That is meant to
give the eight-corner arithmetic's bits, signed zeros and NaN included: these
tests run both on the same grid and values and compare the bits.

The eight-corner path is forced by marking the grid's points as not all finite
(the flag :func:`daxpy.cuda.unstructured_arrays.all_points_finite` keeps), the
one case where the kernel takes it for every term.

Where the hexahedra are the grid's first shape the gradient runs as four kernels
(``worklets/_hex_point_gradient.cuh``): the four-corner kernel only where every
value is finite, the points it lists for a redo, or all of them when the list
overflows, by the one-kernel form. Those cases are here too.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.data.celltypes import HEXAHEDRON, TETRA, WEDGE

from strategies import field_arrays, unstructured_grids

SPECIAL = np.array([0.0, -0.0, 1e-44, -1e-44, 1e-300, 3e38, -3e38, 1.0, np.nan, np.inf])


def _gradient(grid, values, eight_corners: bool, stages=lambda pipe: pipe.gradient("f")
              ) -> np.ndarray:
    """The gradient of point field ``f`` (or the result of ``stages``) on the GPU."""
    import cupy

    from daxpy.cuda.device import cached, forget

    forget(grid)
    if eight_corners:
        for coord in ("<f4", "<f8"):
            cached(grid, f"points_finite:{coord}", lambda: False)
    grid.point_data["f"] = cupy.asarray(values)
    pipe = daxpy.pipeline(grid)
    node = stages(pipe)
    result = pipe.run(backend="cuda", to="device")
    return cupy.asnumpy(result.point_data[node.name])


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        a.view(np.uint8), b.view(np.uint8))


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(st.data())
def test_four_corner_terms_give_the_eight_corner_bits(data):
    shapes = data.draw(st.sampled_from([(HEXAHEDRON,), (HEXAHEDRON, TETRA, WEDGE)]),
                       label="shapes")
    grid = data.draw(unstructured_grids(shapes=shapes, max_side=6))
    values = data.draw(field_arrays(grid.n_points))
    flat = values.reshape(grid.n_points, -1)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    # Signed zeros, subnormals, values near the type's end and non-finite ones.
    chosen = rng.random(flat.shape) < data.draw(st.sampled_from([0.0, 0.1, 0.6]))
    with np.errstate(over="ignore"):
        flat[chosen] = SPECIAL[rng.integers(0, len(SPECIAL), chosen.sum())].astype(flat.dtype)
    if data.draw(st.booleans(), label="scaled down"):
        values = (values * values.dtype.type(1e-40)).astype(values.dtype)
    fast = _gradient(grid, values, eight_corners=False)
    full = _gradient(grid, values, eight_corners=True)
    assert _same_bits(fast, full)


@pytest.mark.gpu
def test_a_lattice_through_the_origin_gives_the_same_bits_with_signed_zeros():
    """Exact zeros in the points and the values: each difference of two corners
    is +0 where the eight-corner sums are, whatever the signs of the zeros."""
    side = np.arange(-3.0, 4.0, dtype=np.float32)
    z, y, x = np.meshgrid(side, side, side, indexing="ij")
    points = -np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)  # -0.0 at the origin
    grid = _hexahedra(points, len(side))
    rng = np.random.default_rng(5)
    values = np.where(rng.random(grid.n_points) < 0.5, rng.choice([-0.0, 0.0], grid.n_points),
                      rng.uniform(-1, 1, grid.n_points) * 1e-44).astype(np.float32)
    assert _same_bits(_gradient(grid, values, False), _gradient(grid, values, True))


def _hexahedra(points: np.ndarray, n: int) -> daxpy.UnstructuredGrid:
    """The hexahedra of an n^3 lattice of ``points`` (x fastest)."""
    k, j, i = np.meshgrid(*(np.arange(n - 1),) * 3, indexing="ij")
    p = (i + n * (j + n * k)).ravel()
    corners = np.stack([p, p + 1, p + 1 + n, p + n, p + n * n, p + 1 + n * n,
                        p + 1 + n + n * n, p + n + n * n], axis=1)
    return daxpy.UnstructuredGrid(points, corners.ravel(), np.arange(0, corners.size + 1, 8),
                                  np.full(len(corners), HEXAHEDRON, np.uint8))


def _lattice(side: int, spacing: float = 1.0) -> daxpy.UnstructuredGrid:
    """Hexahedra over a side^3 lattice whose points move by up to 0.15 spacings."""
    z, y, x = np.meshgrid(*(np.arange(side, dtype=np.float64),) * 3, indexing="ij")
    points = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    points += np.random.default_rng(side).uniform(-0.15, 0.15, points.shape)
    return _hexahedra(points * spacing, side)


@pytest.mark.gpu
@pytest.mark.parametrize("side", [12, 30])
def test_points_redone_are_listed_or_all_redone_with_the_same_bits(side):
    """Differences of values near float's end overflow the four-corner sums (the
    gradients, over cells 4 wide, do not): the points go on a list (12^3) or
    overflow it (30^3: more than daxpy.cuda.hex_gradient.LISTED), and are summed
    again by the one-kernel form."""
    from daxpy.cuda.hex_gradient import LISTED

    grid = _lattice(side, spacing=4.0)
    rng = np.random.default_rng(side)
    values = rng.choice([-1.75e38, 1.75e38], grid.n_points).astype(np.float32)
    assert (grid.n_points > LISTED) == (side == 30)
    fast = _gradient(grid, values, eight_corners=False)
    assert np.isfinite(fast).all()
    assert _same_bits(fast, _gradient(grid, values, eight_corners=True))


@pytest.mark.gpu
def test_a_map_on_load_that_overflows_is_seen_as_not_finite():
    """The four-corner kernel checks each value as the gradient reads it: a
    magnitude of finite float32 components can be Inf."""
    grid = _lattice(8)
    rng = np.random.default_rng(3)
    vectors = rng.uniform(-1, 1, (grid.n_points, 3)).astype(np.float32)
    vectors[rng.random(grid.n_points) < 0.05] = 3e38
    results = [_gradient(grid, vectors, eight_corners,
                         stages=lambda pipe: pipe.magnitude("f").gradient())
               for eight_corners in (False, True)]
    assert not np.isfinite(results[0]).all()
    assert _same_bits(*results)
