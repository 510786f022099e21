"""CellToPoint: average a cell field onto the points (vtkCellDataToPointData).

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import CellToPoint
>>> g = daxpy.UniformGrid(dims=(3,), cell_data={"c": np.array([1.0, 3.0])})
>>> CellToPoint("c", backend="cpu")(g).point_data["c"].tolist()
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

from typing import Any

from daxpy.data.verbs import Verb, register_verb

from ._names import result_only_verb
from ._pyvista import average_every_array
from .point_to_cell import _AveragingFilter

__all__ = ["CellToPoint"]


class CellToPoint(_AveragingFilter):
    """Give each point the mean of the values of the cells that use it.

    Every cell counts once, whatever its size; a point that no cell uses gets
    0, as in VTK. Float fields keep their dtype; integer fields give float64.

    Parameters
    ----------
    field, result, association, backend, nan_policy
        As for :class:`~daxpy.filters.PointToCell`, with cells and points
        swapped: the input is a cell field (``association`` may only be
        ``"cells"``), the result a point field.

    See Also
    --------
    daxpy.filters.PointToCell : the opposite direction.

    Notes
    -----
    A point that a NaN cell uses gets NaN (Inf gives Inf or NaN); see the
    NaN rule in the README.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 3), cell_data={"c": np.array([2.0, 4.0])})
    >>> CellToPoint("c", result="cp", backend="cpu")(g).point_data["cp"].tolist()
    [2.0, 2.0, 3.0, 3.0, 4.0, 4.0]
    """

    verb = _worklet = "cell_to_point"
    _source, _target = "cells", "points"


cell_to_point = result_only_verb("cell_to_point", CellToPoint,
                                 "Average of this cell field over the cells around each point.",
                                 "points")


register_verb(Verb("cell_to_point", cell_to_point, 40, "average of a cell field onto the points"))


def cell_data_to_point_data(mesh: Any, pass_cell_data: bool = False, progress_bar: bool = False,
                            *, backend: str = "auto") -> Any:
    """Average every cell array onto the points.

    As :meth:`pyvista.DataObjectFilters.cell_data_to_point_data`
    (vtkCellDataToPointData), computed by :class:`daxpy.filters.CellToPoint`.
    The point arrays are kept; a point array of the same name is replaced.

    Parameters
    ----------
    pass_cell_data : bool
        Keep the cell arrays in the output.
    progress_bar, backend
        PyVista's progress bar; where daxpy runs (``"auto"``, ``"cpu"``, ``"cuda"``).

    Returns
    -------
    pyvista.DataSet
        Of the input's type, with the averaged point arrays.

    See Also
    --------
    pyvista.DataObjectFilters.cell_data_to_point_data

    Examples
    --------
    >>> from pyvista import examples
    >>> import daxpy.accessor
    >>> beam = examples.load_hexbeam()
    >>> beam.daxpy.cell_data_to_point_data().point_data.keys()
    ['sample_point_scalars', 'VTKorigID', 'sample_cell_scalars']
    """
    return average_every_array(mesh, CellToPoint, "cells", pass_cell_data, progress_bar, backend)


register_verb(Verb("cell_data_to_point_data", cell_data_to_point_data, 40,
                   "PyVista's cell_data_to_point_data (vtkCellDataToPointData)", on="pyvista"))
