"""Structured grids: uniform (image data), rectilinear and curvilinear.

All three index points ``i + nx * (j + ny * k)`` (x fastest), as VTK does, and
hold 1-, 2- or 3-D grids: an axis with one point is not a cell axis.

Examples
--------
>>> import daxpy
>>> g = daxpy.UniformGrid(dims=(4, 3), spacing=(0.5, 0.5))
>>> (g.topology_name, g.n_points, g.n_cells)
('uniform2d', 12, 6)
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .arrays import checked_array, to_host
from .dataset import DataSet
from .errors import InvalidDataSetError
from .unstructured import check_coordinates


def _entries(values, what: str, owner: str) -> tuple:
    """``values`` as a tuple, or InvalidDataSetError naming ``what`` if it is no sequence."""
    try:
        return tuple(values)
    except TypeError:
        raise InvalidDataSetError(
            f"{what} of {owner} must be a sequence of 1 to 3 numbers, got {values!r}"
        ) from None


def _padded(values: Sequence[float] | None, default: float, what: str, owner: str) -> tuple:
    values = () if values is None else _entries(values, what, owner)
    if len(values) > 3:
        raise InvalidDataSetError(f"{what} of {owner} has {len(values)} entries; at most 3")
    try:
        if any(np.iscomplexobj(v) for v in values):  # float() would drop the imaginary part
            raise TypeError
        numbers = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise InvalidDataSetError(
            f"{what} of {owner} must hold real numbers, got {values!r}"
        ) from None
    return numbers + (default,) * (3 - len(numbers))


def _check_dims(dims: Sequence[int], owner: str) -> tuple[int, int, int]:
    raw = _entries(dims, "dims", owner)
    if not 1 <= len(raw) <= 3:
        raise InvalidDataSetError(f"dims of {owner} must have 1 to 3 entries, got {raw}")
    for d in raw:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise InvalidDataSetError(f"dims of {owner} must be integers, got {raw}")
        if d < 1:
            raise InvalidDataSetError(
                f"dims of {owner} must be >= 1 points along every axis, got {raw}"
            )
    return tuple(int(d) for d in raw) + (1,) * (3 - len(raw))


class StructuredGrid(DataSet):
    """Base of the three structured grids: point dims and the derived cell dims."""

    family = "structured"

    def _init_structured(self, dims, name, point_data, cell_data) -> None:
        self.name = name
        self.dims = _check_dims(dims, name)
        self.n_points = math.prod(self.dims)
        self.n_cells = math.prod(self.cell_dims)
        self._init_fields(point_data, cell_data)

    @property
    def cell_dims(self) -> tuple[int, int, int]:
        """Cells along each axis; an axis with one point holds one layer of cells."""
        return tuple(max(d - 1, 1) for d in self.dims)

    @property
    def dimension(self) -> int:
        """Number of axes with more than one point (0 to 3)."""
        return sum(d > 1 for d in self.dims)

    @property
    def cell_axes(self) -> tuple[int, ...]:
        """Indices (0=x, 1=y, 2=z) of the axes that have more than one point."""
        return tuple(a for a in range(3) if self.dims[a] > 1)

    @property
    def topology_name(self) -> str:
        return f"{self.family}{max(self.dimension, 1)}d"

    def point_shape(self) -> tuple[int, int, int]:
        """Shape ``(nz, ny, nx)`` that views a point field in C order."""
        return self.dims[::-1]

    def cell_shape(self) -> tuple[int, int, int]:
        """Shape ``(nz, ny, nx)`` of cells that views a cell field in C order."""
        return self.cell_dims[::-1]

    def points(self) -> np.ndarray:
        """All point coordinates, shape ``(n_points, 3)`` (computed, float64, from
        the axis-aligned grids' ``axis_coordinates``; CurvilinearGrid holds its own)."""
        return _tensor_points([self.axis_coordinates(a) for a in range(3)])


class UniformGrid(StructuredGrid):
    """Equally spaced points on an axis-aligned box (VTK image data).

    Parameters
    ----------
    dims : sequence of int
        Points along x, y and z (1 to 3 entries; missing ones are 1).
    origin : sequence of float, optional
        Coordinates of the first point (default zeros).
    spacing : sequence of float, optional
        Distance between neighbouring points along each axis (default ones);
        must be finite and positive.
    point_data, cell_data : dict, optional
        Initial fields.
    name : str, optional
        Used in error messages.

    Examples
    --------
    >>> import daxpy
    >>> daxpy.UniformGrid(dims=(2, 2, 2), spacing=(1, 2, 3)).bounds()
    (0.0, 1.0, 0.0, 2.0, 0.0, 3.0)
    """

    family = "uniform"

    def __init__(self, dims, origin=None, spacing=None, point_data=None,
                 cell_data=None, name: str = "uniform grid"):
        self.origin = _padded(origin, 0.0, "origin", name)
        self.spacing = _padded(spacing, 1.0, "spacing", name)
        if not all(math.isfinite(v) for v in self.origin):
            raise InvalidDataSetError(f"origin of {name} must be finite, got {self.origin}")
        if not all(math.isfinite(v) and v > 0 for v in self.spacing):
            raise InvalidDataSetError(
                f"spacing of {name} must be finite and > 0, got {self.spacing}"
            )
        self._init_structured(dims, name, point_data, cell_data)

    def axis_coordinates(self, axis: int) -> np.ndarray:
        """Coordinates of the points along one axis (float64).

        Examples
        --------
        >>> import daxpy
        >>> daxpy.UniformGrid(dims=(3,), origin=(1,)).axis_coordinates(0).tolist()
        [1.0, 2.0, 3.0]
        """
        return self.origin[axis] + self.spacing[axis] * np.arange(self.dims[axis])

    def bounds(self) -> tuple[float, ...]:
        """``(xmin, xmax, ymin, ymax, zmin, zmax)``."""
        out = []
        for a in range(3):
            out += [self.origin[a], self.origin[a] + self.spacing[a] * (self.dims[a] - 1)]
        return tuple(out)


class RectilinearGrid(StructuredGrid):
    """Axis-aligned grid with its own coordinate array per axis.

    Parameters
    ----------
    x, y, z : array-like
        Strictly increasing, finite coordinates; ``y`` and ``z`` default to ``[0]``.
    point_data, cell_data : dict, optional
        Initial fields.
    name : str, optional
        Used in error messages.

    Examples
    --------
    >>> import daxpy
    >>> daxpy.RectilinearGrid([0, 1, 3], [0, 2]).dims
    (3, 2, 1)
    """

    family = "rectilinear"

    def __init__(self, x, y=None, z=None, point_data=None, cell_data=None,
                 name: str = "rectilinear grid"):
        self.coordinates = tuple(
            self._check_axis(c, axis, name) for axis, c in zip("xyz", (x, y, z))
        )
        self._init_structured(
            tuple(len(c) for c in self.coordinates), name, point_data, cell_data
        )

    @staticmethod
    def _check_axis(values, axis: str, owner: str):
        if values is None:
            return np.zeros(1)
        array = checked_array(values, f"{axis} coordinates of {owner}", InvalidDataSetError)
        if array.ndim != 1 or array.shape[0] < 1:
            raise InvalidDataSetError(
                f"{axis} coordinates of {owner} must be a non-empty 1-D array, "
                f"got shape {array.shape}"
            )
        if np.dtype(array.dtype).kind not in "fiu":
            raise InvalidDataSetError(f"{axis} coordinates of {owner} must be real numbers")
        host = to_host(array)
        if not np.all(np.isfinite(host)):
            raise InvalidDataSetError(
                f"{axis} coordinates of {owner} hold NaN or Inf; coordinates must be finite"
            )
        # In float64: a difference of unsigned integers would wrap around.
        if np.any(np.diff(host.astype(np.float64)) <= 0):
            raise InvalidDataSetError(
                f"{axis} coordinates of {owner} must be strictly increasing"
            )
        return array

    def axis_coordinates(self, axis: int) -> np.ndarray:
        """Coordinates along one axis, as float64 host array.

        Examples
        --------
        >>> import daxpy
        >>> daxpy.RectilinearGrid([0, 2]).axis_coordinates(0).tolist()
        [0.0, 2.0]
        """
        return to_host(self.coordinates[axis]).astype(np.float64, copy=False)


class CurvilinearGrid(StructuredGrid):
    """Structured topology with arbitrary point coordinates (VTK structured grid).

    Parameters
    ----------
    dims : sequence of int
        Points along the i, j and k index axes.
    points : array-like, shape (prod(dims), 3)
        Point coordinates, i fastest. Finite.
    point_data, cell_data : dict, optional
        Initial fields.
    name : str, optional
        Used in error messages.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.5]], float)
    >>> daxpy.CurvilinearGrid((2, 2), pts).topology_name
    'curvilinear2d'
    """

    family = "curvilinear"

    def __init__(self, dims, points, point_data=None, cell_data=None,
                 name: str = "curvilinear grid"):
        self.name = name
        checked_dims = _check_dims(dims, name)
        array = checked_array(points, f"points of {name}", InvalidDataSetError)
        expected = (math.prod(checked_dims), 3)
        if array.shape != expected:
            raise InvalidDataSetError(
                f"points of {name} must have shape {expected} for dims {checked_dims}, "
                f"got {array.shape}"
            )
        check_coordinates(array, name)
        self.coordinates_array = array
        self._init_structured(checked_dims, name, point_data, cell_data)

    def points(self) -> Any:
        """Point coordinates, shape ``(n_points, 3)``, as given (not copied)."""
        return self.coordinates_array


def _tensor_points(axes: list[np.ndarray]) -> np.ndarray:
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    return np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
