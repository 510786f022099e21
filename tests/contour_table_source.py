"""Re-derive VTK's contour case tables from the installed VTK's own cells.

For each case, one cell of the kind is contoured at 0.5 with corner scalars 1 (the
corners of the case, at or above the value) and 0, through ``vtkCell::Contour``; each
output point sits at the middle of the edge it was cut on, which names the edge. The
test compares :mod:`daxpy.worklets._contour_tables` with what this gives.
"""

import numpy as np

CORNERS = {
    "line": [(0, 0, 0), (1, 0, 0)],
    "triangle": [(0, 0, 0), (1, 0, 0), (0, 1, 0)],
    "quad": [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)],
    "pixel": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)],
    "tetra": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)],
    "hexahedron": [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0),
                   (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)],
    "voxel": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0),
              (0, 0, 1), (1, 0, 1), (0, 1, 1), (1, 1, 1)],
    "wedge": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (0, 1, 1)],
    "pyramid": [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0.5, 0.5, 1)],
}
"""Reference corners of each cell kind, in VTK's corner order."""


def _vtk_cell(vtk, kind):
    cell = getattr(vtk, "vtk" + {"tetra": "Tetra"}.get(kind, kind.capitalize()))()
    for i, corner in enumerate(CORNERS[kind]):
        cell.GetPointIds().SetId(i, i)
        cell.GetPoints().SetPoint(i, corner)
    return cell


def _edges(cell):
    pairs = []
    for e in range(cell.GetNumberOfEdges()):
        ids = cell.GetEdge(e).GetPointIds()
        pairs.append((ids.GetId(0), ids.GetId(1)))
    return tuple(pairs) or ((0, 1),)  # a line is its own one edge


def _cut_edges(vtk, cell, case, middles):
    from vtk.util.numpy_support import vtk_to_numpy

    scalars = vtk.vtkDoubleArray()
    for i in range(cell.GetNumberOfPoints()):
        scalars.InsertNextValue(1.0 if case >> i & 1 else 0.0)
    points = vtk.vtkPoints()
    locator = vtk.vtkMergePoints()
    locator.InitPointInsertion(points, [-1, 2, -1, 2, -1, 2])
    out = [vtk.vtkCellArray() for _ in range(3)]  # verts, lines, polys
    cell.Contour(0.5, scalars, locator, *out, vtk.vtkPointData(), vtk.vtkPointData(),
                 vtk.vtkCellData(), 0, vtk.vtkCellData())
    made = next((cells for cells in out[::-1] if cells.GetNumberOfCells()), None)
    if made is None:
        return ()
    xyz = vtk_to_numpy(points.GetData())
    edge_of_point = [middles[tuple(np.round(p, 6))] for p in xyz]
    return tuple(edge_of_point[i] for i in vtk_to_numpy(made.GetConnectivityArray()))


def derive(kind):
    """``(edges, cases)`` of a cell kind as the installed VTK contours it."""
    import vtk

    cell = _vtk_cell(vtk, kind)
    edges = _edges(cell)
    corners = np.array(CORNERS[kind], float)
    middles = {tuple(np.round((corners[a] + corners[b]) / 2, 6)): k
               for k, (a, b) in enumerate(edges)}
    return edges, tuple(_cut_edges(vtk, cell, case, middles)
                        for case in range(2 ** len(corners)))
