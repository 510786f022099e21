"""PointToCell: average a point field onto the cells (vtkPointDataToCellData).

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import PointToCell
>>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.array([0.0, 2.0, 6.0])})
>>> PointToCell("t", backend="cpu")(g).cell_data["t"].tolist()
[1.0, 4.0]
"""

from __future__ import annotations

from typing import Any

from daxpy.engine.dispatch import execute
from daxpy.errors import ArgumentError, FieldError
from daxpy.data.verbs import Verb, register_verb

from ._base import FieldFilter
from ._names import result_name, result_only_verb
from ._pyvista import average_every_array

__all__ = ["PointToCell"]


class _AveragingFilter(FieldFilter):
    """Average the field at ``_source`` onto ``_target`` with the ``_worklet`` worklet."""

    _worklet = _source = _target = ""

    def __init__(self, field: str, result: str | None = None, *,
                 association: str | None = None, backend: str = "auto",
                 nan_policy: str = "propagate"):
        super().__init__(field, association=association, backend=backend,
                         nan_policy=nan_policy)
        require_association(self, self._source)
        self.result = result_name(result, field)

    def reads(self) -> dict[str, str | None]:
        return {self.field: self._source}

    def output_association(self, association: str) -> str:
        return self._target

    def fusion_steps(self, association, dataset):
        return [(self._worklet, {})] if association == self._source else None

    def compute(self, dataset):
        values = self.checked(self.field, dataset.field(self.field, self._source)[0])
        averaged = execute(self._worklet, dataset, values, self._source, backend=self.backend)
        return {self._target: {self.result: averaged}}


class PointToCell(_AveragingFilter):
    """Give each cell the mean of its corner points' values.

    Float fields keep their dtype; integer fields give float64.

    Parameters
    ----------
    field : str
        Input point field.
    result : str, optional
        Output cell field name (default: the input's name, as VTK does).
    association : {"points"}, optional
        Where the input lives; only point fields can be averaged onto cells.
    backend, nan_policy
        As for every filter (:class:`~daxpy.filters.Filter`).

    Raises
    ------
    FieldError
        If ``association`` is not ``"points"``.

    See Also
    --------
    daxpy.filters.CellToPoint : the opposite direction.

    Notes
    -----
    A cell with a NaN corner value averages to NaN (Inf gives Inf or NaN);
    see the NaN rule in the README.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2), point_data={"t": np.arange(4.0)})
    >>> PointToCell("t", result="tc", backend="cpu")(g).cell_data["tc"].tolist()
    [1.5]
    """

    verb = _worklet = "point_to_cell"
    _source, _target = "points", "cells"


def require_association(flt: FieldFilter, wanted: str) -> None:
    """Raise FieldError if a filter was told to read its field elsewhere than ``wanted``.

    Examples
    --------
    >>> require_association(PointToCell("t"), "points")
    """
    if flt.association not in (None, wanted):
        raise FieldError(
            f"{type(flt).__name__} reads {wanted[:-1]} fields; field {flt.field!r} "
            f"was given association={flt.association!r}"
        )


point_to_cell = result_only_verb("point_to_cell", PointToCell,
                                 "Average of this point field over each cell's corners.", "cells")


register_verb(Verb("point_to_cell", point_to_cell, 30, "average of a point field onto the cells"))


def point_data_to_cell_data(mesh: Any, pass_point_data: bool = False, categorical: bool = False,
                            progress_bar: bool = False, *, backend: str = "auto") -> Any:
    """Average every point array onto the cells.

    As :meth:`pyvista.DataObjectFilters.point_data_to_cell_data`
    (vtkPointDataToCellData), computed by :class:`daxpy.filters.PointToCell`.
    Each cell array gets its name; a cell array of the same name is replaced.

    Parameters
    ----------
    pass_point_data : bool
        Keep the point arrays in the output.
    categorical : bool
        Refused when True (majority vote is not a daxpy filter).
    progress_bar : bool
        Show a progress bar, as PyVista's filter does.
    backend : {"auto", "cpu", "cuda"}
        Where daxpy runs.

    Returns
    -------
    pyvista.DataSet
        The input's type; each point array became the cell array of its name,
        and the point arrays are gone unless ``pass_point_data``
        (:meth:`pyvista.DataObjectFilters.point_data_to_cell_data` does the same).

    Examples
    --------
    >>> import pyvista as pv
    >>> import daxpy.accessor
    >>> mesh = pv.RectilinearGrid([0.0, 1.0, 3.0], [0.0, 1.0])
    >>> mesh.point_data["x"] = mesh.points[:, 0]
    >>> mesh.daxpy.point_data_to_cell_data()["x"].tolist()
    [0.5, 2.0]
    """
    if categorical:
        raise ArgumentError("categorical=True (the most frequent value) is not a daxpy "
                            "filter; use mesh.point_data_to_cell_data(categorical=True)")
    return average_every_array(mesh, PointToCell, "points", pass_point_data, progress_bar,
                               backend)


register_verb(Verb("point_data_to_cell_data", point_data_to_cell_data, 30,
                   "PyVista's point_data_to_cell_data (vtkPointDataToCellData)", on="pyvista"))
