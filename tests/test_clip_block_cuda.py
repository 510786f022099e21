"""The GPU's clip of unstructured grids of one cell shape (daxpy.cuda.clip_block;
test_geometry_kernels_cuda compiles every specialization without a GPU): the
array program's Clipped bit for bit, keys included, and the compiled CPU clip's, on
random grids of every shape the kernels take, float32 and float64 fields, values
equal to the cut, inverted sides, grids kept whole or cut nowhere; grids of mixed
shapes keep the array program; a corner id out of range is refused."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.data.celltypes import HEXAHEDRON, LINE, PYRAMID, QUAD, TETRA, TRIANGLE, WEDGE
from daxpy.worklets import clip as array_clip
from daxpy.worklets._clip_cells_cpu import clip_unstructured

from strategies import seeds, unstructured_grids

PARTS = ("kept", "ids", "weights", "centre_rows", "centre_ids", "centre_weights", "connectivity",
         "offsets", "cell_types", "source")


def _surface_grid(kind, side, rng):
    """A jittered lattice's quads, triangles or lines (one shape)."""
    xs = np.arange(side, dtype=np.float64)
    points = np.stack(np.meshgrid(xs, xs, [0.0], indexing="ij"), -1).reshape(-1, 3)
    points[:, :2] += rng.uniform(-0.1, 0.1, (points.shape[0], 2))
    i, j = np.meshgrid(np.arange(side - 1), np.arange(side - 1), indexing="ij")
    a = (i * side + j).ravel()
    quads = np.stack([a, a + side, a + side + 1, a + 1], 1)
    cells = {QUAD: quads, TRIANGLE: np.concatenate([quads[:, :3], quads[:, [0, 2, 3]]]),
             LINE: quads[:, :2]}[kind]
    return daxpy.UnstructuredGrid.from_blocks(points, {kind: cells})


def _on_gpu(grid, scalars, value, invert, kernels=True):
    import cupy

    field = cupy.asarray(scalars)
    if kernels:
        return array_clip.clip_cells(grid, field, value, invert)
    with mock.patch.object(array_clip, "_cells_on_gpu", lambda *a: None):
        return array_clip.clip_cells(grid, field, value, invert)


def _assert_same(grid, scalars, value, invert):
    ours = _on_gpu(grid, scalars, value, invert)
    program = _on_gpu(grid, scalars, value, invert, kernels=False)
    for name in PARTS + ("keys",):
        a, b = getattr(ours, name).get(), getattr(program, name).get()
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name
    twin = clip_unstructured(grid, scalars, value, invert)
    for name in PARTS:
        a, b = getattr(ours, name).get(), getattr(twin, name)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name


def _field(grid, rng, dtype, ties):
    values = rng.standard_normal(grid.n_points)
    if ties:  # few distinct values: many equal to the cut
        values = np.round(values * 2) / 2
    return values.astype(dtype)


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(shape=st.sampled_from([HEXAHEDRON, TETRA, WEDGE, PYRAMID]), side=st.integers(2, 6),
       seed=seeds, dtype=st.sampled_from([np.float32, np.float64]), invert=st.booleans(),
       ties=st.booleans(), data=st.data())
def test_solids_give_the_array_programs_bits(shape, side, seed, dtype, invert, ties, data):
    grid = data.draw(unstructured_grids(shapes=[shape], max_side=side))
    rng = np.random.default_rng(seed)
    _assert_same(grid, _field(grid, rng, dtype, ties), 0.0, invert)


@pytest.mark.gpu
@settings(max_examples=20, deadline=None)
@given(shape=st.sampled_from([QUAD, TRIANGLE, LINE]), side=st.integers(2, 9), seed=seeds,
       dtype=st.sampled_from([np.float32, np.float64]), invert=st.booleans(),
       ties=st.booleans())
def test_surfaces_and_lines_give_the_array_programs_bits(shape, side, seed, dtype, invert, ties):
    rng = np.random.default_rng(seed)
    grid = _surface_grid(shape, side, rng)
    _assert_same(grid, _field(grid, rng, dtype, ties), 0.0, invert)


def _lattice(side):
    """A lattice's points and hexahedra (VTK's corner order)."""
    xs = np.arange(side, dtype=np.float64)
    points = np.stack(np.meshgrid(xs, xs, xs, indexing="ij"), -1).reshape(-1, 3)
    i, j, k = (a.ravel() for a in np.meshgrid(*[np.arange(side - 1)] * 3, indexing="ij"))
    base = (i * side + j) * side + k
    hexes = np.stack([base, base + side * side, base + side * side + side, base + side,
                      base + 1, base + side * side + 1, base + side * side + side + 1,
                      base + side + 1], 1)
    return points, hexes


def _whole_grid(shape):
    """A grid of one shape whose cells fill whole warps many times over: the emit's
    path for a warp of cells all kept whole, for every count of corners."""
    from daxpy.data.celltypes import HEX_TO_TETS, HEX_TO_WEDGES

    if shape in (QUAD, TRIANGLE, LINE):
        return _surface_grid(shape, 12, np.random.default_rng(4))
    points, hexes = _lattice(7)
    if shape == PYRAMID:  # the hexahedron's faces to its centre
        centres = np.arange(points.shape[0], points.shape[0] + hexes.shape[0])
        with_centre = np.concatenate([hexes, centres[:, None]], axis=1)
        faces = ((0, 1, 2, 3), (4, 7, 6, 5), (0, 4, 5, 1), (1, 5, 6, 2), (2, 6, 7, 3),
                 (3, 7, 4, 0))
        cells = np.concatenate([with_centre[:, list(f) + [8]] for f in faces])
        points = np.concatenate([points, points[hexes].mean(axis=1)])
    else:
        pieces = {HEXAHEDRON: [tuple(range(8))], TETRA: HEX_TO_TETS, WEDGE: HEX_TO_WEDGES}
        cells = np.concatenate([hexes[:, list(p)] for p in pieces[shape]])
    return daxpy.UnstructuredGrid.from_blocks(points, {shape: cells})


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [HEXAHEDRON, TETRA, WEDGE, PYRAMID, QUAD, TRIANGLE, LINE])
@pytest.mark.parametrize("value", [-10.0, 10.0])
@pytest.mark.parametrize("invert", [False, True])
def test_grids_kept_whole_or_cut_nowhere(shape, value, invert):
    grid = _whole_grid(shape)
    scalars = np.random.default_rng(1).standard_normal(grid.n_points)
    _assert_same(grid, scalars, value, invert)


@pytest.mark.gpu
def test_a_grid_of_many_chunks_gives_the_array_programs_bits():
    # Many 256-cell chunks, most cells whole, some cut, a few centre points.
    from daxpy.data.celltypes import HEX_TO_WEDGES

    points, hexes = _lattice(24)
    rng = np.random.default_rng(5)
    scalars = points @ np.array([0.3, -0.2, 0.5]) + 0.2 * rng.standard_normal(points.shape[0])
    for cells in ({HEXAHEDRON: hexes},
                  {WEDGE: np.concatenate([hexes[:, list(p)] for p in HEX_TO_WEDGES])}):
        grid = daxpy.UnstructuredGrid.from_blocks(points, cells)
        for invert in (False, True):
            _assert_same(grid, scalars, float(np.median(scalars)), invert)


def test_mixed_shapes_keep_the_array_program():
    from strategies import mixed_grid_all_shapes

    grid = mixed_grid_all_shapes()
    scalars = np.random.default_rng(2).standard_normal(grid.n_points)
    assert array_clip._cells_on_gpu(grid, scalars, 0.0, False, np.asarray) is None


@pytest.mark.gpu
def test_a_corner_id_out_of_range_is_refused():
    import cupy

    from daxpy.cuda.clip_block import clip_block

    points, hexes = _lattice(3)
    grid = daxpy.UnstructuredGrid.from_blocks(points, {HEXAHEDRON: hexes})
    corners = cupy.asarray(hexes)
    corners[0, 3] = grid.n_points + 5
    scalars = cupy.asarray(np.random.default_rng(3).standard_normal(grid.n_points))
    key = ("hexahedron", False)
    tables = (array_clip._case_arrays(*key), array_clip.TABLES[key]["edges"])
    with pytest.raises(IndexError, match="out of range"):
        clip_block(scalars, scalars >= 0, corners, "hexahedron", False, 0.0, *tables)
