"""mesh.daxpy.contour / threshold / slice side by side with PyVista's own filters,
on PyVista's shipped example files."""

import numpy as np
import pytest

pv = pytest.importorskip("pyvista")
examples = pytest.importorskip("pyvista.examples")
import daxpy.accessor  # noqa: E402,F401
from daxpy.errors import ArgumentError  # noqa: E402


def _measure(mesh):
    sizes = mesh.compute_cell_sizes(length=True, area=True, volume=True)
    return sum(float(np.abs(sizes.cell_data[n]).sum()) for n in ("Length", "Area", "Volume"))


MESHES = {
    "uniform": examples.load_uniform,
    "rectilinear": examples.load_rectilinear,
    "structured": examples.load_structured,
    "hexbeam": examples.load_hexbeam,
    "tetbeam": examples.load_tetbeam,
    "sphere": lambda: pv.Sphere(radius=3.0, theta_resolution=40, phi_resolution=30),
}


def _scalars(mesh):
    mesh = mesh.copy()
    p = mesh.points
    mesh.point_data["f"] = np.sin(p[:, 0] * 0.7) + np.cos(p[:, 1] * 0.5) + 0.3 * p[:, 2]
    mesh.cell_data["c"] = np.arange(mesh.n_cells, dtype=float) % 7
    mesh.set_active_scalars("f")
    return mesh


@pytest.mark.parametrize("name", sorted(MESHES))
def test_contour_matches_pyvista(name):
    mesh = _scalars(MESHES[name]())
    low, high = mesh.get_data_range("f")
    values = list(np.linspace(low, high, 5)[1:-1] + 1e-7)
    ours = mesh.daxpy.contour(values, scalars="f", backend="cpu")
    theirs = mesh.contour(values, scalars="f")
    assert isinstance(ours, pv.PolyData)
    assert ours.n_cells == theirs.n_cells
    np.testing.assert_allclose(_measure(ours), _measure(theirs), rtol=1e-5)
    assert "f" in ours.point_data


@pytest.mark.parametrize("name", sorted(MESHES))
@pytest.mark.parametrize("options", [dict(value=3.0, scalars="c"),
                                     dict(value=(1.0, 4.0), scalars="c", invert=True),
                                     dict(value=0.5, scalars="f", method="lower"),
                                     dict(value=(0.0, 1.0), scalars="f", all_scalars=True)])
def test_threshold_matches_pyvista(name, options):
    mesh = _scalars(MESHES[name]())
    ours = mesh.daxpy.threshold(backend="cpu", **options)
    theirs = mesh.threshold(**options)
    assert isinstance(ours, pv.UnstructuredGrid)
    assert ours.n_cells == theirs.n_cells and ours.n_points == theirs.n_points
    np.testing.assert_allclose(_measure(ours), _measure(theirs), rtol=1e-5, atol=1e-12)
    np.testing.assert_array_equal(np.sort(ours.cell_data["c"]), np.sort(theirs.cell_data["c"]))


@pytest.mark.parametrize("name", sorted(MESHES))
@pytest.mark.parametrize("normal", ["x", "z", (1.0, 2.0, 0.5)])
def test_slice_matches_pyvista(name, normal):
    mesh = _scalars(MESHES[name]())
    # Off the centre: a plane through grid points is the degenerate case, where
    # VTK's cutters of different grid types merge points differently.
    origin = np.array(mesh.center) + 1e-3 * np.ptp(np.reshape(mesh.bounds, (3, 2)), axis=1)
    ours = mesh.daxpy.slice(normal, origin, backend="cpu")
    theirs = mesh.slice(normal, origin=origin, generate_triangles=True)
    assert isinstance(ours, pv.PolyData)
    assert ours.n_points == theirs.n_points
    np.testing.assert_allclose(_measure(ours), _measure(theirs), rtol=1e-5)
    np.testing.assert_allclose(np.sort(ours.point_data["f"]), np.sort(theirs.point_data["f"]),
                               rtol=1e-5, atol=1e-6)


def test_what_daxpy_does_not_compute_is_refused():
    mesh = _scalars(examples.load_uniform())
    with pytest.raises(ArgumentError, match="compute_gradients"):
        mesh.daxpy.contour(compute_gradients=True)
    with pytest.raises(ArgumentError, match="contour=True"):
        mesh.daxpy.slice(contour=True)


@pytest.mark.parametrize("name", sorted(MESHES))
@pytest.mark.parametrize("normal", ["x", "-y", (1.0, 2.0, 0.5)])
@pytest.mark.parametrize("invert", [True, False])
def test_clip_matches_pyvista(name, normal, invert):
    mesh = _scalars(MESHES[name]())
    origin = np.array(mesh.center) + 1e-3 * np.ptp(np.reshape(mesh.bounds, (3, 2)), axis=1)
    ours = mesh.daxpy.clip(normal, origin=origin, invert=invert, backend="cpu")
    theirs = mesh.clip(normal, origin=origin, invert=invert)
    assert isinstance(ours, pv.UnstructuredGrid)
    assert ours.n_cells == theirs.n_cells and ours.n_points == theirs.n_points
    np.testing.assert_allclose(_measure(ours), _measure(theirs), rtol=1e-5)


@pytest.mark.parametrize("name", sorted(MESHES))
def test_clip_scalar_matches_pyvista(name):
    mesh = _scalars(MESHES[name]())
    value = float(np.median(mesh["f"])) + 1e-7
    ours = mesh.daxpy.clip_scalar(scalars="f", value=value, backend="cpu")
    theirs = mesh.clip_scalar(scalars="f", value=value)
    assert ours.n_cells == theirs.n_cells and ours.n_points == theirs.n_points
    np.testing.assert_allclose(_measure(ours), _measure(theirs), rtol=1e-5)
    kept, away = mesh.daxpy.clip_scalar(scalars="f", value=value, both=True, backend="cpu")
    # The pieces of a warped hexahedron (the structured example's) have flat faces:
    # their volumes add up to the warped cell's only to about 1e-4.
    np.testing.assert_allclose(_measure(kept) + _measure(away), _measure(mesh), rtol=1e-3)
