"""The data model refuses what it cannot hold, with a daxpy error that says why.

Classes of input: structured dims (types, signs, products past int64), origins
and spacings (NaN, subnormal, huge, rounded away), rectilinear coordinates,
unstructured topology arrays of every integer dtype, broadcast (zero-stride)
arrays of 10^12 entries, and requests larger than the memory available.
Allocating cases run in a child process under an address-space limit, so a
crash or a huge allocation fails the test instead of killing pytest.
"""

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy import errors
from daxpy.data.celltypes import CELL_SHAPES, HEXAHEDRON, LINE, TETRA, TRIANGLE
from daxpy.filters import Gradient

FAST = settings(max_examples=50, deadline=None)
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
              np.uint64]
ODD_NUMBERS = st.one_of(
    st.integers(-(2 ** 70), 2 ** 70), st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.none(), st.text(max_size=3), st.just(np.float64("nan")),
    st.sampled_from([np.int64(-1), np.uint64(2 ** 64 - 1), np.int32(3), 2 ** 31, 2 ** 63]))


def _refused_or_built(build):
    """Call ``build``: a grid or a daxpy error, never a raw Python one."""
    try:
        return build()
    except errors.DaxpyError as err:
        assert isinstance(err, (errors.InvalidDataSetError, errors.ResourceError)), err
        assert str(err)
        return None


# -- structured dims ------------------------------------------------------------
@FAST
@given(st.lists(ODD_NUMBERS, min_size=0, max_size=4))
def test_any_dims_build_a_grid_or_raise_invalid_dataset(dims):
    grid = _refused_or_built(lambda: daxpy.UniformGrid(dims=dims))
    if grid is not None:
        assert all(type(d) is int and d >= 1 for d in grid.dims)
        assert type(grid.n_points) is int and grid.n_points == math.prod(grid.dims)
        assert grid.n_points <= 2 ** 63 - 1


@pytest.mark.parametrize("dims, words", [
    ((2 ** 31, 2 ** 31, 2 ** 31), ["make", "points", "int64"]),
    ((10 ** 7, 10 ** 7, 10 ** 7), ["int64"]),
    ((2, -3), ["along y", "-3", ">= 1"]),
    ((2, 2, 0), ["along z", "0"]),
    ((2.5, 2), ["integers", "along x", "2.5"]),
    ((float("nan"),), ["integers", "nan"]),
    ((True, 2), ["integers", "bool"]),
    ((1e300, 2), ["integers"]),
])
def test_bad_dims_are_named(dims, words):
    with pytest.raises(errors.InvalidDataSetError) as info:
        daxpy.UniformGrid(dims=dims, name="mesh")
    for word in ["mesh"] + words:
        assert word in str(info.value)


def test_axes_of_two_to_the_31_points_are_fine_and_counted_in_python_ints():
    grid = daxpy.UniformGrid(dims=(2 ** 31 + 1, 2 ** 31, 1))
    assert grid.n_points == (2 ** 31 + 1) * 2 ** 31
    assert grid.n_cells == 2 ** 31 * (2 ** 31 - 1)
    with pytest.raises(errors.ResourceError, match="bytes"):
        grid.points()
    with pytest.raises(errors.ResourceError, match="coordinates along x"):
        daxpy.UniformGrid(dims=(2 ** 40,)).axis_coordinates(0)


def test_curvilinear_dims_are_checked_before_the_points():
    with pytest.raises(errors.InvalidDataSetError, match="int64"):
        daxpy.CurvilinearGrid((2 ** 32,) * 3, np.zeros((8, 3)))


# -- spacing and coordinates -----------------------------------------------------
SPACINGS = st.one_of(st.floats(), st.floats(min_value=5e-324, max_value=1e-300),
                     st.floats(min_value=1e-40, max_value=1e-37),
                     st.floats(min_value=1e290, max_value=1.7e308), st.integers(-5, 10 ** 400))


def _constant_gradient_is_zero(grid):
    for dtype in (np.float32, np.float64):
        data = grid.with_fields(point_data={"c": np.full(grid.n_points, 3.5, dtype)})
        gradient = Gradient("c", "g", backend="cpu")(data).point_data["g"]
        assert np.all(gradient == 0), (grid, dtype, gradient)


@FAST
@given(st.lists(SPACINGS, min_size=3, max_size=3),
       st.lists(st.one_of(st.floats(), st.floats(-1e12, 1e12)), min_size=3, max_size=3))
def test_spacing_builds_a_grid_with_zero_constant_gradient_or_is_refused(spacing, origin):
    grid = _refused_or_built(lambda: daxpy.UniformGrid((3, 4, 2), origin, spacing))
    if grid is not None:
        assert all(math.isfinite(b) for b in grid.bounds())
        _constant_gradient_is_zero(grid)


@FAST
@given(st.lists(st.one_of(SPACINGS.filter(lambda v: not isinstance(v, int) or v < 1e300),
                          st.floats(min_value=1e-38, max_value=1e-30)),
                min_size=1, max_size=4), st.floats(-1e300, 1e300))
def test_rectilinear_steps_give_zero_constant_gradient_or_are_refused(steps, start):
    with np.errstate(all="ignore"):
        x = start + np.concatenate([[0.0], np.cumsum(np.array(steps, dtype=float))])
    grid = _refused_or_built(lambda: daxpy.RectilinearGrid(x, [0.0, 1.0]))
    if grid is not None:
        _constant_gradient_is_zero(grid)


@pytest.mark.parametrize("kwargs, words", [
    ({"spacing": (1e-310, 1, 1)}, ["spacing", "along x", "1e-310", "float32"]),
    ({"spacing": (1, 1e-39, 1)}, ["spacing", "along y", "float32"]),
    ({"spacing": (1, 1, 1e308)}, ["along z", "finite"]),
    ({"origin": (1e10, 0, 0), "spacing": (1e-7, 1, 1)}, ["along x", "ulps"]),
    ({"spacing": (float("nan"), 1, 1)}, ["spacing", "finite"]),
    ({"spacing": (10 ** 400, 1, 1)}, ["spacing", "float64"]),
])
def test_spacing_messages(kwargs, words):
    with pytest.raises(errors.InvalidDataSetError) as info:
        daxpy.UniformGrid((3, 3, 3), name="mesh", **kwargs)
    for word in ["mesh"] + words:
        assert word in str(info.value)


def test_smallest_float32_safe_spacing_still_builds():
    _constant_gradient_is_zero(daxpy.UniformGrid((3, 3, 3), spacing=(6e-39, 1, 1e300)))


def test_rectilinear_refusals_name_the_axis():
    for y, words in (([0, 1e-310], ["y coordinates", "1e-310"]),
                     ([-1e308, 1e308], ["y coordinates", "overflows"]),
                     (np.array([2 ** 63, 2 ** 63 + 1], np.uint64), ["y coordinates",
                                                                    "strictly increasing"])):
        with pytest.raises(errors.InvalidDataSetError) as info:
            daxpy.RectilinearGrid([0, 1], y, name="mesh")
        for word in ["mesh"] + words:
            assert word in str(info.value)


# -- unstructured topology of every integer dtype --------------------------------
def _problem(points, conn, offs, types):
    """The first problem of the arrays, in the grid's order of checks (or None)."""
    n_cells, conn_i, offs_i, types_i = len(types), [int(v) for v in conn], \
        [int(v) for v in offs], [int(v) for v in types]
    if len(offs_i) != n_cells + 1:
        return "n_cells + 1"
    if offs_i[0] != 0:
        return "must start at 0"
    if min(offs_i) < 0:
        return "must be >= 0"
    if max(offs_i) > len(conn_i):
        return "past the end of the connectivity"
    if any(b < a for a, b in zip(offs_i, offs_i[1:])):
        return "must not decrease"
    if offs_i[-1] != len(conn_i):
        return "last offset"
    if conn_i and (min(conn_i) < 0 or max(conn_i) >= len(points)):
        return "outside [0,"
    if any(t not in CELL_SHAPES for t in types_i):
        return "unsupported VTK cell type"
    for c, t in enumerate(types_i):
        if offs_i[c + 1] - offs_i[c] != CELL_SHAPES[t].n_corners:
            return f"cell {c} of"
    for c in range(n_cells):
        ids = conn_i[offs_i[c]:offs_i[c + 1]]
        if len(set(ids)) != len(ids):
            return "repeats a point id"
    return None


def _typed(dtype):
    info = np.iinfo(dtype)
    values = st.one_of(st.integers(-2, 9), st.integers(max(info.min, -40), min(info.max, 40)),
                       st.sampled_from([info.min, info.max]))
    return st.lists(values.filter(lambda v: info.min <= v <= info.max), max_size=9).map(
        lambda v: np.array(v, dtype=dtype))


@st.composite
def topologies(draw):
    """Mostly valid cells, then maybe one entry of one array replaced."""
    n_cells = draw(st.integers(0, 4))
    shapes = [draw(st.sampled_from([LINE, TRIANGLE, TETRA, 8, 11])) for _ in range(n_cells)]
    conn = [p for t in shapes for p in draw(st.permutations(range(8)))[:CELL_SHAPES[t].n_corners]]
    offs = np.concatenate([[0], np.cumsum([CELL_SHAPES[t].n_corners for t in shapes])])
    arrays = [np.array(conn, np.int64), offs.astype(np.int64), np.array(shapes, np.int64)]
    dtypes = [draw(st.sampled_from(INT_DTYPES)) for _ in range(3)]
    if draw(st.booleans()):
        which = draw(st.integers(0, 2))
        arrays[which] = draw(_typed(dtypes[which]))
    typed = []
    for values, dtype in zip(arrays, dtypes):
        info = np.iinfo(dtype)
        fits = all(info.min <= int(v) <= info.max for v in values)
        typed.append(np.array(values).astype(dtype) if fits else values)
    return typed


@settings(max_examples=60, deadline=None)
@given(topologies())
def test_every_integer_topology_builds_or_names_its_true_problem(arrays):
    points = np.random.default_rng(0).random((8, 3))
    expected = _problem(points, *arrays)
    try:
        grid = daxpy.UnstructuredGrid(points, *arrays, name="mesh")
    except errors.InvalidDataSetError as err:
        assert expected is not None and expected in str(err), (expected, str(err))
        assert "mesh" in str(err)
        return
    assert expected is None, expected
    assert grid.n_cells == len(arrays[2])
    for block in grid.cell_blocks().values():
        assert block.corners.min(initial=0) >= 0 and block.corners.max(initial=0) < 8


@pytest.mark.parametrize("conn, offs, types, message", [
    ([0, 1, 2, 3], np.array([0, 2 ** 64 - 1], np.uint64), [TETRA],
     "offsets of mesh hold 18446744073709551615 at position 1, past the end of the "
     "connectivity (4 entries)"),
    ([0, 1, 2, 3], [0, 3, 2, 4], [LINE] * 3,
     "offsets of mesh decrease at position 2 (from 3 to 2); they must not decrease"),
    ([0, 1, 2, 3], [0, 4], [TETRA, TETRA],
     "offsets of mesh must have n_cells + 1 = 3 entries (one more than cell_types), got 2"),
    (np.array([0, 1, 2, 2 ** 64 - 1], np.uint64), [0, 4], [TETRA],
     "connectivity of mesh holds point id 18446744073709551615, outside [0, 4)"),
    ([0, 1, 2, 3], [0, 4], np.array([-3], np.int8),
     "cell_types of mesh holds unsupported VTK cell type -3 at cell 0; supported: "
     "[1, 3, 5, 8, 9, 10, 11, 12, 13, 14]"),
    ([0, 1, 2], [0, 3], [TETRA], "cell 0 of mesh is a tet with 3 points; expected 4"),
])
def test_exact_topology_messages(conn, offs, types, message):
    with pytest.raises(errors.InvalidDataSetError) as info:
        daxpy.UnstructuredGrid(np.eye(4, 3), conn, offs, types, name="mesh")
    assert str(info.value) == message


def test_uint64_topology_that_fits_builds_as_int64():
    u = np.uint64
    grid = daxpy.UnstructuredGrid(np.eye(4, 3), np.arange(4, dtype=u), np.array([0, 4], u),
                                  np.array([TETRA], u))
    assert grid.connectivity.dtype == grid.offsets.dtype == np.int64
    assert grid.cell_blocks()["tet"].corners.tolist() == [[0, 1, 2, 3]]


# -- broadcast arrays and memory -------------------------------------------------
def _in_child(code: str, limit_gib: int = 3) -> subprocess.CompletedProcess:
    """Run ``code`` in a child limited to ``limit_gib`` GiB of address space."""
    script = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({limit_gib} << 30, {limit_gib} << 30))
    """) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)


def test_broadcast_topology_arrays_are_refused_before_allocating():
    result = _in_child("""
        import numpy as np, daxpy
        from daxpy.errors import InvalidDataSetError
        huge = lambda value: np.broadcast_to(np.int64(value), (10 ** 12,))
        cases = {
            "offsets": (np.eye(4, 3), [0, 1, 2, 3], huge(0), [10]),
            "offsets and types": (np.eye(4, 3), [0, 1, 2, 3], huge(0), huge(10)),
            "connectivity": (np.eye(4, 3), huge(0), [0, 4], [10]),
            "points": (np.broadcast_to(np.zeros(3), (10 ** 11, 3)), [0, 1, 2, 3], [0, 4], [10]),
        }
        for label, arrays in cases.items():
            try:
                daxpy.UnstructuredGrid(*arrays)
            except InvalidDataSetError as err:
                assert "broadcast view (stride 0)" in str(err), (label, err)
            else:
                raise AssertionError(label)
        for make in (lambda: daxpy.RectilinearGrid(np.broadcast_to(1.0, (10 ** 11,))),
                     lambda: daxpy.CurvilinearGrid(
                         (10 ** 4, 10 ** 4, 10 ** 3), np.broadcast_to(np.zeros(3), (10 ** 11, 3)))):
            try:
                make()
            except InvalidDataSetError as err:
                assert "broadcast view" in str(err), err
            else:
                raise AssertionError("accepted")
        print("ok")
    """)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


def test_small_broadcast_arrays_are_copied_and_work():
    types = np.broadcast_to(np.uint8(TETRA), (2,))
    grid = daxpy.UnstructuredGrid(np.eye(5, 3), [0, 1, 2, 3, 1, 2, 3, 4], [0, 4, 8], types)
    assert grid.cell_types.strides == (1,) and grid.n_cells == 2


def test_checks_that_need_more_memory_than_available_raise_resource_error(monkeypatch):
    import daxpy.data.memory_budget as budget

    points = np.random.default_rng(1).random((9, 3))
    blocks = {TETRA: [[0, 1, 2, 3]] * 50, HEXAHEDRON: [list(range(1, 9))] * 50}
    monkeypatch.setattr(budget, "available_bytes", lambda: (1000, "a test limit"))
    with pytest.raises(errors.ResourceError) as info:
        daxpy.UnstructuredGrid.from_blocks(points, blocks, name="mesh")
    assert "mesh" in str(info.value) and "bytes" in str(info.value)
    assert "a test limit" in str(info.value)
