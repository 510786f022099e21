"""Threshold: keep the cells whose scalars lie in a range (vtkThreshold).

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import Threshold
>>> g = daxpy.UniformGrid(dims=(3, 3), cell_data={"c": np.array([0.0, 1, 2, 3])})
>>> Threshold("c", upper=1.5, method="upper", backend="cpu")(g).cell_data["c"].tolist()
[2.0, 3.0]
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence, cast

import numpy as np

from daxpy.data.arrays import array_module, to_host
from daxpy.data.dataset import DataSet
from daxpy.data.unstructured import UnstructuredGrid
from daxpy.data.verbs import Verb, register_verb
from daxpy.engine.dispatch import execute
from daxpy.worklets._marching import at_least, at_most
from daxpy.errors import ArgumentError, FieldError

from ._geometry import GeometryFilter, last_step
from ._whole_cells import whole_cells
from ._surface_cells import as_unstructured

__all__ = ["Threshold"]

METHODS = ("between", "lower", "upper", "outside")
"""``between``: lower <= v <= upper; ``lower``: v <= lower; ``upper``: v >= upper;
``outside``: not between (vtkThreshold's functions, and its Invert for outside)."""

COMPONENT_MODES = ("selected", "magnitude", "any", "all")


class Threshold(GeometryFilter):
    """The cells whose scalars lie in a range, as an unstructured grid.

    Parameters
    ----------
    field : str
        The scalars: a point or cell field.
    lower, upper : float, optional
        The range's ends (both included). ``method`` says which are used.
    method : {"between", "lower", "upper", "outside"}
        ``"between"`` (default): ``lower <= v <= upper``; ``"lower"``: ``v <= lower``;
        ``"upper"``: ``v >= upper``; ``"outside"``: not between.
    all_scalars : bool
        Point scalars: keep a cell when all its points are in range (True, VTK's
        default), or when any is (False; PyVista's default).
    continuous : bool
        Point scalars with ``all_scalars=False``: keep a cell when the range of its
        points' values meets the threshold's range (vtkThreshold's
        UseContinuousCellRange; ``all_scalars=True`` wins over it, as in VTK).
    component : int or {"magnitude", "any", "all"}
        For vector scalars: one component (default 0), the magnitude, or any/all
        components in range.
    invert : bool
        Keep the cells that would be dropped.
    original_ids : bool
        Add ``vtkOriginalPointIds`` and ``vtkOriginalCellIds`` (int64), as VTK names them.
    association, backend, nan_policy
        As for every filter that reads a field (:class:`~daxpy.filters.FieldFilter`).

    Raises
    ------
    ArgumentError
        On an unknown method or component, a missing or NaN bound, or
        ``lower > upper``.
    FieldError
        If the component does not exist.

    Notes
    -----
    Kept cells keep their type and order (structured grids give hexahedra, quads
    or lines: VTK gives voxels and pixels for image and rectilinear data, which
    daxpy's unstructured grids hold as hexahedra and quads); the points
    kept are those the kept cells use, in ascending input order (VTK orders them
    by first use). A NaN scalar is in no range (comparisons with NaN are false),
    so ``invert`` keeps its cells. Every point and cell field comes along.
    With ``continuous``, VTK 9.7 compares the cell's range with both thresholds
    whatever the method, reads one component instead of the magnitude, and
    starts its maximum at ``DBL_MIN`` (a cell of negative values reaches 0);
    daxpy compares with the method's own range, and the magnitude.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(4,), point_data={"t": np.array([0.0, 1, 2, 3])})
    >>> out = Threshold("t", 0.5, 2.5, original_ids=True, backend="cpu")(g)
    >>> out.n_cells, out.point_data["vtkOriginalPointIds"].tolist()
    (1, [1, 2])
    """

    verb = "threshold"
    device_results = True
    makes_family = "unstructured"

    def __init__(self, field: str, lower: float | None = None, upper: float | None = None, *,
                 method: str = "between", all_scalars: bool = True, continuous: bool = False,
                 component: int | str = 0, invert: bool = False, original_ids: bool = False,
                 association: str | None = None, backend: str = "auto",
                 nan_policy: str = "propagate"):
        super().__init__(backend=backend, nan_policy=nan_policy)
        if not isinstance(field, str) or not field:
            raise ArgumentError(f"field must be a non-empty field name, got {field!r}")
        if method not in METHODS:
            raise ArgumentError(f"method must be one of {METHODS}, got {method!r}")
        if not (isinstance(component, (int, np.integer)) and not isinstance(component, bool)
                and component >= 0) and component not in COMPONENT_MODES[1:]:
            raise ArgumentError(f"component must be a component number or one of "
                                f"{COMPONENT_MODES[1:]}, got {component!r}")
        self.field, self.association, self.method = field, association, method
        self.lower, self.upper = _bounds(method, lower, upper)
        self.all_scalars, self.continuous = bool(all_scalars), bool(continuous)
        self.component, self.invert = component, bool(invert) != (method == "outside")
        self.original_ids = bool(original_ids)

    def reads(self) -> dict[str, str | None]:
        return {self.field: self.association}

    def make(self, dataset: DataSet) -> UnstructuredGrid:
        if dataset.family == "polydata":
            # vtkThreshold's output is an unstructured grid of the surface's cells too.
            dataset = as_unstructured(dataset, "Threshold", degenerate=True)
        values, association = dataset.field(self.field, self.association)
        values = self.checked(self.field, values)
        params = dict(at=association, lower=self.lower, upper=self.upper,
                      all_points=self.all_scalars, continuous=self.continuous,
                      invert=self.invert)
        components = values.shape[1] if values.ndim > 1 else 1
        if self.component in ("any", "all") and components > 1:
            return self._output(dataset, self._by_components(dataset, values, params))
        scalars = _component(values, self.component, self.field)
        # The ids are read for original ids alone: the GPU gathers the rest by words.
        made = execute("threshold", dataset, scalars, association, backend=self.backend,
                       ids=self.original_ids, **params)
        return self._output(dataset, made)

    def _by_components(self, dataset: DataSet, values: Any, params: dict) -> Any:
        """vtkThreshold's any/all component modes: each point's (or cell's) components
        combined first; with a continuous range, each component's cells instead."""
        xp = array_module(values)
        combine = xp.any if self.component == "any" else xp.all
        if not (params["continuous"] and params["at"] == "points" and not self.all_scalars):
            inside = at_least(values, self.lower) & at_most(values, self.upper)
            passing = combine(inside, axis=1).astype(xp.float64)
            return execute("threshold", dataset, passing, params["at"], backend=self.backend,
                           **{**params, "lower": 0.5, "upper": 1.5})
        kept = [to_host(execute("threshold", dataset, values[:, k], params["at"],
                                backend=self.backend, **{**params, "invert": False}).cell_ids)
                for k in range(values.shape[1])]
        keep = np.zeros((len(kept), dataset.n_cells), dtype=bool)
        for row, ids in zip(keep, kept):
            row[ids] = True
        chosen = (keep.any(axis=0) if self.component == "any" else keep.all(axis=0))
        return execute("threshold", dataset, chosen.astype(np.float64), "cells", backend="cpu",
                       **{**params, "at": "cells", "lower": 0.5, "upper": 1.5})

    def _output(self, dataset: DataSet, made: Any) -> UnstructuredGrid:
        n_points = dataset.n_points
        if made.cell_types.shape[0] == dataset.n_cells > 0 and made.n_points < n_points:
            # vtkThreshold passes its input through when every cell passes: the
            # points no cell uses stay.
            made = made.with_ids()
            xp = array_module(made.point_ids)
            made = replace(made, connectivity=made.point_ids[made.connectivity],
                           point_ids=xp.arange(n_points, dtype=xp.int64))
        return whole_cells(dataset, made, f"threshold of {dataset.name}", self.original_ids)


def _bounds(method: str, lower: Any, upper: Any) -> tuple[float, float]:
    needed = {"between": ("lower", "upper"), "outside": ("lower", "upper"),
              "lower": ("lower",), "upper": ("upper",)}[method]
    given = {"lower": lower, "upper": upper}
    for name in needed:
        value = given[name]
        if value is None or not np.isfinite(float(value)):
            raise ArgumentError(f"method={method!r} needs a finite {name} bound, got {value!r}")
    if method == "lower":
        return -np.inf, float(lower)
    if method == "upper":
        return float(upper), np.inf
    if float(lower) > float(upper):
        raise ArgumentError(f"lower ({lower}) is above upper ({upper})")
    return float(lower), float(upper)


def _component(values: Any, component: int | str, name: str) -> Any:
    if values.ndim == 1:
        if isinstance(component, int) and component > 0:
            raise FieldError(f"{name!r} has 1 component; component {component} does not exist")
        return values
    if component == "magnitude":
        xp = array_module(values)
        return xp.sqrt((values.astype(xp.float64) ** 2).sum(axis=1))
    if component in ("any", "all"):
        return values[:, 0]
    if component >= values.shape[1]:
        raise FieldError(f"{name!r} has {values.shape[1]} components; component "
                         f"{component} does not exist")
    return values[:, component]


def threshold(node: Any, lower: float | None = None, upper: float | None = None,
              result: str | None = None, **options: Any) -> Any:
    """Keep the cells whose values of this field lie in a range: the pipeline's last
    stage, making an unstructured grid.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(4,), point_data={"t": np.array([0.0, 1, 2, 3])})
    >>> pipe = daxpy.pipeline(g)
    >>> _ = pipe.field("t").threshold(0.5, 3.5)
    >>> pipe.run(backend="cpu").n_cells
    2
    """
    return last_step(node, "threshold", result,
                     lambda field: Threshold(field, lower, upper, **options))


def _parse_threshold(step: str, argument: str) -> dict:
    """``threshold=LOW,HIGH`` (between), ``threshold=LOW,`` (at least LOW) or
    ``threshold=,HIGH`` (at most HIGH).

    Examples
    --------
    >>> _parse_threshold("threshold=1,", "1,")
    {'upper': 1.0, 'method': 'upper'}
    """
    low, comma, high = argument.partition(",")
    try:
        bounds = [float(v) if v.strip() else None for v in (low, high)]
    except ValueError:
        bounds = [None, None]
    if not comma or bounds == [None, None] or not all(
            np.isfinite(b) for b in bounds if b is not None):
        raise ArgumentError(f"step {step!r}: threshold takes LOW,HIGH, LOW, (at least LOW) "
                            "or ,HIGH (at most HIGH)")
    if bounds[1] is None:
        return {"upper": bounds[0], "method": "upper"}
    if bounds[0] is None:
        return {"lower": bounds[1], "method": "lower"}
    if bounds[0] > bounds[1]:
        raise ArgumentError(f"step {step!r}: LOW is above HIGH")
    return {"lower": bounds[0], "upper": bounds[1]}


register_verb(Verb("threshold", threshold, 62,
                   "cells whose values lie in LOW,HIGH (or LOW, or ,HIGH); the last step: "
                   "writes an unstructured grid (.vtu)", argument="LOW,HIGH", required=True,
                   parse=_parse_threshold))


def pyvista_threshold(mesh: Any, value: float | Sequence[float] | None = None,
                      scalars: str | None = None, invert: bool = False,
                      continuous: bool = False, preference: str = "cell",
                      all_scalars: bool = False, component_mode: str = "all",
                      component: int = 0, method: str = "upper", progress_bar: bool = False,
                      *, backend: str = "auto") -> Any:
    """Keep the cells whose values lie in a range.

    As :meth:`pyvista.DataSetFilters.threshold` (vtkThreshold), computed by
    :class:`daxpy.filters.Threshold`: a single ``value`` keeps values at or above it
    (``method="upper"``) or at or below it (``"lower"``); a pair keeps those between;
    None keeps the array's finite range (dropping NaN).

    Parameters
    ----------
    value : float or (float, float), optional
    scalars : str, optional
    invert, continuous, all_scalars : bool
    preference : {"cell", "point"}
    component_mode : {"all", "any", "component"}
    component : int
    method : {"upper", "lower"}
    progress_bar : bool
    backend : {"auto", "cpu", "cuda"}

    Returns
    -------
    pyvista.UnstructuredGrid

    Examples
    --------
    >>> import numpy as np, pyvista as pv
    >>> import daxpy.accessor
    >>> mesh = pv.ImageData(dimensions=(3, 3, 1))
    >>> mesh.cell_data["c"] = [0.0, 1.0, 2.0, 3.0]
    >>> mesh.daxpy.threshold(1.5).n_cells
    2
    """
    from daxpy.io.interop import from_vtk

    from ._pyvista import array_name, geometry_result

    name, association = array_name(mesh, scalars, preference)
    if component_mode not in ("all", "any", "component"):
        raise ArgumentError(f"component_mode must be 'all', 'any' or 'component', got "
                            f"{component_mode!r}")
    dataset = from_vtk(mesh)
    if value is None:
        values = np.asarray(dataset.field(name, association)[0], dtype=np.float64)
        finite = values[np.isfinite(values)]
        value = (float(finite.min()), float(finite.max())) if finite.size else (0.0, -1.0)
    bounds: dict[str, Any]
    if np.ndim(value) == 0:
        if method not in ("upper", "lower"):
            raise ArgumentError(f"method must be 'upper' or 'lower', got {method!r}")
        bounds = {"upper" if method == "upper" else "lower": float(cast(float, value)),
                  "method": method}
    else:
        pair = list(cast(Sequence[float], value))
        if len(pair) != 2:
            raise ArgumentError(f"value must be one number or (min, max), got {value!r}")
        bounds = {"lower": float(pair[0]), "upper": float(pair[1])}
    make = Threshold(name, **bounds, all_scalars=all_scalars, continuous=continuous,
                     component=component if component_mode == "component" else component_mode,
                     invert=invert, association=association, backend=backend)
    return geometry_result(make(dataset), progress_bar, "Thresholding")


register_verb(Verb("threshold", pyvista_threshold, 62, "PyVista's threshold (vtkThreshold)",
                   on="pyvista"))
