"""VTK references and degenerate grids shared by the point-to-cell and
cell-to-point tests (each direction is the other's mirror image)."""

import numpy as np
import vtk

import daxpy
from daxpy.data.celltypes import HEXAHEDRON, TETRA
from daxpy.io.interop import from_vtk, to_vtk

from strategies import mixed_grid_all_shapes

DEGENERATE = [
    daxpy.UniformGrid(dims=(2,)),
    daxpy.UniformGrid(dims=(5,)),
    daxpy.UniformGrid(dims=(1, 4)),
    daxpy.UniformGrid(dims=(1, 1, 3)),
    daxpy.UniformGrid(dims=(4, 1, 3)),
    daxpy.UniformGrid(dims=(2, 2, 2)),
    daxpy.UniformGrid(dims=(1, 1, 1)),
    daxpy.RectilinearGrid([0, 1, 3], None, [0, 2]),
    daxpy.CurvilinearGrid((1, 3, 1), np.array([[0, 0, 0], [0, 1, 0], [0, 3, 1.0]])),
    daxpy.UnstructuredGrid.from_blocks(np.eye(8, 3) + np.arange(8)[:, None],
                                       {HEXAHEDRON: [np.arange(8)]}),
    daxpy.UnstructuredGrid.from_blocks(np.eye(4, 3), {TETRA: [[0, 1, 2, 3]]}),
    mixed_grid_all_shapes(),
]



DIRECTIONS = {
    # worklet: (VTK filter, input association, output association)
    "point_to_cell": (vtk.vtkPointDataToCellData, "points", "cells"),
    "cell_to_point": (vtk.vtkCellDataToPointData, "cells", "points"),
}


def size(grid, association: str) -> int:
    """Number of points or cells of ``grid``."""
    return grid.n_points if association == "points" else grid.n_cells


def vtk_average(direction: str, grid, values):
    """VTK's average of ``values`` for ``direction`` (a key of DIRECTIONS)."""
    make, source, target = DIRECTIONS[direction]
    algorithm = make()
    fields = {"point_data" if source == "points" else "cell_data": {"f": values}}
    algorithm.SetInputData(to_vtk(grid.with_fields(**fields)))
    algorithm.Update()
    return from_vtk(algorithm.GetOutput()).fields(target)["f"]


def assert_matches_vtk(direction: str, grid, values):
    """daxpy's NumPy average equals VTK's to rounding, with the right shape and dtype."""
    _, source, target = DIRECTIONS[direction]
    result = daxpy.engine.dispatch.execute(direction, grid, values, source, backend="cpu")
    expected = vtk_average(direction, grid, values)
    assert result.dtype == values.dtype
    assert result.shape == (size(grid, target),) + values.shape[1:]
    tol = 2e-6 if values.dtype == np.float32 else 1e-13
    np.testing.assert_allclose(result, expected, rtol=tol, atol=tol * 10)
