"""The compiled CPU clip (worklets/clip_cpu.py) and weighted sums
(worklets/_weighted_cpu.py): the array program's output bit for bit, on random
structured grids, fields, values and sides, for any thread count; and through
the Clip filter."""


import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.data.worklet import get_worklet
from daxpy.filters import Clip
from daxpy.filters._geometry import weighted_sum
from daxpy.worklets import clip as array_clip
from daxpy.worklets import _weighted_cpu as weighted_cpu
from daxpy.worklets._numba import CompiledUnavailable, compiled

from four_threads import four_thread_report
from strategies import (CUT_DIMS, CUT_DTYPES, curvilinear_grids, cut_field, cut_value,
                        garbage_empty, mixed_grid_all_shapes, rectilinear_grids, seeds,
                        uniform_grids, unstructured_grids, wavy_field)

pytest.importorskip("numba")

FAMILIES = {"uniform": uniform_grids, "rectilinear": rectilinear_grids,
            "curvilinear": curvilinear_grids, "unstructured": unstructured_grids}
PARTS = ("kept", "ids", "weights", "centre_rows", "centre_ids", "centre_weights", "connectivity",
         "offsets", "cell_types", "source")


def _compiled(grid, scalars, value, invert):
    # 1-D grids and other dtypes run the array program, which divides by NaN.
    with np.errstate(invalid="ignore", divide="ignore"):
        return get_worklet("clip").cpu_impl(grid.family)(grid, scalars, value=value,
                                                         invert=invert)


def _reference(grid, scalars, value, invert):
    with np.errstate(invalid="ignore", divide="ignore"):
        return array_clip.clip_cells(grid, scalars, value, invert)


def _assert_same(ours, reference):
    for name in PARTS:
        a, b = getattr(ours, name), getattr(reference, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), name


@settings(max_examples=120, deadline=None)
@given(data=st.data(), family=st.sampled_from(sorted(FAMILIES)),
       kind=st.sampled_from(["smooth", "ties", "holes"]),
       dtype=st.sampled_from([np.float32, np.float64]), invert=st.booleans(), seed=seeds)
def test_compiled_matches_the_array_program(data, family, kind, dtype, invert, seed):
    grid = data.draw(FAMILIES[family](max_side=7 if family != "unstructured" else 4))
    rng = np.random.default_rng(seed)
    scalars = cut_field(rng, grid.n_points, kind, dtype)
    value = cut_value(rng, scalars)
    _assert_same(_compiled(grid, scalars, value, invert),
                 _reference(grid, scalars, value, invert))


@settings(max_examples=30, deadline=None)
@given(data=st.data(), family=st.sampled_from(sorted(FAMILIES)), seed=seeds)
def test_no_row_of_the_new_points_is_left_as_the_pool_gave_it(data, family, seed):
    # The points' rows come from the pool unzeroed: garbage in every byte first must
    # not change a bit of the result.
    from daxpy.worklets import clip_cpu

    grid = data.draw(FAMILIES[family](max_side=7 if family != "unstructured" else 4))
    rng = np.random.default_rng(seed)
    scalars = cut_field(rng, grid.n_points, "smooth", np.float64)
    value = cut_value(rng, scalars)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(clip_cpu, "host_empty", garbage_empty)
        ours = _compiled(grid, scalars, value, False)
    _assert_same(ours, _reference(grid, scalars, value, False))


@pytest.mark.parametrize("dims", CUT_DIMS)
@pytest.mark.parametrize("dtype", CUT_DTYPES)
def test_every_shape_and_dtype(dims, dtype):
    grid = daxpy.UniformGrid(dims=dims)
    scalars = np.random.default_rng(1).integers(0, 4, grid.n_points).astype(dtype)
    for value in (1.0, 1.5, -1.0, 3.0, 9.0):
        for invert in (False, True):
            _assert_same(_compiled(grid, scalars, value, invert),
                         _reference(grid, scalars, value, invert))


def test_a_float32_field_compares_with_the_value_in_float64():
    grid = daxpy.UniformGrid(dims=(3, 3, 3))
    scalars = np.full(27, np.float32(0.1))
    scalars[::2] = 0
    for value in (0.1, float(np.float32(0.1)), float(np.nextafter(np.float32(0.1), 1))):
        _assert_same(_compiled(grid, scalars, value, False),
                     _reference(grid, scalars, value, False))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_shape_of_a_mixed_grid(dtype):
    grid = mixed_grid_all_shapes()
    rng = np.random.default_rng(5)
    for kind in ("smooth", "ties", "holes"):
        scalars = cut_field(rng, grid.n_points, kind, dtype)
        for value in (-0.5, 0.0, 0.3, 9.0):
            for invert in (False, True):
                _assert_same(_compiled(grid, scalars, value, invert),
                             _reference(grid, scalars, value, invert))


def test_a_grid_of_no_cells_keeps_its_kept_points():
    grid = daxpy.UnstructuredGrid(np.eye(4, 3), np.zeros(0, np.int64), [0], [])
    scalars = np.array([0.0, 1, 2, 3])
    for invert in (False, True):
        made = _compiled(grid, scalars, 1.5, invert)
        _assert_same(made, _reference(grid, scalars, 1.5, invert))
        assert made.n_points == made.n_kept == 2


def test_a_point_id_written_out_of_range_is_refused():
    from daxpy.data.celltypes import TETRA

    connectivity = np.array([0, 1, 2, 3, 1, 2, 3, 4])
    grid = daxpy.UnstructuredGrid(np.eye(5, 3), connectivity, [0, 4, 8], [TETRA, TETRA],
                                  point_data={"s": np.linspace(-1, 1, 5)})
    connectivity[5] = 9   # written into by its owner after the grid was checked
    with pytest.raises(daxpy.errors.DaxpyError, match="point id"):
        Clip("s", 0.0, backend="cpu")(grid)


def _hexes(n):
    """An n^3-point lattice of hexahedra, as an unstructured grid."""
    from daxpy.data.celltypes import HEXAHEDRON
    from daxpy.worklets._marching import IMAGE_CELL_CORNERS, structured_corners

    image = daxpy.UniformGrid(dims=(n, n, n))
    voxels = structured_corners(image.dims, np.arange(image.n_cells), IMAGE_CELL_CORNERS[3])
    hexes = voxels[:, [0, 1, 3, 2, 4, 5, 7, 6]]
    return daxpy.UnstructuredGrid(image.points(), hexes.ravel(),
                                  np.arange(0, hexes.size + 1, 8), [HEXAHEDRON] * len(hexes))


def _both():
    """A structured and an unstructured grid with their scalars, big enough that
    every thread gets rows and cells."""
    grid, hexes = daxpy.UniformGrid(dims=(41, 37, 33)), _hexes(18)
    return (grid, wavy_field(grid.dims)), (hexes, wavy_field((18, 18, 18)))


_FOUR_THREADS = """
import json, numpy as np, daxpy
from daxpy.worklets._numba import threads
from test_clip_cpu import PARTS, _both, _compiled
made = [_compiled(grid, scalars, 0.0, True) for grid, scalars in _both()]
print(json.dumps({"threads": threads(),
                  "made": [getattr(m, p).tobytes().hex() for m in made for p in PARTS]}))
"""


def test_thread_counts_give_the_same_bits():
    made = []
    try:
        for count in (1, 2):
            daxpy.configure_cpu(threads=count)
            made.append([_compiled(grid, scalars, 0.0, True) for grid, scalars in _both()])
    finally:
        daxpy.configure_cpu(threads=None)
    for (grid, scalars), one, two in zip(_both(), *made):
        _assert_same(one, two)
        _assert_same(one, _reference(grid, scalars, 0.0, True))
        assert one.centre_rows.shape[0] and one.centre_ids.shape[1]  # centre points were made
    # Numba's pool size is fixed per process: a child gets 4 threads.
    report = four_thread_report(_FOUR_THREADS)
    assert report["threads"] == 4
    assert report["made"] == [getattr(m, p).tobytes().hex() for m in made[0] for p in PARTS]


def _unavailable(*args, **kwargs):
    raise CompiledUnavailable("the array program, for reference")


def _clipped(grid, monkeypatch, numpy, **options):
    with monkeypatch.context() as patch:
        if numpy:  # no compiled kernel: the array programs run
            patch.setattr(compiled, "load", lambda self: None)
            patch.setattr(weighted_cpu, "weighted_rows", _unavailable)
        # NaN scalars make NaN weights: the integer field's cast warns, on both paths.
        with np.errstate(invalid="ignore", divide="ignore"):
            return Clip(backend="cpu", **options)(grid)


@pytest.mark.parametrize("options", [
    {"field": "s", "value": 0.1},
    {"field": "s", "value": 0.0, "invert": True},
    {"plane": ((3.0, 4.0, 2.5), (1.0, 0.5, 0.25))},
])
@pytest.mark.parametrize("make", [
    lambda: daxpy.UniformGrid(dims=(13, 11, 9), spacing=(0.5, 1, 2)),
    lambda: daxpy.RectilinearGrid(np.cumsum(np.arange(1, 14.0)), np.arange(11.0) ** 1.5,
                                  np.linspace(0, 1, 9)),
    lambda: daxpy.CurvilinearGrid((6, 5, 4), np.random.default_rng(3).uniform(0, 5, (120, 3))),
    lambda: daxpy.UniformGrid(dims=(17, 1, 12)),
    lambda: _hexes(7),
])
def test_the_filter_gives_the_array_programs_grid(make, options, monkeypatch):
    grid = make()
    grid.point_data["s"] = wavy_field(getattr(grid, "dims", (7, 7, 7)), np.float32)
    grid.point_data["w"] = np.arange(grid.n_points, dtype=np.int32)
    grid.point_data["v"] = np.random.default_rng(2).standard_normal((grid.n_points, 3))
    grid.point_data["h"] = np.arange(grid.n_points, dtype=np.float16)
    grid.cell_data["c"] = np.arange(grid.n_cells, dtype=np.float64)
    ours = _clipped(grid, monkeypatch, False, **options)
    reference = _clipped(grid, monkeypatch, True, **options)
    assert ours.n_points == reference.n_points and ours.n_points > 0
    assert ours.points().tobytes() == reference.points().tobytes()
    assert np.array_equal(ours.cell_types, reference.cell_types)
    assert np.array_equal(ours.connectivity, reference.connectivity)
    for name, values in reference.point_data.items():
        assert ours.point_data[name].dtype == values.dtype, name
        assert ours.point_data[name].tobytes() == values.tobytes(), name
    for name, values in reference.cell_data.items():
        assert ours.cell_data[name].tobytes() == values.tobytes(), name


def split_rows(ids, weights):
    """Rows of many terms as a clip gives them: every row's first two columns, and
    the rows with a nonzero weight past them (NaN counts) with their later ones."""
    rows = np.flatnonzero((weights[:, 2:] != 0).any(axis=1))
    return ids[:, :2], weights[:, :2], (rows, ids[rows, 2:], weights[rows, 2:])


def summed_wide(gather, ids, weights):
    """The weighted sums of rows of many terms as daxpy made them before the centre
    table: columns 0 and 1 added on every row; on the rows with a nonzero weight
    past column 1, the later columns added among themselves first, then added."""
    def term(rows, j):
        values = gather(ids[rows, j]).astype(np.float64)
        return values * weights[rows, j].reshape((-1,) + (1,) * (values.ndim - 1))

    every = slice(None)
    total = term(every, 0)
    if ids.shape[1] > 1:
        total = total + term(every, 1)
    if ids.shape[1] > 2:
        rows = np.flatnonzero((weights[:, 2:] != 0).any(axis=1))
        if rows.shape[0]:
            extra = term(rows, 2)
            for j in range(3, ids.shape[1]):
                extra = extra + term(rows, j)
            total[rows] = total[rows] + extra
    return total


@settings(max_examples=40, deadline=None)
@given(seed=seeds, width=st.sampled_from([1, 2, 3, 14]),
       dtype=st.sampled_from([np.float32, np.float64, np.int16, np.uint64]),
       components=st.sampled_from([(), (1,), (3,), (2, 2)]))
def test_weighted_sums_match_the_array_program(seed, width, dtype, components):
    # Both give the bits of the wide rows' sums made before the centre table.
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 30)), int(rng.integers(0, 40))
    values = (rng.standard_normal((n,) + components) * 100).astype(dtype)
    ids = rng.integers(0, n, (m, width))
    weights = rng.choice([0.0, -0.0, 0.25, 1.0, np.nan, rng.standard_normal()], (m, width))
    weights[rng.random(m) < 0.5, 2:] = 0.0   # most rows: two terms, as a clip's
    rows = split_rows(ids, weights)
    wide = summed_wide(lambda i: values[i], ids, weights)
    for dtype in (None, np.float32):
        ours = weighted_sum(values, *rows, dtype=dtype)
        reference = weighted_sum(lambda i: values[i], *rows, dtype=dtype)
        assert ours.dtype == reference.dtype and ours.shape == reference.shape
        assert ours.tobytes() == reference.tobytes()
        assert reference.tobytes() == (wide if dtype is None else wide.astype(dtype)).tobytes()
    grid = daxpy.RectilinearGrid(*(np.sort(rng.uniform(-9, 9, k)) for k in (3, 2, 5)))
    ids = rng.integers(0, grid.n_points, (m, width))
    rows = split_rows(ids, weights)
    def gather(i):  # the grid's points from its axes, in float64 as a clip reads them
        x, y, z = (grid.axis_coordinates(a) for a in range(3))
        return np.stack([x[i % 3], y[i // 3 % 2], z[i // 6]], axis=1)

    ours = weighted_sum(gather, *rows, axes=[grid.axis_coordinates(a) for a in range(3)])
    reference = weighted_sum(gather, *rows)
    assert ours.tobytes() == reference.tobytes()
    assert reference.tobytes() == summed_wide(gather, ids, weights).tobytes()


@pytest.mark.parametrize("function", [
    {"plane": ((3.0, 4.0, 2.5), (1.0, 0.5, 0.25))},
    {"sphere": ((3.0, 4.0, 2.5), 3.3)},
    {"box": (1.0, 5.5, 2.0, 9.0, 0.5, 3.0), "invert": True},
])
def test_functions_from_the_axes_give_every_points_bits(function):
    # The function's terms computed on the axes and broadcast, against the same
    # points listed one by one (a curvilinear grid of the axes' float64 lattice).
    grid = daxpy.RectilinearGrid(np.cumsum(np.arange(1, 9.0)) / 4, np.arange(11.0) ** 1.2,
                                 np.linspace(0, 4, 7))
    axes = [grid.axis_coordinates(a) for a in range(3)]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    lattice = daxpy.CurvilinearGrid(grid.dims, np.stack([x.ravel(), y.ravel(), z.ravel()], 1))
    for g in (grid, lattice):
        g.point_data["id"] = np.arange(g.n_points, dtype=np.float64)
    ours, every = (Clip(backend="cpu", **function)(g) for g in (grid, lattice))
    assert np.array_equal(ours.connectivity, every.connectivity)
    assert ours.point_data["id"].tobytes() == every.point_data["id"].tobytes()


# What the Clip filter made before the centre table (daxpy 48b5dd3: every point's
# terms in one wide table): a digest of its fields and cells at s = 0.3, kept side
# then inverted side, for fields of exact values. (Its digests with the points too,
# 918b27e3687162ef and f7d3f73476276889 for the image, c01df5ea66c47914 and
# 5911daae9798c907 for the rectilinear grid, held until those grids' clipped points
# became float64, as vtkTableBasedClipDataSet's; these, taken then from the same
# code, were unchanged by it.)
_WIDE_TABLE_DIGESTS = {"uniform": ("37b86b05cfb03cbf", "4bf771f5df637756"),
                       "rectilinear": ("d6cf74d0beb4d31d", "7baa0f3905a395c0"),
                       "hexes": ("a55944ab800343f5", "9d4bc2f9a34847f9")}
# With the points (float64 on the image and rectilinear grids).
_POINT_DIGESTS = {"uniform": ("563751d44f39ca7f", "190dbefabba151f2"),
                  "rectilinear": ("f96bbb78c18ee662", "8254ad756b79fae3"),
                  "hexes": ("be30ed136a5e798d", "51b08cb170410ddf")}


def _digest(made, points=False):
    import hashlib

    digest = hashlib.sha256()
    for array in ([made.points()] if points else []) + [
            made.connectivity, made.offsets, made.cell_types,
            *(made.point_data[k] for k in sorted(made.point_data)),
            *(made.cell_data[k] for k in sorted(made.cell_data))]:
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(_WIDE_TABLE_DIGESTS))
@pytest.mark.parametrize("numpy", [False, True])
def test_the_centre_table_gives_the_wide_tables_bits(name, numpy, monkeypatch):
    from daxpy.engine.geometry_chunks import chunk_cells

    grid = {"uniform": lambda: daxpy.UniformGrid(dims=(9, 8, 7), spacing=(0.5, 1, 2)),
            "rectilinear": lambda: daxpy.RectilinearGrid(np.arange(1, 8.0) ** 1.5,
                                                         np.arange(6.0), np.linspace(0, 1, 6)),
            "hexes": lambda: _hexes(6)}[name]()
    n = grid.n_points
    grid.point_data["s"] = ((np.arange(n) * 7919 % 23 - 11) / 4).astype(np.float32)
    grid.point_data["v"] = np.arange(3 * n).reshape(n, 3) % 17 * 0.3
    grid.point_data["w"] = np.arange(n, dtype=np.int32)
    grid.cell_data["c"] = np.arange(grid.n_cells, dtype=np.float64)
    assert _reference(grid, grid.point_data["s"], 0.3, False).centre_rows.shape[0] > 10
    for invert, want, want_points in zip((False, True), _WIDE_TABLE_DIGESTS[name],
                                         _POINT_DIGESTS[name]):
        whole = _clipped(grid, monkeypatch, numpy, field="s", value=0.3, invert=invert)
        with chunk_cells(grid.n_cells // 3):
            chunked = _clipped(grid, monkeypatch, numpy, field="s", value=0.3, invert=invert)
        for made in (whole, chunked):
            assert (_digest(made), _digest(made, points=True)) == (want, want_points)


def test_every_centre_of_the_tables_has_two_terms_at_least():
    # So each centre point has a nonzero weight past its first term's two: the
    # centre table's rows are the rows the wide table summed more columns of.
    from daxpy.worklets._clip_tables import CLIP, CLIP_INSIDE_OUT

    for tables in (CLIP, CLIP_INSIDE_OUT):
        for kind, cases in tables.items():
            assert all(len(centre) >= 2 and all(n for _, n, _ in centre)
                       for _, centres in cases for centre in centres), kind


@pytest.mark.parametrize("dims", [(9, 8, 7), (1, 8, 7), (6, 1, 5), (7, 5, 1), (12, 1, 1)])
def test_cut_edges_numbered_by_a_scan_are_the_sorts(dims, monkeypatch):
    # A structured grid's cut edges numbered by flags per (point, axis) and a scan,
    # against the unstructured path's sort of their keys.
    grid = daxpy.UniformGrid(dims=dims)
    rng = np.random.default_rng(7)
    for kind in ("smooth", "ties", "holes"):
        scalars = cut_field(rng, grid.n_points, kind, np.float64)
        for invert in (False, True):
            scan = _reference(grid, scalars, 0.1, invert)
            with monkeypatch.context() as patch:
                patch.setattr(array_clip, "_strides", lambda grid: None)
                sort = _reference(grid, scalars, 0.1, invert)
            _assert_same(scan, sort)
            assert scan.keys.tobytes() == sort.keys.tobytes()


@pytest.mark.parametrize("width,components", [(2, ()), (2, (3,)), (3, (2, 2)), (1, ())])
def test_weighted_sums_over_several_blocks_match_the_array_program(width, components):
    # More rows than a block (_weighted_cpu._BLOCK) of the thread pool, both paths:
    # rows of up to three components from two terms in scalars, the others in arrays.
    rng = np.random.default_rng(width)
    n, m = 50, 3 * weighted_cpu._BLOCK + 5
    values = rng.standard_normal((n,) + components).astype(np.float32)
    ids = rng.integers(0, n, (m, width))
    weights = rng.standard_normal((m, width))
    rows = split_rows(ids, weights)
    ours = weighted_sum(values, *rows, dtype=np.float32)
    reference = weighted_sum(lambda i: values[i], *rows, dtype=np.float32)
    assert ours.tobytes() == reference.tobytes()
