"""The compiled CPU contour (worklets/contour_cpu.py): the NumPy implementation's
output bit for bit, on random structured grids, fields and values, for any thread
count; and through the Contour filter with all its options."""

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.data.worklet import get_worklet
from daxpy.filters import Contour
from daxpy.filters._surface import _array_coordinates
from daxpy.worklets import contour as numpy_contour, contour_cpu
from daxpy.worklets._numba import compiled

from four_threads import four_thread_report
from strategies import (CUT_DIMS, CUT_DTYPES, curvilinear_grids, cut_field, cut_value,
                        rectilinear_grids, seeds, uniform_grids, wavy_field)

pytest.importorskip("numba")

FAMILIES = {"uniform": uniform_grids, "rectilinear": rectilinear_grids,
            "curvilinear": curvilinear_grids}


def _compiled(grid, scalars, value):
    return get_worklet("contour").cpu_impl(grid.family)(grid, scalars, value=value)


def _reference(grid, scalars, value):
    with np.errstate(invalid="ignore", divide="ignore"):
        return numpy_contour.contour_structured(grid, scalars, value)


def _assert_same_cut(ours, reference):
    for name in ("lo", "hi", "t"):
        a, b = getattr(ours, name), getattr(reference, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), name
    assert sorted(ours.cells) == sorted(reference.cells)
    for k in reference.cells:
        for part in ("cells", "source"):
            a, b = getattr(ours, part)[k], getattr(reference, part)[k]
            assert a.dtype == b.dtype and a.shape == b.shape, part
            assert np.array_equal(a, b), part


def _assert_points_of_its_edges(grid, cut, dtype=np.float64):
    """The points the march wrote beside its edges are those the surface makes from
    the edges alone: on uniform and rectilinear grids of float fields, 3-D or 2-D in
    x and y (the other cuts have none: the surface makes them from the edges)."""
    sides = [int(d) for d in grid.dims]
    dimension = sum(side > 1 for side in sides)
    if (grid.family == "curvilinear" or dimension < 2 or min(sides[:dimension]) < 2
            or np.dtype(dtype).newbyteorder("=") not in (np.float32, np.float64)):
        assert cut.points is None
        return
    edges_only = _array_coordinates(grid, dataclasses.replace(cut, points=None))
    assert cut.points.dtype == edges_only.dtype and cut.points.shape == edges_only.shape
    assert cut.points.tobytes() == edges_only.tobytes()


@settings(max_examples=150, deadline=None)
@given(data=st.data(), family=st.sampled_from(sorted(FAMILIES)),
       kind=st.sampled_from(["smooth", "ties", "holes"]),
       dtype=st.sampled_from([np.float32, np.float64]), seed=seeds)
def test_compiled_matches_numpy(data, family, kind, dtype, seed):
    grid = data.draw(FAMILIES[family](max_side=7))
    rng = np.random.default_rng(seed)
    scalars = cut_field(rng, grid.n_points, kind, dtype)
    value = cut_value(rng, scalars)
    ours = _compiled(grid, scalars, value)
    _assert_same_cut(ours, _reference(grid, scalars, value))
    _assert_points_of_its_edges(grid, ours)


@pytest.mark.parametrize("dims", CUT_DIMS)
@pytest.mark.parametrize("dtype", CUT_DTYPES)
def test_every_shape_and_dtype(dims, dtype):
    grid = daxpy.UniformGrid(dims=dims)
    scalars = np.random.default_rng(1).integers(0, 4, grid.n_points).astype(dtype)
    for value in (1.0, 1.5, -1.0, 3.0):
        ours = _compiled(grid, scalars, value)
        _assert_same_cut(ours, _reference(grid, scalars, value))
        _assert_points_of_its_edges(grid, ours, dtype)


def test_a_float32_field_compares_with_the_value_in_float64():
    grid = daxpy.UniformGrid(dims=(3, 3, 3))
    scalars = np.full(27, np.float32(0.1))
    scalars[::2] = 0
    # float32(0.1) > 0.1: every such point is in at 0.1, none at its next float32.
    for value in (0.1, float(np.float32(0.1)), float(np.nextafter(np.float32(0.1), 1))):
        _assert_same_cut(_compiled(grid, scalars, value), _reference(grid, scalars, value))


_FOUR_THREADS = """
import json, numpy as np, daxpy
from daxpy.data.worklet import get_worklet
from daxpy.worklets._numba import threads
from strategies import wavy_field
grid = daxpy.UniformGrid(dims=(41, 37, 33))
cut = get_worklet("contour").cpu_impl("uniform")(grid, wavy_field(grid.dims), value=0.0)
print(json.dumps({"threads": threads(), "cut": [a.tobytes().hex() for a in
                  (cut.lo, cut.hi, cut.t, cut.cells[3], cut.source[3], cut.points)]}))
"""


def test_thread_counts_give_the_same_bits():
    grid = daxpy.UniformGrid(dims=(41, 37, 33))
    scalars = wavy_field(grid.dims)
    cuts = []
    try:
        for count in (1, 2):
            daxpy.configure_cpu(threads=count)
            cuts.append(_compiled(grid, scalars, 0.0))
    finally:
        daxpy.configure_cpu(threads=None)
    _assert_same_cut(cuts[0], cuts[1])
    assert cuts[0].points.tobytes() == cuts[1].points.tobytes()
    _assert_points_of_its_edges(grid, cuts[0])
    _assert_same_cut(cuts[0], _reference(grid, scalars, 0.0))
    # Numba's pool size is fixed per process: a child gets 4 threads.
    report = four_thread_report(_FOUR_THREADS)
    assert report["threads"] == 4
    ours = cuts[0]
    assert report["cut"] == [a.tobytes().hex() for a in
                             (ours.lo, ours.hi, ours.t, ours.cells[3], ours.source[3],
                              ours.points)]


@settings(max_examples=60, deadline=None)
@given(dims=st.tuples(st.integers(2, 11), st.integers(2, 21), st.integers(1, 19)),
       dtype=st.sampled_from([np.float32, np.float64]), seed=seeds,
       marks=st.integers(1, 6))
def test_careful_rows_anywhere_give_the_same_bits_on_any_threads(dims, dtype, seed, marks):
    # Points equal to the value, NaN or Inf at a few random rows: the careful
    # path's kernels run over those rows, dealt to 1, 2 and 4 threads.
    grid = daxpy.UniformGrid(dims=dims)
    rng = np.random.default_rng(seed)
    scalars = rng.standard_normal(grid.n_points).astype(dtype)
    value = float(scalars[0])
    rows = rng.integers(0, grid.n_points // dims[0], marks)
    where = rows * dims[0] + rng.integers(0, dims[0], marks)
    scalars[where] = rng.choice([value, value, np.nan, np.inf, -np.inf], marks)
    reference = _reference(grid, scalars, value)
    for count in (1, 2, 4):   # Python threads: 4 run on a 2-core machine too
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(contour_cpu, "threads", lambda count=count: count)
            ours = _compiled(grid, scalars, value)
            _assert_same_cut(ours, reference)
            _assert_points_of_its_edges(grid, ours)


@settings(max_examples=60, deadline=None)
@given(dims=st.tuples(st.integers(2, 11), st.integers(2, 21), st.integers(1, 19)),
       rectilinear=st.booleans(), dtype=st.sampled_from([np.float32, np.float64]),
       seed=seeds, marks=st.integers(0, 6))
def test_a_cut_without_edges_or_sources_has_the_same_points_and_cells(dims, rectilinear,
                                                                      dtype, seed, marks):
    # Asked for neither, the march writes only the points and the cells, also on
    # the careful path, whose cell rows look their points up among the edges.
    grid = daxpy.UniformGrid(dims=dims)
    if rectilinear:
        grid = daxpy.RectilinearGrid(*(np.cumsum(np.arange(1.0, d + 1)) for d in dims))
    rng = np.random.default_rng(seed)
    scalars = rng.standard_normal(grid.n_points).astype(dtype)
    value = float(scalars[0])
    where = rng.integers(0, grid.n_points, marks)
    scalars[where] = rng.choice([value, value, np.nan, np.inf], marks)
    whole = _compiled(grid, scalars, value)
    for count in (1, 2, 4):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(contour_cpu, "threads", lambda count=count: count)
            lean = get_worklet("contour").cpu_impl(grid.family)(
                grid, scalars, value=value, edges=False, sources=False)
        assert lean.lo is None and lean.hi is None and lean.t is None and lean.source == {}
        assert lean.n_points == whole.n_points
        assert lean.points.tobytes() == whole.points.tobytes()
        assert sorted(lean.cells) == sorted(whole.cells)
        for k, cells in whole.cells.items():
            assert lean.cells[k].tobytes() == cells.tobytes()
    kept = get_worklet("contour").cpu_impl(grid.family)(grid, scalars, value=value,
                                                        edges=False, sources=True)
    for k, source in whole.source.items():
        assert kept.source[k].tobytes() == source.tobytes()


def test_a_grid_the_march_does_not_place_keeps_its_edges():
    # A curvilinear grid's points are made from the edges after the march.
    grid = daxpy.CurvilinearGrid((5, 4, 3), np.random.default_rng(2).random((60, 3)))
    scalars = wavy_field(grid.dims)
    lean = get_worklet("contour").cpu_impl("curvilinear")(grid, scalars, value=0.0,
                                                          edges=False)
    _assert_same_cut(lean, _reference(grid, scalars, 0.0))


def _surface(grid, monkeypatch, numpy, **options):
    with monkeypatch.context() as patch:
        if numpy:  # the compiled implementation unavailable: its NumPy fallback runs
            patch.setattr(compiled, "load", lambda self: None)
        return Contour("s", backend="cpu", **options)(grid)


@pytest.mark.parametrize("options", [
    {"values": [0.0]},
    {"values": [-0.5, 0.0, 0.25], "compute_normals": True},
    {"values": [0.0, 0.5], "merge_points": False, "compute_scalars": False},
    {"n_values": 4, "interpolate": ["w"]},
    {"values": [0.0, 0.3], "interpolate": False},
    {"values": [0.0], "interpolate": ["s"]},
    {"values": [0.0], "interpolate": ["c"], "compute_scalars": False},
])
@pytest.mark.parametrize("make", [
    lambda: daxpy.UniformGrid(dims=(13, 11, 9), spacing=(0.5, 1, 2)),
    lambda: daxpy.RectilinearGrid(np.cumsum(np.arange(1, 14.0)), np.arange(11.0) ** 1.5,
                                  np.linspace(0, 1, 9)),
    lambda: daxpy.UniformGrid(dims=(17, 1, 12)),
])
def test_the_filter_gives_the_numpy_surface(make, options, monkeypatch):
    grid = make()
    grid.point_data["s"] = wavy_field(grid.dims, np.float32)
    grid.point_data["w"] = np.arange(grid.n_points, dtype=np.int32)
    grid.cell_data["c"] = np.arange(grid.n_cells, dtype=np.float64)
    ours = _surface(grid, monkeypatch, False, **options)
    reference = _surface(grid, monkeypatch, True, **options)
    assert ours.n_points == reference.n_points and ours.n_points > 0
    assert ours.points().tobytes() == reference.points().tobytes()
    for kind in ("verts", "lines", "polys"):
        for a, b in zip(ours.cell_array(kind), reference.cell_array(kind)):
            assert np.array_equal(a, b), kind
    assert sorted(ours.point_data) == sorted(reference.point_data)
    for name, values in reference.point_data.items():
        assert ours.point_data[name].tobytes() == values.tobytes(), name
    for name, values in reference.cell_data.items():
        assert ours.cell_data[name].tobytes() == values.tobytes(), name


_FORKED = """
import os, numpy as np, daxpy
from daxpy.data.worklet import get_worklet
daxpy.configure_cpu(threads=2)
grid = daxpy.UniformGrid(dims=(30, 30, 30))
field = np.random.default_rng(0).random(grid.n_points)
contour = get_worklet("contour").cpu_impl("uniform")
before = contour(grid, field, value=0.5)
pid = os.fork()
if pid == 0:
    after = contour(grid, field, value=0.5)
    os._exit(0 if after.cells[3].tobytes() == before.cells[3].tobytes() else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_contours_on_threads_of_its_own():
    # The passes' thread pool was made in the parent: a child that used it would
    # wait forever on threads it does not have.
    child = subprocess.run([sys.executable, "-c", _FORKED], capture_output=True, text=True,
                           check=False, timeout=300, cwd=os.path.dirname(__file__))
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip().splitlines()[-1] == "0"
