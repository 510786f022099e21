"""Clip: keep one side of a scalar's value or of an implicit plane, box or sphere,
cutting cells as vtkTableBasedClipDataSet does.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import Clip
>>> g = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0)})
>>> Clip(plane=((1, 1, 1), (1, 0, 0)), backend="cpu")(g).n_cells  # 4 cells, 4 flat ones
8
"""

from __future__ import annotations

from functools import cache
from typing import Any, Callable, Sequence, cast

import numpy as np

from daxpy.data.dataset import DataSet
from daxpy.data.unstructured import UnstructuredGrid
from daxpy.data.verbs import Verb, register_verb
from daxpy.engine.backend import backend_for, resolve_backend
from daxpy.engine.dispatch import execute
from daxpy.engine.geometry_chunks import cells_now
from daxpy.errors import ArgumentError, FieldError

from daxpy.worklets._marching import kept_side
from daxpy.worklets.plane_cuts import plane_clip_cpu

from ._clip_output import clipped_grid
from ._geometry import GeometryFilter, last_step
from ._implicit import (axis_distance, axis_terms, coordinate_columns, implicit_function,
                        plane_terms, points_distance)
from ._surface_cells import as_unstructured
from ._whole_cells import whole_cells

__all__ = ["Clip"]


class Clip(GeometryFilter):
    """The part of a grid on one side of a scalar's value, or of an implicit
    plane, box or sphere.

    Parameters
    ----------
    field : str, optional
        The point scalars to clip by (a cell field is averaged to the points
        first); not with an implicit function.
    value : float
        Keep where the scalars (or the implicit function) are at or above it.
    plane : (origin, normal), optional
        Keep the side the normal points to (the function ``(p - origin) . normal``).
    box : (xmin, xmax, ymin, ymax, zmin, zmax), optional
        Keep outside the box (vtkBox's signed distance; ``invert`` keeps inside).
    sphere : (center, radius), optional
        Keep outside the sphere (``|p - center|^2 - radius^2``).
    invert : bool
        Keep the other side (VTK's InsideOut).
    both : bool
        Return ``(kept, clipped away)``.
    crinkle : bool
        Keep whole cells: every cell with a kept corner, uncut.
    association, backend, nan_policy
        As for every filter that reads a field (:class:`~daxpy.filters.FieldFilter`).

    Raises
    ------
    ArgumentError
        Without a field or one implicit function (or with both), on a zero
        normal, a non-positive radius or inverted box bounds.
    FieldError
        If the field has more than one component.

    Notes
    -----
    Cells are cut with vtkTableBasedClipDataSet's case tables (derived from the
    installed VTK and tested against it): the same cells, of the same types.
    Output points are the kept corners, then one point per cut edge, then the
    tables' centre points. A kept corner's point fields are copied as they are (as
    VTK copies them: infinities, NaN and every integer kept); the others' are
    interpolated with the same weights (integers rounded); cell fields are carried. A NaN scalar is never "at or above":
    its corners are clipped away (kept with ``invert``). ``invert`` uses VTK's
    InsideOut tables, which keep the other side's cells of each case (at saddles
    they differ from clipping the negated scalars).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.array([0.0, 1, 2])})
    >>> kept = Clip("t", 0.5, backend="cpu")(g)
    >>> kept.points()[:, 0].tolist(), kept.point_data["t"].tolist()
    ([1.0, 2.0, 0.5], [1.0, 2.0, 0.5])
    """

    verb = "clip"
    device_results = True
    makes_family = "unstructured"

    def __init__(self, field: str | None = None, value: float = 0.0, *,
                 plane: Sequence[Any] | None = None, box: Sequence[float] | None = None,
                 sphere: Sequence[Any] | None = None, invert: bool = False,
                 both: bool = False, crinkle: bool = False, association: str | None = None,
                 backend: str = "auto", nan_policy: str = "propagate"):
        super().__init__(backend=backend, nan_policy=nan_policy)
        given = [f for f in (field, plane, box, sphere) if f is not None]
        if len(given) != 1:
            raise ArgumentError("clip by a field, a plane, a box or a sphere: give exactly one")
        if not np.isfinite(value):
            raise ArgumentError(f"value must be finite, got {value!r}")
        self.field, self.value, self.association = field, float(value), association
        self.function = implicit_function(plane, box, sphere)
        self.plane = None if plane is None else plane_terms(plane)
        self.invert, self.both, self.crinkle = bool(invert), bool(both), bool(crinkle)

    def reads(self) -> dict[str, str | None]:
        return {} if self.field is None else {self.field: self.association}

    def make(self, dataset: DataSet) -> Any:
        if dataset.family == "polydata":
            # As vtkTableBasedClipDataSet: the surface's cells, clipped into an
            # unstructured grid of vertices, lines, triangles and quads.
            dataset = as_unstructured(dataset, "Clip", degenerate=True)
        # The clip's scalars, made once where a side needs them (a plane's clip on
        # the GPU makes its distance where its kernels read it).
        scalars = cache(lambda: self._scalars(dataset))
        kept = self._side(dataset, scalars, self.invert)
        if not self.both:
            return kept
        return kept, self._side(dataset, scalars, not self.invert)

    def _side(self, dataset: DataSet, scalars: Callable[[], Any],
              invert: bool) -> UnstructuredGrid:
        if self.crinkle:
            # Whole cells: those with a kept corner (the cells the clip would cut or keep).
            inside = kept_side(scalars(), self.value, invert)
            made = execute("threshold", dataset, inside.astype(np.float64), "points",
                           backend=self.backend, at="points", lower=0.5, upper=1.5,
                           all_points=False, ids=False)
            return whole_cells(dataset, made, f"clip of {dataset.name}")
        made = self._plane_clip(dataset, invert)
        if made is None:
            made = execute("clip", dataset, scalars(), "points", backend=self.backend,
                           value=self.value, invert=invert)
        return clipped_grid(dataset, made)

    def _plane_clip(self, dataset: Any, invert: bool) -> Any:
        """The clip of a 3-D image or rectilinear grid by a plane, its distance made
        where it is read from the axes' terms: on the GPU by the row kernels
        (:func:`daxpy.worklets.clip.clip_plane_cells`), on the host by the compiled
        rows (:mod:`daxpy.worklets.plane_cuts`). No distance field of the grid's size
        (1 GB of float64 at 512³) and no passes to make it; the bits of the clip of
        that field. None where the field is clipped instead (other grids, chunked
        runs, no Numba)."""
        dims = tuple(int(d) for d in dataset.dims) if dataset.family in (
            "uniform", "rectilinear") else ()
        if self.plane is None or not dims or min(dims) < 2 or cells_now() is not None:
            return None
        if resolve_backend(backend_for(dataset, self.backend)) != "cuda":
            dataset.check_unchanged()
            return plane_clip_cpu(dataset, axis_terms(dataset, *self.plane), value=self.value,
                                  invert=invert)
        import cupy

        from daxpy.cuda.memory import guarded
        from daxpy.cuda.plane_distance import PlaneDistance
        from daxpy.worklets.clip import clip_plane_cells

        dataset.check_unchanged()
        px, py, pz = axis_terms(dataset, *self.plane, cupy)
        terms = PlaneDistance(px, py, pz, x_first=True)
        return guarded(clip_plane_cells, dataset, "clip", dataset, terms, self.value, invert)

    def _scalars(self, dataset: DataSet) -> Any:
        if self.function is not None:
            backend = resolve_backend(self.backend)
            if self.plane is not None and backend == "cpu":
                # The same terms in the same order, on every core: from an image's or
                # rectilinear grid's axes, from other grids' points as they are (no
                # float64 copy of them).
                if dataset.family in ("uniform", "rectilinear"):
                    return axis_distance(axis_terms(dataset, *self.plane), dataset.n_points,
                                         x_first=True)
                return points_distance(dataset, *self.plane)
            if self.plane is not None and dataset.family not in ("uniform", "rectilinear"):
                # One kernel over the device points, the same bits: the columns' array
                # program was ten passes (0.9 of a 10M-hexahedra clip's 3.0 ms, H100).
                import cupy

                return points_distance(dataset, *self.plane, xp=cupy)
            # Evaluated where the clip runs: no host pass over every point for a GPU clip.
            columns = coordinate_columns(dataset, backend)
            # Each point's value, whatever the columns broadcast from, in point id order.
            return self.function(*columns).reshape(-1)
        field = cast(str, self.field)  # exactly one of field and function is given
        values, association = dataset.field(field, self.association)
        if values.ndim > 1 and values.shape[1] != 1:
            raise FieldError(f"Clip cuts by a scalar field; {field!r} has "
                             f"{values.shape[1]} components")
        values = self.checked(field, values.reshape(-1))
        if association == "cells":
            values = execute("cell_to_point", dataset, values, "cells", backend=self.backend)
        return values


def clip(node: Any, value: float = 0.0, result: str | None = None, **options: Any) -> Any:
    """Keep where this field is at or above ``value``: the pipeline's last stage,
    making an unstructured grid.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.array([0.0, 1, 2])})
    >>> pipe = daxpy.pipeline(g)
    >>> _ = pipe.field("t").clip(0.5)
    >>> pipe.run(backend="cpu").n_cells
    2
    """
    return last_step(node, "clip", result, lambda field: Clip(field, value, **options))


def _parse_clip(step: str, argument: str) -> dict:
    """``clip=VALUE`` (keep at or above) or ``clip=-VALUE,invert`` (keep below).

    Examples
    --------
    >>> _parse_clip("clip=2.5,invert", "2.5,invert")
    {'value': 2.5, 'invert': True}
    """
    value, comma, flag = argument.partition(",")
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not np.isfinite(number) or (comma and flag != "invert"):
        raise ArgumentError(f"step {step!r}: clip takes a value, then ',invert' to keep "
                            "what lies below it (clip=0.5 or clip=0.5,invert)")
    return {"value": number, "invert": True} if comma else {"value": number}


register_verb(Verb("clip", clip, 63,
                   "keep where the field is at or above VALUE (,invert: below), cells cut "
                   "as VTK's table-based clip; the last step: writes an unstructured grid",
                   argument="VALUE[,invert]", required=True, parse=_parse_clip))


def _pyvista_clip_result(mesh: Any, make: Clip, progress_bar: bool) -> Any:
    from daxpy.io.interop import from_vtk

    from ._pyvista import geometry_result

    made = make(from_vtk(mesh))
    if isinstance(made, tuple):
        return tuple(geometry_result(m, progress_bar, "Clipping") for m in made)
    return geometry_result(made, progress_bar, "Clipping")


def pyvista_clip(mesh: Any, normal: str | Sequence[float] | None = None,
                 origin: Sequence[float] | None = None, invert: bool = True,
                 value: float = 0.0, inplace: bool = False, return_clipped: bool = False,
                 progress_bar: bool = False, crinkle: bool = False, *,
                 backend: str = "auto") -> Any:
    """Clip by a plane.

    As :meth:`pyvista.DataObjectFilters.clip` (vtkTableBasedClipDataSet), computed by
    :class:`daxpy.filters.Clip`: ``invert=True`` (PyVista's default) keeps the side
    the normal points away from.

    Parameters
    ----------
    normal : {"x", "y", "z", "-x", "-y", "-z"} or (3,) floats, optional
        Default ``"x"``.
    origin : (3,) floats, optional
        Default: the centre of the bounds.
    invert, return_clipped, crinkle, progress_bar : bool
    value : float
        The plane is moved by ``value`` along its normal.
    inplace : bool
        Refused when True (daxpy makes a new dataset).
    backend : {"auto", "cpu", "cuda"}

    Returns
    -------
    pyvista.UnstructuredGrid, or two with ``return_clipped``

    Examples
    --------
    >>> import pyvista as pv
    >>> import daxpy.accessor
    >>> mesh = pv.ImageData(dimensions=(3, 3, 3))
    >>> mesh.daxpy.clip("x").n_cells
    4
    """
    if inplace:
        raise ArgumentError("inplace=True is not supported: daxpy makes a new dataset")
    axes = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}
    if normal is None:
        normal = "x"
    if isinstance(normal, str):
        sign = -1.0 if normal.startswith("-") else 1.0
        if normal.lstrip("-") not in axes:
            raise ArgumentError(f"normal must be x, y, z, -x, -y, -z or three numbers, "
                                f"got {normal!r}")
        normal = tuple(sign * c for c in axes[normal.lstrip("-")])
    centre = np.asarray(mesh.center if origin is None else origin, dtype=np.float64)
    make = Clip(plane=(centre, normal), value=value, invert=invert, both=return_clipped,
                crinkle=crinkle, backend=backend)
    return _pyvista_clip_result(mesh, make, progress_bar)


register_verb(Verb("clip", pyvista_clip, 63, "PyVista's clip (vtkTableBasedClipDataSet)",
                   on="pyvista"))


def pyvista_clip_scalar(mesh: Any, scalars: str | None = None, invert: bool = True,
                        value: float = 0.0, inplace: bool = False, progress_bar: bool = False,
                        both: bool = False, *, backend: str = "auto") -> Any:
    """Clip by a scalar array.

    As :meth:`pyvista.DataSetFilters.clip_scalar`, computed by :class:`daxpy.filters.Clip`:
    ``invert=True`` (PyVista's default) keeps the values below ``value``.

    Parameters
    ----------
    scalars : str, optional
    invert, both, progress_bar : bool
    value : float
    inplace : bool
        Refused when True.
    backend : {"auto", "cpu", "cuda"}

    Returns
    -------
    pyvista.UnstructuredGrid, or two with ``both``

    Examples
    --------
    >>> import pyvista as pv
    >>> import daxpy.accessor
    >>> mesh = pv.ImageData(dimensions=(3, 3, 3))
    >>> mesh.point_data["x"] = mesh.points[:, 0]
    >>> mesh.daxpy.clip_scalar("x", value=1.0).n_cells
    4
    """
    from ._pyvista import array_name

    if inplace:
        raise ArgumentError("inplace=True is not supported: daxpy makes a new dataset")
    name, association = array_name(mesh, scalars, "point")
    make = Clip(name, value, invert=invert, both=both, association=association,
                backend=backend)
    return _pyvista_clip_result(mesh, make, progress_bar)


register_verb(Verb("clip_scalar", pyvista_clip_scalar, 64,
                   "PyVista's clip_scalar (vtkTableBasedClipDataSet)", on="pyvista"))
