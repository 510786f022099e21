"""Zero-copy conversion between daxpy datasets and VTK / PyVista datasets.

Field arrays, points, coordinates and connectivity are wrapped, never copied,
in both directions: NumPy views of VTK arrays on the way in, VTK arrays over
NumPy memory on the way out (the VTK array keeps the NumPy array alive).
A copy happens only where sharing is impossible: device (CuPy) arrays,
non-contiguous arrays, arrays in non-native byte order (VTK reads raw bytes in
the machine's order), float16 arrays (widened to float32: VTK has no 16-bit
float), and integer rectilinear coordinates, which VTK wants as floating point.
Dtypes VTK lacks and cannot hold exactly (long double, complex...) are refused
(:mod:`daxpy.io.vtk_export`).

VTK is imported inside the functions, so ``import daxpy`` works on machines
without VTK.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.io.interop import from_vtk, to_vtk
>>> grid = daxpy.UniformGrid(dims=(3, 2, 2), point_data={"t": np.arange(12.0)})
>>> image = to_vtk(grid)
>>> image.GetClassName()
'vtkImageData'
>>> back = from_vtk(image)
>>> np.shares_memory(back.point_data["t"], grid.point_data["t"])
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.dataset import CONVERTERS, DataSet
from ..data.extras import require
from ..errors import ArgumentError, InvalidDataSetError
from .field_names import check_field_names
from ..data.structured import CurvilinearGrid, RectilinearGrid, UniformGrid
from ..data.polydata import PolyData
from ..data.unstructured import UnstructuredGrid
from .vtk_build import VTK_BUILDERS, build_vtk

__all__ = ["from_pyvista", "from_vtk", "to_pyvista", "to_vtk"]

# VTK class -> daxpy builder; checked in this order because vtkStructuredPoints
# and vtkUniformGrid derive from vtkImageData.
_VTK_CLASSES = ("vtkImageData", "vtkRectilinearGrid", "vtkStructuredGrid",
                "vtkUnstructuredGrid", "vtkPolyData")


def _numpy_support():
    return require("vtkmodules.util.numpy_support", "vtk", "VTK interop")


# -- VTK -> daxpy ---------------------------------------------------------------
def _wrap_vtk_array(vtk_array) -> np.ndarray:
    """NumPy view of a VTK data array (a view: the array's buffer is shared)."""
    return _numpy_support().vtk_to_numpy(vtk_array)


def _read_fields(vtk_fields, association: str) -> dict[str, np.ndarray]:
    """Wrap every numeric array of a vtkPointData / vtkCellData.

    String and other non-numeric arrays are not fields in daxpy's sense and are
    left out; unnamed arrays get a generated name that no other array uses.
    """
    from vtkmodules.vtkCommonCore import VTK_BIT

    taken = {vtk_fields.GetArrayName(i) for i in range(vtk_fields.GetNumberOfArrays())}
    fields: dict[str, np.ndarray] = {}
    for index in range(vtk_fields.GetNumberOfArrays()):
        vtk_array = vtk_fields.GetArray(index)
        if vtk_array is None or vtk_array.GetDataType() == VTK_BIT:
            continue
        values = _wrap_vtk_array(vtk_array)
        if values.dtype.kind not in "fiu":
            continue
        name = vtk_array.GetName() or _generated_name(association, index, taken)
        taken.add(name)
        fields[name] = values
    return fields


def _generated_name(association: str, index: int, taken: set) -> str:
    base = f"{association[:-1]}_array_{index}"
    name, suffix = base, 1
    while name in taken:
        name, suffix = f"{base}_{suffix}", suffix + 1
    return name


def _fields_of(obj) -> dict[str, Any]:
    return {
        "point_data": _read_fields(obj.GetPointData(), "points"),
        "cell_data": _read_fields(obj.GetCellData(), "cells"),
    }


def _points_of(obj) -> np.ndarray:
    points = obj.GetPoints()
    if points is None:
        return np.zeros((0, 3))
    return _wrap_vtk_array(points.GetData()).reshape(-1, 3)


def _image_from_vtk(obj) -> UniformGrid:
    direction = np.array([obj.GetDirectionMatrix().GetElement(r, c)
                          for r in range(3) for c in range(3)]).reshape(3, 3)
    if not np.array_equal(direction, np.eye(3)):
        raise InvalidDataSetError(
            "vtkImageData has a non-identity direction matrix "
            f"{direction.tolist()}; daxpy's UniformGrid is axis-aligned "
            "(resample the image or convert it to a structured grid first)"
        )
    dims = obj.GetDimensions()
    extent_start = np.array(obj.GetExtent()[::2], dtype=np.float64)
    spacing = np.array(obj.GetSpacing(), dtype=np.float64)
    # VTK places point (0,0,0) of the extent at origin + extent_start * spacing.
    # Only a shifted extent moves it: 0 * a bad spacing would blame the origin.
    origin = np.array(obj.GetOrigin(), dtype=np.float64) + np.where(
        extent_start != 0, extent_start * spacing, 0.0)
    # An axis with one point has no extent, so VTK images often carry spacing 0
    # there; daxpy requires positive spacing, and the value is never used.
    spacing = np.where((np.array(dims) == 1) & (spacing <= 0), 1.0, spacing)
    return UniformGrid(dims, tuple(origin), tuple(spacing), **_fields_of(obj))


def _rectilinear_from_vtk(obj) -> RectilinearGrid:
    axes = (obj.GetXCoordinates(), obj.GetYCoordinates(), obj.GetZCoordinates())
    x, y, z = (np.zeros(1) if a is None or a.GetNumberOfTuples() == 0
               else _wrap_vtk_array(a) for a in axes)
    return RectilinearGrid(x, y, z, **_fields_of(obj))


def _structured_from_vtk(obj) -> CurvilinearGrid:
    # vtkStructuredGrid.GetDimensions() wants an output argument in VTK 9.x.
    extent = obj.GetExtent()
    dims = tuple(extent[2 * a + 1] - extent[2 * a] + 1 for a in range(3))
    return CurvilinearGrid(dims, _points_of(obj), **_fields_of(obj))


def _cell_types_of(obj) -> np.ndarray:
    # VTK >= 9.6 returns the types from GetCellTypes() (possibly an implicit
    # constant array, which vtk_to_numpy materializes); older VTK names it
    # GetCellTypesArray().
    try:
        types = obj.GetCellTypes()
    except TypeError:
        types = obj.GetCellTypesArray()
    if types is None:
        return np.zeros(0, dtype=np.uint8)
    return _wrap_vtk_array(types)


def _unstructured_from_vtk(obj) -> UnstructuredGrid:
    cells = obj.GetCells()
    if cells is None or obj.GetNumberOfCells() == 0:
        connectivity, offsets = np.zeros(0, np.int64), np.zeros(1, np.int64)
    else:
        connectivity = _wrap_vtk_array(cells.GetConnectivityArray())
        offsets = _wrap_vtk_array(cells.GetOffsetsArray())
    return UnstructuredGrid(_points_of(obj), connectivity, offsets, _cell_types_of(obj),
                            **_fields_of(obj))


def _cell_array_of(cells) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, connectivity)`` of a vtkCellArray, as views (None: no cells)."""
    if cells is None or cells.GetNumberOfCells() == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.int64)
    return (_wrap_vtk_array(cells.GetOffsetsArray()),
            _wrap_vtk_array(cells.GetConnectivityArray()))


def _polydata_from_vtk(obj) -> PolyData:
    verts, lines, polys, strips = (_cell_array_of(cells) for cells in (
        obj.GetVerts(), obj.GetLines(), obj.GetPolys(), obj.GetStrips()))
    return PolyData(_points_of(obj), verts, lines, polys, strips, **_fields_of(obj))


_FROM_VTK = dict(zip(_VTK_CLASSES, (_image_from_vtk, _rectilinear_from_vtk,
                                    _structured_from_vtk, _unstructured_from_vtk,
                                    _polydata_from_vtk)))


def from_vtk(obj: Any) -> DataSet:
    """Wrap a VTK or PyVista dataset as a daxpy dataset without copying.

    Parameters
    ----------
    obj : vtkImageData, vtkRectilinearGrid, vtkStructuredGrid, vtkUnstructuredGrid or vtkPolyData
        Or the PyVista equivalent (``ImageData``, ``RectilinearGrid``,
        ``StructuredGrid``, ``UnstructuredGrid``, ``PolyData``), which are VTK
        subclasses.

    Returns
    -------
    DataSet
        A :class:`~daxpy.UniformGrid`, :class:`~daxpy.RectilinearGrid`,
        :class:`~daxpy.CurvilinearGrid`, :class:`~daxpy.UnstructuredGrid` or
        :class:`~daxpy.PolyData` whose numeric point and cell fields, points,
        coordinates and connectivity (offsets and connectivity of each of a
        vtkPolyData's cell arrays) are NumPy views of the VTK arrays. Unnamed arrays get a
        generated name (``point_array_<i>``, ``cell_array_<i>``); string and
        bit arrays are left out.

    Raises
    ------
    ArgumentError
        If ``obj`` is not one of the five supported dataset types.
    InvalidDataSetError
        If an image has a non-identity direction matrix, an unstructured
        grid holds cell types daxpy does not support (polyhedra, quadratic...),
        or a polydata cell has too few points.

    See Also
    --------
    to_vtk, to_pyvista

    Examples
    --------
    >>> import pyvista as pv
    >>> from daxpy.io.interop import from_vtk
    >>> image = pv.ImageData(dimensions=(3, 3, 1))
    >>> image.point_data["t"] = range(9)
    >>> grid = from_vtk(image)
    >>> grid.topology_name, grid.point_data["t"].dtype.kind
    ('uniform2d', 'i')
    >>> sphere = from_vtk(pv.Sphere())
    >>> sphere.topology_name, sphere.n_cells_of("polys")
    ('polydata', 1680)
    """
    is_a = getattr(obj, "IsA", None)
    if is_a is not None:
        for class_name in _VTK_CLASSES:
            if is_a(class_name):
                return _FROM_VTK[class_name](obj)
    kind = obj.GetClassName() if hasattr(obj, "GetClassName") else type(obj).__name__
    raise ArgumentError(
        f"from_vtk needs a vtkImageData, vtkRectilinearGrid, vtkStructuredGrid, "
        f"vtkUnstructuredGrid or vtkPolyData (or the PyVista equivalent), got {kind}"
    )


from_pyvista = from_vtk
"""Alias of :func:`from_vtk`: PyVista datasets are VTK datasets."""


# -- daxpy -> VTK ---------------------------------------------------------------
def require_dataset(dataset: Any, caller: str) -> None:
    """Refuse anything but a daxpy dataset VTK has a class for.

    Examples
    --------
    >>> from daxpy.io.interop import require_dataset
    >>> require_dataset("grid.vti", "write")
    Traceback (most recent call last):
    ...
    daxpy.errors.ArgumentError: write needs a daxpy dataset (UniformGrid, RectilinearGrid, CurvilinearGrid, UnstructuredGrid or PolyData), got str
    """
    if not isinstance(dataset, DataSet) or dataset.family not in VTK_BUILDERS:
        raise ArgumentError(
            f"{caller} needs a daxpy dataset (UniformGrid, RectilinearGrid, "
            f"CurvilinearGrid, UnstructuredGrid or PolyData), got {type(dataset).__name__}"
        )


def to_vtk(dataset: DataSet) -> Any:
    """Return the VTK dataset equivalent to ``dataset``, sharing its memory.

    Parameters
    ----------
    dataset : DataSet
        A daxpy uniform, rectilinear, curvilinear or unstructured grid, or a PolyData.

    Returns
    -------
    vtkImageData, vtkRectilinearGrid, vtkStructuredGrid, vtkUnstructuredGrid or vtkPolyData
        Its point and cell arrays, points and connectivity are VTK arrays over
        the dataset's NumPy memory. These are copied instead: device arrays (to
        the host), non-contiguous arrays, arrays in non-native byte order
        (swapped to native), and float16 arrays (widened to float32, which VTK
        has and which holds every float16 value exactly).

    Raises
    ------
    ArgumentError
        If ``dataset`` is not a daxpy dataset.
    FieldError
        If a field's dtype has no VTK equivalent that holds it exactly (long
        double, complex...), or its name cannot be a VTK name (a NUL
        character, a lone surrogate); the message names the field.
    InvalidDataSetError
        If a structured grid has more than 2**31 - 1 points along an axis
        (VTK's extents are C int), or its geometry has such a dtype.

    See Also
    --------
    from_vtk, to_pyvista

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.io.interop import to_vtk
    >>> grid = daxpy.RectilinearGrid([0.0, 1.0, 3.0], cell_data={"c": np.ones((2, 3))})
    >>> vtk_grid = to_vtk(grid)
    >>> vtk_grid.GetCellData().GetArray("c").GetNumberOfComponents()
    3
    """
    require_dataset(dataset, "to_vtk")
    check_field_names(dataset)
    _numpy_support()  # says how to install VTK when it is missing
    return build_vtk(dataset)


def to_pyvista(dataset: DataSet) -> Any:
    """Return the PyVista dataset equivalent to ``dataset``, sharing its memory.

    Parameters
    ----------
    dataset : DataSet
        A daxpy dataset.

    Returns
    -------
    pyvista.ImageData, pyvista.RectilinearGrid, pyvista.StructuredGrid, pyvista.UnstructuredGrid or pyvista.PolyData

    See Also
    --------
    to_vtk : The VTK dataset the PyVista one wraps.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> grid = daxpy.UniformGrid(dims=(2, 2, 2), point_data={"t": np.arange(8.0)})
    >>> mesh = to_pyvista(grid)
    >>> type(mesh).__name__, np.shares_memory(mesh.point_data["t"], grid.point_data["t"])
    ('ImageData', True)
    """
    pyvista = require("pyvista", "vtk", "to_pyvista")
    return pyvista.wrap(to_vtk(dataset))


CONVERTERS.update(vtk=to_vtk, pyvista=to_pyvista)  # DataSet.to_vtk() and DataSet.to_pyvista()
