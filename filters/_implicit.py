"""The implicit functions a clip cuts by (vtkPlane, vtkBox, vtkSphere), evaluated at
every point of a grid where the clip runs.

Examples
--------
>>> import numpy as np
>>> plane = implicit_function(((0, 0, 0), (0, 0, 2)), None, None)
>>> plane(np.array([1.0]), np.array([1.0]), np.array([3.0])).tolist()
[3.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daxpy.data.arrays import array_module
from daxpy.errors import ArgumentError
from daxpy.worklets._numba import compiled
from daxpy.worklets.plane_cuts import array_axis_distance

from ._geometry import dataset_array, grid_axes


def _triple(value: Any, what: str) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    if array.shape != (3,) or not np.isfinite(array).all():
        raise ArgumentError(f"{what} must be three finite numbers, got {value!r}")
    return array


def coordinate_columns(dataset: Any, backend: str) -> tuple:
    """Every point's x, y and z in float64, on the backend's device, as columns that
    broadcast to the points in id order: an image or rectilinear grid's are its
    axes (shapes ``(1, 1, nx)``, ``(1, ny, 1)``, ``(nz, 1, 1)``), so that a function
    of them is evaluated point by point with no column of the grid's size made.

    Examples
    --------
    >>> import daxpy
    >>> x, y, z = coordinate_columns(daxpy.UniformGrid(dims=(2, 3)), "cpu")
    >>> x.shape, y.shape, z.shape, (x + y + z).reshape(-1).tolist()
    ((1, 1, 2), (1, 3, 1), (1, 1, 1), [0.0, 1.0, 1.0, 2.0, 2.0, 3.0])
    """
    xp: Any = np
    if backend == "cuda":
        import cupy

        xp = cupy
    if dataset.family in ("uniform", "rectilinear"):
        shapes = ((1, 1, -1), (1, -1, 1), (-1, 1, 1))
        # On the device, the axes kept with the grid: an upload from pageable memory
        # a call would wait for the work queued before it.
        axes = grid_axes(dataset, xp)
        return tuple(axes[a].reshape(shapes[a]) for a in range(3))
    points = dataset_array(dataset, dataset.points(), xp).astype(xp.float64)
    return points[:, 0], points[:, 1], points[:, 2]


def _array_distance(points: Any, origin: Any, normal: Any) -> Any:
    """:func:`plane_distance` as an array program where ``points`` are (NumPy or CuPy)."""
    xp = array_module(points)
    points = points.astype(xp.float64)
    # Term by term, as vtkPlane evaluates it: NumPy and CuPy give the same bits (a
    # matrix product would leave the order of the sum to the BLAS).
    (o0, o1, o2), (n0, n1, n2) = origin, normal
    return (points[:, 0] - o0) * n0 + (points[:, 1] - o1) * n1 + (points[:, 2] - o2) * n2


# The compiled distance of host points (a threaded pass, no temporaries).
_PLANE_DISTANCE = compiled("_plane_cpu", "plane_distance", _array_distance)


def plane_distance(points: Any, origin: list, normal: list) -> Any:
    """Signed distance (float64) of ``points`` ``(n, 3)`` to the plane through
    ``origin`` with ``normal`` (lists of three floats), where the points are: the
    columns' ``(x - o0) n0 + (y - o1) n1 + (z - o2) n2``, term by term as vtkPlane
    evaluates it, on every host core for host points.

    Examples
    --------
    >>> import numpy as np
    >>> plane_distance(np.array([[1.0, 2.0, 3.0]]), [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]).tolist()
    [2.0]
    """
    if not isinstance(points, np.ndarray):  # device points never load Numba
        from daxpy.cuda.plane_distance import plane_distance as on_device

        made = on_device(points, origin, normal)   # one kernel, the same bits
        return made if made is not None else _array_distance(points, origin, normal)
    return _PLANE_DISTANCE(points, origin, normal=normal)


def points_distance(dataset: Any, origin: list, normal: list, xp: Any = np) -> Any:
    """:func:`plane_distance` of a curvilinear or unstructured grid's points, where
    ``xp`` computes (the points as they are: no float64 copy of them; on the device
    one kernel over the points kept with the grid).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import VERTEX
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {VERTEX: [[0], [1], [2]]})
    >>> points_distance(g, [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]).tolist()
    [1.0, 0.0, 0.0]
    """
    return plane_distance(dataset_array(dataset, dataset.points(), xp), origin, normal)


def axis_terms(dataset: Any, origin: Any, normal: Any, xp: Any = np) -> list:
    """An image's or rectilinear grid's plane distance as three terms, one per axis,
    ``(axis - origin[a]) * normal[a]`` in float64 (the axis widened first, as
    :func:`coordinate_columns` widens it), where ``xp`` computes: on the device from
    the axes uploaded once per grid (:func:`~daxpy.filters._geometry.grid_axes`) in
    one launch (:func:`daxpy.cuda.plane_distance.axis_terms`), the same bits, with no
    upload a call (a pageable upload waits for the work queued before it, then the
    GPU for the host's next launches).

    Examples
    --------
    >>> import daxpy
    >>> [t.tolist() for t in axis_terms(daxpy.UniformGrid(dims=(2, 1, 1)), [1, 0, 0], [2, 0, 0])]
    [[-2.0, 0.0], [0.0], [0.0]]
    """
    axes = grid_axes(dataset, xp)
    if xp is not np:
        from daxpy.cuda.plane_distance import axis_terms as device_terms

        return device_terms(axes, origin, normal)
    return [(axes[a] - float(origin[a])) * float(normal[a]) for a in range(3)]


# The compiled distance on the host (a threaded pass, no temporaries); device terms
# never load Numba.
_AXIS_DISTANCE = compiled("_plane_cpu", "axis_plane_distance", array_axis_distance)


def axis_distance(terms: list, n_points: int, x_first: bool = False) -> Any:
    """A plane's signed distance (float64) at a uniform or rectilinear grid's points
    from its :func:`axis_terms`, where they are: ``(z term + y term) + x term`` (the
    slice's order), or with ``x_first`` ``(x term + y term) + z term`` (the clip's
    implicit plane, vtkPlane's: :func:`implicit_function`'s bits), on every host
    core for host terms.

    Examples
    --------
    >>> import numpy as np
    >>> axis_distance([np.arange(2.0), np.zeros(1), np.ones(1)], 2, x_first=True).tolist()
    [1.0, 2.0]
    """
    if isinstance(terms[0], np.ndarray):
        return _AXIS_DISTANCE(terms, n_points, x_first=x_first)
    return array_axis_distance(terms, n_points, x_first)


def plane_terms(plane: Any) -> tuple[list, list]:
    """A clip plane's origin and unit normal, as lists of floats.

    Raises
    ------
    ArgumentError
        A zero normal, or an origin or normal that is not three finite numbers.

    Examples
    --------
    >>> plane_terms(((0, 0, 1), (0, 0, 2)))
    ([0.0, 0.0, 1.0], [0.0, 0.0, 1.0])
    """
    origin, normal = _triple(plane[0], "the plane's origin"), _triple(plane[1],
                                                                     "the plane's normal")
    if not np.linalg.norm(normal):
        raise ArgumentError("the plane's normal must not be zero")
    return origin.tolist(), (normal / np.linalg.norm(normal)).tolist()


def implicit_function(plane: Any, box: Any, sphere: Any):
    """The implicit function's values at points (x, y, z columns, NumPy or CuPy), as
    VTK's vtkPlane, vtkBox and vtkSphere evaluate them, term by term (the same bits
    on either backend); None when none is given.

    Raises
    ------
    ArgumentError
        A zero normal, a radius that is not positive, or a box that is not
        ``(xmin, xmax, ymin, ymax, zmin, zmax)`` with each min at most its max.

    Examples
    --------
    >>> import numpy as np
    >>> sphere = implicit_function(None, None, ((0, 0, 0), 1.0))
    >>> sphere(np.array([2.0]), np.array([0.0]), np.array([0.0])).tolist()
    [3.0]
    """
    if plane is not None:
        (o0, o1, o2), (n0, n1, n2) = plane_terms(plane)
        return lambda x, y, z: (x - o0) * n0 + (y - o1) * n1 + (z - o2) * n2
    if sphere is not None:
        center, radius = _triple(sphere[0], "the sphere's center"), float(sphere[1])
        if not radius > 0:
            raise ArgumentError(f"the sphere's radius must be positive, got {sphere[1]!r}")
        c0, c1, c2 = center.tolist()
        return lambda x, y, z: (x - c0) ** 2 + (y - c1) ** 2 + (z - c2) ** 2 - radius ** 2
    if box is not None:
        bounds = np.asarray(box, dtype=np.float64).reshape(-1)
        if bounds.shape != (6,) or not np.isfinite(bounds).all() or \
                (bounds[0::2] > bounds[1::2]).any():
            raise ArgumentError(f"box must be (xmin, xmax, ymin, ymax, zmin, zmax) with each "
                                f"min <= max, got {box!r}")
        return lambda x, y, z: _box_distance((x, y, z), bounds.tolist())
    return None


def _box_distance(columns: tuple, bounds: list) -> Any:
    """vtkBox's function: minus the distance to the nearest face inside, the distance
    to the box outside."""
    xp = array_module(columns[0])
    beyond = [xp.maximum(bounds[2 * a] - c, c - bounds[2 * a + 1])
              for a, c in enumerate(columns)]
    inside = (beyond[0] <= 0) & (beyond[1] <= 0) & (beyond[2] <= 0)
    out = [xp.maximum(b, 0.0) for b in beyond]
    outside = xp.sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2])
    return xp.where(inside, xp.maximum(xp.maximum(beyond[0], beyond[1]), beyond[2]), outside)
