"""``mesh.daxpy``: side by side with PyVista's own filters, on PyVista's shipped
example files and on random grids; shared arrays, refusals, the entry point."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pv = pytest.importorskip("pyvista")
from pyvista import examples  # noqa: E402

import daxpy.accessor  # noqa: E402,F401  (registers mesh.daxpy)
from daxpy.errors import ArgumentError, FieldError  # noqa: E402

from strategies import field_arrays, structured_grids, unstructured_grids  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _tolerance(values):
    rtol = 1e-4 if np.asarray(values).dtype == np.float32 else 1e-9
    scale = float(np.abs(values).max()) if np.size(values) else 1.0
    return {"rtol": rtol, "atol": rtol * max(scale, 1.0)}


def assert_same_mesh(ours, theirs):
    """Same type, geometry and arrays (names, associations, values) as PyVista's result."""
    assert type(ours) is type(theirs)
    assert ours.n_points == theirs.n_points and ours.n_cells == theirs.n_cells
    np.testing.assert_array_equal(ours.points, theirs.points)
    for association in ("point_data", "cell_data"):
        mine, vtks = getattr(ours, association), getattr(theirs, association)
        assert sorted(mine.keys()) == sorted(vtks.keys()), association
        for name in vtks.keys():
            expected = np.asarray(vtks[name])
            np.testing.assert_allclose(np.asarray(mine[name], dtype=np.float64),
                                       expected.astype(np.float64),
                                       **_tolerance(expected), err_msg=name)
    assert ours.active_scalars_name == theirs.active_scalars_name


def _with_vectors(mesh):
    """``mesh`` with a smooth 3-component point array (for the derived quantities)."""
    mesh = mesh.copy()
    x, y, z = (mesh.points - mesh.center).T
    mesh.point_data["velocity"] = np.column_stack([-y + x * z, x + y * y, z * x - y])
    return mesh


SHIPPED = {  # the example files PyVista ships (no download), and their arrays
    "uniform": (examples.load_uniform, "Spatial Point Data"),
    "rectilinear": (examples.load_rectilinear, None),
    "hexbeam": (examples.load_hexbeam, "sample_point_scalars"),
    "structured": (examples.load_structured, None),
}


def _shipped(key):
    load, scalars = SHIPPED[key]
    mesh = _with_vectors(load())
    if scalars is None:  # files without a point array: differentiate a smooth one
        mesh.point_data["height"] = np.sin(mesh.points[:, 0]) * mesh.points[:, 1]
        scalars = "height"
    if not mesh.cell_data.keys():
        mesh.cell_data["cell_ids"] = np.arange(mesh.n_cells, dtype=np.float64)
    return mesh, scalars


@pytest.mark.parametrize("key", sorted(SHIPPED))
def test_derivatives_match_pyvista_on_shipped_examples(key):
    mesh, scalars = _shipped(key)
    assert_same_mesh(mesh.daxpy.compute_derivative(scalars=scalars, backend="cpu"),
                     mesh.compute_derivative(scalars=scalars))
    options = {"gradient": "g", "divergence": True, "vorticity": "w", "qcriterion": True}
    assert_same_mesh(mesh.daxpy.compute_derivative("velocity", **options),
                     mesh.compute_derivative("velocity", **options))


@pytest.mark.parametrize("key", sorted(SHIPPED))
@pytest.mark.parametrize("keep", [False, True])
def test_averages_match_pyvista_on_shipped_examples(key, keep):
    mesh, _ = _shipped(key)
    assert_same_mesh(mesh.daxpy.point_data_to_cell_data(pass_point_data=keep),
                     mesh.point_data_to_cell_data(pass_point_data=keep))
    assert_same_mesh(mesh.daxpy.cell_data_to_point_data(pass_cell_data=keep),
                     mesh.cell_data_to_point_data(pass_cell_data=keep))


@st.composite
def meshes(draw):
    """A random PyVista grid of any family daxpy reads, with a point and a cell array
    (the cell array shares the point array's name half the time)."""
    grid = draw(st.one_of(structured_grids(), unstructured_grids(lower_dimensional=False)))
    mesh = grid.to_pyvista()
    mesh.point_data["p"] = draw(field_arrays(grid.n_points))
    cell_name = draw(st.sampled_from(["c", "p"]))
    mesh.cell_data[cell_name] = draw(field_arrays(grid.n_cells, ncomp=1))
    mesh.set_active_scalars("p", preference="point")
    return mesh


@settings(max_examples=40)
@given(meshes())
def test_random_grids_match_pyvista(mesh):
    assert_same_mesh(mesh.daxpy.point_data_to_cell_data(), mesh.point_data_to_cell_data())
    assert_same_mesh(mesh.daxpy.cell_data_to_point_data(), mesh.cell_data_to_point_data())
    assert_same_mesh(mesh.daxpy.compute_derivative(), mesh.compute_derivative())
    assert_same_mesh(mesh.daxpy.compute_derivative(scalars="c" if "c" in mesh.cell_data else "p",
                                                   preference="cell"),
                     mesh.compute_derivative(scalars="c" if "c" in mesh.cell_data else "p",
                                             preference="cell"))


def test_results_share_the_input_arrays_and_leave_the_input_as_it_was():
    mesh, scalars = _shipped("hexbeam")
    before = {name: np.array(mesh[name]) for name in mesh.array_names}
    out = mesh.daxpy.compute_derivative(scalars=scalars)
    for name in mesh.point_data.keys():
        assert np.shares_memory(out.point_data[name], mesh.point_data[name])
    converted = mesh.daxpy.point_data_to_cell_data()
    assert not converted.point_data.keys()
    assert sorted(mesh.array_names) == sorted(before)
    for name, values in before.items():
        np.testing.assert_array_equal(mesh[name], values)


def test_a_cell_arrays_derivative_is_written_to_the_cells_as_pyvistas():
    mesh, _ = _shipped("uniform")
    assert_same_mesh(mesh.daxpy.compute_derivative(scalars="Spatial Cell Data"),
                     mesh.compute_derivative(scalars="Spatial Cell Data"))


def test_a_surface_derivative_is_pyvistas():
    sphere = pv.Sphere()
    ours = sphere.daxpy.compute_derivative(scalars="Normals", vorticity=True, backend="cpu")
    theirs = sphere.compute_derivative(scalars="Normals", vorticity=True)
    assert isinstance(ours, pv.PolyData)
    for name in ("gradient", "vorticity"):
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-6, atol=1e-6)


def test_refusals():
    mesh, _ = _shipped("uniform")
    with pytest.raises(ArgumentError, match="must set at least one of"):
        mesh.daxpy.compute_derivative(gradient=False)
    with pytest.raises(ArgumentError, match="categorical=True"):
        mesh.daxpy.point_data_to_cell_data(categorical=True)
    with pytest.raises(FieldError, match="3-component"):
        mesh.daxpy.compute_derivative(scalars="Spatial Point Data", vorticity=True)
    with pytest.raises(ArgumentError, match="polys of 5 points"):
        pentagon = pv.PolyData(np.eye(5, 3), faces=[5, 0, 1, 2, 3, 4])
        pentagon.point_data["t"] = np.arange(5.0)
        pentagon.daxpy.compute_derivative(scalars="t", backend="cpu")
    with pytest.raises(ArgumentError, match="got vtkTable"):
        _method_of(pv.Table(), "point_data_to_cell_data")


def _method_of(mesh, name):
    """``mesh.daxpy.<name>()``, called on a dataset PyVista gives no accessor."""
    from daxpy.accessor import DaxpyAccessor

    return getattr(DaxpyAccessor(mesh), name)()


def test_daxpy_datasets_reach_pyvista_through_to_pyvista_and_plot(tmp_path):
    grid = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0)})
    with pytest.raises(NotImplementedError):  # PyVista has no hook for other types
        pv.wrap(grid)
    assert isinstance(pv.wrap(grid.to_pyvista()), pv.ImageData)
    grid.plot(off_screen=True, screenshot=str(tmp_path / "grid.png"))
    assert (tmp_path / "grid.png").stat().st_size > 0


def test_the_entry_point_brings_the_accessor_without_importing_daxpy():
    code = ("import sys, pyvista as pv\n"
            "mesh = pv.ImageData(dimensions=(3, 3, 3))\n"
            "mesh['t'] = mesh.points[:, 0] * 2\n"
            "assert 'daxpy' not in sys.modules\n"
            "print(mesh.daxpy.compute_derivative(backend='cpu')['gradient'][0].tolist())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[2.0, 0.0, 0.0]"
