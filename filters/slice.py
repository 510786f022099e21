"""Slice: cut a grid by planes (vtkCutter), with every field interpolated.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import Slice
>>> g = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0)})
>>> Slice(normal="z", origin=(0, 0, 0.5), backend="cpu")(g).dims
(3, 3, 1)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from daxpy.data.arrays import array_module, to_host
from daxpy.data.verbs import Verb, register_verb
from daxpy.engine.backend import backend_for, resolve_backend
from daxpy.engine.dispatch import execute
from daxpy.engine.geometry_chunks import cells_now
from daxpy.errors import ArgumentError
from daxpy.stream.placement import placed
from daxpy.worklets._edge_cut import EdgeCut
from daxpy.worklets._marching import TABLES, at_least_bound
from daxpy.worklets.plane_cuts import plane_cut_cpu

from ._axis_slice import axis_slice
from ._geometry import GeometryFilter, dataset_array, last_step
from ._implicit import axis_distance, axis_terms, plane_distance
from ._surface import cut_to_polydata, field_names

__all__ = ["Slice"]

_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def _plane(origin: Any, normal: Any) -> tuple[np.ndarray | None, np.ndarray]:
    """A checked ``(origin, unit normal)``; origin None means the grid's centre."""
    if isinstance(normal, str):
        if normal.lower() not in _AXES:
            raise ArgumentError(f"normal must be 'x', 'y', 'z' or three numbers, got {normal!r}")
        normal = _AXES[normal.lower()]
    direction = np.asarray(normal, dtype=np.float64).reshape(-1)
    if direction.shape != (3,) or not np.isfinite(direction).all():
        raise ArgumentError(f"a plane's normal must be three finite numbers, got {normal!r}")
    length = float(np.linalg.norm(direction))
    if length == 0.0:
        raise ArgumentError("a plane's normal must not be zero")
    if origin is not None:
        origin = np.asarray(origin, dtype=np.float64).reshape(-1)
        if origin.shape != (3,) or not np.isfinite(origin).all():
            raise ArgumentError(f"a plane's origin must be three finite numbers, got {origin!r}")
    return origin, direction / length


class Slice(GeometryFilter):
    """The cut of a grid by one or several planes, with its fields interpolated.

    Parameters
    ----------
    normal : {"x", "y", "z"} or (3,) floats
        The plane's normal (normalized here; zero is refused).
    origin : (3,) floats, optional
        A point of the plane; by default the centre of the grid's bounds.
    planes : sequence of (origin, normal), optional
        Instead of ``normal`` and ``origin``: several planes, cut in order into
        one PolyData.
    structured : bool
        On a 3-D uniform or rectilinear grid, a single plane normal to an axis
        gives a grid of the input's type with one point along that axis (no
        triangulation; fields between the two grid planes around it). False: a
        PolyData as for every other grid.
    interpolate : bool or sequence of str
        Point fields interpolated onto the cut (True: all), cell fields carried. The
        CPU cut of an image or rectilinear grid writes the cut edges only for point
        fields, and each triangle's input cell only for cell fields.
    backend, nan_policy
        As for every filter (:class:`~daxpy.filters.Filter`).

    Raises
    ------
    ArgumentError
        On a zero or non-finite normal or origin, or an axis-aligned plane
        outside the grid with ``structured=True``.

    Notes
    -----
    A plane cuts as the contour at 0 of the signed distance to it does (VTK's
    vtkCutter cuts the same way): 3-D cells give triangles, 2-D cells segments.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0)})
    >>> cut = Slice(normal=(1, 1, 0), origin=(1, 1, 1), backend="cpu")(g)
    >>> type(cut).__name__, cut.n_cells_of("polys")
    ('PolyData', 8)
    """

    verb = "slice"
    device_results = True
    makes_family = "polydata"

    def __init__(self, normal: str | Sequence[float] = "x",
                 origin: Sequence[float] | None = None, *,
                 planes: Sequence[tuple[Any, Any]] | None = None, structured: bool = True,
                 interpolate: bool | Sequence[str] = True, backend: str = "auto",
                 nan_policy: str = "propagate"):
        super().__init__(backend=backend, nan_policy=nan_policy)
        given = [(origin, normal)] if planes is None else list(planes)
        if not given:
            raise ArgumentError("planes must hold at least one (origin, normal)")
        self.planes = [_plane(*plane) for plane in given]
        self.structured, self.interpolate = bool(structured), interpolate

    def reads(self) -> dict[str, str | None]:
        return {}

    def made_family(self, dataset: Any) -> str:
        """The grid family :meth:`make` gives for ``dataset``.

        Examples
        --------
        >>> import daxpy
        >>> Slice("z").made_family(daxpy.UniformGrid(dims=(2, 2, 2)))
        'uniform'
        """
        return dataset.family if self._axis(dataset) is not None else "polydata"

    def _axis(self, dataset: Any) -> int | None:
        """The axis of a single axis-aligned plane sliced as a structured grid."""
        if not (self.structured and len(self.planes) == 1
                and dataset.family in ("uniform", "rectilinear") and min(dataset.dims) > 1):
            return None
        normal = self.planes[0][1]
        axes = np.flatnonzero(normal)
        return int(axes[0]) if axes.size == 1 else None

    def _origin(self, dataset: Any, origin: np.ndarray | None) -> np.ndarray:
        if origin is not None:
            return origin
        if dataset.family in ("uniform", "rectilinear"):
            axes = [dataset.axis_coordinates(a) for a in range(3)]
            return np.array([(a.min() + a.max()) / 2 for a in axes])
        points = to_host(dataset.points())
        if points.shape[0] == 0:
            return np.zeros(3)
        return (points.min(axis=0) + points.max(axis=0)).astype(np.float64) / 2

    def make(self, dataset: Any) -> Any:
        axis = self._axis(dataset)
        if axis is not None:
            made = axis_slice(dataset, axis,
                              float(self._origin(dataset, self.planes[0][0])[axis]))
            # Its fields, made where the input's are, go where the run puts the result.
            return made.with_fields({n: placed(v) for n, v in made.point_data.items()},
                                    {n: placed(v) for n, v in made.cell_data.items()})
        # The cuts' edges only to interpolate point fields along, their input cells
        # only to carry cell fields by (the compiled cut writes only those).
        point_names, cell_names = field_names(dataset, self.interpolate)
        reads = {"edges": bool(point_names), "sources": bool(cell_names)}
        cuts = []
        for origin, normal in self.planes:
            origin = self._origin(dataset, origin)
            cut = _plane_cut(dataset, origin, normal, self.backend, **reads)
            if cut is None:
                distance = _signed_distance(dataset, origin, normal, self.backend)
                cut = execute("contour", dataset, distance, "points", backend=self.backend,
                              value=0.0, **reads)
            cuts.append(cut)
        surface = cut_to_polydata(dataset, cuts, [0.0] * len(cuts), fields=self.interpolate)
        surface.name = f"slice of {dataset.name}"
        return surface


def _plane_cut(dataset: Any, origin: np.ndarray, normal: np.ndarray, backend: str,
               **reads: bool) -> Any:
    """The cut of a 3-D image or rectilinear grid by a plane, its distance made by the
    contour's rows where they read it from the axes' terms: on the GPU by the row
    kernels (:class:`daxpy.cuda.plane_distance.PlaneDistance`), on the host by the
    compiled contour (:func:`daxpy.worklets._plane_cpu.plane_cut`). No distance field
    of the grid's size (1 GB of float64 at 512³) and no pass to make it; the bits of
    the cut of that field. None where the field is cut instead (other grids, chunked
    runs, no Numba). ``reads`` (``edges``, ``sources``): what the surface reads of the
    cut, which the compiled cut writes only then.

    Examples
    --------
    >>> import daxpy
    >>> _plane_cut(daxpy.UniformGrid(dims=(3, 3, 3)), np.full(3, 0.9), np.ones(3), "cpu").n_points
    15
    >>> _plane_cut(daxpy.UniformGrid(dims=(3, 3)), np.zeros(3), np.ones(3), "cpu") is None
    True
    """
    dims = tuple(int(d) for d in dataset.dims) if dataset.family in ("uniform",
                                                                      "rectilinear") else ()
    if not dims or min(dims) < 2 or cells_now() is not None:
        return None
    if resolve_backend(backend_for(dataset, backend)) != "cuda":
        # The compiled contour's rows read the plane's terms where they would read the
        # field (None without Numba: the field is cut instead).
        dataset.check_unchanged()
        return plane_cut_cpu(dataset, axis_terms(dataset, origin, normal), **reads)
    import cupy

    from daxpy.cuda.contour_rows import contour_rows
    from daxpy.cuda.memory import guarded
    from daxpy.cuda.plane_distance import PlaneDistance

    dataset.check_unchanged()
    terms = PlaneDistance(*axis_terms(dataset, origin, normal, cupy))
    found = guarded(contour_rows, dataset, "slice", terms, dims, 0.0,
                    at_least_bound(np.dtype(np.float64), 0.0), TABLES["voxel"])
    if found is None:
        return None
    lo, hi, t, triangles, source = found
    return EdgeCut(lo=lo, hi=hi, t=t, cells={3: triangles}, source={3: source})


def _signed_distance(dataset: Any, origin: np.ndarray, normal: np.ndarray,
                     backend: str) -> Any:
    """``(p - origin) . normal`` at every point, float64, computed where the cut runs:
    uniform and rectilinear grids from their axes (three short terms per point on
    the device, no host pass or upload of a field of the grid's size), other grids
    where their points are (on the device, copied once per dataset)."""
    structured = dataset.family in ("uniform", "rectilinear")
    xp: Any = np if structured else array_module(dataset.points())
    if resolve_backend(backend) == "cuda":
        import cupy

        xp = cupy
    if structured:
        return axis_distance(axis_terms(dataset, origin, normal, xp), dataset.n_points)
    points = dataset_array(dataset, dataset.points(), xp)
    return plane_distance(points, np.asarray(origin).tolist(), np.asarray(normal).tolist())


def slice_verb(node: Any, normal: str | Sequence[float] = "x",
               origin: Sequence[float] | None = None, result: str | None = None,
               **options: Any) -> Any:
    """Slice the grid by a plane: the pipeline's last stage (the node's field is
    interpolated with the others).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0)})
    >>> pipe = daxpy.pipeline(g)
    >>> _ = pipe.field("t").magnitude().slice("z", (0, 0, 0.5))
    >>> pipe.run(backend="cpu").point_data["magnitude_1"][:3].tolist()
    [4.5, 5.5, 6.5]
    """
    return last_step(node, "slice", result,
                     lambda field: _SliceOf(field, normal, origin, **options))


class _SliceOf(Slice):
    """A pipeline's slice: it reads the node's field, so that the field is made
    before the slice and carried onto it."""

    def __init__(self, field: str, *args: Any, **options: Any):
        super().__init__(*args, **options)
        self.field = field

    def reads(self) -> dict[str, str | None]:
        return {self.field: None}


def _parse_slice(step: str, argument: str) -> dict:
    """``slice=x|y|z[,X,Y,Z]`` or ``slice=NX,NY,NZ[,X,Y,Z]``: the normal, then the origin.

    Examples
    --------
    >>> _parse_slice("slice=z,0,0,1.5", "z,0,0,1.5")
    {'normal': 'z', 'origin': [0.0, 0.0, 1.5]}
    """
    items = argument.split(",")
    try:
        normal: Any = items[0] if items[0] in _AXES else [float(v) for v in items[:3]]
        rest = items[1:] if isinstance(normal, str) else items[3:]
        origin = [float(v) for v in rest] if rest else None
        _plane(origin, normal)
    except (ValueError, ArgumentError) as err:
        raise ArgumentError(f"step {step!r}: slice takes a normal (x, y, z or NX,NY,NZ) and "
                            f"optionally an origin X,Y,Z ({err})") from None
    return {"normal": normal, "origin": origin}


register_verb(Verb("slice", slice_verb, 61,
                   "cut by a plane through ORIGIN (default: the centre) normal to x, y, z or "
                   "NX,NY,NZ; the last step: writes a surface, or a grid for an axis plane",
                   argument="NORMAL[,X,Y,Z]", required=True, parse=_parse_slice))


def pyvista_slice(mesh: Any, normal: str | Sequence[float] | None = None,
                  origin: Sequence[float] | None = None, generate_triangles: bool = False,
                  contour: bool = False, progress_bar: bool = False, *,
                  backend: str = "auto") -> Any:
    """Cut by a plane into a surface with every array interpolated.

    As :meth:`pyvista.DataObjectFilters.slice` (vtkCutter), computed by
    :class:`daxpy.filters.Slice`; the result is always a PolyData of triangles
    (3-D cells) or segments (2-D cells), as with ``generate_triangles=True``.

    Parameters
    ----------
    normal : {"x", "y", "z"} or (3,) floats, optional
        Default ``"x"``.
    origin : (3,) floats, optional
        Default: the centre of the bounds.
    generate_triangles : bool
        Accepted: daxpy's cut is triangles either way.
    contour : bool
        Refused when True (contour the slice with ``.daxpy.contour()``).
    progress_bar : bool
    backend : {"auto", "cpu", "cuda"}

    Returns
    -------
    pyvista.PolyData

    Examples
    --------
    >>> import pyvista as pv
    >>> import daxpy.accessor
    >>> mesh = pv.ImageData(dimensions=(3, 3, 3))
    >>> mesh.daxpy.slice("z").n_points
    9
    """
    from daxpy.io.interop import from_vtk

    from ._pyvista import geometry_result

    if contour:
        raise ArgumentError("contour=True is not part of daxpy's slice; contour the "
                            "result with .daxpy.contour()")
    make = Slice(normal if normal is not None else "x", origin, structured=False,
                 backend=backend)
    return geometry_result(make(from_vtk(mesh)), progress_bar, "Slicing")


register_verb(Verb("slice", pyvista_slice, 61, "PyVista's slice (vtkCutter)", on="pyvista"))
