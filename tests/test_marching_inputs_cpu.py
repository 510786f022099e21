"""The compiled march of unstructured cells, the distinct edge keys of a cut and the
compiled plane distances (a slice's, a clip's) give the array programs' results (NaN
and Inf corners, float32 values next to the cut value, every grid family a slice
measures, any thread count)."""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.filters import Clip
from daxpy.filters._implicit import _array_distance, coordinate_columns, implicit_function
from daxpy.worklets import _numba
from daxpy.worklets._march_cells_cpu import MIN_CELLS, march_cells
from daxpy.worklets._marching import TABLES
from daxpy.worklets._plane_cpu import MIN_POINTS, axis_plane_distance, plane_distance
from daxpy.worklets.contour import _array_march
from daxpy.worklets.plane_cuts import array_axis_distance
from four_threads import four_thread_report

pytest.importorskip("numba")


_KINDS = {2: "line", 3: "triangle", 4: "tetra", 5: "pyramid", 6: "wedge", 8: "hexahedron"}


@settings(max_examples=30, deadline=None)
@given(corners=st.sampled_from(sorted(_KINDS)), n_points=st.integers(1, 500),
       dtype=st.sampled_from([np.float32, np.float64]), threads=st.sampled_from([1, 2, 4]),
       seed=st.integers(0, 2 ** 16))
def test_the_compiled_march_is_the_array_programs(corners, n_points, dtype, threads, seed):
    rng = np.random.default_rng(seed)
    scalars = rng.normal(size=n_points).astype(dtype)
    scalars[rng.random(n_points) < 0.05] = np.nan
    scalars[rng.random(n_points) < 0.02] = np.inf
    value = float(scalars[0]) if np.isfinite(scalars[0]) else 0.1
    # Values one float32 step either side of the value: compared as in float64.
    scalars[rng.random(n_points) < 0.1] = np.nextafter(dtype(value), dtype(np.inf))
    ids = rng.integers(0, n_points, (MIN_CELLS + rng.integers(0, 3 * MIN_CELLS), corners))
    cells = np.sort(rng.choice(10 * ids.shape[0], ids.shape[0], replace=False))
    _numba.set_threads(threads)   # more than Numba's threads: as many as it has
    try:
        keys, source = march_cells(ids, cells, scalars, value + 1e-12, _KINDS[corners])
    finally:
        _numba.set_threads(None)
    want = _array_march(ids, cells, scalars, value + 1e-12, _KINDS[corners])
    assert keys.dtype == source.dtype == np.int64
    assert keys.shape[1] == TABLES[_KINDS[corners]][1].shape[2]
    np.testing.assert_array_equal(keys, want[0])
    np.testing.assert_array_equal(source, want[1])


def test_a_corner_id_out_of_range_is_refused():
    ids = np.zeros((MIN_CELLS, 4), np.int64)
    ids[7, 2] = 3
    with pytest.raises(IndexError, match="out of range"):
        march_cells(ids, np.arange(MIN_CELLS), np.zeros(3), 0.5, "tetra")


@settings(max_examples=40, deadline=None)
@given(n_points=st.integers(2, 3000), n_cells=st.integers(0, 40_000),
       sizes=st.sets(st.sampled_from([1, 2, 3, 4]), min_size=1, max_size=3),
       dtype=st.sampled_from([np.float32, np.float64]), at_value=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_the_compiled_merge_is_the_array_programs(n_points, n_cells, sizes, dtype, at_value,
                                                  seed):
    # Random cells of edges (some listing an edge twice: collapsed), several cell
    # sizes, values exactly at the cut value or not (snapped: the array program's);
    # up to 160k keys, past the 65,536 where the distinct keys and their places are
    # found by buckets on every core, not by NumPy.
    from daxpy.worklets import _merge_cuts
    from daxpy.worklets._merge_cuts_cpu import merged

    rng = np.random.default_rng(seed)
    scalars = rng.normal(size=n_points).astype(dtype)
    scalars[rng.random(n_points) < 0.05] = np.nan   # the array program's NaN bits too
    scalars[rng.random(n_points) < 0.02] = -np.inf
    value = 0.25
    if at_value:
        scalars[rng.integers(0, n_points)] = value
    parts = {}
    for k in sorted(sizes):
        ends = np.sort(rng.integers(0, n_points, (n_cells, k, 2)), axis=2)
        keys = ends[..., 0] * n_points + ends[..., 1]
        parts[k] = (keys, np.sort(rng.choice(10 * max(n_cells, 1), n_cells, replace=False)))
    flat = [parts[k][0].ravel() for k in sorted(parts)]
    every = np.concatenate(flat)
    unique, inverse = np.unique(every, return_inverse=True)
    with np.errstate(invalid="ignore", divide="ignore"):   # edges (p, p): no march's
        ours = merged(parts, sorted(parts), flat, every, scalars, value, n_points)
        want = _merge_cuts._merged(parts, sorted(parts), flat, unique, inverse, scalars, value,
                                   n_points)
    for name in ("lo", "hi", "t"):
        a, b = getattr(ours, name), getattr(want, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    assert sorted(ours.cells) == sorted(want.cells)
    for k in want.cells:
        for part in ("cells", "source"):
            a, b = getattr(ours, part)[k], getattr(want, part)[k]
            assert a.dtype == b.dtype and a.shape == b.shape, part
            np.testing.assert_array_equal(a, b)


def _merged_bytes(seed):
    """The compiled merge of about 200k random edge keys of triangles and quads over
    20,000 points (past the 65,536 keys where the bucket sort and the ranks' buckets
    take over from NumPy), as the bytes of each of its arrays."""
    from daxpy.worklets._merge_cuts_cpu import merged

    rng = np.random.default_rng(seed)
    n_points = 20_000
    scalars = rng.normal(size=n_points)
    parts = {}
    for k, n_cells in ((3, 40_000), (4, 20_000)):
        ends = np.sort(rng.integers(0, n_points, (n_cells, k, 2)), axis=2)
        parts[k] = (ends[..., 0] * n_points + ends[..., 1], np.arange(n_cells) * 3)
    flat = [parts[k][0].ravel() for k in sorted(parts)]
    with np.errstate(invalid="ignore", divide="ignore"):
        cut = merged(parts, sorted(parts), flat, np.concatenate(flat), scalars, 0.25, n_points)
    return [cut.lo.tobytes(), cut.hi.tobytes(), cut.t.tobytes(),
            *(cut.cells[k].tobytes() for k in sorted(cut.cells)),
            *(cut.source[k].tobytes() for k in sorted(cut.source))]


_MERGE_IN_A_CHILD = """
import json, sys
from daxpy.worklets._numba import threads
from test_marching_inputs_cpu import _merged_bytes
print(json.dumps({"threads": threads(), "made": [b.hex() for b in _merged_bytes(int(sys.argv[1]))]}))
"""


def test_the_compiled_merge_of_many_keys_is_the_same_on_any_thread_count():
    # One thread here, four in a child (Numba's pool size is fixed per process).
    from daxpy.worklets._numba import set_threads

    set_threads(1)
    try:
        one = _merged_bytes(5)
    finally:
        set_threads(None)
    report = four_thread_report(_MERGE_IN_A_CHILD, "5")
    assert report["threads"] == 4 and report["made"] == [b.hex() for b in one]


@settings(max_examples=20, deadline=None)
@given(dims=st.tuples(st.integers(2, 40), st.integers(2, 40), st.integers(2, 40)),
       rectilinear=st.booleans(), threads=st.sampled_from([1, 2, 4]),
       seed=st.integers(0, 2 ** 16))
def test_compiled_plane_distances_are_the_array_programs(dims, rectilinear, threads, seed):
    rng = np.random.default_rng(seed)
    if rectilinear:
        grid = daxpy.RectilinearGrid(*[np.cumsum(rng.uniform(0.1, 1, d)) for d in dims])
    else:
        grid = daxpy.UniformGrid(dims=dims, spacing=tuple(rng.uniform(0.1, 2, 3)))
    origin, normal = rng.normal(size=3), rng.normal(size=3)
    parts = [(grid.axis_coordinates(a) - origin[a]) * normal[a] for a in range(3)]
    points = grid.points()
    _numba.set_threads(threads)
    try:
        # The slice's order (z term first) and the clip's (x term first).
        by_axes = [axis_plane_distance(parts, grid.n_points, x_first)
                   if grid.n_points >= MIN_POINTS else
                   array_axis_distance(parts, grid.n_points, x_first)
                   for x_first in (False, True)]
        by_points = plane_distance(np.repeat(points, 1 + MIN_POINTS // len(points), axis=0),
                                   origin, normal)
    finally:
        _numba.set_threads(None)
    for x_first, made in zip((False, True), by_axes):
        assert made.tobytes() == array_axis_distance(parts, grid.n_points, x_first).tobytes()
    many = np.repeat(points, 1 + MIN_POINTS // len(points), axis=0)
    assert by_points.tobytes() == _array_distance(many, origin.tolist(),
                                                  normal.tolist()).tobytes()


@settings(max_examples=15, deadline=None)
@given(n_points=st.integers(1, 3 * MIN_POINTS), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 2 ** 16))
def test_a_clip_planes_values_on_host_points_are_the_array_programs(n_points, dtype, seed):
    from daxpy.data.celltypes import VERTEX

    rng = np.random.default_rng(seed)
    points = (rng.normal(size=(n_points, 3)) * 10).astype(dtype)
    grid = daxpy.UnstructuredGrid.from_blocks(points, {VERTEX: np.arange(n_points)[:, None]})
    plane = (tuple(rng.normal(size=3)), tuple(rng.normal(size=3)))
    clip = Clip(plane=plane, backend="cpu")
    want = implicit_function(plane, None, None)(*coordinate_columns(grid, "cpu"))
    assert clip._scalars(grid).tobytes() == want.tobytes()


@settings(max_examples=15, deadline=None)
@given(dims=st.tuples(st.integers(2, 40), st.integers(1, 40), st.integers(1, 40)),
       rectilinear=st.booleans(), float32=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_a_clip_planes_values_on_image_axes_are_the_implicit_functions(dims, rectilinear,
                                                                        float32, seed):
    # The compiled pass from the axes' terms (x term first) gives the bits of the
    # implicit function evaluated on the broadcast axes.
    rng = np.random.default_rng(seed)
    if rectilinear:
        dtype = np.float32 if float32 else np.float64
        grid = daxpy.RectilinearGrid(*[np.cumsum(rng.uniform(0.1, 1, d)).astype(dtype)
                                       for d in dims])
    else:
        grid = daxpy.UniformGrid(dims=dims, spacing=tuple(rng.uniform(0.1, 2, 3)),
                                 origin=tuple(rng.normal(size=3)))
    plane = (tuple(rng.normal(size=3)), tuple(rng.normal(size=3)))
    want = implicit_function(plane, None, None)(*coordinate_columns(grid, "cpu")).reshape(-1)
    assert Clip(plane=plane, backend="cpu")._scalars(grid).tobytes() == want.tobytes()


def _hex_slice(side, seed, threads=None):
    """A slice of jittered hexahedra by a random plane, on ``threads`` threads (its
    points, cells and fields as bytes)."""
    from strategies import _lattice_hexes, _lattice_points

    from daxpy.data.celltypes import HEXAHEDRON
    from daxpy.filters import Slice

    rng = np.random.default_rng(seed)
    dims = (side, side + 1, side + 2)
    points = _lattice_points(rng, dims, 0.05)
    hexes = _lattice_hexes(dims)
    grid = daxpy.UnstructuredGrid(points, hexes.ravel(), np.arange(0, hexes.size + 1, 8),
                                  np.full(len(hexes), HEXAHEDRON, np.uint8),
                                  point_data={"s": rng.normal(size=len(points))})
    cut = Slice(tuple(rng.normal(size=3)), tuple(points.mean(axis=0)), backend="cpu")
    daxpy.configure_cpu(threads=threads)
    try:
        made = cut(grid)
    finally:
        daxpy.configure_cpu(threads=None)
    return [made.points().tobytes(), made.cell_array("polys")[1].tobytes(),
            made.point_data["s"].tobytes()]


_SLICE_IN_A_CHILD = """
import json, sys
from daxpy.worklets._numba import threads
from test_marching_inputs_cpu import _hex_slice
print(json.dumps({"threads": threads(),
                  "made": [b.hex() for b in _hex_slice(int(sys.argv[1]), int(sys.argv[2]))]}))
"""


@settings(max_examples=4, deadline=None)
@given(side=st.integers(17, 24), seed=st.integers(0, 2 ** 16))
def test_a_hexahedral_slice_is_the_array_programs_on_any_thread_count(side, seed):

    from daxpy.worklets import _merge_cuts, contour

    one, two = _hex_slice(side, seed, 1), _hex_slice(side, seed, 2)
    with pytest.MonkeyPatch.context() as patch:   # NumPy's march and sort alone
        patch.setattr(contour, "_MARCHED", contour._array_march)
        patch.setattr(_merge_cuts, "_MERGED_ON_HOST", SimpleNamespace(load=lambda: None))
        assert _hex_slice(side, seed) == one == two
    # Numba's pool size is fixed per process: a child gets 4 threads.
    report = four_thread_report(_SLICE_IN_A_CHILD, str(side), str(seed))
    assert report["threads"] == 4 and report["made"] == [b.hex() for b in one]
