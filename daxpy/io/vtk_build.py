"""Build the VTK dataset equivalent to a daxpy dataset, over its memory.

Each grid family has a builder; every array goes through
:func:`daxpy.io.vtk_export.vtk_ready` first, so VTK gets native byte order and
dtypes it has, and shares the dataset's memory whenever it already is so.
:func:`daxpy.io.interop.to_vtk` is the public entry point.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.io.vtk_build import build_vtk
>>> grid = daxpy.UniformGrid(dims=(2, 2), point_data={"t": np.arange(4.0)})
>>> build_vtk(grid).GetPointData().GetArray("t").GetNumberOfTuples()
4
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.dataset import DataSet
from ..errors import FieldError, InvalidDataSetError
from ..data.structured import CurvilinearGrid, RectilinearGrid, UniformGrid
from ..data.polydata import CELL_KINDS, PolyData
from ..data.unstructured import UnstructuredGrid
from .vtk_export import check_vtk_dims, vtk_ready

__all__ = ["VTK_BUILDERS", "build_vtk"]


def _to_vtk_array(values: np.ndarray, name: str | None = None,
                  array_type: int | None = None):
    """VTK array over ``values``' memory (a :func:`vtk_ready` array); the VTK
    array keeps ``values`` alive."""
    from vtkmodules.util.numpy_support import numpy_to_vtk

    vtk_array = numpy_to_vtk(values, deep=0, array_type=array_type)
    if name is not None:
        vtk_array.SetName(name)
    return vtk_array


def _write_fields(dataset: DataSet, obj) -> None:
    for fields, vtk_fields in ((dataset.point_data, obj.GetPointData()),
                               (dataset.cell_data, obj.GetCellData())):
        for name, values in fields.items():
            what = f"{fields.association[:-1]} field {name!r} of {dataset.name}"
            vtk_fields.AddArray(_to_vtk_array(vtk_ready(values, what, FieldError), name))


def _geometry(values: Any, what: str, grid: DataSet) -> np.ndarray:
    return vtk_ready(values, f"{what} of {grid.name}", InvalidDataSetError)


def _vtk_points(grid: DataSet):
    from vtkmodules.vtkCommonCore import vtkPoints

    vtk_points = vtkPoints()
    vtk_points.SetData(_to_vtk_array(_geometry(grid.points(), "points", grid)))
    return vtk_points


def _image_to_vtk(grid: UniformGrid):
    from vtkmodules.vtkCommonDataModel import vtkImageData

    obj = vtkImageData()
    obj.SetDimensions(*grid.dims)
    obj.SetOrigin(*grid.origin)
    obj.SetSpacing(*grid.spacing)
    return obj


def _rectilinear_to_vtk(grid: RectilinearGrid):
    from vtkmodules.vtkCommonDataModel import vtkRectilinearGrid

    obj = vtkRectilinearGrid()
    obj.SetDimensions(*grid.dims)
    coords = []
    for name, axis in zip("xyz", grid.coordinates):
        host = _geometry(axis, f"{name} coordinates", grid)
        # VTK filters assume floating-point coordinates. Named, because VTK's
        # XML writer names an unnamed array after its address: files would differ.
        coords.append(_to_vtk_array(host if host.dtype.kind == "f" else host.astype(float),
                                    f"{name} coordinates"))
    obj.SetXCoordinates(coords[0])
    obj.SetYCoordinates(coords[1])
    obj.SetZCoordinates(coords[2])
    return obj


def _structured_to_vtk(grid: CurvilinearGrid):
    from vtkmodules.vtkCommonDataModel import vtkStructuredGrid

    obj = vtkStructuredGrid()
    obj.SetDimensions(*grid.dims)
    obj.SetPoints(_vtk_points(grid))
    return obj


def _vtk_cells(offsets: Any, connectivity: Any, what: str, grid: DataSet):
    """A vtkCellArray over ``offsets`` and ``connectivity`` (``what``: their owner)."""
    from vtkmodules.vtkCommonCore import VTK_TYPE_INT32, VTK_TYPE_INT64
    from vtkmodules.vtkCommonDataModel import vtkCellArray

    offsets = _geometry(offsets, f"offsets{what}", grid)
    connectivity = _geometry(connectivity, f"connectivity{what}", grid)
    # vtkCellArray shares only matching 32- or 64-bit signed offsets and
    # connectivity; anything else is cast once (a copy of the topology only).
    if offsets.dtype == connectivity.dtype == np.int32:
        array_type = VTK_TYPE_INT32
    else:
        array_type = VTK_TYPE_INT64
        offsets, connectivity = offsets.astype(np.int64, copy=False), \
            connectivity.astype(np.int64, copy=False)
    cells = vtkCellArray()
    cells.SetData(_to_vtk_array(offsets, array_type=array_type),
                  _to_vtk_array(connectivity, array_type=array_type))
    return cells


def _unstructured_to_vtk(grid: UnstructuredGrid):
    from vtkmodules.vtkCommonDataModel import vtkUnstructuredGrid

    obj = vtkUnstructuredGrid()
    obj.SetPoints(_vtk_points(grid))
    cells = _vtk_cells(grid.offsets, grid.connectivity, "", grid)
    types = _geometry(grid.cell_types, "cell types", grid).astype(np.uint8, copy=False)
    obj.SetCells(_to_vtk_array(types), cells)
    return obj


def _polydata_to_vtk(surface: PolyData):
    from vtkmodules.vtkCommonDataModel import vtkPolyData

    obj = vtkPolyData()
    obj.SetPoints(_vtk_points(surface))
    for kind, setter in zip(CELL_KINDS, (obj.SetVerts, obj.SetLines, obj.SetPolys,
                                         obj.SetStrips)):
        setter(_vtk_cells(*surface.cell_array(kind), f" of the {kind}", surface))
    return obj


VTK_BUILDERS = {
    "uniform": _image_to_vtk,
    "rectilinear": _rectilinear_to_vtk,
    "curvilinear": _structured_to_vtk,
    "unstructured": _unstructured_to_vtk,
    "polydata": _polydata_to_vtk,
}


def build_vtk(dataset: DataSet):
    """The VTK dataset of ``dataset`` (one of the families in ``VTK_BUILDERS``),
    with its fields; see :func:`daxpy.io.interop.to_vtk`, which checks names first.

    Examples
    --------
    >>> import daxpy
    >>> from daxpy.io.vtk_build import build_vtk
    >>> build_vtk(daxpy.UniformGrid(dims=(2**31, 1)))
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: uniform grid has 2147483648 points along x; VTK holds at most 2147483647 per axis (its extents are C int), so it cannot be exported to VTK or written
    """
    if dataset.family not in ("unstructured", "polydata"):
        check_vtk_dims(dataset.dims, dataset.name)
    obj = VTK_BUILDERS[dataset.family](dataset)
    _write_fields(dataset, obj)
    return obj
