"""What the PLY and STL formats hold, checked before a PolyData is written.

VTK's writers drop what these formats cannot hold without saying so: its PLY
writer keeps the points and polygons only, its STL writer triangles only
(polygons and strips are split into triangles), and neither writes daxpy's
fields. A write that would lose cells or fields is refused instead; ``.vtp``
and ``.vtk`` hold everything.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.io.surface_formats import check_surface_format
>>> curve = daxpy.PolyData(np.eye(3), lines=([0, 3], [0, 1, 2]))
>>> check_surface_format(curve, ".stl")
Traceback (most recent call last):
...
daxpy.errors.ArgumentError: .stl holds triangles (polys and strips, written as triangles) and no fields; polydata has 1 lines, which would be lost: write .vtp or .vtk instead
"""

from __future__ import annotations

from ..data.dataset import DataSet
from ..errors import ArgumentError

__all__ = ["SURFACE_CELLS", "check_surface_format"]

SURFACE_CELLS = {".ply": ("polys",), ".stl": ("polys", "strips")}
"""The cell kinds each format keeps."""

_HOLDS = {".ply": "points and polygons", ".stl": "triangles (polys and strips, written "
          "as triangles)"}


def check_surface_format(dataset: DataSet, extension: str) -> None:
    """Refuse to write to ``extension`` (``.ply``, ``.stl``) what it cannot hold.

    Parameters
    ----------
    dataset : PolyData
        The dataset to write.
    extension : str
        The target's extension, lower case; other extensions than ``.ply`` and
        ``.stl`` are not checked here (:func:`daxpy.io.check_format` is).

    Raises
    ------
    ArgumentError
        Naming the cells or fields the format would lose, and the formats that
        keep them.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> tri = daxpy.PolyData(np.eye(3), polys=([0, 3], [0, 1, 2]))
    >>> check_surface_format(tri, ".ply")
    >>> check_surface_format(tri.with_fields(point_data={"t": np.zeros(3)}), ".ply")
    Traceback (most recent call last):
    ...
    daxpy.errors.ArgumentError: .ply holds points and polygons and no fields; polydata has point fields ['t'], which would be lost: write .vtp or .vtk instead
    """
    if extension not in SURFACE_CELLS:
        return
    lost = [f"{dataset.n_cells_of(kind)} {kind}" for kind in ("verts", "lines", "polys",
                                                             "strips")
            if kind not in SURFACE_CELLS[extension] and dataset.n_cells_of(kind)]
    lost += [f"{fields.association[:-1]} fields {sorted(fields)}"
             for fields in (dataset.point_data, dataset.cell_data) if len(fields)]
    if lost:
        raise ArgumentError(
            f"{extension} holds {_HOLDS[extension]} and no fields; {dataset.name} has "
            f"{' and '.join(lost)}, which would be lost: write .vtp or .vtk instead")
