"""Hypothesis strategies for random daxpy grids and fields.

Sizes are drawn by hypothesis (so failures shrink to small grids); coordinates
and values come from a NumPy generator seeded by a drawn integer, which keeps
example generation fast on big arrays.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import daxpy
from daxpy.data.celltypes import (HEX_TO_TETS, HEX_TO_WEDGES, HEXAHEDRON, LINE, PYRAMID, QUAD,
                                  TETRA, TRIANGLE, VERTEX, WEDGE)

FLOAT_DTYPES = (np.float32, np.float64)

seeds = st.integers(min_value=0, max_value=2**32 - 1)


@st.composite
def point_dims(draw, min_dimension=1, max_dimension=3, max_side=6):
    """Point counts along x, y, z; axes beyond the drawn dimension have 1 point."""
    dimension = draw(st.integers(min_dimension, max_dimension))
    sides = [draw(st.integers(2, max_side)) for _ in range(dimension)]
    return tuple(sides) + (1,) * (3 - dimension)


@st.composite
def uniform_grids(draw, min_dimension=1, max_dimension=3, max_side=6):
    """Random ``UniformGrid`` of 1 to 3 dimensions with random origin and spacing."""
    dims = draw(point_dims(min_dimension, max_dimension, max_side))
    rng = np.random.default_rng(draw(seeds))
    origin = rng.uniform(-10, 10, 3)
    spacing = rng.uniform(0.1, 3.0, 3)
    return daxpy.UniformGrid(dims=dims, origin=origin, spacing=spacing)


def _axis(rng, n):
    return np.cumsum(np.concatenate([[rng.uniform(-5, 5)], rng.uniform(0.2, 2.0, n - 1)]))


@st.composite
def rectilinear_grids(draw, min_dimension=1, max_dimension=3, max_side=6):
    """Random ``RectilinearGrid`` with strictly increasing, unevenly spaced axes."""
    dims = draw(point_dims(min_dimension, max_dimension, max_side))
    rng = np.random.default_rng(draw(seeds))
    return daxpy.RectilinearGrid(*(_axis(rng, n) for n in dims))


def _lattice_points(rng, dims, jitter):
    axes = [_axis(rng, n) for n in dims]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    points = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    # Jitter stays well under the smallest spacing (0.2) so no cell inverts.
    return points + rng.uniform(-jitter, jitter, points.shape)


@st.composite
def curvilinear_grids(draw, min_dimension=1, max_dimension=3, max_side=6):
    """Random ``CurvilinearGrid``: a jittered lattice, rotated about z."""
    dims = draw(point_dims(min_dimension, max_dimension, max_side))
    rng = np.random.default_rng(draw(seeds))
    points = _lattice_points(rng, dims, 0.04)
    angle = rng.uniform(0, np.pi)
    c, s = np.cos(angle), np.sin(angle)
    rotation = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    return daxpy.CurvilinearGrid(dims, points @ rotation.T)


def structured_grids(**kwargs):
    """Any of the three structured grid families."""
    return st.one_of(uniform_grids(**kwargs), rectilinear_grids(**kwargs),
                     curvilinear_grids(**kwargs))


# Tetrahedra and wedges are cut from lattice hexahedra by daxpy.data.celltypes's
# HEX_TO_TETS and HEX_TO_WEDGES. Pyramids use the hexahedron's faces as bases and its centre (index 8) as apex,
# each base ordered so its normal points at the apex. Wedges and pyramids have
# positive volume by vtkMeshQuality.
_HEX_TO_PYRAMIDS = ((0, 1, 2, 3, 8), (4, 7, 6, 5, 8), (0, 4, 5, 1, 8),
                    (1, 5, 6, 2, 8), (2, 6, 7, 3, 8), (3, 7, 4, 0, 8))
_SOLIDS = (HEXAHEDRON, TETRA, WEDGE, PYRAMID)


def _lattice_hexes(dims):
    nx, ny, nz = dims
    k, j, i = np.meshgrid(np.arange(nz - 1), np.arange(ny - 1), np.arange(nx - 1),
                          indexing="ij")
    base = (i + nx * (j + ny * k)).ravel()
    step = np.array([0, 1, 1 + nx, nx, nx * ny, 1 + nx * ny, 1 + nx + nx * ny,
                     nx + nx * ny])
    return base[:, None] + step


def _solid_cells(rng, points, hexes, shapes):
    """Cut each lattice hexahedron into one randomly chosen solid shape."""
    blocks = {s: [] for s in _SOLIDS}
    extra_points = []
    choice = rng.choice(np.array(shapes), size=len(hexes))
    for shape, pieces in ((TETRA, HEX_TO_TETS), (WEDGE, HEX_TO_WEDGES)):
        chosen = hexes[choice == shape]
        for piece in pieces:
            blocks[shape].append(chosen[:, list(piece)])
    blocks[HEXAHEDRON].append(hexes[choice == HEXAHEDRON])
    chosen = hexes[choice == PYRAMID]
    if len(chosen):
        centre_ids = len(points) + np.arange(len(chosen))
        extra_points.append(points[chosen].mean(axis=1))
        with_centre = np.concatenate([chosen, centre_ids[:, None]], axis=1)
        for piece in _HEX_TO_PYRAMIDS:
            blocks[PYRAMID].append(with_centre[:, list(piece)])
    return blocks, extra_points


@st.composite
def unstructured_grids(draw, shapes=None, max_side=4, lower_dimensional=True):
    """Random ``UnstructuredGrid`` cut from a jittered lattice.

    Parameters
    ----------
    shapes : sequence of int, optional
        VTK solid types to use (hexahedron, tetra, wedge, pyramid); default all,
        drawn per lattice cell.
    lower_dimensional : bool
        Also add quads, triangles, lines and vertices on the lattice's faces,
        edges and points (only when ``shapes`` is None).
    """
    dims = tuple(draw(st.integers(2, max_side)) for _ in range(3))
    rng = np.random.default_rng(draw(seeds))
    points = _lattice_points(rng, dims, 0.04)
    solids = tuple(shapes) if shapes is not None else _SOLIDS
    blocks, extra = _solid_cells(rng, points, _lattice_hexes(dims), solids)
    if shapes is None and lower_dimensional and draw(st.booleans()):
        nx = dims[0]
        quad = np.array([0, 1, 1 + nx, nx])
        bottom = _lattice_hexes(dims)[: (dims[0] - 1) * (dims[1] - 1), :4]
        blocks[QUAD] = [bottom[::2]]
        blocks[TRIANGLE] = [bottom[1::2][:, [0, 1, 2]], bottom[1::2][:, [0, 2, 3]]]
        blocks[LINE] = [np.stack([quad[:1] + np.arange(nx - 1), quad[1:2] + np.arange(nx - 1)], 1)]
        blocks[VERTEX] = [np.arange(0, len(points), 7)[:, None]]
    all_points = np.concatenate([points] + extra) if extra else points
    merged = {s: np.concatenate(b) for s, b in blocks.items() if b and sum(len(x) for x in b)}
    return daxpy.UnstructuredGrid.from_blocks(all_points, merged)


def mixed_grid_all_shapes() -> daxpy.UnstructuredGrid:
    """A small grid holding all eight VTK linear cell types (deterministic)."""
    rng = np.random.default_rng(7)
    dims = (3, 3, 3)
    points = _lattice_points(rng, dims, 0.03)
    hexes = _lattice_hexes(dims)
    blocks = {HEXAHEDRON: [hexes[0:1]], TETRA: [hexes[1:2][:, list(p)] for p in HEX_TO_TETS],
              WEDGE: [hexes[2:3][:, list(p)] for p in HEX_TO_WEDGES]}
    centre = len(points)
    with_centre = np.concatenate([hexes[3:4], [[centre]]], axis=1)
    blocks[PYRAMID] = [with_centre[:, list(p)] for p in _HEX_TO_PYRAMIDS]
    extra = points[hexes[3]].mean(axis=0, keepdims=True)
    nx = dims[0]
    blocks[QUAD] = [np.array([[0, 1, 1 + nx, nx]])]
    blocks[TRIANGLE] = [np.array([[1, 2, 2 + nx]])]
    blocks[LINE] = [np.array([[2 + nx, 2 + 2 * nx]])]
    blocks[VERTEX] = [np.array([[2 * nx]])]
    merged = {s: np.concatenate(b) for s, b in blocks.items()}
    return daxpy.UnstructuredGrid.from_blocks(np.concatenate([points, extra]), merged)


def any_grids():
    """Any grid family."""
    return st.one_of(structured_grids(), unstructured_grids())


@st.composite
def located_grids(draw):
    """``(grid, association, size)``: any grid, ``"points"`` or ``"cells"``, and
    how many of those the grid has."""
    grid = draw(any_grids())
    association = draw(st.sampled_from(["points", "cells"]))
    return grid, association, grid.n_points if association == "points" else grid.n_cells


def with_fields_at(grid, association, fields):
    """``grid`` with ``fields`` (name to values) at ``association``."""
    return grid.with_fields(**{("point_data" if association == "points" else "cell_data"): fields})


@st.composite
def field_arrays(draw, n, ncomp=None, dtype=None):
    """Random field values of shape ``(n,)`` or ``(n, ncomp)``.

    ``ncomp`` and ``dtype`` are drawn (1..3 components, float32/float64) when
    not given; a drawn ``ncomp`` of 1 gives a flat ``(n,)`` array.
    """
    ncomp = draw(st.integers(1, 3)) if ncomp is None else ncomp
    dtype = draw(st.sampled_from(FLOAT_DTYPES)) if dtype is None else dtype
    rng = np.random.default_rng(draw(seeds))
    shape = (n,) if ncomp == 1 else (n, ncomp)
    return rng.uniform(-10, 10, shape).astype(dtype)


POLY_KINDS = (("verts", 1), ("lines", 2), ("polys", 3), ("strips", 3))
"""PolyData's cell kinds, with the fewest points of each."""


def cell_array(rng, n_points, sizes, repeats=False):
    """``(offsets, connectivity)`` of cells of ``sizes`` random points, distinct
    unless ``repeats`` (a cell may then list a point more than once)."""
    ids = [rng.choice(n_points, k, replace=repeats) for k in sizes]
    return (np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]),
            np.concatenate(ids) if ids else np.zeros(0, np.int64))


def polydata_of_every_kind(rng, points, cells_per_kind, extra_corners=4):
    """A PolyData with ``cells_per_kind`` cells of each kind, of up to
    ``extra_corners`` more points than the kind's fewest."""
    return daxpy.PolyData(points, **{
        kind: cell_array(rng, len(points), rng.integers(least, least + extra_corners + 1,
                                                        cells_per_kind))
        for kind, least in POLY_KINDS})


@st.composite
def polydata_surfaces(draw, max_points=10, max_cells=4):
    """Random PolyData: 0..max_cells cells of each kind (verts, lines, polys,
    strips), the kind's fewest points or more, of distinct random points or,
    when drawn, with repeats (closed polylines, strips that turn back)."""
    rng = np.random.default_rng(draw(seeds))
    n_points = draw(st.integers(3, max_points))
    repeats = draw(st.booleans())
    arrays = {kind: cell_array(rng, n_points, [
        draw(st.integers(least, min(least + 3, n_points)))
        for _ in range(draw(st.integers(0, max_cells)))], repeats) for kind, least in POLY_KINDS}
    return daxpy.PolyData(rng.uniform(-1, 1, (n_points, 3)), **arrays)


@st.composite
def simple_surfaces(draw):
    """Vertices, lines, triangles and quads on random points (planar or not)."""
    rng = np.random.default_rng(draw(seeds))
    n_points = draw(st.integers(4, 12))
    polys = [draw(st.sampled_from([3, 4])) for _ in range(draw(st.integers(0, 6)))]
    cells = {"verts": [1] * draw(st.integers(0, 3)), "lines": [2] * draw(st.integers(0, 4)),
             "polys": polys}
    flat = draw(st.booleans())
    points = rng.uniform(-1, 1, (n_points, 3)) * ([1, 1, 0] if flat else 1)
    return daxpy.PolyData(points, **{kind: cell_array(rng, n_points, sizes)
                                     for kind, sizes in cells.items()})


def cut_field(rng, n, kind, dtype):
    """Point scalars to contour or clip: smooth-ish random values, or a few integers
    (``kind`` "ties": many equal the value), with NaN and Inf sprinkled in for
    ``kind`` "holes"."""
    if kind == "ties":
        values = rng.integers(-2, 3, n).astype(dtype)
    else:
        values = rng.standard_normal(n).astype(dtype)
    if kind == "holes":
        where = rng.integers(0, n, max(1, n // 15))
        values[where] = rng.choice([np.nan, np.inf, -np.inf], where.shape[0])
    return values


CUT_DIMS = [(9, 8, 7), (2, 2, 2), (9, 1, 7), (1, 8, 7), (6, 5, 1), (2, 9, 1), (8, 1, 1),
            (1, 1, 1)]
"""Grid shapes a compiled cut (contour, clip) must handle: 3-D, 2-D in every plane,
1-D and a single point."""

CUT_DTYPES = [np.float32, np.float64, ">f8", np.int32, np.float16]
"""Scalar dtypes a compiled cut must take or hand to the array program."""


def cut_value(rng, scalars) -> float:
    """A value to contour or clip ``scalars`` at: one of their finite values (ties),
    or anything around their range."""
    finite = scalars[np.isfinite(scalars)]
    if finite.size and rng.random() < 0.5:
        return float(rng.choice(finite))
    return float(rng.uniform(-2.5, 2.5))


def wavy_field(dims, dtype=np.float64):
    """Point scalars of a structured grid's ``dims`` crossing 0 in many surfaces and
    saddles, some points exactly at 0 and a few NaN."""
    z, y, x = np.meshgrid(*(np.arange(n) for n in reversed(dims)), indexing="ij")
    values = np.sin(0.7 * x) * np.cos(0.5 * y) + 0.3 * np.sin(0.9 * z)
    values = np.round(values, 2).astype(dtype).ravel()
    values[::97] = np.nan
    return values


def value_between(values, rng) -> float:
    """A value strictly between two of ``values`` (never equal to one), for cuts whose
    result must not depend on ties."""
    ordered = np.unique(np.asarray(values, np.float64))
    if ordered.size < 2:
        return float(ordered[0]) + 0.5
    i = int(rng.integers(0, ordered.size - 1))
    return float((ordered[i] + ordered[i + 1]) / 2)


SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -2.5, 1e-30, 7.0]
LEAF_FUNCTIONS = ["sin", "cos", "exp", "log", "sqrt", "abs", "floor", "ceil", "tanh", "atan",
                  "log2"]
LEAF_BINARY = ["*", "/", "%", "**", "atan2", "hypot", "minimum"]
CONTINUOUS = ["+", "-", "minimum", "maximum"]
LEAVES = st.sampled_from(["a", "b", "a", "b", "2", "0.5", "-1"])


@st.composite
def leaf_terms(draw):
    """A field, a constant, or one function of them: the functions that are not
    correctly rounded, or not continuous, see only exact inputs."""
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(LEAVES)
    if kind == 1:
        return f"{draw(st.sampled_from(LEAF_FUNCTIONS))}({draw(LEAVES)})"
    op = draw(st.sampled_from(LEAF_BINARY))
    x, y = draw(LEAVES), draw(LEAVES)
    return f"{op}({x}, {y})" if op[0].isalpha() else f"({x} {op} {y})"


@st.composite
def expressions(draw, depth=3):
    """A random whitelisted expression over fields a and b. Above the leaves only
    continuous operations without products compose, and comparisons read only
    fields and constants: a fused multiply-add (GPU) against separate rounding
    (NumPy), or an ulp of difference in sin or exp, then moves a result by
    ulps, never across a jump."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(leaf_terms())
    inner = expressions(depth=depth - 1)
    kind = draw(st.sampled_from(["neg", "abs", "binary", "where", "clip"]))
    if kind == "neg":
        return f"-({draw(inner)})"
    if kind == "abs":
        return f"abs({draw(inner)})"
    if kind == "binary":
        op = draw(st.sampled_from(CONTINUOUS))
        x, y = draw(inner), draw(inner)
        return f"({x} {op} {y})" if len(op) == 1 else f"{op}({x}, {y})"
    if kind == "where":
        cmp = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
        return f"where({draw(LEAVES)} {cmp} {draw(LEAVES)}, {draw(inner)}, {draw(inner)})"
    return f"clip({draw(inner)}, -1, {draw(st.sampled_from(['1', 'b']))})"


def garbage_empty(shape, dtype):
    """``np.empty`` with every byte 0xA7: a stand-in for the host pool's
    ``host_empty`` whose arrays hold another call's bytes, for tests that a kernel
    writes every element it later reads."""
    made = np.empty(shape, dtype)
    made.view(np.uint8).fill(0xA7)
    return made
