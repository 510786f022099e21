"""Grid arrays are shared with the caller; what daxpy derives from them never goes stale.

Each test builds a grid, runs filters (filling the shape partitions, corner
tables and links), writes into the caller's arrays in place, and runs again:
the result must equal a fresh grid's, or the call must raise
InvalidDataSetError saying the grid changed. Never a stale result, never a
raw ValueError or IndexError.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy import errors
from daxpy.data import fingerprint
from daxpy.data.arrays import to_host
from daxpy.data.celltypes import HEXAHEDRON, TETRA
from daxpy.filters import CellToPoint, Gradient, PointToCell

FAST = settings(max_examples=40, deadline=None)


def _hex_arrays(n=3, mixed=False):
    """Points and topology of an n^3 block of hexahedra (the first cell split
    into tetrahedra when ``mixed``), as plain writable arrays."""
    pts = np.stack(np.meshgrid(*[np.arange(n + 1.0)] * 3, indexing="ij"), -1)[..., ::-1]
    pts = np.ascontiguousarray(pts.reshape(-1, 3)) + np.random.default_rng(3).random(
        ((n + 1) ** 3, 3)) * 0.2
    ids = np.arange((n + 1) ** 3).reshape(n + 1, n + 1, n + 1)
    hexes = [[ids[k, j, i], ids[k, j, i + 1], ids[k, j + 1, i + 1], ids[k, j + 1, i],
              ids[k + 1, j, i], ids[k + 1, j, i + 1], ids[k + 1, j + 1, i + 1],
              ids[k + 1, j + 1, i]] for k in range(n) for j in range(n) for i in range(n)]
    cells = [(HEXAHEDRON, h) for h in hexes]
    if mixed:
        h = hexes[0]
        cells = [(TETRA, [h[0], h[1], h[3], h[4]]), (TETRA, [h[1], h[2], h[3], h[6]])] + cells[1:]
    conn = np.array([p for _, c in cells for p in c], np.int64)
    offs = np.concatenate([[0], np.cumsum([len(c) for _, c in cells])]).astype(np.int64)
    types = np.array([t for t, _ in cells], np.uint8)
    return pts, conn, offs, types


FILTERS = [lambda backend="cpu": PointToCell("p", "out", backend=backend),
           lambda backend="cpu": CellToPoint("c", "out", backend=backend),
           lambda backend="cpu": Gradient("p", "out", backend=backend)]


def _fields(grid):
    return grid.with_fields(point_data={"p": np.sin(np.arange(grid.n_points, dtype=float))},
                            cell_data={"c": np.cos(np.arange(grid.n_cells, dtype=float))})


def _results(grid, backend="cpu"):
    data = _fields(grid)
    out = []
    for make in FILTERS:
        result = make(backend)(data)
        out.append(to_host(result.point_data["out"] if "out" in result.point_data
                           else result.cell_data["out"]))
    return out


def _fresh(pts, conn, offs, types):
    return daxpy.UnstructuredGrid(pts.copy(), conn.copy(), offs.copy(), types.copy())


def _after_change(grid, arrays, backend="cpu"):
    """Results of ``grid`` after its arrays changed: equal to a fresh grid's, or
    InvalidDataSetError where a fresh grid would be refused too."""
    try:
        expected = _results(_fresh(*arrays), backend)
    except errors.InvalidDataSetError:
        with pytest.raises(errors.InvalidDataSetError, match="changed after it was built"):
            _results(grid, backend)
        return
    for got, want in zip(_results(grid, backend), expected):
        np.testing.assert_array_equal(got, want)


@FAST
@given(mixed=st.booleans(), which=st.sampled_from(["connectivity", "offsets", "types",
                                                     "points", "swap"]),
       position=st.integers(0, 10 ** 6), value=st.integers(-70, 140))
def test_in_place_writes_give_fresh_results_or_invalid_dataset(mixed, which, position, value):
    arrays = _hex_arrays(3, mixed)
    grid = daxpy.UnstructuredGrid(*arrays)
    _results(grid)  # fills the caches
    pts, conn, offs, types = arrays
    if which == "swap":  # two cells exchange a corner: maybe valid, always different
        cell = position % len(types)
        other = (cell + 1 + (position // len(types)) % (len(types) - 1)) % len(types)
        a, b = offs[cell] + value % 4, offs[other] + value % 4
        conn[a], conn[b] = conn[b], conn[a]
    elif which == "points":
        pts[position % len(pts), position % 3] = [np.nan, 7.5, -2.0][value % 3]
    else:
        target = {"connectivity": conn, "offsets": offs, "types": types}[which]
        target[position % target.size] = value % 256 if target.dtype == np.uint8 else value
        if which == "types" and value % 256 in (8, 11):
            # A pixel or voxel written in place: a new grid would renumber its
            # corners, which a built grid cannot do to the caller's arrays; it says so.
            with pytest.raises(errors.InvalidDataSetError, match="renumbered"):
                _results(grid)
            return
    _after_change(grid, arrays)


@pytest.mark.parametrize("bad", [-1, 64, 10 ** 12])
def test_out_of_range_id_after_construction_is_refused_clearly(bad):
    arrays = _hex_arrays(3)
    grid = daxpy.UnstructuredGrid(*arrays)
    _results(grid)
    arrays[1][5] = bad
    for make in FILTERS:
        with pytest.raises(errors.InvalidDataSetError) as info:
            make()(_fields(grid))
        assert f"point id {bad}" in str(info.value)
        assert "changed after it was built" in str(info.value)


def test_datasets_derived_before_the_change_see_it_too():
    arrays = _hex_arrays(2)
    grid = _fields(daxpy.UnstructuredGrid(*arrays))
    derived = PointToCell("p", "pc", backend="cpu")(grid)
    arrays[1][:8] = arrays[1][:8][::-1].copy()
    want = PointToCell("p", "pc", backend="cpu")(_fields(_fresh(*arrays))).cell_data["pc"]
    got = PointToCell("p", "pc2", backend="cpu")(derived).cell_data["pc2"]
    np.testing.assert_array_equal(got, want)


def test_grid_holds_read_only_views_and_the_caller_keeps_writable_arrays():
    pts, conn, offs, types = _hex_arrays(2)
    grid = daxpy.UnstructuredGrid(pts, conn, offs, types)
    for mine, held in ((pts, grid.points()), (conn, grid.connectivity),
                       (offs, grid.offsets), (types, grid.cell_types)):
        assert mine.flags.writeable and not held.flags.writeable
        assert np.shares_memory(mine, held)  # shared, not copied
    with pytest.raises(ValueError):
        grid.connectivity[0] = 1


def test_validate_finds_a_change_the_sampled_fingerprint_misses():
    arrays = _hex_arrays(40)  # 512,000 ids: 4 MB, sampled
    grid = daxpy.UnstructuredGrid(*arrays)
    before = fingerprint.fingerprint(grid._validated_arrays())
    sampled = set(range(0, arrays[1].size, arrays[1].size // fingerprint.SAMPLE_ROWS))
    position = next(i for i in range(1, arrays[1].size) if i not in sampled)
    arrays[1][position] = -5
    assert fingerprint.fingerprint(grid._validated_arrays()) == before  # the documented gap
    with pytest.raises(errors.InvalidDataSetError, match="point id -5"):
        grid.validate()


def test_an_unsampled_out_of_range_id_is_still_never_read_out_of_bounds():
    arrays = _hex_arrays(40)
    grid = _fields(daxpy.UnstructuredGrid(*arrays))
    Gradient("p", "g", backend="cpu")(grid)
    arrays[1][arrays[1].size // 2 + 3] = 10 ** 9
    with pytest.raises(errors.InvalidDataSetError, match="point id 1000000000"):
        Gradient("p", "g", kind="cell", backend="cpu")(grid)


def test_structured_coordinates_are_fingerprinted():
    x = np.array([0.0, 1.0, 3.0, 4.0])
    grid = daxpy.RectilinearGrid(x, [0.0, 1.0])
    data = grid.with_fields(point_data={"p": np.arange(8.0) ** 2})
    Gradient("p", "g", backend="cpu")(data)
    x[2] = 2.0
    fresh = daxpy.RectilinearGrid(x.copy(), [0.0, 1.0]).with_fields(
        point_data={"p": np.arange(8.0) ** 2})
    np.testing.assert_array_equal(Gradient("p", "g", backend="cpu")(data).point_data["g"],
                                  Gradient("p", "g", backend="cpu")(fresh).point_data["g"])
    x[2] = 0.5
    with pytest.raises(errors.InvalidDataSetError, match="strictly increasing"):
        Gradient("p", "g", backend="cpu")(data)


def test_curvilinear_points_are_fingerprinted():
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float)
    grid = daxpy.CurvilinearGrid((2, 2), pts)
    data = grid.with_fields(point_data={"p": np.arange(4.0)})
    PointToCell("p", "c", backend="cpu")(data)
    pts[3, 0] = np.inf
    with pytest.raises(errors.InvalidDataSetError, match="NaN or Inf"):
        Gradient("p", "g", backend="cpu")(data)


@pytest.mark.gpu
@pytest.mark.parametrize("mixed", [False, True])
def test_device_caches_follow_in_place_writes(mixed):
    arrays = _hex_arrays(3, mixed)
    grid = daxpy.UnstructuredGrid(*arrays)
    _results(grid, "cuda")  # uploads corners, links, points
    arrays[1][:8] = arrays[1][8:16].copy()  # valid change
    arrays[1][8:16] = _hex_arrays(3, mixed)[1][:8]
    _after_change(grid, arrays, "cuda")
    arrays[1][3] = 10 ** 6
    with pytest.raises(errors.InvalidDataSetError):
        _results(grid, "cuda")


def _streamed_gradient(grid):
    from daxpy.stream.streaming import run_streamed

    data = _fields(grid)
    pipe = daxpy.pipeline(data)
    grad = pipe.gradient("p")
    out, profile = run_streamed(data, pipe.stages, [grad.name], backend="cpu", chunk_bytes=2048)
    assert profile.chunks > 1
    return out.point_data[grad.name]


@pytest.mark.parametrize("which", ["points", "connectivity"])
def test_a_streamed_runs_chunks_follow_writes_into_their_source_grid(which):
    # The chunks' caches are not fingerprinted themselves (their source grid's check
    # at every run drops them): a write the source's check sees gives fresh chunks.
    arrays = _hex_arrays(6)
    grid = daxpy.UnstructuredGrid(*arrays)
    _streamed_gradient(grid)
    plans = [v for k, v in grid._cache.items() if isinstance(k, tuple) and k[0] == "stream:plan"]
    assert plans and all(c.grid._validated_arrays() == () for c in plans[0].chunks)
    if which == "points":
        arrays[0][:] = arrays[0] * 2.0 + 1.0
    else:  # every cell's corners turned about the same axis (valid hexahedra again)
        arrays[1][:] = arrays[1].reshape(-1, 8)[:, [1, 2, 3, 0, 5, 6, 7, 4]].ravel()
    np.testing.assert_array_equal(_streamed_gradient(grid), _streamed_gradient(_fresh(*arrays)))


def test_a_run_fingerprints_each_grid_once_and_the_next_run_sees_a_change(monkeypatch):
    pts, conn, offs, types = _hex_arrays(4)
    grid = _fields(daxpy.UnstructuredGrid(pts, conn, offs, types))
    taken = []
    real = fingerprint.fingerprint
    monkeypatch.setattr("daxpy.data.dataset.fingerprint",
                        lambda arrays: taken.append(1) or real(arrays))
    pipe = daxpy.pipeline(grid)
    pipe.gradient("p", result="g")
    pipe.point_to_cell("p", result="pc")
    pipe.run(backend="cpu")
    # Each dataset of the run (the grid, the one the run derives) once, not at every
    # lookup of the grid's caches.
    assert 1 <= len(taken) <= 2
    conn[0] = len(pts) + 5  # a change between runs is still seen
    with pytest.raises(errors.InvalidDataSetError, match="changed"):
        pipe.run(backend="cpu")


def test_a_run_does_not_keep_the_datasets_it_checked():
    import gc
    import weakref

    with fingerprint.one_check_per_run():
        chunk = daxpy.UniformGrid(dims=(4, 4))
        chunk.check_unchanged()
        alive = weakref.ref(chunk)
        del chunk
        gc.collect()
        # A streamed run's chunks hold device arrays: held to the run's end, they
        # would hold the run above its device budget.
        assert alive() is None
