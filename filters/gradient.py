"""Gradient: point or cell gradient of a point field, with divergence, vorticity, Q.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import Gradient
>>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.array([0.0, 1.0, 4.0])})
>>> Gradient("t", backend="cpu")(g).point_data["Gradient"][:, 0].tolist()
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from daxpy.data.dataset import DataSet
from daxpy.engine.dispatch import execute
from daxpy.errors import ArgumentError, FieldError
from daxpy.io.interop import from_vtk
from daxpy.io.progress import progress
from daxpy.data.verbs import Verb, register_verb

from ._base import FieldFilter
from ._cell_centres import cell_centre_grid
from ._names import output_name, result_name
from ._surface_cells import as_unstructured
from ._pyvista import pyvista_result

__all__ = ["Gradient"]

_KINDS = {"point": ("point_gradient", "points"), "cell": ("cell_gradient", "cells")}
_DERIVED = (("divergence", "Divergence"), ("vorticity", "Vorticity"),
            ("qcriterion", "QCriterion"))


class Gradient(FieldFilter):
    """Gradient of a point field, as vtkGradientFilter (points) or at cell centres.

    The gradient of a ``c``-component field has ``3 * c`` components in VTK's
    layout ``[dc0/dx, dc0/dy, dc0/dz, dc1/dx, ...]`` and the field's float
    dtype (integer fields give float64). Divergence, vorticity and the
    Q-criterion are derived from it for 3-component fields.

    Parameters
    ----------
    field : str
        Input field, at the points or at the cells. A cell field's gradient is
        written to cell data, as vtkGradientFilter computes it: on structured
        grids by finite differences between neighbouring cell centres, on
        unstructured grids as each cell's derivative of the field averaged to
        the points (``kind`` is then not used).
    result : str
        Name of the gradient field (default ``"Gradient"``).
    kind : {"point", "cell"}
        ``"point"``: gradient at the points (finite differences on structured
        grids, mean of the cells' derivatives on unstructured ones), written to
        point data. ``"cell"``: derivative at each cell's centre, written to
        cell data.
    divergence, vorticity, qcriterion : bool or str
        Also compute these; a string names the output (defaults
        ``"Divergence"``, ``"Vorticity"``, ``"QCriterion"``).
    compute_gradient : bool
        Keep the gradient itself in the output (False when only the derived
        quantities are wanted).
    association : {"points", "cells"}, optional
        Where to find ``field`` (by default points, then cells).
    backend, nan_policy
        As for every filter (:class:`~daxpy.filters.Filter`).

    Raises
    ------
    ArgumentError
        For an unknown ``kind`` or a bad output option.
    FieldError
        If a derived quantity is asked of a field that does not have 3
        components.

    See Also
    --------
    daxpy.filters.Magnitude : length of the gradient vectors.

    Notes
    -----
    A NaN input value makes NaN every gradient that reads it (the
    neighbours' finite differences on structured grids, every point and cell
    of the cells that use it on unstructured ones) and the divergence,
    vorticity and Q-criterion there; see the NaN rule in the README.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2, 2))
    >>> velocity = g.points()[:, [1, 0, 2]] * [-1, 1, 0]      # rotation about z
    >>> out = Gradient("v", kind="cell", vorticity=True, compute_gradient=False,
    ...                backend="cpu")(g.with_fields(point_data={"v": velocity}))
    >>> out.cell_data["Vorticity"].tolist()
    [[0.0, 0.0, 2.0]]
    """

    def __init__(self, field: str, result: str = "Gradient", *, kind: str = "point",
                 divergence: bool | str = False, vorticity: bool | str = False,
                 qcriterion: bool | str = False, compute_gradient: bool = True,
                 association: str | None = None, backend: str = "auto",
                 nan_policy: str = "propagate"):
        super().__init__(field, association=association, backend=backend,
                         nan_policy=nan_policy)
        if not isinstance(kind, str) or kind not in _KINDS:
            raise ArgumentError(f"kind must be 'point' or 'cell', got {kind!r}")
        self.kind = kind
        self.result = result_name(result, "Gradient")
        self.compute_gradient = bool(compute_gradient)
        self.writes_result = self.compute_gradient
        options = {"divergence": divergence, "vorticity": vorticity,
                   "qcriterion": qcriterion}
        self.derived = {worklet: name for worklet, default in _DERIVED
                        if (name := output_name(options[worklet], default, worklet))}

    verb = "gradient"

    def outputs(self) -> tuple[str, ...]:
        return super().outputs() + tuple(self.derived.values())

    def output_association(self, association: str) -> str:
        # A cell field's gradient lives at the cells, whatever the kind (as VTK's).
        return "cells" if association == "cells" else _KINDS[self.kind][1]

    def fusion_steps(self, association: str, dataset: DataSet) -> list[tuple[str, dict]] | None:
        # The gradient alone, or exactly one derived quantity computed on store.
        if association != "points" or len(self.outputs()) != 1:
            return None
        steps: list[tuple[str, dict]] = [(_KINDS[self.kind][0], {})]
        return steps + [(derived, {}) for derived in self.derived]

    def compute(self, dataset: DataSet) -> dict[str, dict[str, Any]]:
        if dataset.family == "polydata":
            # As VTK: the same cells' derivatives as on an unstructured grid; points
            # and cells keep their order, so the results are the surface's.
            dataset = as_unstructured(dataset, "Gradient")
        values, association = self.input_field(dataset)
        components = 1 if values.ndim == 1 else values.shape[1]
        if self.derived and components != 3:
            *others, last = self.derived
            names = f"{', '.join(others)} and {last}" if others else last
            raise FieldError(
                f"{names} {'need' if others else 'needs'} a 3-component field; field "
                f"{self.field!r} has {components} component(s)"
            )
        if np.dtype(values.dtype).kind != "f":
            values = values.astype(np.float64)
        worklet, target = _KINDS[self.kind]
        if association == "cells":
            gradient, target = _cell_field_gradient(dataset, values, self.backend), "cells"
        else:
            gradient = execute(worklet, dataset, values, "points", backend=self.backend)
        new = {self.result: gradient} if self.compute_gradient else {}
        for derived, name in self.derived.items():
            new[name] = execute(derived, dataset, gradient, target, backend=self.backend,
                                field_name=f"gradient of {self.field!r}")
        return {target: new}


def _cell_field_gradient(dataset: Any, values: Any, backend: str) -> Any:
    """The gradient of a cell field at the cells, as vtkGradientFilter computes it:
    on structured grids, finite differences between neighbouring cell centres (the
    point gradient of the grid of cell centres); on unstructured grids, each cell's
    derivative at its centre of the field averaged to the points."""
    if dataset.family in ("uniform", "rectilinear", "curvilinear"):
        centres = cell_centre_grid(dataset)
        return execute("point_gradient", centres, values, "points", backend=backend)
    averaged = execute("cell_to_point", dataset, values, "cells", backend=backend)
    return execute("cell_gradient", dataset, averaged, "points", backend=backend)


def gradient(node: Any, result: str | None = None, **options: Any) -> Any:
    """Point (or, with ``kind="cell"``, cell) gradient of this field.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 3), point_data={"p": np.zeros(9)})
    >>> daxpy.pipeline(g).field("p").gradient().name
    'gradient_1'

    A gradient asked for one derived quantity only (``compute_gradient=False``)
    gives that quantity's node, to chain from (a contour of the Q-criterion):

    >>> v = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"v": np.zeros((27, 3))})
    >>> daxpy.pipeline(v).gradient("v", qcriterion=True, compute_gradient=False).name
    'QCriterion'
    """
    where = "cells" if options.get("kind", "point") == "cell" else "points"
    pipe = node.pipeline
    new = node._then("gradient", lambda src, out: Gradient(src, result=out, **options),
                     result, where)
    # Divergence, vorticity and Q-criterion are outputs of the same stage.
    stage_filter = pipe.stages[-1].filter
    for name in stage_filter.derived.values():
        pipe._register_output(name, where)
    if not stage_filter.writes_result and len(stage_filter.derived) == 1:
        # The stage writes one derived quantity only: chain from that field.
        (only,) = stage_filter.derived.values()
        return pipe.field(only)
    return new


def _parse_gradient(step: str, argument: str) -> dict:
    """The step's options: its kind (``point``, the default, or ``cell``) and the
    derived outputs, each with its name if given, separated by commas.

    Examples
    --------
    >>> _parse_gradient("gradient=cell", "cell")
    {'kind': 'cell'}
    >>> _parse_gradient("gradient=vorticity=w,qcriterion", "vorticity=w,qcriterion")
    {'kind': 'point', 'vorticity': 'w', 'qcriterion': True}
    """
    options: dict = {"kind": "point"}
    for item in filter(None, argument.split(",")):
        option, equals, name = item.partition("=")
        if option in _KINDS and not equals:
            options["kind"] = option
        elif option in dict(_DERIVED) and (name or not equals):
            options[option] = name or True
        else:
            raise ArgumentError(
                f"step {step!r}: gradient takes 'point' or 'cell' and any of "
                f"{', '.join(dict(_DERIVED))} (each as NAME=... to name it), separated "
                f"by commas, not {item!r}")
    return options


register_verb(Verb("gradient", gradient, 10,
                   "point gradient; cell: at the cell centres; with a 3-component field, "
                   "any of divergence, vorticity, qcriterion (each =NAME to name it)",
                   argument="point|cell,...", parse=_parse_gradient))


def _pyvista_name(option: Any, default: str) -> str | bool:
    """PyVista's ``bool | str`` output option: its array name, or False (not asked).

    Examples
    --------
    >>> _pyvista_name(True, "vorticity"), _pyvista_name("w", "vorticity")
    ('vorticity', 'w')
    """
    if isinstance(option, str):
        return option or False
    return default if option else False


def compute_derivative(mesh: Any, scalars: str | None = None, gradient: bool | str = True,
                       divergence: bool | str = False, vorticity: bool | str = False,
                       qcriterion: bool | str = False, faster: bool = False,
                       preference: Literal["point", "cell"] = "point",
                       progress_bar: bool = False, *,
                       backend: str = "auto") -> Any:
    """Gradient, divergence, vorticity and Q-criterion of a point array.

    As :meth:`pyvista.DataSetFilters.compute_derivative` (vtkGradientFilter),
    computed by :class:`daxpy.filters.Gradient`.

    Parameters
    ----------
    scalars : str, optional
        The array to differentiate; by default the active scalars.
    gradient, divergence, vorticity, qcriterion : bool or str
        What to compute; a string names the output array (defaults
        ``"gradient"``, ``"divergence"``, ``"vorticity"``, ``"qcriterion"``).
        The last three need a 3-component array.
    faster : bool
        Accepted for PyVista's signature; daxpy always computes the exact
        result (PyVista's ``faster=False``).
    preference : {"point", "cell"}
        Where to look for ``scalars`` when both points and cells have it.
    progress_bar : bool
        Show a progress bar.
    backend : {"auto", "cpu", "cuda"}
        Where daxpy runs.

    Returns
    -------
    pyvista.DataSet
        A dataset of the input's type with every input array and the new
        arrays (point arrays, or cell arrays for a cell array's derivatives).

    Raises
    ------
    ArgumentError
        If nothing is asked, or the dataset's type is not one daxpy reads.
    FieldError
        If a derived quantity is asked of an array without 3 components.

    See Also
    --------
    pyvista.DataSetFilters.compute_derivative

    Examples
    --------
    >>> import numpy as np, pyvista as pv
    >>> import daxpy.accessor
    >>> mesh = pv.ImageData(dimensions=(3, 3, 3))
    >>> mesh.point_data["v"] = mesh.points[:, [1, 0, 2]] * [-1, 1, 0]
    >>> out = mesh.daxpy.compute_derivative(gradient=False, vorticity=True)
    >>> out["vorticity"][0].tolist()
    [0.0, 0.0, 2.0]
    """
    from pyvista.core.utilities.arrays import (get_array_association,
                                               set_default_active_scalars)

    name = set_default_active_scalars(mesh).name if scalars is None else scalars
    if not isinstance(name, str):
        raise ArgumentError(f"scalars must be an array name, got {name!r}")
    if not any((gradient, divergence, vorticity, qcriterion)):
        raise ArgumentError("must set at least one of gradient, divergence, "
                            "vorticity, or qcriterion")
    found = get_array_association(mesh, name, preference=preference)
    if found.name not in ("POINT", "CELL"):
        raise FieldError(f"mesh.daxpy.compute_derivative reads point or cell arrays; "
                         f"{name!r} is a {found.name.lower()} array")
    where = "points" if found.name == "POINT" else "cells"
    make = Gradient(name, gradient if isinstance(gradient, str) and gradient else "gradient",
                    compute_gradient=bool(gradient), association=where,
                    divergence=_pyvista_name(divergence, "divergence"),
                    vorticity=_pyvista_name(vorticity, "vorticity"),
                    qcriterion=_pyvista_name(qcriterion, "qcriterion"), backend=backend)
    with progress("Computing Derivative", enabled=progress_bar, fractions=False, delay=0):
        out = make(from_vtk(mesh))
    return pyvista_result(mesh, out.fields(where), make.outputs(), where[:-1])


register_verb(Verb("compute_derivative", compute_derivative, 10,
                   "PyVista's compute_derivative (vtkGradientFilter)", on="pyvista"))
