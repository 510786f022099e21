"""No data may be lost on export: whatever ``to_vtk``, ``to_pyvista`` and ``write``
accept arrives exactly (values, and dtype as documented: native byte order,
float16 widened to float32), and whatever cannot arrive exactly is refused with
a daxpy error before anything is written: dtypes VTK lacks, field names a
format cannot carry, and dims VTK cannot count.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.errors import FieldError, InvalidDataSetError  # noqa: E402
from daxpy.io.interop import from_vtk, to_pyvista, to_vtk  # noqa: E402
from daxpy.io import read, write  # noqa: E402
from daxpy.io.vtk_export import VTK_INT_MAX, vtk_ready  # noqa: E402

from test_no_data_loss import FORMATS, folder_state, grid_of  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
FIELD_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                "float16", "float32", "float64"]
TARGETS = sorted(FORMATS) + ["to_vtk", "to_pyvista"]


def exported(dataset, target, folder):
    """``dataset`` after a trip through ``target`` (a file format or an interop call)."""
    if target == "to_vtk":
        return from_vtk(to_vtk(dataset))
    if target == "to_pyvista":
        return from_vtk(to_pyvista(dataset))
    path = folder / f"out{target}"
    write(dataset, path)
    return read(path)


def expected_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype.kind == "f" and dtype.itemsize == 2 \
        else dtype.newbyteorder("=")


@st.composite
def field_values(draw, n):
    """Values of any exported dtype, byte order and memory layout."""
    dtype = np.dtype(draw(st.sampled_from(FIELD_DTYPES))).newbyteorder(
        draw(st.sampled_from("<>")))
    ncomp = draw(st.sampled_from([None, 1, 3]))
    shape = (n,) if ncomp is None else (n, ncomp)
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.uniform(-1, 1, size=(2,) + shape) * float(info.max) / 2
    values = values.astype(dtype)[draw(st.integers(0, 1))]  # half of a (2, ...) block
    layout = draw(st.sampled_from(["contiguous", "strided", "fortran"]))
    if layout == "strided":
        values = np.repeat(values, 2, axis=0)[::2]
    elif layout == "fortran":
        values = np.asfortranarray(values)
    return values


@pytest.mark.parametrize("target", TARGETS)
def test_fields_arrive_exactly(target, tmp_path):
    @SETTINGS
    @given(family_grid=st.sampled_from(["uniform", "rectilinear", "curvilinear",
                                        "unstructured"]), data=st.data())
    def check(family_grid, data):
        family = FORMATS.get(target, family_grid)
        grid = grid_of(family)
        point = data.draw(field_values(grid.n_points))
        cell = data.draw(field_values(grid.n_cells))
        grid.point_data["p"], grid.cell_data["c"] = point, cell
        back = exported(grid, target, tmp_path)
        for values, got in ((point, back.point_data["p"]), (cell, back.cell_data["c"])):
            assert got.dtype == expected_dtype(values.dtype)
            # VTK has no shape (n, 1): one component comes back as (n,).
            np.testing.assert_array_equal(got.reshape(len(got), -1),
                                          values.astype(got.dtype).reshape(len(values), -1))
        assert grid.point_data["p"] is point  # the caller's array is left as it was

    check()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("order", ["<", ">"])
def test_geometry_and_topology_arrive_exactly(target, order, tmp_path):
    uniform = daxpy.UniformGrid(dims=(3, 3, 2))
    points = uniform.points().astype(f"{order}f8") * 1.5 + 0.25
    cells = np.array([0, 1, 3, 9, 1, 4, 3, 10])
    grids = {
        "rectilinear": daxpy.RectilinearGrid(np.array([0, 1.5, 4], f"{order}f8"),
                                             np.array([2, 3], f"{order}i2")),
        "curvilinear": daxpy.CurvilinearGrid(uniform.dims, np.asfortranarray(points)),
        "unstructured": daxpy.UnstructuredGrid(
            points, cells.astype(f"{order}i4"), np.array([0, 4, 8], f"{order}i8"),
            np.array([10, 10], np.uint8)),
    }
    for family, grid in grids.items():
        if target in FORMATS and FORMATS[target] != family and target != ".vtk":
            continue
        back = exported(grid, target, tmp_path)
        np.testing.assert_array_equal(back.points(), np.asarray(grid.points(), float))
        if family == "unstructured":
            assert back.connectivity.tolist() == cells.tolist()
            assert back.offsets.tolist() == [0, 4, 8]


def test_big_endian_example_from_the_issue(tmp_path):
    grid = daxpy.UniformGrid(dims=(3,), point_data={"t": np.array([1.0, 2.0, 3.0], ">f8")})
    assert to_vtk(grid).GetPointData().GetArray("t").GetValue(0) == 1.0
    assert to_pyvista(grid).point_data["t"].tolist() == [1.0, 2.0, 3.0]
    write(grid, tmp_path / "t.vti")
    assert read(tmp_path / "t.vti").point_data["t"].tolist() == [1.0, 2.0, 3.0]


def test_native_arrays_stay_zero_copy():
    values = np.arange(8.0)
    grid = daxpy.UniformGrid(dims=(2, 2, 2), point_data={"t": values})
    assert np.shares_memory(to_pyvista(grid).point_data["t"], values)
    assert vtk_ready(values, "t", FieldError) is values


@pytest.mark.parametrize("dtype", ["longdouble", "complex64", "complex128", "bool",
                                   "datetime64[s]", "object", "U3", "i4,f8"])
def test_dtypes_vtk_lacks_are_refused_by_name(dtype):
    if np.dtype(dtype) == np.dtype(np.float64):
        pytest.skip("long double is float64 on this platform")
    with pytest.raises(FieldError, match=r"point field 'q' has dtype .*VTK cannot hold; "):
        vtk_ready(np.zeros(2, dtype), "point field 'q'", FieldError)


@pytest.mark.parametrize("target", TARGETS)
def test_long_double_field_is_refused_before_writing(target, tmp_path):
    if np.dtype(np.longdouble) == np.dtype(np.float64):
        pytest.skip("long double is float64 on this platform")
    grid = grid_of(FORMATS.get(target, "uniform"))
    grid.cell_data["ld"] = np.ones(grid.n_cells, np.longdouble)
    with pytest.raises(FieldError, match=r"cell field 'ld' of .* float128.*cast it to float64"):
        exported(grid, target, tmp_path)
    assert os.listdir(tmp_path) == []


SPECIAL_NAMES = ['a"b', "a<b", "a&b", "a>b", "x\ny", "x\ty", "a\rb", "x" * 300, "x" * 255,
                 "é" * 43, "NULL_ARRAY", "METADATA", "metadataX", "a{b", "{}", "{0}", "%",
                 "a%20b", " lead", "trail ", "\x01", "\x7f", "\ufffe", "\ud800", "a\x00b",
                 "😀", "日本", "vtkGhostType", "vtkValidPointMask", "POINT_DATA", "#"]


@st.composite
def field_names(draw):
    any_char = st.characters(codec=None, exclude_categories=())
    return draw(st.one_of(st.sampled_from(SPECIAL_NAMES),
                          st.text(any_char, min_size=1, max_size=40),
                          st.text(st.sampled_from('ab %"<&{}\n\t\x00é😀'), min_size=1,
                                  max_size=300)))


@pytest.mark.parametrize("target", TARGETS)
def test_names_round_trip_or_are_refused_before_writing(target, tmp_path):
    old = grid_of(FORMATS.get(target, "uniform"), 9.0)
    if target in FORMATS:
        write(old, tmp_path / f"out{target}")
    before = folder_state(tmp_path)

    @SETTINGS
    @given(point_name=field_names(), cell_name=field_names())
    def check(point_name, cell_name):
        grid = grid_of(FORMATS.get(target, "uniform"))
        grid.point_data[point_name] = np.arange(grid.n_points, dtype=np.float32)
        grid.cell_data[cell_name] = np.arange(grid.n_cells, dtype=np.int16)
        try:
            back = exported(grid, target, tmp_path)
        except FieldError as err:
            assert repr(point_name) in str(err) or repr(cell_name) in str(err)
            assert folder_state(tmp_path) == before
            return
        assert set(back.point_data) == {"p", point_name}
        assert set(back.cell_data) == {"c", cell_name}
        np.testing.assert_array_equal(back.point_data[point_name], grid.point_data[point_name])
        np.testing.assert_array_equal(back.cell_data[cell_name], grid.cell_data[cell_name])
        if target in FORMATS:  # put the old file back for the next example
            write(old, tmp_path / f"out{target}")

    check()


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("n", [2**31, 2**31 + 7, 2**40])
def test_dims_vtk_cannot_count_are_refused(axis, n, tmp_path):
    dims = [1, 1, 1]
    dims[axis] = n
    grid = daxpy.UniformGrid(dims=tuple(dims))
    message = rf"{n} points along {'xyz'[axis]}; VTK holds at most {VTK_INT_MAX}"
    for export in (to_vtk, to_pyvista, lambda g: write(g, tmp_path / "big.vti")):
        with pytest.raises(InvalidDataSetError, match=message):
            export(grid)
    assert os.listdir(tmp_path) == []


def test_long_axis_exports_when_memory_allows():
    image = to_vtk(daxpy.UniformGrid(dims=(2**22, 1, 1)))
    assert image.GetDimensions() == (2**22, 1, 1)


LARGEST_DIMS = textwrap.dedent("""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))
    import daxpy
    from daxpy.errors import ResourceError
    from daxpy.io.interop import to_vtk
    try:
        to_vtk(daxpy.UniformGrid(dims=(1, 2**31 - 1, 1)))
    except ResourceError as err:
        print("refused:", err)
""")


def test_largest_countable_dims_are_refused_when_vtk_cannot_allocate():
    # VTK takes 16 bytes per point along an axis: 32 GiB here, past the 4 GiB limit.
    done = subprocess.run([sys.executable, "-c", LARGEST_DIMS], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: VTK's dataset for the 1x2147483647x1 uniform "
                                  "grid needs 34,359,738,384 bytes"), done.stdout
