"""The total size of a surface's cells (lengths of lines, areas of triangles and
quads), by NumPy: VTK's vtkCellSizeFilter aborts the process on some degenerate
cells that random surfaces make, so the surface tests measure both sides here."""

import numpy as np

from daxpy.data.celltypes import LINE, QUAD, TRIANGLE
from daxpy.io.interop import from_vtk


def surface_measure(data) -> float:
    """Sum of line lengths and triangle and quad areas (a quad's from its diagonals,
    which is rotation- and orientation-free) of a daxpy grid or a vtkDataSet."""
    grid = from_vtk(data) if hasattr(data, "GetNumberOfCells") else data
    if grid.n_cells == 0:
        return 0.0
    points = np.asarray(grid.points(), dtype=np.float64)
    total = 0.0
    for block in grid.cell_blocks().values():
        corners = points[np.asarray(block.corners)]
        if block.shape.vtk_id == LINE:
            total += np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1).sum()
        elif block.shape.vtk_id == TRIANGLE:
            total += 0.5 * np.linalg.norm(np.cross(corners[:, 1] - corners[:, 0],
                                                   corners[:, 2] - corners[:, 0]), axis=1).sum()
        elif block.shape.vtk_id == QUAD:
            total += 0.5 * np.linalg.norm(np.cross(corners[:, 2] - corners[:, 0],
                                                   corners[:, 3] - corners[:, 1]), axis=1).sum()
    return float(total)
