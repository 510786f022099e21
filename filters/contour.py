"""Contour: isosurfaces (3-D cells), isolines (2-D cells) and points (lines) of a
scalar field, as vtkFlyingEdges3D/2D and vtkContourFilter make them.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import Contour
>>> g = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0)})
>>> surface = Contour("t", values=[13.5], backend="cpu")(g)
>>> surface.n_points, surface.n_cells_of("polys")
(13, 14)
"""

from __future__ import annotations

from typing import Any, Sequence, cast

import numpy as np

from daxpy.data.arrays import all_finite, array_module
from daxpy.data.dataset import DataSet
from daxpy.data.polydata import PolyData
from daxpy.data.verbs import Verb, register_verb
from daxpy.engine.dispatch import execute
from daxpy.errors import ArgumentError, FieldError
from daxpy.io.interop import from_vtk

from ._geometry import GeometryFilter, last_step
from ._surface import cut_to_polydata, field_names

__all__ = ["Contour"]


class Contour(GeometryFilter):
    """The surfaces (or lines, or points) where a scalar field equals given values.

    3-D cells give triangles, 2-D cells segments and lines points, cut as VTK's
    case tables cut them (vtkFlyingEdges3D and vtkFlyingEdges2D on structured
    grids, vtkContourFilter's cells on the others). Points on the same edge are one
    point, so the surface is connected; their order is the cut edges' ``(lo, hi)``
    order and the cells follow their input cells, on both backends alike.

    Parameters
    ----------
    field : str
        A scalar field (one component). A cell field is first averaged to the
        points, as VTK does.
    values : float or sequence of float, optional
        The values to contour at, in order.
    n_values : int, optional
        Instead of ``values``: this many values evenly spread over ``rng``, ends
        included (vtkContourFilter's ``GenerateValues``).
    rng : (float, float), optional
        The range for ``n_values``; by default the field's finite range.
    compute_normals : bool
        Add ``Normals`` (float32): the field's gradient interpolated to each point,
        normalized and pointing toward lower values, as VTK's.
    compute_scalars : bool
        Add the field itself, equal to each point's contour value (VTK's name).
    interpolate : bool or sequence of str
        Point fields interpolated onto the output points (True: all; each keeps its
        dtype) and cell fields carried from the cell each output cell was cut from.
        The fewer asked for, the less the CPU cut writes: with none (False, or only
        the contoured field), no edge per point; with no cell field, no input cell
        per triangle.
    merge_points : bool
        True (default): one point per cut edge. False: every output cell has its own
        points (VTK without a locator).
    association, backend, nan_policy
        As for every filter that reads a field (:class:`~daxpy.filters.FieldFilter`).

    Raises
    ------
    ArgumentError
        If neither or both of ``values`` and ``n_values`` are given, or on
        polygons of more than four corners.
    FieldError
        If the field has more than one component.

    Notes
    -----
    Values outside the field's range give an empty PolyData, not an error. A cell
    with a NaN or Inf corner value makes no output (its surface cannot be placed);
    with ``nan_policy="raise"`` such a field is refused. Where a grid value equals
    a contour value exactly, the edges that meet there give one point, and the
    triangles that collapse are dropped, as vtkContourFilter does
    (vtkFlyingEdges3D keeps the coinciding points apart). On 2-D image data,
    vtkContourFilter resolves one
    saddle case (corners 1 and 2 in) the other way than vtkFlyingEdges2D, whose
    choice daxpy follows.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2), point_data={"t": np.array([0.0, 1, 2, 3])})
    >>> lines = Contour("t", values=[1.5], backend="cpu")(g)
    >>> lines.n_cells_of("lines"), lines.point_data["t"].tolist()
    (1, [1.5, 1.5])
    """

    verb = "contour"
    device_results = True
    makes_family = "polydata"

    def __init__(self, field: str, values: float | Sequence[float] | None = None, *,
                 n_values: int | None = None, rng: Sequence[float] | None = None,
                 compute_normals: bool = False, compute_scalars: bool = True,
                 interpolate: bool | Sequence[str] = True, merge_points: bool = True,
                 association: str | None = None, backend: str = "auto",
                 nan_policy: str = "propagate"):
        super().__init__(backend=backend, nan_policy=nan_policy)
        if not isinstance(field, str) or not field:
            raise ArgumentError(f"field must be a non-empty field name, got {field!r}")
        if (values is None) == (n_values is None):
            raise ArgumentError("give the contour values, or n_values (not both)")
        self.field, self.association = field, association
        self.values = None if values is None else _checked_values(values)
        if n_values is not None and (isinstance(n_values, bool) or not isinstance(
                n_values, (int, np.integer)) or n_values < 1):
            raise ArgumentError(f"n_values must be a positive integer, got {n_values!r}")
        self.n_values, self.rng = n_values, None if rng is None else _checked_values(rng)
        if self.rng is not None and len(self.rng) != 2:
            raise ArgumentError(f"rng must be (low, high), got {rng!r}")
        self.compute_normals, self.compute_scalars = bool(compute_normals), bool(compute_scalars)
        self.interpolate, self.merge_points = interpolate, bool(merge_points)

    def reads(self) -> dict[str, str | None]:
        return {self.field: self.association}

    def contour_values(self, scalars: Any) -> list[float]:
        """The values to contour at: given, or spread over the range.

        Examples
        --------
        >>> Contour("t", n_values=3).contour_values(np.array([0.0, 4.0]))
        [0.0, 2.0, 4.0]
        """
        if self.values is not None:
            return self.values
        low, high = self.rng or _finite_range(scalars)
        return [float(v) for v in np.linspace(low, high, int(self.n_values or 1))]

    def make(self, dataset: DataSet) -> PolyData:
        scalars = self._scalars(dataset)
        # What the surface reads of each cut: its edges to interpolate a field (not
        # the cut field, written as the value) or the normals along, its input cells
        # to carry cell fields by; the compiled march writes only those.
        point_names, cell_names = field_names(dataset, self.interpolate)
        scalar_name = self.field if self.compute_scalars else None
        reads = {"edges": self.compute_normals or any(n != scalar_name for n in point_names),
                 "sources": bool(cell_names)}
        cuts = [execute("contour", dataset, scalars, "points", backend=self.backend,
                        value=value, **reads) for value in self.contour_values(scalars)]
        normals = None
        if self.compute_normals:
            normals = execute("point_gradient", dataset, scalars, "points",
                              backend=self.backend)
        return cut_to_polydata(dataset, cuts, self.contour_values(scalars),
                               scalar_name=self.field if self.compute_scalars else None,
                               scalar_dtype=np.dtype(scalars.dtype), fields=self.interpolate,
                               gradient=normals, merge_points=self.merge_points)

    def make_in_slabs(self, dataset: DataSet) -> PolyData | None:
        """:meth:`make` on the GPU for a host grid, its upload, cut and download
        overlapped slab by slab (:mod:`daxpy.filters._contour_slabs`); None where
        the grid or the options do not qualify (the caller makes it whole).

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> g = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0)})
        >>> Contour("t", values=[13.5]).make_in_slabs(g) is None  # too small for slabs
        True
        """
        from ._contour_slabs import contour_in_slabs

        dataset.check_unchanged()
        return contour_in_slabs(self, dataset)

    def _scalars(self, dataset: DataSet) -> Any:
        values, association = dataset.field(self.field, self.association)
        if values.ndim > 1 and values.shape[1] != 1:
            raise FieldError(f"Contour cuts a scalar field; {self.field!r} has "
                             f"{values.shape[1]} components (contour its magnitude, or one "
                             "component through a FieldMap)")
        values = self.checked(self.field, values.reshape(-1))
        if association == "cells":
            # As VTK: cell scalars are averaged to the points first.
            values = execute("cell_to_point", dataset, values, "cells", backend=self.backend)
        return values


def _checked_values(values: Any) -> list[float]:
    flat = np.atleast_1d(np.asarray(values, dtype=np.float64)) if not isinstance(
        values, str) else None
    if flat is None or flat.ndim != 1 or flat.size == 0 or not np.isfinite(flat).all():
        raise ArgumentError(f"contour values must be finite numbers, got {values!r}")
    return [float(v) for v in flat]


def _finite_range(scalars: Any) -> tuple[float, float]:
    xp = array_module(scalars)
    finite = scalars[xp.isfinite(scalars)] if not all_finite(scalars) else scalars
    if finite.size == 0:
        raise FieldError("the contour field has no finite value to spread n_values over")
    return float(finite.min()), float(finite.max())


def contour(node: Any, values: float | Sequence[float] | None = None,
            result: str | None = None, **options: Any) -> Any:
    """Contour this scalar field: the pipeline's last stage, making a PolyData.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0)})
    >>> pipe = daxpy.pipeline(g)
    >>> _ = pipe.field("t").contour(values=[13.5])
    >>> pipe.run(backend="cpu").n_points
    13
    """
    return last_step(node, "contour", result, lambda field: Contour(field, values, **options))


def _parse_contour(step: str, argument: str) -> dict:
    """``contour=V1[,V2...]``: the values.

    Examples
    --------
    >>> _parse_contour("contour=1,2.5", "1,2.5")
    {'values': [1.0, 2.5]}
    """
    try:
        values = [float(v) for v in argument.split(",")]
    except ValueError:
        values = []
    if not values or not all(np.isfinite(values)):
        raise ArgumentError(f"step {step!r}: contour takes its values, numbers separated "
                            "by commas (contour=0.5,1.5)")
    return {"values": values}


def pyvista_contour(mesh: Any, isosurfaces: int | Sequence[float] = 10,
                    scalars: str | None = None, compute_normals: bool = False,
                    compute_gradients: bool = False, compute_scalars: bool = True,
                    rng: Sequence[float] | None = None, preference: str = "point",
                    method: str = "contour", progress_bar: bool = False, *,
                    backend: str = "auto") -> Any:
    """Isosurfaces (3-D cells) or isolines (2-D cells) of a scalar array.

    As :meth:`pyvista.DataSetFilters.contour` (vtkContourFilter), computed by
    :class:`daxpy.filters.Contour`: ``isosurfaces`` values evenly spread over
    ``rng`` (default: the array's range), or the values given.

    Parameters
    ----------
    isosurfaces : int or sequence of float
    scalars : str, optional
        The array; by default the active scalars. Cell arrays are averaged to
        the points first, as VTK does.
    compute_normals, compute_scalars : bool
        Add ``Normals``, and the array itself (each point's value).
    compute_gradients : bool
        Refused when True (use ``compute_normals``, or
        ``mesh.daxpy.compute_derivative()`` before contouring).
    rng : (float, float), optional
    preference : {"point", "cell"}
    method : {"contour", "marching_cubes", "flying_edges"}
        Accepted for PyVista's signature: daxpy's surfaces are the same for all.
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
    >>> mesh.point_data["d"] = mesh.points[:, 0]
    >>> mesh.daxpy.contour([0.5]).n_cells
    8
    """
    from ._pyvista import array_name, geometry_result

    if compute_gradients:
        raise ArgumentError("compute_gradients=True is not a daxpy output; use "
                            "compute_normals, or mesh.daxpy.compute_derivative() first")
    if method not in ("contour", "marching_cubes", "flying_edges"):
        raise ArgumentError(f"method must be 'contour', 'marching_cubes' or 'flying_edges', "
                            f"got {method!r}")
    name, association = array_name(mesh, scalars, preference)
    count = isinstance(isosurfaces, (int, np.integer)) and not isinstance(isosurfaces, bool)
    make = Contour(name, None if count else isosurfaces,
                   n_values=int(cast(int, isosurfaces)) if count else None, rng=rng, compute_normals=compute_normals,
                   compute_scalars=compute_scalars, association=association, backend=backend)
    return geometry_result(make(from_vtk(mesh)), progress_bar, "Computing Contour")


register_verb(Verb("contour", pyvista_contour, 60,
                   "PyVista's contour (vtkContourFilter)", on="pyvista"))


register_verb(Verb("contour", contour, 60,
                   "isosurface (3-D cells), isolines (2-D) of a scalar field at the values; "
                   "the last step: writes a surface (.vtp)",
                   argument="V1[,V2...]", required=True, parse=_parse_contour))
