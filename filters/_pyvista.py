"""What the PyVista methods of the filters (``mesh.daxpy.<method>``) share: the
dataset they read, how their results become a PyVista dataset, and the
averaging of every array of one association.

A filter module declares its PyVista method as a verb with ``on="pyvista"``
(:class:`daxpy.data.verbs.Verb`); :mod:`daxpy.accessor` attaches it. The
method takes PyVista's signature and defaults, plus ``backend=``, and returns a
dataset of the input's type whose arrays are the input's (a shallow copy) plus
the new ones (daxpy's results, wrapped without copying).

Examples
--------
>>> import numpy as np, pyvista as pv
>>> mesh = pv.ImageData(dimensions=(2, 2, 1))
>>> out = pyvista_result(mesh, {"t": np.arange(4.0)}, ("t",), "point")
>>> out["t"].tolist(), "t" in mesh.point_data
([0.0, 1.0, 2.0, 3.0], False)
"""

from __future__ import annotations

from typing import Any, Callable, cast

from daxpy.data.dataset import DataSet
from daxpy.io.interop import from_vtk
from daxpy.io.progress import progress

__all__: list[str] = []  # helpers of the filter modules, not filters


def pyvista_result(mesh: Any, arrays: Any, names: tuple[str, ...], association: str,
                   drop: str | None = None) -> Any:
    """A shallow copy of ``mesh`` with ``names`` from ``arrays`` set at ``association``
    (``"point"`` or ``"cell"``), without the arrays at ``drop`` (``"points"`` or
    ``"cells"``), and the input's active scalars where the output has them, as
    PyVista's filters leave them.

    Examples
    --------
    >>> import pyvista as pv
    >>> mesh = pv.ImageData(dimensions=(2, 2, 1))
    >>> mesh.point_data["p"] = [1.0, 2.0, 3.0, 4.0]
    >>> out = pyvista_result(mesh, {"c": [2.5]}, ("c",), "cell", drop="points")
    >>> out.array_names, mesh.array_names
    (['c'], ['p'])
    """
    out = mesh.copy(deep=False)
    if drop is not None:
        (out.point_data if drop == "points" else out.cell_data).clear()
    target = out.point_data if association == "point" else out.cell_data
    for name in names:
        target[name] = arrays[name]
    active = mesh.active_scalars_name
    if active is not None and active in out.array_names:
        out.set_active_scalars(active, preference=association)
    return out


def average_every_array(mesh: Any, make: Callable[..., Any], source: str, keep_source: bool,
                        progress_bar: bool, backend: str) -> Any:
    """Average every numeric array at ``source`` onto the other association with
    the filter class ``make`` (``PointToCell`` or ``CellToPoint``); each result
    takes its array's name, replacing an array of that name there.

    Examples
    --------
    >>> import pyvista as pv
    >>> from daxpy.filters import CellToPoint
    >>> mesh = pv.ImageData(dimensions=(3, 2, 1))
    >>> mesh.cell_data["c"] = [1.0, 3.0]
    >>> out = average_every_array(mesh, CellToPoint, "cells", False, False, "cpu")
    >>> out["c"].tolist(), out.cell_data.keys()
    ([1.0, 2.0, 3.0, 1.0, 2.0, 3.0], [])
    """
    dataset = from_vtk(mesh)
    fields = dataset.fields(source)
    target = "cells" if source == "points" else "points"
    averaged = {}
    with progress(f"Transforming {source[:-1]} data into {target[:-1]} data",
                  enabled=progress_bar, delay=0) as report:
        for done, name in enumerate(fields, 1):
            # Alone in its dataset, so that its result may take its own name.
            single = _only(dataset, source, name)
            averaged[name] = make(name, result=name, backend=backend)(single).field(
                name, target)[0]
            report(done / len(fields))
    return pyvista_result(mesh, averaged, tuple(averaged), target[:-1],
                          drop=None if keep_source else source)


def _only(dataset: DataSet, association: str, name: str) -> DataSet:
    """``dataset`` holding only its field ``name`` at ``association`` (no copy)."""
    single = dataset.with_fields()
    for data in (single.point_data, single.cell_data):
        for other in list(data):
            if data is not single.fields(association) or other != name:
                del data[other]
    return single


def array_name(mesh: Any, scalars: str | None, preference: str) -> tuple[str, str]:
    """``(name, association)`` of the array a PyVista filter reads: ``scalars``, or
    the active scalars as PyVista picks them; association ``"points"`` or ``"cells"``.

    Examples
    --------
    >>> import pyvista as pv
    >>> mesh = pv.ImageData(dimensions=(2, 2, 1))
    >>> mesh.cell_data["c"] = [1.0]
    >>> array_name(mesh, None, "point")
    ('c', 'cells')
    """
    from pyvista.core.utilities.arrays import (get_array_association,
                                               set_default_active_scalars)

    from daxpy.errors import ArgumentError

    name = set_default_active_scalars(mesh).name if scalars is None else scalars
    if not isinstance(name, str):
        raise ArgumentError(f"scalars must be an array name, got {name!r}")
    found = get_array_association(mesh, name, preference=cast(Any, preference))
    return name, "points" if found.name == "POINT" else "cells"


def geometry_result(made: Any, progress_bar: bool, what: str) -> Any:
    """A daxpy dataset made by a geometry filter, as the PyVista object that shares
    its arrays."""
    with progress(what, enabled=progress_bar, delay=0) as report:
        mesh = made.to_pyvista()
        report(1.0)
    return mesh
