"""The grid of a structured grid's cell centres, on which VTK differentiates cell
fields (vtkGradientFilter: finite differences between neighbouring cell centres).

Examples
--------
>>> import daxpy
>>> centres = cell_centre_grid(daxpy.UniformGrid(dims=(3, 2, 1), spacing=(2, 1, 1)))
>>> centres.dims, centres.origin
((2, 1, 1), (1.0, 0.5, 0.0))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daxpy.data.arrays import to_host
from daxpy.data.structured import CurvilinearGrid, RectilinearGrid, UniformGrid


def _middles(axis: np.ndarray) -> np.ndarray:
    return (axis[:-1] + axis[1:]) / 2 if axis.shape[0] > 1 else axis


def cell_centre_grid(grid: Any) -> Any:
    """A grid of the same family whose points are ``grid``'s cell centres (an axis of
    one point stays one point).

    Parameters
    ----------
    grid : UniformGrid, RectilinearGrid or CurvilinearGrid

    Returns
    -------
    UniformGrid, RectilinearGrid or CurvilinearGrid
        Without fields.
    """
    dims = tuple(int(d) for d in grid.dims)
    cells = tuple(max(d - 1, 1) for d in dims)
    if isinstance(grid, UniformGrid):
        origin = tuple(o + (s / 2 if d > 1 else 0.0)
                       for o, s, d in zip(grid.origin, grid.spacing, dims))
        return UniformGrid(dims=cells, origin=origin, spacing=grid.spacing,
                           name=f"cell centres of {grid.name}")
    if isinstance(grid, RectilinearGrid):
        axes = [_middles(np.asarray(a, np.float64)) for a in grid.coordinates]
        return RectilinearGrid(axes[0], axes[1], axes[2], name=f"cell centres of {grid.name}")
    points = to_host(grid.points()).astype(np.float64).reshape(dims[::-1] + (3,))
    # The mean of each cell's corners, axis by axis (an axis of one point is kept).
    for axis in range(3):
        if dims[axis] > 1:
            points = _middles_along(points, 2 - axis)
    return CurvilinearGrid(cells, points.reshape(-1, 3), name=f"cell centres of {grid.name}")


def _middles_along(points: np.ndarray, axis: int) -> np.ndarray:
    low = np.take(points, np.arange(points.shape[axis] - 1), axis=axis)
    high = np.take(points, np.arange(1, points.shape[axis]), axis=axis)
    return (low + high) / 2
