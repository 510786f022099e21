"""The geometry benchmark's implementations of threshold, clip and slice: daxpy's
filters on each backend and VTK's under an SMP backend. Each runner returns its output
dataset; :func:`summary` reduces one to what the suite compares (cells, points and
total size).

Examples
--------
>>> spec = case_spec("clip_plane", (0.0, 0.0, 0.0), 0.5)
>>> spec.plane
((0.0, 0.0, 0.0), (0.8728715609439696, 0.4364357804719848, 0.2182178902359924))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from daxpy.filters import Clip, Slice, Threshold


CASES = ("threshold", "clip_scalar", "clip_plane", "slice_plane")
"""The suite's cases (rows' ``case``)."""

_NORMAL = np.array([1.0, 0.5, 0.25]) / np.linalg.norm([1.0, 0.5, 0.25])


@dataclass(frozen=True)
class CaseSpec:
    """One case's parameters: the scalar's middle value, its range's top and the plane
    (oblique, through the grid's centre: no axis-aligned shortcut applies)."""

    case: str
    middle: float
    top: float
    plane: tuple


@dataclass(frozen=True)
class Summary:
    """What the suite compares between implementations."""

    cells: int
    points: int
    size: float | None  # total volume (threshold, clip) or area (slice); None without VTK


def case_spec(case: str, centre, middle: float, top: float = np.inf) -> CaseSpec:
    """The parameters of ``case`` on a grid centred at ``centre`` whose scalar's
    middle value is ``middle``."""
    plane = (tuple(float(c) for c in centre), tuple(float(n) for n in _NORMAL))
    return CaseSpec(case, float(middle), float(top), plane)


def daxpy_filter(spec: CaseSpec, field: str, backend: str):
    """daxpy's filter for the case (threshold keeps the upper half of the range)."""
    if spec.case == "threshold":
        return Threshold(field, spec.middle, spec.top, backend=backend)
    if spec.case == "clip_scalar":
        return Clip(field, spec.middle, backend=backend)
    if spec.case == "clip_plane":
        return Clip(plane=spec.plane, backend=backend)
    return Slice(spec.plane[1], spec.plane[0], backend=backend)


def daxpy_runner(grid, spec: CaseSpec, field: str, backend: str) -> Callable[[], Any]:
    """The filter call, host to host (a NumPy field in, a host dataset out)."""
    flt = daxpy_filter(spec, field, backend)
    return lambda: flt(grid)


def vtk_runner(vtk_data, spec: CaseSpec, field: str, smp: str) -> Callable[[], Any]:
    """vtkThreshold, vtkTableBasedClipDataSet (by the scalar or a vtkPlane) or
    vtkCutter under the SMP backend ``smp``; returns the VTK output."""
    from . import vtk_runs as vr  # VTK only where VTK runs: the suite runs without it
    import vtk

    if spec.case == "threshold":
        flt = vtk.vtkThreshold()
        flt.SetThresholdFunction(vtk.vtkThreshold.THRESHOLD_BETWEEN)
        flt.SetLowerThreshold(spec.middle)
        flt.SetUpperThreshold(spec.top)
    elif spec.case == "clip_scalar":
        flt = vtk.vtkTableBasedClipDataSet()
        flt.SetValue(spec.middle)
    else:
        plane = vtk.vtkPlane()
        plane.SetOrigin(*spec.plane[0])
        plane.SetNormal(*spec.plane[1])
        if spec.case == "clip_plane":
            flt = vtk.vtkTableBasedClipDataSet()
            flt.SetClipFunction(plane)
        else:
            flt = vtk.vtkCutter()
            flt.SetCutFunction(plane)
    flt.SetInputData(vtk_data)
    flt.SetInputArrayToProcess(0, 0, 0, 0, field)

    def run():
        with vr.smp_backend(smp):
            flt.Modified()
            flt.Update()
        return flt.GetOutput()

    return run


def summary(output, with_size: bool) -> Summary:
    """Cells, points and (with VTK) the total volume or area of a daxpy or VTK output."""
    if hasattr(output, "GetNumberOfCells"):
        cells, points, data = output.GetNumberOfCells(), output.GetNumberOfPoints(), output
    else:
        cells, points, data = output.n_cells, output.n_points, None
    size = None
    if with_size and cells:
        size = _vtk_size(data if data is not None else output.to_vtk())
    return Summary(int(cells), int(points), size)


def _vtk_size(data) -> float:
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy

    sizes = vtk.vtkCellSizeFilter()
    sizes.SetInputData(data)
    sizes.Update()
    cells = sizes.GetOutput().GetCellData()
    return sum(float(np.abs(vtk_to_numpy(cells.GetArray(name))).sum())
               for name in ("Length", "Area", "Volume"))


def output_bytes(output) -> int:
    """Bytes of every array of a daxpy output (points, topology, fields): what its
    device run must write at least.

    Examples
    --------
    >>> import daxpy
    >>> output_bytes(daxpy.UniformGrid(dims=(2, 2), point_data={"t": np.zeros(4)}))
    32
    """
    arrays = [output.point_data[name] for name in output.point_data]
    arrays += [output.cell_data[name] for name in output.cell_data]
    if output.family == "unstructured":
        arrays += [output.points(), output.connectivity, output.offsets, output.cell_types]
    elif output.family == "polydata":
        arrays.append(output.points())
        for kind in ("verts", "lines", "polys"):
            arrays += list(output.cell_array(kind))
    return int(sum(int(a.nbytes) for a in arrays))


DEVICE_CALLS = 15
"""The fewest calls a device time is the median of: a call is a millisecond or so,
and medians of five, taken after VTK's and the CPU's runs in the same process,
moved by up to 0.3 ms between two runs of the same code (NOTES, eleventh session)."""


def device_ms(grid, spec: CaseSpec, field: str, repeat: int) -> tuple[float, Any]:
    """Device time of the CUDA filter, field and result on the device (median of
    CUDA-event times around at least :data:`DEVICE_CALLS` calls after three
    untimed ones, its host syncs for output sizes included,
    :func:`benchmarks.timing.time_synced`), and the last output."""
    import cupy

    from .timing import time_synced

    resident = grid.with_fields(point_data={field: cupy.asarray(grid.point_data[field])})
    flt = daxpy_filter(spec, field, "cuda")
    made = [flt(resident)]

    def once():
        made[0] = flt(resident)

    return time_synced(once, repeat=max(repeat, DEVICE_CALLS), warmup=2), made[0]
