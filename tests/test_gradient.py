"""Point and cell gradient against vtkGradientFilter / vtkCellDerivatives, and the filter."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

vtk = pytest.importorskip("vtk")

import daxpy  # noqa: E402
from daxpy.data.celltypes import (HEXAHEDRON, LINE, PYRAMID, QUAD, TETRA, TRIANGLE,  # noqa: E402
                             VERTEX, WEDGE)
from daxpy.errors import ArgumentError, FieldError  # noqa: E402
from daxpy.filters import Gradient  # noqa: E402
from daxpy.io.interop import from_vtk, to_vtk  # noqa: E402
from daxpy.worklets import _cell_gradients, _structured_gradient  # noqa: E402
from daxpy.worklets._shape_functions import (CORNER_PCOORDS, PARAMETRIC_CENTERS,  # noqa: E402
                                             parametric_derivatives)
from daxpy.worklets.gradient import cell_gradient, point_gradient  # noqa: E402

from strategies import (any_grids, field_arrays, mixed_grid_all_shapes,  # noqa: E402
                        structured_grids, unstructured_grids)

DEGENERATE = [
    daxpy.UniformGrid(dims=(2,)),
    daxpy.UniformGrid(dims=(5,), spacing=(0.3,)),
    daxpy.UniformGrid(dims=(1, 4)),
    daxpy.UniformGrid(dims=(1, 1, 3)),
    daxpy.UniformGrid(dims=(4, 1, 3), spacing=(0.5, 1, 2)),
    daxpy.UniformGrid(dims=(2, 2, 2)),
    daxpy.UniformGrid(dims=(1, 1, 1)),
    daxpy.RectilinearGrid([0, 1, 3], None, [0, 2]),
    daxpy.RectilinearGrid([0.5], [0, 1, 3, 3.5]),
    daxpy.CurvilinearGrid((1, 3, 1), np.array([[0, 0, 0], [0, 1, 0], [0, 3, 1.0]])),
    daxpy.CurvilinearGrid((2, 2), np.array([[0, 0, 0], [2, 0, 0.5], [0, 1, 0], [2.5, 1, 1.0]])),
    daxpy.CurvilinearGrid((1, 1, 1), np.zeros((1, 3))),
    daxpy.UnstructuredGrid.from_blocks(np.eye(8, 3) + np.arange(8)[:, None] % [2, 3, 5],
                                       {HEXAHEDRON: [np.arange(8)]}),
    daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3) * [1, 2, 3], {TETRA: [[0, 1, 2, 3]]}),
    mixed_grid_all_shapes(),
]

# One cell of each shape with a distorted geometry; surface cells are not planar.
_SINGLE = {
    VERTEX: [[0.3, 0.1, 0.2]],
    LINE: [[0, 0, 0], [1, 2, 0.5]],
    TRIANGLE: [[0, 0, 0], [1, 0.2, 0], [0.1, 1, 0.7]],
    QUAD: [[0, 0, 0], [1, 0, 0.1], [1.2, 1, 0.4], [0, 0.9, -0.2]],
    TETRA: [[0, 0, 0], [1, 0.1, 0], [0.2, 1, 0], [0.1, 0.3, 1.2]],
    HEXAHEDRON: [[0, 0, 0], [1, 0, 0.1], [1.1, 1, 0], [0, 0.9, 0], [0, 0.1, 1],
                  [1, 0, 1.2], [1.2, 1.1, 1], [0.1, 1, 0.9]],
    WEDGE: [[0, 0, 0], [1, 0, 0], [0, 1.1, 0.1], [0.1, 0, 1], [1.2, 0, 1], [0, 1, 1.3]],
    PYRAMID: [[0, 0, 0], [1, 0, 0.1], [1.1, 1, 0], [0, 0.9, 0], [0.4, 0.6, 1.3]],
}
SINGLE_CELLS = {t: daxpy.UnstructuredGrid.from_blocks(np.array(p, float),
                                                      {t: [np.arange(len(p))]})
                for t, p in _SINGLE.items()}


def vtk_point_gradient(grid, values):
    """vtkGradientFilter's point gradient of the point field ``values``."""
    algorithm = vtk.vtkGradientFilter()
    algorithm.SetInputData(to_vtk(grid.with_fields(point_data={"f": values})))
    algorithm.SetInputScalars(vtk.vtkDataObject.FIELD_ASSOCIATION_POINTS, "f")
    algorithm.SetResultArrayName("g")
    algorithm.Update()
    return from_vtk(algorithm.GetOutput()).point_data["g"]


def vtk_cell_gradient(grid, values):
    """vtkCellDerivatives' gradient at cell centres, one component of ``values`` at a time."""
    columns = values.reshape(grid.n_points, -1)
    result = []
    for component in columns.T:
        obj = to_vtk(grid.with_fields(point_data={"f": np.ascontiguousarray(component)}))
        obj.GetPointData().SetActiveScalars("f")
        algorithm = vtk.vtkCellDerivatives()
        algorithm.SetInputData(obj)
        algorithm.SetVectorModeToComputeGradient()
        algorithm.Update()
        vectors = algorithm.GetOutput().GetCellData().GetVectors()
        result.append(from_vtk(algorithm.GetOutput()).cell_data[vectors.GetName()])
    return np.concatenate(result, axis=1)


def assert_close(result, expected, dtype):
    # Scale-aware absolute tolerance: cancellation near zero derivatives is
    # relative to the field's typical derivative, not to each entry.
    rtol = 1e-4 if dtype == np.float32 else 1e-9
    scale = max(float(np.abs(expected).max(initial=0.0)), 1.0)
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol * scale)


def check_gradient(name, n_out, vtk_reference, grid, values):
    result = daxpy.engine.dispatch.execute(name, grid, values, "points", backend="cpu")
    ncomp = 1 if values.ndim == 1 else values.shape[1]
    assert result.shape == (n_out, 3 * ncomp)
    assert result.dtype == values.dtype
    assert_close(result, vtk_reference(grid, values), values.dtype)


def check_point_gradient(grid, values):
    check_gradient("point_gradient", grid.n_points, vtk_point_gradient, grid, values)


def check_cell_gradient(grid, values):
    check_gradient("cell_gradient", grid.n_cells, vtk_cell_gradient, grid, values)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_structured_point_gradient_matches_vtk(data):
    grid = data.draw(structured_grids())
    check_point_gradient(grid, data.draw(field_arrays(grid.n_points)))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_unstructured_point_gradient_matches_vtk(data):
    grid = data.draw(unstructured_grids())
    check_point_gradient(grid, data.draw(field_arrays(grid.n_points)))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_cell_gradient_matches_vtk_cell_derivatives(data):
    grid = data.draw(any_grids())
    check_cell_gradient(grid, data.draw(field_arrays(grid.n_points)))


@pytest.mark.parametrize("shape", [HEXAHEDRON, TETRA, WEDGE, PYRAMID])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_solid_shape_matches_vtk(shape, dtype):
    @settings(max_examples=8, deadline=None)
    @given(st.data())
    def check(data):
        grid = data.draw(unstructured_grids(shapes=[shape]))
        values = data.draw(field_arrays(grid.n_points, dtype=dtype))
        check_point_gradient(grid, values)
        check_cell_gradient(grid, values)

    check()


@pytest.mark.parametrize("grid", DEGENERATE, ids=lambda g: f"{g.topology_name}-{g.n_points}")
@pytest.mark.parametrize("ncomp", [1, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_degenerate_grids_match_vtk(grid, ncomp, dtype):
    rng = np.random.default_rng(ncomp)
    shape = (grid.n_points,) if ncomp == 1 else (grid.n_points, ncomp)
    values = rng.uniform(-10, 10, shape).astype(dtype)
    check_point_gradient(grid, values)
    check_cell_gradient(grid, values)


@pytest.mark.parametrize("cell_type", list(SINGLE_CELLS), ids=lambda t: f"vtk{t}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_single_distorted_cell_matches_vtk(cell_type, dtype):
    grid = SINGLE_CELLS[cell_type]
    values = np.random.default_rng(cell_type).uniform(-1, 1, (grid.n_points, 2)).astype(dtype)
    check_point_gradient(grid, values)
    check_cell_gradient(grid, values)


def test_float32_points_and_values_compute_in_float32():
    grid = mixed_grid_all_shapes()
    grid32 = daxpy.UnstructuredGrid(grid.points().astype(np.float32), grid.connectivity,
                                    grid.offsets, grid.cell_types)
    values = np.random.default_rng(3).uniform(-1, 1, (grid.n_points, 3)).astype(np.float32)
    check_point_gradient(grid32, values)
    check_cell_gradient(grid32, values)


def test_linear_field_has_its_exact_gradient_on_solids():
    grid = mixed_grid_all_shapes()
    solid_grid = daxpy.UnstructuredGrid.from_blocks(
        grid.points(), {b.shape.vtk_id: b.corners for b in grid.cell_blocks().values()
                        if b.shape.dimension == 3})
    slope = np.array([1.5, -2.0, 0.25])
    values = solid_grid.points() @ slope
    used = np.unique(solid_grid.connectivity)
    np.testing.assert_allclose(point_gradient(solid_grid, values)[used],
                               np.tile(slope, (len(used), 1)), rtol=1e-12)
    np.testing.assert_allclose(cell_gradient(solid_grid, values),
                               np.tile(slope, (solid_grid.n_cells, 1)), rtol=1e-12)


@pytest.mark.parametrize("dims", [(7, 5, 9), (9, 6), (11,)])
def test_small_slabs_and_chunks_match_vtk(monkeypatch, dims):
    monkeypatch.setattr(_structured_gradient, "SLAB_BYTES", 1)
    monkeypatch.setattr(_structured_gradient, "CHUNK_POINTS", 7)
    rng = np.random.default_rng(0)
    uniform = daxpy.UniformGrid(dims=dims, spacing=(0.5, 2, 1)[:len(dims)])
    curvilinear = daxpy.CurvilinearGrid(dims, uniform.points() + rng.uniform(-0.05, 0.05,
                                                                              (uniform.n_points, 3)))
    for grid in (uniform, curvilinear):
        check_point_gradient(grid, rng.uniform(-1, 1, (grid.n_points, 2)))


def test_unstructured_chunks_do_not_change_results():
    grid = mixed_grid_all_shapes()
    values = np.random.default_rng(1).uniform(-1, 1, (grid.n_points, 2))
    counts = np.bincount(grid.connectivity, minlength=grid.n_points)
    whole = _cell_gradients.corner_average_gradients(
        grid.points(), values, _cell_gradients.unstructured_chunks(grid), counts)
    pieces = _cell_gradients.corner_average_gradients(
        grid.points(), values, _cell_gradients.unstructured_chunks(grid, size=2), counts)
    np.testing.assert_allclose(pieces, whole, rtol=1e-14)
    centres = _cell_gradients.centre_gradients(
        grid.points(), values, _cell_gradients.unstructured_chunks(grid, size=3), grid.n_cells)
    np.testing.assert_allclose(centres, cell_gradient(grid, values), rtol=1e-14)


def test_structured_cell_chunks_follow_vtk_corner_order():
    grid = daxpy.UniformGrid(dims=(3, 2, 2))
    chunks = list(_structured_gradient.structured_cell_chunks(grid, size=1))
    assert [c.shape for c in chunks] == ["hex", "hex"]
    assert chunks[1].corners.tolist() == [[1, 2, 5, 4, 7, 8, 11, 10]]
    # vtkStructuredGrid's cells are hexahedra (image data would list voxels).
    vtk_grid = to_vtk(daxpy.CurvilinearGrid(grid.dims, grid.points()))
    ids = vtk.vtkIdList()
    vtk_grid.GetCellPoints(1, ids)
    assert [ids.GetId(i) for i in range(8)] == [1, 2, 5, 4, 7, 8, 11, 10]


@pytest.mark.parametrize("name, cell", [("line", vtk.vtkLine), ("tri", vtk.vtkTriangle),
                                        ("quad", vtk.vtkQuad), ("tet", vtk.vtkTetra),
                                        ("hex", vtk.vtkHexahedron), ("wedge", vtk.vtkWedge),
                                        ("pyramid", vtk.vtkPyramid)])
def test_shape_tables_match_vtk(name, cell):
    instance = cell()
    centre = [0.0, 0.0, 0.0]
    instance.GetParametricCenter(centre)
    np.testing.assert_allclose(PARAMETRIC_CENTERS[name], centre, rtol=0, atol=1e-15)
    pcoords = instance.GetParametricCoords()
    k = instance.GetNumberOfPoints()
    assert np.allclose(CORNER_PCOORDS[name], np.array([pcoords[i] for i in range(3 * k)]
                                                      ).reshape(k, 3))
    dimension = instance.GetCellDimension()
    for point in ([0.2, 0.3, 0.4], centre):
        derivs = [0.0] * (dimension * k)
        instance.InterpolateDerivs(point, derivs)
        expected = np.array(derivs).reshape(dimension, k)
        np.testing.assert_allclose(parametric_derivatives(name, point), expected, atol=1e-15)


def test_integer_fields_give_float64():
    grid = daxpy.UniformGrid(dims=(3, 2))
    ints = np.array([0, 1, 2, 255, 254, 253], dtype=np.uint8)
    result = point_gradient(grid, ints)
    assert result.dtype == np.float64
    np.testing.assert_allclose(result, vtk_point_gradient(grid, ints.astype(np.float64)))
    assert cell_gradient(mixed_grid_all_shapes(),
                         np.arange(mixed_grid_all_shapes().n_points)).dtype == np.float64


@pytest.mark.parametrize("grid", [daxpy.UniformGrid(dims=(3, 3)), daxpy.RectilinearGrid([0, 1, 4]),
                                  DEGENERATE[10], mixed_grid_all_shapes()],
                         ids=["uniform", "rectilinear", "curvilinear", "unstructured"])
def test_out_is_filled_and_returned(grid):
    values = np.arange(grid.n_points, dtype=np.float32)
    for impl, n, vtk_reference in ((point_gradient, grid.n_points, vtk_point_gradient),
                                   (cell_gradient, grid.n_cells, vtk_cell_gradient)):
        out = np.full((n, 3), np.nan, dtype=np.float32)
        assert impl(grid, values, out=out) is out
        assert_close(out, vtk_reference(grid, values), np.float32)


def test_out_of_wrong_shape_or_dtype_raises():
    grid = daxpy.UniformGrid(dims=(3, 3))
    with pytest.raises(ArgumentError, match=r"out must be .*\(9, 3\)"):
        point_gradient(grid, np.zeros(9), out=np.zeros((9, 2)))
    with pytest.raises(ArgumentError, match="float64"):
        cell_gradient(grid, np.zeros(9), out=np.zeros((4, 3), np.float32))


@pytest.mark.parametrize("grid", [daxpy.UniformGrid(dims=(3,)), mixed_grid_all_shapes()],
                         ids=["structured", "unstructured"])
def test_values_of_wrong_size_raise(grid):
    with pytest.raises(FieldError, match=f"for the {grid.n_points} points"):
        point_gradient(grid, np.zeros(grid.n_points + 1))
    with pytest.raises(FieldError, match=f"for the {grid.n_points} points"):
        cell_gradient(grid, np.zeros((grid.n_points, 2, 2)))


# -- the filter ---------------------------------------------------------------

def test_filter_writes_point_and_cell_gradients_and_keeps_input():
    grid = daxpy.UniformGrid(dims=(4, 3, 2), spacing=(0.5, 1, 2))
    values = np.random.default_rng(0).uniform(-1, 1, (grid.n_points, 2)).astype(np.float32)
    grid.point_data["v"] = values
    points = Gradient("v", backend="cpu")(grid)
    cells = Gradient("v", result="dv", kind="cell", backend="cpu")(grid)
    assert_close(points.point_data["Gradient"], vtk_point_gradient(grid, values), np.float32)
    assert_close(cells.cell_data["dv"], vtk_cell_gradient(grid, values), np.float32)
    assert "Gradient" not in grid.point_data and "dv" not in grid.cell_data
    assert points.point_data["v"] is values


def test_filter_accepts_vtk_input_and_integer_fields():
    grid = daxpy.UniformGrid(dims=(3, 3), point_data={"i": np.arange(9, dtype=np.int32)})
    result = Gradient("i", backend="cpu")(to_vtk(grid)).point_data["Gradient"]
    assert result.dtype == np.float64
    np.testing.assert_allclose(result, np.tile([1.0, 3.0, 0.0], (9, 1)))


def test_filter_options_name_outputs():
    grid = daxpy.UniformGrid(dims=(3, 3, 3))
    grid.point_data["v"] = np.random.default_rng(0).uniform(-1, 1, (grid.n_points, 3))
    out = Gradient("v", divergence=True, vorticity="w", qcriterion=True,
                   compute_gradient=False, backend="cpu")(grid)
    assert set(out.point_data) == {"v", "Divergence", "w", "QCriterion"}
    assert out.point_data["w"].shape == (grid.n_points, 3)


def test_filter_rejects_bad_arguments():
    with pytest.raises(ArgumentError, match="kind must be 'point' or 'cell', got 'edge'"):
        Gradient("t", kind="edge")
    with pytest.raises(ArgumentError, match="vorticity must be a bool or a non-empty"):
        Gradient("t", vorticity=3)
    with pytest.raises(ArgumentError, match="result must be a non-empty field name"):
        Gradient("t", result="")


def test_a_cell_field_gives_its_gradient_at_the_cells():
    # Checked against vtkGradientFilter in test_gradient_cells.py.
    grid = daxpy.UniformGrid(dims=(4, 2), cell_data={"c": np.array([1.0, 3.0, 7.0])})
    out = Gradient("c", backend="cpu")(grid)
    assert "Gradient" not in out.point_data
    assert out.cell_data["Gradient"][:, 0].tolist() == [2.0, 3.0, 4.0]
