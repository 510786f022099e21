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
import reprlib
from typing import Any, Mapping, Sequence

from numpy.typing import ArrayLike

import numpy as np

from .arrays import checked_array, to_host
from .dataset import DataSet
from ..errors import InvalidDataSetError
from .memory_budget import SMALL_BYTES, require_bytes
from .topology_checks import check_coordinates, read_only, written_out

MAX_POINTS = 2 ** 63 - 1
"""Most points a structured grid may have: ids and sizes are int64."""

MIN_STEP = 2 / float(np.finfo(np.float32).max)
"""Smallest distance between neighbouring points along an axis (about 5.9e-39).

Gradients divide by these distances and may do so in float32 (for float32
fields, on either backend): ``1 / step`` must stay finite there, or the
gradient of a constant field is ``0 * inf = NaN``. Twice the float32 limit
covers the rounding of the differences of computed coordinates."""

STEP_ULPS = 8
"""Neighbouring points must lie at least this many float64 ulps apart, so that
their computed coordinates stay distinct and their differences within 40% of
the spacing."""

_AXES = "xyz"


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
    except (TypeError, ValueError, OverflowError):
        raise InvalidDataSetError(
            f"{what} of {owner} must hold real numbers that fit in float64, got "
            f"{reprlib.repr(values)}"
        ) from None
    return numbers + (default,) * (3 - len(numbers))


def _check_dims(dims: Sequence[int], owner: str) -> tuple[int, int, int]:
    raw = _entries(dims, "dims", owner)
    if not 1 <= len(raw) <= 3:
        raise InvalidDataSetError(f"dims of {owner} must have 1 to 3 entries, got {raw}")
    for axis, d in zip(_AXES, raw):
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise InvalidDataSetError(
                f"dims of {owner} must be integers; along {axis} got {d!r} ({type(d).__name__})"
            )
        if d < 1:
            raise InvalidDataSetError(
                f"dims of {owner} along {axis} is {int(d)}; it must be >= 1 (a point)"
            )
    checked = tuple(int(d) for d in raw) + (1,) * (3 - len(raw))
    # Python ints: the product cannot wrap as an int64 product would.
    if math.prod(checked) > MAX_POINTS:
        raise InvalidDataSetError(
            f"dims {checked} of {owner} make {math.prod(checked):,} points, more than "
            f"int64 can count ({MAX_POINTS:,})"
        )
    return checked


def _check_step(what: str, step: float) -> None:
    """Neighbouring points ``step`` apart: far enough for a gradient to divide by."""
    if step < MIN_STEP:
        raise InvalidDataSetError(
            f"{what} is {step!r}; the smallest allowed is {MIN_STEP:.3g}, as gradients "
            "divide by it in float32"
        )


def _check_spacing(owner: str, axis: int, first: float, step: float, count: int) -> None:
    """Points ``first + step * i`` (``i < count``) along ``axis`` are finite, and
    far enough apart to be distinct and to divide by (see MIN_STEP, STEP_ULPS)."""
    last = first + step * (count - 1)
    name = _AXES[axis]
    if not math.isfinite(last):
        raise InvalidDataSetError(
            f"points of {owner} along {name} reach {last} (origin + spacing * (dims - 1)); "
            "coordinates must be finite"
        )
    if count < 2:
        return
    _check_step(f"spacing of {owner} along {name}", step)
    reach = max(abs(first), abs(last))
    if step < STEP_ULPS * math.ulp(reach):
        raise InvalidDataSetError(
            f"spacing of {owner} along {name} is {step!r}, at coordinates up to "
            f"{reach:g}: closer than {STEP_ULPS} float64 ulps ({STEP_ULPS * math.ulp(reach):.3g}), "
            "so their coordinates and differences would be rounded away"
        )


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
        the axis-aligned grids' ``axis_coordinates``; CurvilinearGrid holds its own).

        Raises
        ------
        ResourceError
            If the points (and the temporaries that build them) do not fit in memory.
        """
        # Three meshgrid copies and the stacked result: 48 bytes a point.
        require_bytes(48 * self.n_points, f"the {self.n_points:,} points of {self.name}")
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

    def __init__(self, dims: Sequence[int], origin: Sequence[float] | None = None,
                 spacing: Sequence[float] | None = None, point_data: Mapping[str, Any] | None = None,
                 cell_data: Mapping[str, Any] | None = None, name: str = "uniform grid") -> None:
        self.origin = _padded(origin, 0.0, "origin", name)
        self.spacing = _padded(spacing, 1.0, "spacing", name)
        if not all(math.isfinite(v) for v in self.origin):
            raise InvalidDataSetError(f"origin of {name} must be finite, got {self.origin}")
        if not all(math.isfinite(v) and v > 0 for v in self.spacing):
            raise InvalidDataSetError(
                f"spacing of {name} must be finite and > 0, got {self.spacing}"
            )
        checked = _check_dims(dims, name)
        for axis in range(3):
            _check_spacing(name, axis, self.origin[axis], self.spacing[axis], checked[axis])
        self._init_structured(checked, name, point_data, cell_data)

    def axis_coordinates(self, axis: int) -> np.ndarray:
        """Coordinates of the points along one axis (float64).

        Examples
        --------
        >>> import daxpy
        >>> daxpy.UniformGrid(dims=(3,), origin=(1,)).axis_coordinates(0).tolist()
        [1.0, 2.0, 3.0]
        """
        if 16 * self.dims[axis] > SMALL_BYTES:
            require_bytes(16 * self.dims[axis], f"the {self.dims[axis]:,} coordinates along "
                                                f"{_AXES[axis]} of {self.name}")
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
        Initial point and cell fields.
    name : str, optional
        Names the grid in error messages.

    Examples
    --------
    >>> import daxpy
    >>> daxpy.RectilinearGrid([0, 1, 3], [0, 2]).dims
    (3, 2, 1)
    """

    family = "rectilinear"

    def __init__(self, x: ArrayLike, y: ArrayLike | None = None, z: ArrayLike | None = None,
                 point_data: Mapping[str, Any] | None = None, cell_data: Mapping[str, Any] | None = None,
                 name: str = "rectilinear grid") -> None:
        self.coordinates = tuple(
            read_only(self._check_axis(c, axis, name)) for axis, c in zip("xyz", (x, y, z))
        )
        self._init_structured(
            tuple(len(c) for c in self.coordinates), name, point_data, cell_data
        )

    def _validated_arrays(self) -> tuple:
        return self.coordinates

    def _check_contents(self) -> None:
        for axis, values in zip("xyz", self.coordinates):
            self._check_axis(values, axis, self.name)

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
        array = written_out(array, f"{axis} coordinates of {owner}")
        # In float64, as gradients compute them: a difference of unsigned
        # integers would wrap around, and large integers may collapse.
        host = to_host(array).astype(np.float64)
        if not np.all(np.isfinite(host)):
            raise InvalidDataSetError(
                f"{axis} coordinates of {owner} hold NaN or Inf; coordinates must be finite"
            )
        with np.errstate(over="ignore"):
            steps = np.diff(host)
        if np.any(steps <= 0):
            at = int(np.argmax(steps <= 0))
            raise InvalidDataSetError(
                f"{axis} coordinates of {owner} must be strictly increasing (in float64); "
                f"entries {at} and {at + 1} are {float(host[at])!r} and {float(host[at + 1])!r}"
            )
        if steps.size:
            # Differences of distinct float64 values are exact near zero and
            # never round to 0; the widest one (last - first) must not overflow.
            if not math.isfinite(float(host[-1]) - float(host[0])):
                raise InvalidDataSetError(
                    f"{axis} coordinates of {owner} span from {float(host[0])!r} to "
                    f"{float(host[-1])!r}: their difference overflows float64"
                )
            _check_step(f"the smallest step between {axis} coordinates of {owner}",
                        float(steps.min()))
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
    point_data, cell_data, name : optional
        As for :class:`UniformGrid`.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.5]], float)
    >>> daxpy.CurvilinearGrid((2, 2), pts).topology_name
    'curvilinear2d'
    """

    family = "curvilinear"

    def __init__(self, dims: Sequence[int], points: ArrayLike, point_data: Mapping[str, Any] | None = None,
                 cell_data: Mapping[str, Any] | None = None, name: str = "curvilinear grid") -> None:
        self.name = name
        checked_dims = _check_dims(dims, name)
        array = checked_array(points, f"points of {name}", InvalidDataSetError)
        expected = (math.prod(checked_dims), 3)
        if array.shape != expected:
            raise InvalidDataSetError(
                f"points of {name} must have shape {expected} for dims {checked_dims}, "
                f"got {array.shape}"
            )
        array = written_out(array, f"points of {name}")
        check_coordinates(array, name)
        self.coordinates_array = read_only(array)
        self._init_structured(checked_dims, name, point_data, cell_data)

    def _validated_arrays(self) -> tuple:
        return (self.coordinates_array,)

    def _check_contents(self) -> None:
        check_coordinates(self.coordinates_array, self.name)

    def points(self) -> Any:
        """Point coordinates, shape ``(n_points, 3)``, as given (a read-only view)."""
        return self.coordinates_array


def _tensor_points(axes: list[np.ndarray]) -> np.ndarray:
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    return np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
