"""The contour benchmark's implementations: each returns a :class:`Timed` whose
``make`` makes the surface (the timed work) and whose ``measure`` gives its
triangle count and area (:class:`Surface`), outside the timed region.

Examples
--------
>>> pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
>>> triangle_area(pts, np.array([[0, 1, 2]]))
0.5
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import daxpy
from daxpy.filters import Contour


@dataclass(frozen=True)
class Surface:
    """What the benchmark compares: the number of triangles and their total area."""

    triangles: int
    area: float
    degenerate: int = 0
    """Triangles with two corners at one position (Flying Edges keeps those where
    a grid value equals the isovalue; vtkContourFilter and daxpy drop them)."""


@dataclass(frozen=True)
class Timed:
    """One implementation's run: ``make()`` is what is timed (the surface made, on
    the host), ``measure(made)`` its :class:`Surface`, computed untimed for the check.

    Examples
    --------
    >>> Timed(lambda: 3, lambda made: Surface(made, 0.0))().triangles
    3
    """

    make: Callable[[], Any]
    measure: Callable[[Any], Surface]

    def __call__(self) -> Surface:
        return self.measure(self.make())


def triangle_area(points: np.ndarray, triangles: np.ndarray) -> float:
    """Total area of ``triangles`` (rows of three point ids), in float64."""
    p = np.asarray(points, np.float64)
    a, b, c = (p[triangles[:, k]] for k in range(3))
    return float(0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1).sum())


def surface_of(points: np.ndarray, triangles: np.ndarray) -> Surface:
    """The :class:`Surface` of ``triangles`` (rows of three point ids) over ``points``.

    Examples
    --------
    >>> p = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0]])
    >>> surface_of(p, np.array([[0, 1, 2], [0, 1, 3]]))
    Surface(triangles=2, area=0.5, degenerate=1)
    """
    p = np.asarray(points)
    a, b, c = (p[triangles[:, k]] for k in range(3))
    same = (a == b).all(axis=1) | (b == c).all(axis=1) | (a == c).all(axis=1)
    return Surface(int(triangles.shape[0]), triangle_area(p, triangles), int(same.sum()))


def of_polydata(surface: daxpy.PolyData) -> Surface:
    """The :class:`Surface` of a daxpy PolyData made of triangles."""
    offsets, connectivity = surface.cell_array("polys")
    return surface_of(surface.points(), connectivity.reshape(-1, 3))


def have(module: str) -> bool:
    """Whether ``module`` can be imported here.

    Examples
    --------
    >>> have("numpy")
    True
    """
    return importlib.util.find_spec(module) is not None


def vtk_contour(grid, values: list[float], algorithm: str, smp: str) -> Timed:
    """vtkFlyingEdges3D (``"flying-edges"``) or vtkContourFilter (``"contour"``) under
    the SMP backend ``smp``."""
    from . import vtk_runs as vr  # VTK only where VTK runs: the suite runs without it
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy

    from daxpy.io.interop import to_vtk

    data = to_vtk(grid)
    make = vtk.vtkFlyingEdges3D if algorithm == "flying-edges" else vtk.vtkContourFilter
    flt = make()
    flt.SetInputData(data)
    flt.SetInputArrayToProcess(0, 0, 0, 0, "RTData")
    flt.SetNumberOfContours(len(values))
    for i, value in enumerate(values):
        flt.SetValue(i, value)
    if algorithm == "contour":
        flt.SetComputeScalars(True)

    def run():
        with vr.smp_backend(smp):
            flt.Modified()
            flt.Update()
        return flt.GetOutput()

    def measure(out) -> Surface:
        triangles = vtk_to_numpy(out.GetPolys().GetConnectivityArray()).reshape(-1, 3)
        return surface_of(vtk_to_numpy(out.GetPoints().GetData()), triangles)

    return Timed(run, measure)


def daxpy_contour(grid, values: list[float], backend: str) -> Timed:
    """daxpy's Contour filter, host to host, on ``backend``."""
    flt = Contour("RTData", values=values, compute_scalars=False, interpolate=False,
                  backend=backend)
    return Timed(lambda: flt(grid), of_polydata)


def daxpy_device_ms(grid, values: list[float], repeat: int) -> float:
    """Device time of the contour, field on the device to the surface's points and
    triangles on the device (median of CUDA-event times, :func:`time_synced`)."""
    import cupy

    from daxpy.engine.dispatch import execute
    from daxpy.filters._surface import coordinates

    from .timing import time_synced

    field = cupy.asarray(grid.point_data["RTData"])

    def once():
        for value in values:
            # The points as the filter makes them (its coordinates on the device).
            coordinates(grid, execute("contour", grid, field, "points", backend="cuda",
                                      value=value))

    return time_synced(once, repeat=max(repeat, 3))


def upload_floor_ms(field: np.ndarray) -> float:
    """The field's bytes host->device from pinned memory (median of CUDA-event times)."""
    import cupy

    from .timing import time_gpu

    pinned = cupy.cuda.alloc_pinned_memory(field.nbytes)
    staged = np.frombuffer(pinned, field.dtype, field.size)
    staged[:] = field.ravel()
    device = cupy.empty(field.size, field.dtype)
    return time_gpu(lambda: device.set(staged), repeat=10)


def skimage_contour(grid, value: float) -> Timed:
    """``skimage.measure.marching_cubes`` (Lorensen's cases, as VTK) on the wavelet."""
    from skimage.measure import marching_cubes

    volume = np.asarray(grid.point_data["RTData"]).reshape(grid.dims[::-1])

    def run():
        return marching_cubes(volume, value, spacing=grid.spacing[::-1], method="lorensen")

    def measure(made) -> Surface:
        verts, faces, _, _ = made
        return Surface(int(faces.shape[0]), triangle_area(verts, faces))

    return Timed(run, measure)


def warp_cells_grid(grid):
    """``grid`` without its last layer of cells along each axis: the cells Warp's
    ``MarchingCubes`` contours. Its ``count_cell_tris`` kernel
    (``warp/native/marching.cu``, Warp 1.6) returns for ``xi >= nx - 2`` (and so
    for y and z), so its surface is this grid's, to be checked against this grid's
    Flying Edges surface (Warp's points sit half a cell off, which leaves areas as
    they are).

    Examples
    --------
    >>> g = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"RTData": np.arange(27.0)})
    >>> cropped = warp_cells_grid(g)
    >>> cropped.dims, cropped.point_data["RTData"].tolist()
    ((2, 2, 2), [0.0, 1.0, 3.0, 4.0, 9.0, 10.0, 12.0, 13.0])
    """
    nx, ny, nz = grid.dims
    field = np.asarray(grid.point_data["RTData"]).reshape(nz, ny, nx)[:-1, :-1, :-1]
    return daxpy.UniformGrid(dims=(nx - 1, ny - 1, nz - 1), origin=grid.origin,
                             spacing=grid.spacing,
                             point_data={"RTData": np.ascontiguousarray(field).ravel()})


def _warp_field(grid) -> np.ndarray:
    """The wavelet in Warp's x-major order, on the host (a layout made once, as a Warp
    user would keep it)."""
    nx, ny, nz = grid.dims
    return np.ascontiguousarray(np.asarray(grid.point_data["RTData"]).reshape(nz, ny, nx)
                                .transpose(2, 1, 0))


def _warp_cubes(grid):
    """Warp, started, and a ``MarchingCubes`` for the grid's dims."""
    import warp as wp

    wp.init()
    nx, ny, nz = grid.dims
    try:
        return wp.MarchingCubes(nx, ny, nz, device="cuda")
    except TypeError:  # Warp before 1.7 sizes its buffers up front (too few: the check fails)
        return wp.MarchingCubes(nx, ny, nz, nx * ny * nz // 2, nx * ny * nz // 2,
                                device="cuda")


def warp_contour(grid, values: list[float]) -> Timed:
    """Warp's ``MarchingCubes`` on the GPU, host to host as daxpy's time: the field
    goes up (from Warp's x-major host copy, made once), the surfaces of every value
    are cut and come down."""
    import warp as wp

    cubes, host = _warp_cubes(grid), _warp_field(grid)
    spacing = np.asarray(grid.spacing, np.float64)

    def run():
        field = wp.array(host, dtype=wp.float32, device="cuda")
        made = []
        for value in values:
            cubes.surface(field, value)
            made.append((cubes.verts.numpy(), cubes.indices.numpy().reshape(-1, 3)))
        return made

    def measure(made) -> Surface:
        return Surface(sum(int(faces.shape[0]) for _, faces in made),
                       sum(triangle_area(verts * spacing, faces) for verts, faces in made))

    return Timed(run, measure)


def warp_device_ms(grid, values: list[float], repeat: int) -> float:
    """Device time of Warp's contour as :func:`daxpy_device_ms` times daxpy's: the
    field on the device to the surface on the device (its host syncs for the sizes
    included), on Warp's stream."""
    import cupy
    import warp as wp

    from .timing import time_synced

    cubes = _warp_cubes(grid)
    field = wp.array(_warp_field(grid), dtype=wp.float32, device="cuda")

    def once():
        for value in values:
            cubes.surface(field, value)

    # Warp's work runs on its own stream: the spin and the events on it, through CuPy.
    with cupy.cuda.ExternalStream(wp.get_stream("cuda").cuda_stream):
        return time_synced(once, repeat=max(repeat, 3))


def vortex_grid(n_points: int) -> tuple[Any, float]:
    """A Taylor-Green vortex velocity (float32) on a uniform cube of about
    ``n_points`` points, and a Q-criterion isovalue that cuts its vortex tubes."""
    size = max(int(round(n_points ** (1 / 3))), 8)
    spacing = 2 * np.pi / (size - 1)
    grid = daxpy.UniformGrid(dims=(size,) * 3, spacing=(spacing,) * 3)
    axis = grid.axis_coordinates(0).astype(np.float32)
    x, y, z = axis, axis[:, None], axis[:, None, None]
    velocity = np.empty((size, size, size, 3), np.float32)
    velocity[..., 0] = np.sin(x) * np.cos(y) * np.cos(z)
    velocity[..., 1] = -np.cos(x) * np.sin(y) * np.cos(z)
    velocity[..., 2] = 0.0
    grid.point_data["velocity"] = velocity.reshape(-1, 3)
    return grid, 0.1


def pyvista_qcriterion(grid, value: float) -> Timed:
    """PyVista: ``compute_derivative(qcriterion=True)`` then ``contour``, on STDThread."""
    from . import vtk_runs as vr  # VTK only where VTK runs: the suite runs without it
    mesh = grid.to_pyvista()

    def run():
        with vr.smp_backend("STDThread"):
            q = mesh.compute_derivative(scalars="velocity", gradient=False, qcriterion=True)
            return q.contour([value], scalars="qcriterion")

    def measure(surface) -> Surface:
        faces = surface.faces.reshape(-1, 4)[:, 1:]
        return Surface(int(faces.shape[0]), triangle_area(surface.points, faces))

    return Timed(run, measure)


def daxpy_qcriterion(grid, value: float, backend: str) -> Timed:
    """daxpy's pipeline: gradient -> Q-criterion -> contour, host to host."""

    def run():
        pipe = daxpy.pipeline(grid)
        q = pipe.gradient("velocity", qcriterion=True, compute_gradient=False)
        q.contour(values=[value], compute_scalars=False, interpolate=False)
        return pipe.run(backend=backend)

    return Timed(run, of_polydata)
