"""Partitioning without Dask: slab windows and ghost-level pieces reproduce the
single-domain results, and the pieces follow VTK's ghost semantics."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.distributed.ghosts import (DUPLICATECELL, DUPLICATEPOINT, GHOST_ARRAY, cell_ranges,
                          partition_cells, point_owners, run_piece)
from daxpy.data.decomposition import Piece
from daxpy.data.partition import merge_small, plan_chunks, run_window, slab_windows, window_grid
from daxpy.distributed.runner import StagesRunner
from daxpy.engine.probe import probe

from strategies import field_arrays, structured_grids, unstructured_grids

STRUCTURED_CHAINS = {
    "gradient": lambda n: n.gradient(),
    "gradient_magnitude_cells": lambda n: n.gradient().magnitude().point_to_cell(),
    "fy11_pipeline2": lambda n: n.magnitude().gradient().map("sin(x)").map("x*x")
    .map("cos(x)"),
    "round_trip_gradient": lambda n: n.point_to_cell().cell_to_point().gradient(),
    "cell_gradient": lambda n: n.gradient(kind="cell").magnitude(),
}

CELL_CHAINS = {
    "cell_to_point": lambda n: n.cell_to_point(),
    "cell_to_point_gradient": lambda n: n.cell_to_point().gradient(),
    "twice": lambda n: n.cell_to_point().point_to_cell().cell_to_point(),
}


def _single(grid, chain, values, association="points"):
    data = {"point_data" if association == "points" else "cell_data": {"f": values}}
    source = grid.with_fields(**data)
    pipe = daxpy.pipeline(source)
    chain(pipe.field("f"))
    return source, pipe, pipe.run(backend="cpu")


def _outputs(result):
    return {name: association for association in ("points", "cells")
            for name in result.fields(association)}


def _assert_same(expected, got: dict):
    for name, (values, _) in ((n, expected.field(n)) for n in got):
        np.testing.assert_array_equal(got[name], values, err_msg=name)


@settings(max_examples=30, deadline=None)
@given(structured_grids(max_side=9), st.sampled_from(sorted(STRUCTURED_CHAINS)),
       st.integers(1, 4), st.data())
def test_slab_windows_reassemble_the_whole_grid_bitwise(grid, chain, planes, data):
    values = data.draw(field_arrays(grid.n_points, ncomp=data.draw(st.sampled_from([1, 3]))))
    source, pipe, expected = _single(grid, STRUCTURED_CHAINS[chain], values)
    outputs = _outputs(expected)
    depth = probe(source, pipe.stages).depth
    run = StagesRunner(pipe.stages, outputs, "cpu", "host")
    view = values.reshape(grid.point_shape() + values.shape[1:])
    pieces = {name: [] for name in outputs}
    for window in slab_windows(grid.dims, planes, max(depth, 1)):
        box = view[window.lo[2]:window.hi[2], window.lo[1]:window.hi[1],
                   window.lo[0]:window.hi[0]]
        for name, part in run_window(run, grid, window, {"f": box}, {}, outputs).items():
            pieces[name].append(part)
    axis = next(a for a, n in enumerate(grid.point_shape()) if n > 1)
    _assert_same(expected, {name: np.concatenate(parts, axis=axis).reshape(
        expected.field(name)[0].shape) for name, parts in pieces.items()})


@settings(max_examples=30, deadline=None)
@given(structured_grids(max_side=9))
def test_window_grid_keeps_the_true_coordinates(grid):
    dims = grid.dims
    lo = tuple(n // 3 for n in dims)
    hi = tuple(max(l + 1, n - n // 4) for l, n in zip(lo, dims))
    sub = window_grid(grid, Piece(lo, hi, lo, hi, dims))
    box = tuple(slice(l, h) for l, h in zip(lo[::-1], hi[::-1]))
    expected = np.asarray(grid.points()).reshape(grid.point_shape() + (3,))[box]
    np.testing.assert_array_equal(np.asarray(sub.points()).reshape(expected.shape), expected)
    assert sub.family == grid.family


@given(st.lists(st.integers(1, 9), min_size=1, max_size=8), st.integers(0, 4))
def test_merge_small_keeps_the_total_and_the_minimums(sizes, depth):
    merged = merge_small(sizes, max(depth, 1), depth + 1)
    assert sum(merged) == sum(sizes)
    if len(merged) > 1:
        assert min(merged) >= max(depth, 1) and merged[-1] >= depth + 1


@settings(max_examples=50)
@given(st.tuples(st.integers(1, 300), st.integers(1, 300), st.integers(1, 300)),
       st.integers(1, 16), st.integers(10, 10**6), st.integers(1, 8), st.integers(0, 3))
def test_plan_chunks_fits_memory_and_balances_pieces(dims, bytes_per_point, budget_points,
                                                     pieces, depth):
    chunks = plan_chunks(dims, bytes_per_point, budget_points * bytes_per_point, pieces, depth)
    assert tuple(sum(c) for c in chunks) == dims[::-1]
    for sizes in chunks:
        if len(sizes) > 1:
            assert min(sizes) >= max(depth, 1) and sizes[-1] >= depth + 1
    shape = dims[::-1]
    slow = next((a for a, n in enumerate(shape) if n > 1), None)
    if depth == 0 and slow is not None:
        # Nothing merged for halos: chunks fit (up to rounding of uneven splits)
        # and the slowest axis gives every piece a slab where it can.
        assert np.prod([max(c) for c in chunks]) <= 8 * budget_points
        assert len(chunks[slow]) >= min(pieces, shape[slow])


def test_plan_chunks_gives_every_piece_equal_slabs():
    assert plan_chunks((64, 64, 64), 4, 1 << 40, pieces=4) == ((16, 16, 16, 16), (64,), (64,))


# -- unstructured pieces ------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(unstructured_grids(), st.integers(1, 6), st.integers(0, 3))
def test_pieces_own_every_cell_and_point_once_and_mark_the_rest_as_ghosts(grid, pieces, levels):
    parts = partition_cells(grid, pieces, levels)
    owned_cells = np.concatenate([p.cell_ids[p.owned_cells] for p in parts])
    owned_points = np.concatenate([p.point_ids[p.owned_points] for p in parts])
    np.testing.assert_array_equal(owned_cells, np.arange(grid.n_cells))
    np.testing.assert_array_equal(np.sort(owned_points), np.arange(grid.n_points))
    owners = point_owners(grid, cell_ranges(grid.n_cells, pieces))
    for part in parts:
        point_ghosts = part.grid.point_data[GHOST_ARRAY]
        cell_ghosts = part.grid.cell_data[GHOST_ARRAY]
        assert point_ghosts.dtype == np.uint8 and cell_ghosts.dtype == np.uint8
        np.testing.assert_array_equal(point_ghosts == 0, owners[part.point_ids] == part.index)
        assert set(np.unique(point_ghosts)) <= {0, DUPLICATEPOINT}
        assert set(np.unique(cell_ghosts)) <= {0, DUPLICATECELL}
        assert np.all(cell_ghosts[part.owned_cells] == 0)
        assert np.sum(cell_ghosts == 0) == part.owned_cells.stop - part.owned_cells.start
        # Local connectivity names the same global points as the grid's.
        local = part.point_ids[part.grid.connectivity]
        expected = np.concatenate([grid.connectivity[grid.offsets[c]:grid.offsets[c + 1]]
                                   for c in part.cell_ids]) if len(part.cell_ids) else []
        np.testing.assert_array_equal(local, expected)
        # Built without checks (UnstructuredGrid.from_checked): the checks accept it.
        daxpy.UnstructuredGrid(part.grid.points(), part.grid.connectivity, part.grid.offsets,
                               part.grid.cell_types)
        if levels:
            # Level 1: every cell that uses an owned point is in the piece.
            owned_global = part.point_ids[part.owned_points]
            touching = [c for c in range(grid.n_cells) if np.isin(
                grid.connectivity[grid.offsets[c]:grid.offsets[c + 1]], owned_global).any()]
            assert set(touching) <= set(part.cell_ids.tolist())


@settings(max_examples=30, deadline=None)
@given(unstructured_grids(), st.integers(1, 6), st.sampled_from(sorted(CELL_CHAINS)),
       st.data())
def test_pieces_reassemble_the_single_domain_result_bitwise(grid, pieces, chain, data):
    values = data.draw(field_arrays(grid.n_cells, ncomp=data.draw(st.sampled_from([1, 3]))))
    source, pipe, expected = _single(grid, CELL_CHAINS[chain], values, "cells")
    outputs = _outputs(expected)
    depth = probe(source, pipe.stages).depth
    run = StagesRunner(pipe.stages, outputs, "cpu", "host")
    got = {name: np.zeros_like(expected.field(name)[0]) for name in outputs}
    for part in partition_cells(grid, pieces, depth):
        kept = run_piece(run, part, {}, {"f": values[part.cell_ids]}, outputs)
        for name, association in outputs.items():
            where = part.point_ids[part.owned_points] if association == "points" \
                else part.cell_ids[part.owned_cells]
            got[name][where] = kept[name]
    _assert_same(expected, got)


def test_too_few_ghost_levels_show_at_piece_borders():
    # A chain of two stencils needs two levels; one level leaves wrong points.
    grid = _line_grid(12)
    values = np.arange(grid.n_cells, dtype=np.float64) ** 2
    source, pipe, expected = _single(grid, CELL_CHAINS["cell_to_point_gradient"], values,
                                     "cells")
    outputs = _outputs(expected)
    assert probe(source, pipe.stages).depth == 2
    run = StagesRunner(pipe.stages, outputs, "cpu", "host")
    name = next(iter(outputs))
    for levels, exact in ((1, False), (2, True)):
        got = np.zeros_like(expected.point_data[name])
        for part in partition_cells(grid, 3, levels):
            kept = run_piece(run, part, {}, {"f": values[part.cell_ids]}, outputs)
            got[part.point_ids[part.owned_points]] = kept[name]
        assert np.array_equal(got, expected.point_data[name]) == exact


def _line_grid(n_cells):
    from daxpy.data.celltypes import LINE

    points = np.stack([np.arange(n_cells + 1.0) ** 1.5, np.zeros(n_cells + 1),
                       np.zeros(n_cells + 1)], axis=1)
    corners = np.stack([np.arange(n_cells), np.arange(1, n_cells + 1)], axis=1)
    return daxpy.UnstructuredGrid.from_blocks(points, {LINE: corners})


def test_vtk_reads_the_ghost_arrays_as_ghosts():
    vtk = pytest.importorskip("vtk")
    grid = _line_grid(8)
    part = partition_cells(grid, 2, 1)[1]
    piece = part.grid.to_vtk()
    assert piece.HasAnyGhostCells() and piece.HasAnyGhostPoints()
    strip = vtk.vtkRemoveGhosts()
    strip.SetInputData(piece)
    strip.Update()
    assert strip.GetOutput().GetNumberOfCells() == part.owned_cells.stop - part.owned_cells.start
