"""``mesh.daxpy``: daxpy's filters on PyVista datasets, with PyVista's own signatures.

Every PyVista dataset gets a ``daxpy`` accessor (PyVista >= 0.48,
:func:`pyvista.register_dataset_accessor`). After ``pip install daxpy-viz`` it
is there without importing daxpy: the ``pyvista.accessors`` entry point loads
this module the first time ``mesh.daxpy`` is used.

Its methods are the filters' PyVista verbs (declared with ``on="pyvista"`` in
their modules, :class:`daxpy.data.verbs.Verb`): ``compute_derivative``,
``point_data_to_cell_data``, ``cell_data_to_point_data``, ``contour``,
``threshold``, ``slice``, ``clip`` and ``clip_scalar``. Each takes the arguments, defaults and output
names of the PyVista filter it stands for, plus ``backend=`` (``"auto"``,
``"cpu"`` or ``"cuda"``), and returns a dataset of the input's type whose arrays
are shared with the input (the new arrays are daxpy's results, wrapped without
copying).

Differences from PyVista's filters, refused or documented rather than silently
different:

- daxpy reads uniform (``ImageData``), rectilinear, structured and unstructured
  grids and ``PolyData`` (``compute_derivative``, ``threshold`` and the clips
  on its vertices, lines, triangles and quads, as VTK's filters see them;
  polygons of five or more points and strips are refused); other
  datasets are refused with
  :class:`~daxpy.errors.ArgumentError`.
- ``compute_derivative`` differentiates point and cell arrays (a cell array's
  derivatives are written to the cells, as PyVista's); ``faster=True`` is
  accepted and computes the exact result, which is what PyVista returns with
  ``faster=False``.
- Averages of integer arrays are float64 (VTK gives float32);
  ``categorical=True`` is refused.

Examples
--------
>>> from pyvista import examples
>>> import daxpy.accessor
>>> out = examples.load_uniform().daxpy.compute_derivative(backend="cpu")
>>> type(out).__name__, out["gradient"].shape
('ImageData', (1000, 3))
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from . import filters as _filters  # noqa: F401  (importing the filters declares their verbs)
from .data.extras import require
from .data.verbs import registered_verbs
from .errors import MissingExtraError

__all__ = ["DaxpyAccessor"]

pyvista = require("pyvista", "vtk", "mesh.daxpy")
if not hasattr(pyvista, "register_dataset_accessor"):
    raise MissingExtraError(
        f"mesh.daxpy needs PyVista >= 0.48 (register_dataset_accessor); PyVista "
        f"{pyvista.__version__} is installed: pip install --upgrade 'pyvista>=0.48'")


class DaxpyAccessor:
    """daxpy's filters on a PyVista dataset: ``mesh.daxpy.<filter>(...)``.

    Parameters
    ----------
    mesh : pyvista.DataSet
        The dataset; PyVista builds the accessor on first use of ``mesh.daxpy``.

    Examples
    --------
    >>> import pyvista as pv
    >>> import daxpy.accessor
    >>> names = sorted(name for name in dir(pv.ImageData(dimensions=(2, 2, 2)).daxpy)
    ...                if not name.startswith("_"))
    >>> names[:4]
    ['cell_data_to_point_data', 'clip', 'clip_scalar', 'compute_derivative']
    >>> names[4:]
    ['contour', 'point_data_to_cell_data', 'slice', 'threshold']
    """

    def __init__(self, mesh: Any) -> None:
        self._mesh = mesh


def _method(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function(mesh, ...)`` as a method of the accessor: ``mesh.daxpy.name(...)``."""
    @functools.wraps(function)
    def method(self: DaxpyAccessor, *args: Any, **kwargs: Any) -> Any:
        return function(self._mesh, *args, **kwargs)

    return method


for _name, _verb in registered_verbs("pyvista").items():
    setattr(DaxpyAccessor, _name, _method(_verb.method))

pyvista.register_dataset_accessor("daxpy", pyvista.DataSet)(DaxpyAccessor)
