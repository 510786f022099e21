"""The compiled CPU threshold (worklets/threshold_cpu.py) and the compiled gathers
that assemble its output (worklets/_gather_cpu.py): the array program's results
bit for bit, on random grids of every family, fields and parameters, for any
thread count; and through the Threshold filter."""


import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.data.celltypes import HEXAHEDRON, TETRA
from daxpy.errors import InvalidDataSetError
from daxpy.filters import Threshold
from daxpy.filters._surface_cells import as_unstructured
from daxpy.worklets import threshold as array_program
from daxpy.worklets._numba import CompiledUnavailable, compiled

from four_threads import four_thread_report
from strategies import (curvilinear_grids, garbage_empty, mixed_grid_all_shapes,
                        rectilinear_grids, seeds, simple_surfaces, uniform_grids,
                        unstructured_grids)

pytest.importorskip("numba")

from daxpy.worklets import _gather_cpu, threshold_cpu  # noqa: E402

FAMILIES = {"uniform": uniform_grids(max_side=7), "rectilinear": rectilinear_grids(max_side=7),
            "curvilinear": curvilinear_grids(max_side=7),
            "unstructured": unstructured_grids(max_side=4),
            # Threshold runs on a surface's cells as an unstructured grid.
            "polydata": simple_surfaces().map(
                lambda s: as_unstructured(s, "Threshold", degenerate=True))}

SERVED = compiled("threshold_cpu", "threshold_cells", array_program.threshold_cells)
"""The compiled threshold as the CPU backend runs it: the array program where it
cannot serve."""

PARTS = ("cell_ids", "point_ids", "connectivity", "offsets", "cell_types")


def _assert_same(ours, reference):
    for name in PARTS:
        a, b = getattr(ours, name), getattr(reference, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), name


def _field(rng, n, kind, dtype):
    """Random values, or a few integers (ties with the bounds), with NaN and
    infinities sprinkled in for ``kind`` "holes"."""
    values = (rng.integers(-2, 3, n) if kind == "ties" else rng.standard_normal(n)).astype(dtype)
    if kind == "holes" and n:   # a field of no values has no holes to make
        where = rng.integers(0, n, max(1, n // 6))
        values[where] = rng.choice([np.nan, np.inf, -np.inf], where.shape[0])
    return values


def _bound(rng, values):
    """A value of the field (a tie), something near the range, or 0.1 (not a float32)."""
    finite = values[np.isfinite(values)]
    pick = rng.random()
    if finite.size and pick < 0.4:
        return float(rng.choice(finite))
    return 0.1 if pick < 0.5 else float(rng.uniform(-2.5, 2.5))


@settings(max_examples=120, deadline=None)
@given(data=st.data(), family=st.sampled_from(sorted(FAMILIES)),
       at=st.sampled_from(["points", "cells"]),
       kind=st.sampled_from(["smooth", "ties", "holes"]),
       dtype=st.sampled_from([np.float32, np.float64]),
       sides=st.sampled_from(["between", "lower", "upper"]),
       all_points=st.booleans(), continuous=st.booleans(), invert=st.booleans(), seed=seeds)
def test_compiled_matches_the_array_program(data, family, at, kind, dtype, sides, all_points,
                                            continuous, invert, seed):
    grid = data.draw(FAMILIES[family])
    rng = np.random.default_rng(seed)
    values = _field(rng, grid.n_points if at == "points" else grid.n_cells, kind, dtype)
    lower, upper = sorted([_bound(rng, values), _bound(rng, values)])
    lower = -np.inf if sides == "lower" else lower
    upper = np.inf if sides == "upper" else upper
    params = dict(at=at, lower=lower, upper=upper, all_points=all_points,
                  continuous=continuous, invert=invert)
    # A surface without cells is the array program's.
    ours = threshold_cpu.threshold_cells if grid.n_cells else SERVED
    _assert_same(ours(grid, values, **params),
                 array_program.threshold_cells(grid, values, **params))


@settings(max_examples=30, deadline=None)
@given(data=st.data(), all_points=st.booleans(), seed=seeds)
def test_an_unstructured_threshold_reads_no_byte_as_the_pool_gave_it(data, all_points, seed):
    # Its arrays come from the pool unzeroed (the points' used marks among them):
    # garbage in every byte first must not change a bit of the result.
    from daxpy.worklets import _threshold_cells_cpu

    grid = data.draw(FAMILIES["unstructured"])
    rng = np.random.default_rng(seed)
    values = _field(rng, grid.n_points, "smooth", np.float64)
    lower, upper = sorted([_bound(rng, values), _bound(rng, values)])
    params = dict(at="points", lower=lower, upper=upper, all_points=all_points)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_threshold_cells_cpu, "host_empty", garbage_empty)
        ours = threshold_cpu.threshold_cells(grid, values, **params)
    _assert_same(ours, array_program.threshold_cells(grid, values, **params))


@pytest.mark.parametrize("dims", [(9, 8, 7), (2, 2, 2), (9, 1, 7), (1, 8, 7), (6, 5, 1),
                                  (1, 1, 5), (8, 1, 1)])
@pytest.mark.parametrize("dtype", [np.float32, ">f8"])
def test_every_shape_of_structured_grid(dims, dtype):
    grid = daxpy.UniformGrid(dims=dims)
    for at, n in (("points", grid.n_points), ("cells", grid.n_cells)):
        values = np.random.default_rng(1).integers(0, 4, n).astype(dtype)
        for lower, upper in ((1.0, 2.0), (-np.inf, 0.5), (3.5, np.inf), (-1.0, 9.0)):
            for all_points, continuous in ((True, False), (False, False), (False, True)):
                params = dict(at=at, lower=lower, upper=upper, all_points=all_points,
                              continuous=continuous)
                _assert_same(threshold_cpu.threshold_cells(grid, values, **params),
                             array_program.threshold_cells(grid, values, **params))


def test_the_array_program_serves_what_the_kernels_do_not():
    cases = [(daxpy.UniformGrid(dims=(1, 1, 1)), np.array([1.0])),
             (daxpy.UniformGrid(dims=(4, 3)), np.arange(12, dtype=np.int32)),
             (daxpy.UniformGrid(dims=(4, 3)), np.arange(12, dtype=np.float16)),
             (daxpy.UnstructuredGrid(np.zeros((2, 3)), [], [0], []), np.zeros(2))]
    for grid, values in cases:
        params = dict(at="points", lower=0.5, upper=5.0)
        with pytest.raises(CompiledUnavailable):
            threshold_cpu.threshold_cells(grid, values, **params)
        _assert_same(SERVED(grid, values, **params),
                     array_program.threshold_cells(grid, values, **params))


def test_cells_naming_points_out_of_range_are_refused():
    good = mixed_grid_all_shapes()
    connectivity = good.connectivity.copy()
    connectivity[5] = good.n_points + 3
    grid = daxpy.UnstructuredGrid.from_checked(good.points(), connectivity, good.offsets,
                                               good.cell_types)
    with pytest.raises(IndexError):
        threshold_cpu.threshold_cells(grid, np.zeros(good.n_points), at="points", lower=-1.0,
                                      upper=1.0)
    # Through the filter: the grid's own diagnosis, a daxpy error.
    ids = np.arange(8)
    grid = daxpy.UnstructuredGrid(good.points()[:8], ids, [0, 8], [HEXAHEDRON],
                                  point_data={"t": np.zeros(8)})
    ids[3] = 99
    with pytest.raises(InvalidDataSetError):
        Threshold("t", -1.0, 1.0, backend="cpu")(grid)


def test_blocks_of_cells_of_one_size():
    # Blocks of hexahedra, then a block of both, then blocks of tetrahedra (read
    # without their offsets where a block's cells all have one size), in int64 and
    # int32 ids; an id out of range in such a block, at either end, is refused.
    hexes = _hexahedra(31).cell_blocks()["hex"].corners
    points = daxpy.UniformGrid(dims=(31,) * 3).points()
    mixed = daxpy.UnstructuredGrid.from_blocks(points, {HEXAHEDRON: hexes,
                                                        TETRA: hexes[:, [0, 1, 3, 4]]})
    values = _wavy(mixed.n_points)
    for ids in (np.int64, np.int32):
        grid = daxpy.UnstructuredGrid.from_checked(
            points, mixed.connectivity.astype(ids), mixed.offsets, mixed.cell_types)
        for all_points, invert in ((True, False), (False, False), (True, True)):
            params = dict(at="points", lower=0.0, upper=0.7, all_points=all_points,
                          invert=invert)
            _assert_same(threshold_cpu.threshold_cells(grid, values, **params),
                         array_program.threshold_cells(grid, values, **params))
    for wrong in (mixed.n_points, -1):
        connectivity = mixed.connectivity.copy()
        connectivity[8 * 5000 + 3] = wrong
        grid = daxpy.UnstructuredGrid.from_checked(points, connectivity, mixed.offsets,
                                                   mixed.cell_types)
        with pytest.raises(IndexError):
            threshold_cpu.threshold_cells(grid, values, at="points", lower=-9.0, upper=9.0)


def _wavy(n_points, dtype=np.float32):
    values = np.sin(0.37 * np.arange(n_points)) + 0.5 * np.cos(0.011 * np.arange(n_points))
    values = np.round(values, 2).astype(dtype)
    values[::89] = np.nan
    return values


_FOUR_THREADS = """
import json, numpy as np, daxpy
from daxpy.worklets._numba import threads
from daxpy.worklets.threshold_cpu import threshold_cells
from test_threshold_cpu import _big_grids, _wavy
out = {"threads": threads()}
for name, grid in _big_grids().items():
    kept = threshold_cells(grid, _wavy(grid.n_points), at="points", lower=0.0, upper=0.7,
                           all_points=False)
    out[name] = [getattr(kept, p).tobytes().hex() for p in
                 ("cell_ids", "point_ids", "connectivity", "offsets", "cell_types")]
print(json.dumps(out))
"""


def _hexahedra(n):
    """An unstructured grid of ``(n - 1) ** 3`` hexahedra on a lattice of ``n ** 3``
    points."""
    k, j, i = np.meshgrid(*(np.arange(n - 1),) * 3, indexing="ij")
    first = (i + n * (j + n * k)).ravel()
    corners = first[:, None] + np.array([0, 1, 1 + n, n, n * n, 1 + n * n, 1 + n + n * n,
                                         n + n * n])
    return daxpy.UnstructuredGrid.from_blocks(daxpy.UniformGrid(dims=(n,) * 3).points(),
                                              {HEXAHEDRON: corners})


def _big_grids():
    """Grids of many blocks of rows, cells and points (the kernels' units of work)."""
    return {"uniform": daxpy.UniformGrid(dims=(61, 53, 47)), "hexahedra": _hexahedra(41),
            "mixed": mixed_grid_all_shapes()}


def test_thread_counts_give_the_same_bits():
    found = {}
    try:
        for count in (1, 2):
            daxpy.configure_cpu(threads=count)
            for name, grid in _big_grids().items():
                kept = threshold_cpu.threshold_cells(grid, _wavy(grid.n_points), at="points",
                                                     lower=0.0, upper=0.7, all_points=False)
                found.setdefault(name, []).append(
                    [getattr(kept, p).tobytes().hex() for p in PARTS])
    finally:
        daxpy.configure_cpu(threads=None)
    for name, (one, two) in found.items():
        assert one == two, name
    # Numba's pool size is fixed per process: a child gets 4 threads.
    report = four_thread_report(_FOUR_THREADS)
    assert report.pop("threads") == 4
    assert report == {name: runs[0] for name, runs in found.items()}


def _grids_with_fields():
    """Grids of more points than the compiled gathers' minimum, with fields of
    several dtypes and shapes."""
    rng = np.random.default_rng(3)
    dims = (81, 61, 47)
    axes = [np.cumsum(rng.uniform(0.1, 1.0, n)) for n in dims]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    points = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    grids = [daxpy.UniformGrid(dims=dims, origin=(0.1, -2, 3), spacing=(0.3, 0.7, 1.1)),
             daxpy.RectilinearGrid(*axes), daxpy.CurvilinearGrid(dims, points)]
    for grid in grids:
        # Smooth: most cells are all in, or all out.
        x, y, _ = grid.points().T
        s = (x / x.max() + 0.3 * np.sin(y)).astype(np.float32)
        s[::97] = np.nan
        grid.point_data["s"] = s
        grid.point_data["v"] = rng.standard_normal((grid.n_points, 3))
        grid.point_data["i"] = rng.integers(0, 9, grid.n_points).astype(np.int16)
        grid.cell_data["c"] = rng.standard_normal(grid.n_cells).astype(np.float32)
        grid.cell_data["u"] = rng.integers(0, 1 << 40, grid.n_cells).astype(np.uint64)
    return grids


def _filtered(grid, monkeypatch, numpy, **options):
    with monkeypatch.context() as patch:
        if numpy:  # every compiled implementation unavailable: NumPy runs
            patch.setattr(compiled, "load", lambda self: None)
        return Threshold("s", backend="cpu", **options)(grid)


@pytest.mark.parametrize("options", [{"lower": 0.0, "upper": 0.7},
                                     {"upper": 0.5, "method": "upper", "all_scalars": False,
                                      "original_ids": True}])
def test_the_filter_gives_the_numpy_grid(options, monkeypatch):
    for grid in _grids_with_fields():
        ours = _filtered(grid, monkeypatch, False, **options)
        reference = _filtered(grid, monkeypatch, True, **options)
        assert min(ours.n_points, ours.n_cells) > _gather_cpu.MIN_ROWS
        assert ours.points().dtype == reference.points().dtype
        assert ours.points().tobytes() == reference.points().tobytes()
        for name in ("connectivity", "offsets", "cell_types"):
            a, b = getattr(ours, name), getattr(reference, name)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
        for ours_data, reference_data in ((ours.point_data, reference.point_data),
                                          (ours.cell_data, reference.cell_data)):
            assert sorted(ours_data) == sorted(reference_data)
            for name, values in reference_data.items():
                assert ours_data[name].dtype == values.dtype, name
                assert ours_data[name].tobytes() == values.tobytes(), name


@pytest.mark.parametrize("values", [
    np.arange(70_000, dtype=np.float32), np.arange(210_000.0).reshape(-1, 3),
    np.arange(70_000, dtype=np.int8), (np.arange(70_000) + 1j).astype(np.complex128),
    np.arange(70_000) % 3 == 0, np.arange(140_000, dtype=np.uint16).reshape(-1, 2, 1)])
def test_take_copies_numpy_bits(values):
    ids = np.random.default_rng(0).integers(-values.shape[0], values.shape[0], 80_000)
    ours = _gather_cpu.take(values, ids)
    reference = values[ids]
    assert ours.dtype == reference.dtype and ours.shape == reference.shape
    assert ours.tobytes() == reference.tobytes()


def test_gathers_leave_numpy_what_it_does_best():
    values = np.arange(70_000.0)
    few, odd = np.arange(10), np.arange(70_000, dtype=np.int32)
    for ids in (few, odd, np.arange(70_000) + 5):
        with pytest.raises(CompiledUnavailable):
            _gather_cpu.take(values, ids)
    with pytest.raises(CompiledUnavailable):
        _gather_cpu.take(np.arange(140_000.0)[::2], np.arange(70_000))
    grid = daxpy.UniformGrid(dims=(300, 300))
    with pytest.raises(CompiledUnavailable):
        _gather_cpu.axis_points(grid, np.arange(70_000) - 1)
