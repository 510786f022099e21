"""Point gradient and cell gradient of a point field, on every grid family.

Both write VTK's layout, ``(n, 3 * c)`` with ``[dc0/dx, dc0/dy, dc0/dz,
dc1/dx, ...]``, in the input's float dtype (integers give float64).

- ``point_gradient`` (vtkGradientFilter on point data): finite differences in
  index space through the Jacobian on structured grids; on unstructured grids
  the mean, over the cells using a point, of the cell's derivative there.
- ``cell_gradient`` (Dax's CellGradient, vtkCellDerivatives): the derivative
  of the cell's interpolation at its parametric centre.

On unstructured grids the CPU backend runs the compiled kernels of
:mod:`daxpy.worklets.gradient_cpu`; the NumPy code here stays as their
reference (bitwise for the cell gradient), for dtypes they are not compiled
for and where Numba does not import, and serves structured grids, whose
stencils are whole-array passes (compiled ones are still to come).

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(3, 2))
>>> t = g.points()[:, 0] * 2 + g.points()[:, 1]
>>> point_gradient(g, t)[0].tolist(), cell_gradient(g, t)[0].tolist()
([2.0, 1.0, 0.0], [2.0, 1.0, 0.0])
"""

from __future__ import annotations

import numpy as np

from daxpy.data.worklet import Worklet, register

from ._cuda_specs import CUDA

from ._cell_gradients import centre_gradients, corner_average_gradients, unstructured_chunks
from ._jacobian import prepare_field
from ._numba import compiled
from ._structured_gradient import (axis_aligned_cell_gradient, axis_aligned_point_gradient,
                                   curvilinear_point_gradient, structured_cell_chunks)


def _cells_per_point(grid) -> np.ndarray:
    # Topology only: computed once per grid and shared with derived datasets.
    cache = grid._cache
    if "cells_per_point" not in cache:
        cache["cells_per_point"] = np.bincount(grid.connectivity, minlength=grid.n_points)
    return cache["cells_per_point"]


def unstructured_point_gradient(grid, values: np.ndarray, out: np.ndarray | None = None
                                ) -> np.ndarray:
    """Point gradient on an unstructured grid, as vtkGradientFilter computes it
    (parameters and result as :func:`point_gradient`'s).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import TRIANGLE
    >>> g = daxpy.UnstructuredGrid(np.eye(3), [0, 1, 2], [0, 3], [TRIANGLE])
    >>> unstructured_point_gradient(g, np.array([0.0, 1.0, 1.0]))[0].round(6).tolist()
    [-0.666667, 0.333333, 0.333333]
    """
    table, _ = prepare_field(values, grid.n_points)
    return corner_average_gradients(grid.points(), table, unstructured_chunks(grid),
                                    _cells_per_point(grid), out=out)


def unstructured_cell_gradient(grid, values: np.ndarray, out: np.ndarray | None = None
                               ) -> np.ndarray:
    """Cell gradient on an unstructured grid: derivatives at the cell centres.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid(np.eye(2, 3) * 2, [0, 1], [0, 2], [LINE])
    >>> unstructured_cell_gradient(g, np.array([0.0, 1.0])).tolist()
    [[-0.5, 0.5, 0.0]]
    """
    table, _ = prepare_field(values, grid.n_points)
    return centre_gradients(grid.points(), table, unstructured_chunks(grid), grid.n_cells,
                            out=out)


def curvilinear_cell_gradient(grid, values: np.ndarray, out: np.ndarray | None = None
                              ) -> np.ndarray:
    """Cell gradient on a curvilinear grid (hexahedra, quads or lines as VTK builds them).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> pts = np.array([[0, 0, 0], [2, 0, 0], [0, 1, 0], [2, 1, 0]], float)
    >>> g = daxpy.CurvilinearGrid((2, 2), pts)
    >>> (curvilinear_cell_gradient(g, pts[:, 0] + 3 * pts[:, 1]) + 0.0).tolist()
    [[1.0, 3.0, 0.0]]
    """
    table, _ = prepare_field(values, grid.n_points)
    return centre_gradients(grid.points(), table, structured_cell_chunks(grid), grid.n_cells,
                            out=out)


def compiled_twins(axis_aligned, unstructured) -> dict:
    """The compiled CPU implementations of a gradient, by family: the axis-aligned
    kernels (uniform and rectilinear grids) and the unstructured ones, each of
    the same name as its NumPy reference, which serves where they cannot.

    Examples
    --------
    >>> sorted(compiled_twins(axis_aligned_point_gradient, unstructured_point_gradient))
    ['rectilinear', 'uniform', 'unstructured']
    """
    twin = compiled("gradient_structured_cpu", axis_aligned.__name__, axis_aligned)
    return {"uniform": twin, "rectilinear": twin,
            "unstructured": compiled("gradient_cpu", unstructured.__name__, unstructured)}


def register_gradient(name: str, output_association: str, halo: int, axis_aligned,
                      curvilinear, unstructured, **options) -> Worklet:
    """Declare and register a gradient of point fields: the NumPy implementations
    by family (``axis_aligned`` on uniform and rectilinear grids) and their
    compiled twins (:func:`compiled_twins`).

    Examples
    --------
    >>> POINT_GRADIENT.numpy_impl("rectilinear").__name__
    'axis_aligned_point_gradient'
    """
    return register(Worklet(
        name=name, input_association="points", output_association=output_association,
        halo=halo, numpy={"uniform": axis_aligned, "rectilinear": axis_aligned,
                          "curvilinear": curvilinear, "unstructured": unstructured},
        cpu=compiled_twins(axis_aligned, unstructured), cuda=CUDA[name], **options))


POINT_GRADIENT = register_gradient("point_gradient", "points", 1, axis_aligned_point_gradient,
                                   curvilinear_point_gradient, unstructured_point_gradient,
                                   aliases=("gradient",))
CELL_GRADIENT = register_gradient("cell_gradient", "cells", 0, axis_aligned_cell_gradient,
                                  curvilinear_cell_gradient, unstructured_cell_gradient)


def point_gradient(grid, values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Point gradient of a point field on any grid (the worklet's NumPy backend).

    Parameters
    ----------
    grid : DataSet
    values : numpy.ndarray, shape (n_points,) or (n_points, c)
    out : numpy.ndarray, shape (n_points, 3 * c), optional

    Returns
    -------
    numpy.ndarray, shape (n_points, 3 * c)

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> point_gradient(daxpy.UniformGrid(dims=(2,)), np.array([1.0, 4.0])).tolist()
    [[3.0, 0.0, 0.0], [3.0, 0.0, 0.0]]
    """
    return POINT_GRADIENT.numpy_impl(grid.family)(grid, values, out=out)


def cell_gradient(grid, values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Cell gradient of a point field on any grid (the worklet's NumPy backend):
    parameters as :func:`point_gradient`'s, with one row per cell, ``(n_cells, 3 * c)``,
    for ``out`` and the result.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> cell_gradient(daxpy.UniformGrid(dims=(2,)), np.array([1.0, 4.0])).tolist()
    [[3.0, 0.0, 0.0]]
    """
    return CELL_GRADIENT.numpy_impl(grid.family)(grid, values, out=out)
