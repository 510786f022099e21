"""Axis-aligned slices of uniform and rectilinear grids, as grids of one lower
dimension: no triangulation, each output point between two grid planes.

Examples
--------
>>> import numpy as np, daxpy
>>> g = daxpy.UniformGrid(dims=(2, 2, 3), point_data={"t": np.repeat([0.0, 1.0, 2.0], 4)})
>>> s = axis_slice(g, 2, 1.25)
>>> s.dims, s.point_data["t"].tolist()
((2, 2, 1), [1.25, 1.25, 1.25, 1.25])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daxpy.data.arrays import array_module
from daxpy.data.structured import RectilinearGrid, UniformGrid
from daxpy.errors import ArgumentError


def _plane_between(coordinates: np.ndarray, at: float) -> tuple[int, float]:
    """The grid plane ``k`` below ``at`` (``k + 1`` above it) and the weight of plane
    ``k + 1``; a slice on the last plane uses the slab below it."""
    k = int(np.searchsorted(coordinates, at, side="right")) - 1
    k = min(max(k, 0), coordinates.shape[0] - 2)
    low, high = float(coordinates[k]), float(coordinates[k + 1])
    return k, (at - low) / (high - low)


def _blend(values: Any, dims: tuple, axis: int, k: int, w: float, slab: bool) -> Any:
    """Plane ``k`` of a field laid out over ``dims`` (x fastest), blended with
    plane ``k + 1`` by ``w`` (points), or plane ``k`` alone (cells, ``slab``)."""
    xp = array_module(values)
    shaped = values.reshape(tuple(reversed(dims)) + values.shape[1:])
    index = 2 - axis  # (z, y, x) order
    low = xp.take(shaped, k, axis=index)
    if not slab:
        high = xp.take(shaped, k + 1, axis=index)
        if xp.issubdtype(values.dtype, xp.floating):
            low = low + values.dtype.type(w) * (high - low)
        else:
            low = xp.rint(low + w * (high.astype(xp.float64) - low)).astype(values.dtype)
    return xp.ascontiguousarray(low).reshape((-1,) + values.shape[1:])


def axis_slice(grid: UniformGrid | RectilinearGrid, axis: int, at: float) -> Any:
    """Slice a 3-D uniform or rectilinear grid by the plane ``x[axis] = at``.

    Point fields are interpolated linearly between the two grid planes around the
    slice (float fields in their dtype; integer fields rounded, as VTK does); cell
    fields are those of the cells the plane crosses (on a grid plane, the cells
    below it, except on the first plane).

    Parameters
    ----------
    grid : UniformGrid or RectilinearGrid
        A 3-D grid.
    axis : {0, 1, 2}
        The axis normal to the plane.
    at : float
        The plane's coordinate along ``axis``, within the grid's bounds.

    Returns
    -------
    UniformGrid or RectilinearGrid
        Of the input's type, with one point along ``axis`` (fields where the
        input's live: host or device).

    Raises
    ------
    ArgumentError
        If ``at`` is outside the grid's bounds along ``axis``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.RectilinearGrid([0.0, 1.0], [0.0, 1.0], [0.0, 2.0, 3.0],
    ...                           cell_data={"c": np.array([5.0, 7.0])})
    >>> axis_slice(g, 2, 2.5).cell_data["c"].tolist()
    [7.0]
    """
    coordinates = _coordinates(grid, axis)
    if not coordinates[0] <= at <= coordinates[-1]:
        raise ArgumentError(
            f"the slice at {'xyz'[axis]} = {at:g} lies outside {grid.name} "
            f"({coordinates[0]:g} to {coordinates[-1]:g} along {'xyz'[axis]})")
    k, w = _plane_between(coordinates, at)
    dims = tuple(grid.dims)
    cell_dims = tuple(max(d - 1, 1) for d in dims)
    points = {name: _blend(v, dims, axis, k, w, False) for name, v in grid.point_data.items()}
    cells = {name: _blend(v, cell_dims, axis, k, w, True) for name, v in grid.cell_data.items()}
    if isinstance(grid, UniformGrid):
        origin = list(grid.origin)
        origin[axis] = at
        flat = list(dims)
        flat[axis] = 1
        return UniformGrid(dims=tuple(flat), origin=tuple(origin), spacing=grid.spacing,
                           point_data=points, cell_data=cells, name=f"slice of {grid.name}")
    axes = [np.asarray(c) for c in grid.coordinates]
    axes[axis] = np.array([at], dtype=axes[axis].dtype)
    return RectilinearGrid(axes[0], axes[1], axes[2], point_data=points, cell_data=cells,
                           name=f"slice of {grid.name}")


def _coordinates(grid: Any, axis: int) -> np.ndarray:
    if len(grid.dims) != 3 or min(grid.dims) < 2:
        raise ArgumentError(f"an axis-aligned slice as a grid needs a 3-D grid; "
                            f"{grid.name} has dims {tuple(grid.dims)}")
    if isinstance(grid, UniformGrid):
        return grid.origin[axis] + grid.spacing[axis] * np.arange(grid.dims[axis])
    return np.asarray(grid.coordinates[axis], dtype=np.float64)
