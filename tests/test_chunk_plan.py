"""The planner cuts unstructured grids into the chunks of NumPy's plain passes
(``chunk_plan_reference``): the same cells, points, owned ranges and renumbered
ids, in the same dtypes, on NumPy's passes and on the compiled kernels' threads,
for grids of one shape and of several, numbered in order and shuffled."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.data.celltypes import HEX_TO_TETS, HEX_TO_WEDGES, HEXAHEDRON, LINE, TETRA, WEDGE
from daxpy.stream import chunk_ids, chunks
from daxpy.stream.chunks import unstructured_chunks

from chunk_plan_reference import assert_same_chunks, reference_chunks
from strategies import seeds, unstructured_grids

DIMS = (44, 44, 44)
"""79,507 hexahedra: more cells than one block of the threaded passes (65,536)."""


def _lattice(dims=DIMS):
    nx, ny, nz = dims
    rng = np.random.default_rng(9)
    points = rng.random((nx * ny * nz, 3))
    k, j, i = np.meshgrid(np.arange(nz - 1), np.arange(ny - 1), np.arange(nx - 1), indexing="ij")
    base = (i + nx * (j + ny * k)).ravel()
    offsets = np.array([0, 1, 1 + nx, nx, nx * ny, 1 + nx * ny, 1 + nx + nx * ny, nx + nx * ny])
    return points, base[:, None] + offsets


def _hexahedra(dtype=np.int64):
    points, corners = _lattice()
    return daxpy.UnstructuredGrid.from_blocks(points, {HEXAHEDRON: corners.astype(dtype)})


def _int32_offsets():
    # One shape, but offsets the grid keeps as int32: chunks' offsets are int64 all the same.
    points, corners = _lattice()
    return daxpy.UnstructuredGrid(points, corners.ravel(),
                                  np.arange(0, corners.size + 1, 8, dtype=np.int32),
                                  np.full(len(corners), HEXAHEDRON, np.uint8))


def _shuffled():
    # Cells shuffled within runs of 500: corner bounds that are not ascending and
    # chunks whose cells are not one run.
    points, corners = _lattice()
    rng = np.random.default_rng(4)
    order = np.concatenate([rng.permutation(r) for r in
                            np.array_split(np.arange(len(corners)), len(corners) // 500)])
    return daxpy.UnstructuredGrid.from_blocks(points, {HEXAHEDRON: corners[order]})


def _mixed():
    # Hexahedra, and hexahedra cut into tetrahedra or wedges, in turns: cells of
    # 4, 6 and 8 corners, one after the other.
    points, corners = _lattice()
    ids, types = [], []
    for c in range(len(corners)):
        if c % 3 == 0:
            ids.append(corners[c]); types.append(HEXAHEDRON)
        elif c % 3 == 1:
            ids.extend(corners[c][list(p)] for p in HEX_TO_TETS); types += [TETRA] * 5
        else:
            ids.extend(corners[c][list(p)] for p in HEX_TO_WEDGES); types += [WEDGE] * 2
    conn = np.concatenate(ids)
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in ids])])
    return daxpy.UnstructuredGrid(points, conn, offsets, np.array(types, np.uint8))


def _renumbered():
    # Even points first, then odd ones: every cell's corners lie in both halves, so
    # a chunk's point range is mostly points it never uses, and it gathers them.
    points, corners = _lattice()
    old = np.arange(len(points))
    new = np.where(old % 2, len(points) // 2 + old // 2, old // 2)
    return daxpy.UnstructuredGrid.from_blocks(points[np.argsort(new)], {HEXAHEDRON: new[corners]})


GRIDS = {"hexahedra": _hexahedra, "int32 ids": lambda: _hexahedra(np.int32),
         "int32 offsets": _int32_offsets,
         "shuffled": _shuffled, "mixed": _mixed, "renumbered": _renumbered}


@pytest.fixture(scope="module", params=list(GRIDS))
def grid(request):
    return GRIDS[request.param]()


@pytest.mark.parametrize("threaded", [True, False], ids=["threads", "numpy"])
@pytest.mark.parametrize("levels, cells", [(0, 20_000), (1, 9_000), (2, 40_000), (0, 100_000),
                                          (1, 1_500), (0, 1_500)])
def test_chunks_are_the_plain_passes_chunks(grid, threaded, levels, cells, monkeypatch):
    monkeypatch.setattr(chunk_ids, "THREADED_IDS", 0 if threaded else 1 << 40)
    grid._cache.clear()
    assert_same_chunks(unstructured_chunks(grid, levels, cells),
                       reference_chunks(grid, levels, cells))


@settings(max_examples=30, deadline=None)
@given(unstructured_grids(), st.integers(1, 20), st.integers(0, 2), st.booleans())
def test_chunks_of_small_grids_are_the_plain_passes_chunks(grid, cells, levels, threaded):
    before = chunk_ids.THREADED_IDS
    chunk_ids.THREADED_IDS = 0 if threaded else before
    try:
        assert_same_chunks(unstructured_chunks(grid, levels, cells),
                           reference_chunks(grid, levels, cells))
    finally:
        chunk_ids.THREADED_IDS = before


@st.composite
def _rising_lines(draw):
    """Lines whose both ends never decrease from cell to cell, with points no cell
    uses between them at random: the cells meeting a point range are found by
    bisection alone."""
    rng = np.random.default_rng(draw(seeds))
    n = draw(st.integers(1, 80))
    starts = np.sort(rng.integers(0, 3 * n, n))
    ends = np.maximum.accumulate(starts + rng.integers(1, 6, n))
    points = rng.random((int(ends[-1]) + 1 + draw(st.integers(0, 5)), 3))
    return daxpy.UnstructuredGrid.from_blocks(points, {LINE: np.stack([starts, ends], 1)})


@settings(max_examples=40, deadline=None)
@given(_rising_lines(), st.integers(1, 12), st.integers(0, 2))
def test_chunks_of_rising_bounds_are_the_plain_passes_chunks(grid, cells, levels):
    before = chunk_ids.THREADED_IDS
    chunk_ids.THREADED_IDS = 0
    try:
        got = unstructured_chunks(grid, levels, cells)
        assert chunks._ascending(chunks.corner_bounds(grid), chunks._bounds_index(grid))
        assert_same_chunks(got, reference_chunks(grid, levels, cells))
    finally:
        chunk_ids.THREADED_IDS = before
