"""VTK and Viskores counterparts of daxpy's filters, for the CPU benchmark.

Each ``make_*`` function takes a VTK dataset holding the input field(s) and
returns a zero-argument callable that re-executes the VTK filter and returns
its output array as NumPy (a view of VTK's memory). VTK's SMP backend is
chosen with :func:`smp_backend`; Viskores (``vtkm*`` filters from
``vtkAcceleratorsVTKmFilters``) brings its own threading.

Examples
--------
>>> import numpy as np
>>> from vtkmodules.vtkCommonDataModel import vtkImageData
>>> img = vtkImageData(); img.SetDimensions(3, 3, 3)
>>> run = make_pass_through(attach(img, points={"f": np.ones(27, np.float32)}))
>>> run().dtype
dtype('float64')
"""

from __future__ import annotations

import contextlib
from typing import Callable

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonCore import VTK_FLOAT, vtkDoubleArray, vtkSMPTools
from vtkmodules.vtkCommonDataModel import vtkDataObject
from vtkmodules.vtkFiltersCore import (vtkArrayCalculator, vtkCellDataToPointData,
                                       vtkPointDataToCellData)
from vtkmodules.vtkFiltersGeneral import vtkCellDerivatives, vtkGradientFilter

try:
    from vtkmodules import vtkAcceleratorsVTKmFilters as _viskores
except ImportError:  # a VTK wheel built without Viskores
    _viskores = None

POINTS = vtkDataObject.FIELD_ASSOCIATION_POINTS
CELLS = vtkDataObject.FIELD_ASSOCIATION_CELLS


def viskores_available() -> bool:
    """Whether this VTK holds the Viskores (VTK-m) accelerated filters.

    Examples
    --------
    >>> isinstance(viskores_available(), bool)
    True
    """
    return _viskores is not None and hasattr(_viskores, "vtkmGradient")


@contextlib.contextmanager
def smp_backend(name: str):
    """Run the block under VTK's SMP backend ``name`` ("Sequential", "STDThread").

    Examples
    --------
    >>> with smp_backend("STDThread"):
    ...     vtkSMPTools.GetBackend()
    'STDThread'
    """
    previous = vtkSMPTools.GetBackend()
    if not vtkSMPTools.SetBackend(name):
        raise RuntimeError(f"VTK has no SMP backend {name!r}")
    try:
        yield
    finally:
        vtkSMPTools.SetBackend(previous)


def attach(vtk_data, points: dict | None = None, cells: dict | None = None):
    """A shallow copy of ``vtk_data`` holding only the given NumPy fields (not copied).

    Examples
    --------
    >>> from vtkmodules.vtkCommonDataModel import vtkImageData
    >>> img = vtkImageData(); img.SetDimensions(2, 2, 2)
    >>> attach(img, cells={"c": np.ones(1)}).GetCellData().GetArray("c").GetValue(0)
    1.0
    """
    out = vtk_data.NewInstance()
    out.ShallowCopy(vtk_data)
    for data, fields in ((out.GetPointData(), points), (out.GetCellData(), cells)):
        for i in reversed(range(data.GetNumberOfArrays())):
            data.RemoveArray(i)
        for name, values in (fields or {}).items():
            array = numpy_to_vtk(np.ascontiguousarray(values), deep=0)
            array.SetName(name)
            data.AddArray(array)
    return out


def _runner(algorithm, output_data: Callable, name: str) -> Callable[[], np.ndarray]:
    def run() -> np.ndarray:
        algorithm.Modified()
        algorithm.Update()
        return vtk_to_numpy(output_data(algorithm.GetOutput()).GetArray(name))

    return run


def make_pass_through(vtk_data, field: str = "f"):
    """VTK's pass-through of seed 004: a vtkFloatArray deep-copied into a vtkDoubleArray."""
    source = vtk_data.GetPointData().GetArray(field)

    def run() -> np.ndarray:
        target = vtkDoubleArray()
        target.DeepCopy(source)
        return vtk_to_numpy(target)

    return run


def make_point_gradient(vtk_data, field: str = "f", viskores: bool = False):
    """vtkGradientFilter (or Viskores' vtkmGradient) of a point field."""
    algorithm = _viskores.vtkmGradient() if viskores else vtkGradientFilter()
    algorithm.SetInputData(vtk_data)
    algorithm.SetInputArrayToProcess(0, 0, 0, POINTS, field)
    algorithm.SetResultArrayName("Gradient")
    return _runner(algorithm, lambda o: o.GetPointData(), "Gradient")


def make_cell_gradient(vtk_data, field: str = "f"):
    """vtkCellDerivatives: the derivative of a point scalar at each cell's centre."""
    vtk_data.GetPointData().SetActiveScalars(field)
    algorithm = vtkCellDerivatives()
    algorithm.SetInputData(vtk_data)
    return _runner(algorithm, lambda o: o.GetCellData(), "ScalarGradient")


def _average(algorithm, vtk_data, field: str, add, result):
    """``algorithm`` over the one field ``add`` names; its output read by ``result``."""
    algorithm.SetInputData(vtk_data)
    algorithm.SetProcessAllArrays(False)
    add(field)
    return _runner(algorithm, result, field)


def make_point_to_cell(vtk_data, field: str = "f", viskores: bool = False):
    """vtkPointDataToCellData (or vtkmAverageToCells) of one point field."""
    algorithm = _viskores.vtkmAverageToCells() if viskores else vtkPointDataToCellData()
    return _average(algorithm, vtk_data, field, algorithm.AddPointDataArray,
                    lambda o: o.GetCellData())


def make_cell_to_point(vtk_data, field: str = "c", viskores: bool = False):
    """vtkCellDataToPointData (or vtkmAverageToPoints) of one cell field."""
    algorithm = _viskores.vtkmAverageToPoints() if viskores else vtkCellDataToPointData()
    return _average(algorithm, vtk_data, field, algorithm.AddCellDataArray,
                    lambda o: o.GetPointData())


def make_calculator(vtk_data, function: str, scalars=(), vectors=()):
    """vtkArrayCalculator over point fields, float32 result named ``result``."""
    algorithm = vtkArrayCalculator()
    algorithm.SetInputData(vtk_data)
    algorithm.SetAttributeTypeToPointData()
    for name in scalars:
        algorithm.AddScalarArrayName(name)
    for name in vectors:
        algorithm.AddVectorArrayName(name)
    algorithm.SetFunction(function)
    algorithm.SetResultArrayName("result")
    algorithm.SetResultArrayType(VTK_FLOAT)
    return _runner(algorithm, lambda o: o.GetPointData(), "result")


def bias_function(vector: str, bias) -> str:
    """vtkArrayCalculator expression adding a 3-vector bias to a vector field.

    Examples
    --------
    >>> bias_function("v", [1, 2, 3])
    'v+(1.0*iHat+2.0*jHat+3.0*kHat)'
    """
    b = [repr(float(x)) for x in bias]
    return f"{vector}+({b[0]}*iHat+{b[1]}*jHat+{b[2]}*kHat)"
