"""The compiled CPU kernels: against the NumPy reference, across thread counts, the NaN rule.

Every worklet that declares a compiled CPU implementation is found through the
registry, so a new kernel is tested here without naming it.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import daxpy
from daxpy.data.worklet import ANY_FAMILY, GENERATING_KIND, get_worklet, registered_worklets
from daxpy.errors import ArgumentError
from daxpy.worklets._numba import threads

from four_threads import four_thread_report
from strategies import (_SOLIDS, _axis, _lattice_hexes, _lattice_points, _solid_cells,
                        field_arrays, polydata_of_every_kind, structured_grids,
                        unstructured_grids)

# Where the compiled kernel's arithmetic is the NumPy one in the same order.
# The unstructured point gradient sums each point's cells in float64 in cell
# order; NumPy scatters them in its output dtype: equal within rounding.
NOT_BITWISE = {("point_gradient", "unstructured")}

# FieldMap's expression avoids transcendental functions: those are LLVM's in the
# compiled kernel and NumPy's in the reference (equal within rounding, tested in
# test_field_map.py), the rest is the same arithmetic.
PARAMS = {"bias_add": lambda c: {"bias": np.arange(1.0, c + 1)},
          "field_map": lambda c: {"expression": "where(t > 0.5, t * 2, t / 3) + t % 0.7 - -t"}}


def compiled_cases():
    """(worklet, family) for every compiled implementation of a field worklet
    (topology-generating ones return geometry: tests/test_contour_cpu.py)."""
    return [(w, family) for name, w in sorted(registered_worklets().items())
            if w.kind != GENERATING_KIND for family in w.cpu]


def _grid_for(family, shapes=_SOLIDS):
    """Every solid shape (every kind of PolyData cell), and enough cells and
    points for several blocks per thread."""
    rng = np.random.default_rng(5)
    if family == "rectilinear":
        return daxpy.RectilinearGrid(*[_axis(rng, n) for n in (14, 13, 12)])
    if family == "curvilinear":
        return daxpy.CurvilinearGrid((14, 13, 12), _lattice_points(rng, (14, 13, 12), 0.1))
    if family not in ("unstructured", "polydata", ANY_FAMILY):
        return daxpy.UniformGrid(dims=(14, 13, 12))
    dims = (12, 11, 10)
    points = _lattice_points(rng, dims, 0.04)
    if family == "polydata":
        return polydata_of_every_kind(rng, points, 1500)
    blocks, extra = _solid_cells(rng, points, _lattice_hexes(dims), shapes)
    merged = {s: np.concatenate(b) for s, b in blocks.items() if b}
    return daxpy.UnstructuredGrid.from_blocks(np.concatenate([points] + extra), merged)


def _assert_matches(worklet, family, ours, reference, rtol=1e-12):
    assert ours.dtype == reference.dtype and ours.shape == reference.shape
    if (worklet.name, family) in NOT_BITWISE:
        scale = np.abs(reference[np.isfinite(reference)]).max(initial=0.0)
        np.testing.assert_allclose(ours, reference, rtol=rtol, atol=rtol * scale)
    else:
        np.testing.assert_array_equal(ours, reference)


def _inputs(worklet, grid, values_per_item):
    n = grid.n_cells if worklet.input_association == "cells" else grid.n_points
    return values_per_item(n)


def _run(worklet, family, grid, values, numpy=False):
    impl = worklet.numpy_impl(family) if numpy else worklet.cpu_impl(family)
    c = values.shape[1] if values.ndim == 2 else 1
    with np.errstate(invalid="ignore"):  # the NumPy reference on NaN and Inf
        return impl(grid, values, **PARAMS.get(worklet.name, lambda c: {})(c))


def _field(n, c=3, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, (n, c)).astype(dtype)


@pytest.mark.parametrize("worklet,family", compiled_cases(),
                         ids=lambda x: getattr(x, "name", x))
def test_thread_counts_give_the_same_bits(worklet, family):
    grid = _grid_for(family)
    values = _inputs(worklet, grid, _field)
    results = []
    try:
        for count in (1, 2):
            daxpy.configure_cpu(threads=count)
            results.append(_run(worklet, family, grid, values))
    finally:
        daxpy.configure_cpu(threads=None)
    assert results[0].tobytes() == results[1].tobytes()


@pytest.mark.parametrize("worklet,family", compiled_cases(),
                         ids=lambda x: getattr(x, "name", x))
def test_compiled_matches_numpy_on_every_shape(worklet, family):
    grid = _grid_for(family)
    values = _inputs(worklet, grid, _field)
    ours, reference = _run(worklet, family, grid, values), _run(worklet, family, grid, values,
                                                                numpy=True)
    _assert_matches(worklet, family, ours, reference)


@pytest.mark.parametrize("worklet,family", compiled_cases(),
                         ids=lambda x: getattr(x, "name", x))
def test_nan_rule_holds(worklet, family):
    grid = _grid_for(family)
    values = _inputs(worklet, grid, lambda n: _field(n, c=2))
    values[3, 1], values[5, 0] = np.nan, np.inf
    ours, reference = _run(worklet, family, grid, values), _run(worklet, family, grid, values,
                                                                numpy=True)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(reference))
    assert np.isnan(ours).any()
    _assert_matches(worklet, family, ours, reference)


@pytest.mark.parametrize("worklet,family", compiled_cases(),
                         ids=lambda x: getattr(x, "name", x))
def test_other_dtypes_run_the_numpy_reference(worklet, family):
    grid = _grid_for(family)
    values = _inputs(worklet, grid, lambda n: np.arange(n, dtype=np.int16) % 7)
    ours, reference = _run(worklet, family, grid, values), _run(worklet, family, grid, values,
                                                                numpy=True)
    _assert_matches(worklet, family, ours, reference)


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_unstructured_kernels_match_numpy(data):
    grid = data.draw(unstructured_grids(max_side=3))
    cases = [(w, f) for w, f in compiled_cases() if f in ("unstructured", ANY_FAMILY)]
    worklet, family = data.draw(st.sampled_from(cases), label="worklet")
    n = grid.n_cells if worklet.input_association == "cells" else grid.n_points
    values = data.draw(field_arrays(n))
    ours, reference = _run(worklet, family, grid, values), _run(worklet, family, grid, values,
                                                                numpy=True)
    _assert_matches(worklet, family, ours, reference,
                    rtol=1e-5 if values.dtype == np.float32 else 1e-12)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_structured_kernels_match_numpy_bitwise(data):
    grid = data.draw(structured_grids(max_side=7))
    cases = [(w, f) for w, f in compiled_cases() if f == grid.family]
    assert cases, f"no compiled kernel for {grid.family}"
    worklet, family = data.draw(st.sampled_from(cases), label="worklet")
    n = grid.n_cells if worklet.input_association == "cells" else grid.n_points
    values = data.draw(field_arrays(n))
    ours, reference = _run(worklet, family, grid, values), _run(worklet, family, grid, values,
                                                                numpy=True)
    np.testing.assert_array_equal(ours, reference)


@pytest.mark.parametrize("bad", [0, -2, True, 1.5, "2"])
def test_configure_cpu_rejects_bad_thread_counts(bad):
    with pytest.raises(ArgumentError, match="threads"):
        daxpy.configure_cpu(threads=bad)


def test_environment_sets_and_checks_the_thread_count(monkeypatch):
    monkeypatch.setenv("DAXPY_CPU_THREADS", "1")
    assert threads() == 1
    monkeypatch.setenv("DAXPY_CPU_THREADS", "many")
    with pytest.raises(ArgumentError, match="DAXPY_CPU_THREADS"):
        threads()


_FOUR_THREADS = """
import json, numpy as np, daxpy
from daxpy.worklets._numba import threads
from test_cpu_kernels import _grid_for
from daxpy.data.worklet import get_worklet
grid = _grid_for("unstructured")
values = np.random.default_rng(0).uniform(-2, 2, (grid.n_points, 3))
out = get_worklet("point_gradient").cpu_impl("unstructured")(grid, values)
print(json.dumps({"threads": threads(), "bytes": out.tobytes().hex()}))
"""


def test_four_threads_give_the_same_bits():
    # Numba's pool size is fixed per process: a child gets 4 threads.
    report = four_thread_report(_FOUR_THREADS)
    grid = _grid_for("unstructured")
    values = np.random.default_rng(0).uniform(-2, 2, (grid.n_points, 3))
    daxpy.configure_cpu(threads=1)
    try:
        from daxpy.data.worklet import get_worklet
        ours = get_worklet("point_gradient").cpu_impl("unstructured")(grid, values)
    finally:
        daxpy.configure_cpu(threads=None)
    assert report["threads"] == 4
    assert ours.tobytes().hex() == report["bytes"]


_CHANGED_IDS = """
import numpy as np, daxpy
from daxpy import errors
from daxpy.data.worklet import registered_worklets
from daxpy.data.celltypes import HEXAHEDRON
from daxpy.engine.dispatch import execute
from test_cpu_kernels import PARAMS, _grid_for
names = [(w, f) for _, w in sorted(registered_worklets().items()) for f in w.cpu
         if f == "unstructured"]
for worklet, family in names:
    # One shape: its cells are views of the connectivity, which the test changes.
    grid = _grid_for("unstructured", shapes=(HEXAHEDRON,))
    conn = np.array(grid.connectivity)
    grid = daxpy.UnstructuredGrid(grid.points(), conn, grid.offsets, grid.cell_types)
    where = worklet.input_association
    values = np.ones((grid.n_cells if where == "cells" else grid.n_points, 2))
    conn[conn.size // 2 + 3] = 10 ** 9  # where the sampled fingerprint does not look
    try:
        execute(worklet.name, grid, values, where, backend="cpu",
                **PARAMS.get(worklet.name, lambda c: {})(2))
    except errors.InvalidDataSetError as err:
        assert "point id 1000000000" in str(err), err
        print(worklet.name, type(err).__name__)
"""


def test_ids_changed_after_construction_never_crash():
    # A kernel that read such an id would crash the process: the run is a child's.
    child = subprocess.run([sys.executable, "-c", _CHANGED_IDS], capture_output=True,
                           text=True, cwd=os.path.dirname(__file__), timeout=300)
    assert child.returncode == 0, child.stderr
    refused = dict(line.split() for line in child.stdout.strip().splitlines())
    # Every compiled kernel of unstructured grids, topology-generating ones too.
    unstructured = {name for name, w in registered_worklets().items() if "unstructured" in w.cpu}
    assert set(refused) == unstructured




def _hexahedra_by_every_path(grid, values):
    """The point gradient of a grid of hexahedra by the generic kernel (every
    shape's), and by the hexahedra kernel's two walks, each over every point."""
    from daxpy.data.arrays import native_order
    from daxpy.worklets import _hex_gradient_cpu as hexes, gradient_cpu as kernels
    from daxpy.worklets._cell_gradients import _corner_tables
    from daxpy.worklets._derivatives_cpu import ALONE, sparse
    from daxpy.worklets._numba import count_type
    from daxpy.worklets._links_cpu import block_links

    points, table, check = kernels._inputs(grid, values)
    block = grid.cell_blocks()["hex"]
    starts, cells = block_links(grid, block)
    corners, n = native_order(block.corners), grid.n_points
    finish = (np.zeros(1, np.int64), np.zeros((1, 1)))
    outs = [np.empty((n, 3 * table.shape[1]), table.dtype) for _ in range(3)]
    bad = [kernels._corner_kernel(points, table, corners, starts, cells,
                                  sparse(np.stack(_corner_tables("hex"))), 3, check, *finish,
                                  outs[0], ALONE),
           # Walked, however spread the cells are.
           hexes._walk_cells(points, table, corners, starts, cells, check, *finish, outs[1],
                             ALONE, 0, n, 8 * grid.n_cells + 8, count_type(table.shape[1])),
           hexes._hex_points(points, table, corners, starts, cells, check, *finish, outs[2],
                             ALONE, 0, n)]
    assert bad == [0, 0, 0]
    return outs


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_hexahedra_kernel_gives_the_generic_kernels_bits(data):
    from daxpy.data.celltypes import HEXAHEDRON

    grid = data.draw(unstructured_grids(shapes=(HEXAHEDRON,), max_side=5))
    hexes = np.array(grid.cell_blocks()["hex"].corners)
    if data.draw(st.booleans(), label="shuffled cells"):
        hexes = hexes[np.random.default_rng(data.draw(st.integers(0, 99))).permutation(len(hexes))]
    grid = daxpy.UnstructuredGrid.from_blocks(grid.points(), {HEXAHEDRON: hexes})
    values = data.draw(field_arrays(grid.n_points))
    if data.draw(st.booleans(), label="non-finite"):
        values.reshape(grid.n_points, -1)[grid.n_points // 2, 0] = np.inf
    ours = get_worklet("point_gradient").cpu_impl("unstructured")(grid, values)
    for path in _hexahedra_by_every_path(grid, values):
        assert ours.tobytes() == path.astype(ours.dtype).reshape(ours.shape).tobytes()


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_hexahedra_cell_gradient_gives_the_generic_kernels_bits(data):
    from daxpy.data.celltypes import HEXAHEDRON
    from daxpy.worklets import gradient_cpu
    from daxpy.worklets._cell_gradients import _centre_table
    from daxpy.worklets._derivatives_cpu import sparse
    from daxpy.worklets.point_to_cell import corner_rows

    grid = data.draw(unstructured_grids(shapes=(HEXAHEDRON,), max_side=5))
    values = data.draw(field_arrays(grid.n_points))
    if data.draw(st.booleans(), label="non-finite"):
        values.reshape(grid.n_points, -1)[grid.n_points // 2, 0] = np.nan
    ours = get_worklet("cell_gradient").cpu_impl("unstructured")(grid, values)
    points, table, check = gradient_cpu._inputs(grid, values)
    block = grid.cell_blocks()["hex"]
    generic = np.empty_like(ours).reshape(grid.n_cells, -1)
    assert gradient_cpu._centre_kernel(points, table, corner_rows(grid, block).T,
                                       block.cell_ids, sparse(_centre_table("hex")[None]), 3,
                                       check, generic) == 0
    assert ours.tobytes() == generic.tobytes()


@settings(max_examples=30, deadline=None)
@given(dims=st.tuples(st.integers(1, 9), st.integers(1, 40), st.integers(1, 9)),
       components=st.integers(1, 3), tasks=st.integers(1, 4), data=st.data())
def test_structured_cell_to_point_tiles_give_the_array_programs_bits(dims, components, tasks,
                                                                   data):
    # Rows in tiles (averaging_structured_cpu.TILE_ROWS): grids with fewer rows than a
    # tile, a multiple of it and between, on runs of planes of any length.
    from daxpy.worklets import averaging_structured_cpu as compiled
    from daxpy.worklets.cell_to_point import cell_to_point_structured as reference

    grid = daxpy.UniformGrid(dims=dims)
    values = data.draw(field_arrays(grid.n_cells, components))
    table = values.reshape(grid.n_cells, -1)
    out = np.empty((grid.n_points, table.shape[1]), values.dtype)
    if grid.cell_axes:
        compiled._points_from_cells(table, *dims, -(-dims[2] // tasks), out)
    else:
        out[:] = table
    assert out.reshape(reference(grid, values).shape).tobytes() == reference(grid,
                                                                              values).tobytes()
