"""Re-derive VTK's table-based clip cases from the installed VTK.

For each case of each cell kind, one cell is clipped by vtkTableBasedClipDataSet
at 0.5 with corner scalars above 0.5 at the case's corners (kept) and below
elsewhere, for many random shapes and scalars. Each output point is then a fixed
combination of the cell's corners and of the points where its cut edges cross
0.5: solving for those weights over all trials names it a corner, an edge, or the
mean of several of them (VTK's centre points). The test compares
:mod:`daxpy.worklets._clip_tables` with what this gives.
"""

from fractions import Fraction

import numpy as np

from contour_table_source import CORNERS

CLIP_KINDS = ("line", "triangle", "quad", "pixel", "tetra", "hexahedron", "voxel", "wedge",
              "pyramid")


def _clip_once(vtk, kind, corners, scalars, inside_out=False):
    from vtk.util.numpy_support import numpy_to_vtk, vtk_to_numpy

    types = {"line": vtk.VTK_LINE, "triangle": vtk.VTK_TRIANGLE, "quad": vtk.VTK_QUAD,
             "pixel": vtk.VTK_PIXEL, "voxel": vtk.VTK_VOXEL,
             "tetra": vtk.VTK_TETRA, "hexahedron": vtk.VTK_HEXAHEDRON,
             "wedge": vtk.VTK_WEDGE, "pyramid": vtk.VTK_PYRAMID}
    grid = vtk.vtkUnstructuredGrid()
    points = vtk.vtkPoints()
    points.SetDataTypeToDouble()
    for corner in corners:
        points.InsertNextPoint(*corner)
    grid.SetPoints(points)
    ids = vtk.vtkIdList()
    for i in range(len(corners)):
        ids.InsertNextId(i)
    grid.InsertNextCell(types[kind], ids)
    values = numpy_to_vtk(np.asarray(scalars, float), deep=1)
    values.SetName("s")
    grid.GetPointData().SetScalars(values)
    clip = vtk.vtkTableBasedClipDataSet()
    clip.SetInputData(grid)
    clip.SetValue(0.5)
    clip.SetInsideOut(inside_out)
    clip.Update()
    out = clip.GetOutput()
    xyz = vtk_to_numpy(out.GetPoints().GetData()) if out.GetNumberOfPoints() else None
    cells = []
    for c in range(out.GetNumberOfCells()):
        cell = out.GetCell(c)
        cells.append((out.GetCellType(c),
                      tuple(cell.GetPointId(i) for i in range(cell.GetNumberOfPoints()))))
    return xyz, cells


def derive_case(vtk, kind, case, edges, trials=24, seed=0, inside_out=False):
    """``(cells, centres)`` of one case: each output cell as ``(vtk type, codes)``,
    a code being a corner (``i``), a cut edge (``100 + e``) or a centre point
    (``-1 - j``: ``centres[j]`` lists ``(code, numerator, denominator)``, its
    weights)."""
    rng = np.random.default_rng(seed)
    n = len(CORNERS[kind])
    base = np.array(CORNERS[kind], float)
    inside = np.array([(case >> i) & 1 for i in range(n)], bool)
    cut = [e for e, (a, b) in enumerate(edges) if inside[a] != inside[b]]
    runs = []
    for trial in range(trials):
        corners = base + (rng.uniform(-0.05, 0.05, base.shape) if trial else 0.0)
        high, low = rng.uniform(0.6, 1.0, n), rng.uniform(0.0, 0.4, n)
        # The case's corners are the kept ones: above the value, or below it inside out.
        scalars = np.where(inside, low, high) if inside_out else np.where(inside, high, low)
        xyz, cells = _clip_once(vtk, kind, corners, scalars, inside_out)
        candidates = [corners[i] for i in range(n)]
        for e in cut:
            a, b = edges[e]
            t = (0.5 - scalars[a]) / (scalars[b] - scalars[a])
            candidates.append(corners[a] + t * (corners[b] - corners[a]))
        runs.append((xyz, cells, np.array(candidates)))
    cells = runs[0][1]
    if not cells:
        return (), ()
    names = [i for i in range(n)] + [100 + e for e in cut]
    system = np.concatenate([np.asarray(c).T for _, _, c in runs])
    codes, centres = [], []
    for p in range(runs[0][0].shape[0]):
        target = np.concatenate([xyz[p] for xyz, _, _ in runs])
        weights = np.linalg.lstsq(system, target, rcond=None)[0]
        used = np.flatnonzero(np.abs(weights) > 1e-6)
        assert np.abs(system @ weights - target).max() < 1e-6, (kind, case, p)
        if len(used) == 1:
            codes.append(names[used[0]])
            continue
        shares = [Fraction(float(w)).limit_denominator(64) for w in weights[used]]
        assert all(abs(float(f) - w) < 1e-6 for f, w in zip(shares, weights[used])), (
            kind, case, p)
        centre = tuple((names[i], f.numerator, f.denominator) for i, f in zip(used, shares))
        if centre not in centres:
            centres.append(centre)
        codes.append(-1 - centres.index(centre))
    return (tuple((int(t), tuple(codes[i] for i in ids)) for t, ids in cells),
            tuple(centres))


def derive(kind, inside_out=False):
    """Every case of a kind: ``((cells, centres), ...)`` by case number (the case's
    bits are the kept corners; ``inside_out``: VTK's InsideOut clip)."""
    import vtk

    from daxpy.worklets._contour_tables import EDGES

    return tuple(derive_case(vtk, kind, case, EDGES[kind], inside_out=inside_out)
                 for case in range(2 ** len(CORNERS[kind])))


def write_json(path):
    """Write the tables :mod:`daxpy.worklets._clip_tables` loads (``clip_cases.json``):
    ``python -c "import clip_table_source as c; c.write_json('../worklets/clip_cases.json')"``
    from ``tests/``."""
    import json

    tables = {"CLIP": {k: derive(k) for k in CLIP_KINDS},
              "CLIP_INSIDE_OUT": {k: derive(k, True) for k in CLIP_KINDS}}
    with open(path, "w") as out:
        json.dump(tables, out, separators=(",", ":"))
