"""Checks of an unstructured grid's arrays: each says what is wrong, in which
array, and none allocates more than the arrays' own size before it has
checked their lengths and strides.

Offsets and ids of every integer dtype (int8 to uint64) are compared in their
own dtype or as Python ints, never after a cast that could wrap: an uint64
offset of 2**64 - 1 is reported as past the end of the connectivity, not as
a negative step.

Examples
--------
>>> import numpy as np
>>> from daxpy.data.topology_checks import check_offsets
>>> check_offsets(np.array([0, 2**64 - 1], np.uint64), 1, 4, "mesh")
Traceback (most recent call last):
...
daxpy.errors.InvalidDataSetError: offsets of mesh hold 18446744073709551615 at position 1, past the end of the connectivity (4 entries)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .arrays import all_finite, checked_array, is_device_array
from .celltypes import CELL_SHAPES, HEXAHEDRON, PIXEL, QUAD, VOXEL
from ..errors import InvalidDataSetError
from .memory_budget import require_bytes

BROADCAST_COPY_BYTES = 1 << 20
"""A broadcast (zero-stride) array up to this size, written out, is copied; a
larger one is refused: the checks and kernels would read it at full length."""

REPEAT_CHECK_ROWS = 1 << 20
"""Cells whose corners are sorted at a time when looking for repeated points."""

_CORNERS = np.full(256, -1, dtype=np.int64)
for _vtk_id, _shape in CELL_SHAPES.items():
    _CORNERS[_vtk_id] = _shape.n_corners
_CORNERS.flags.writeable = False


def check_coordinates(points, owner: str) -> None:
    """Raise InvalidDataSetError unless ``points`` are finite float32 or float64.

    Examples
    --------
    >>> import numpy as np
    >>> check_coordinates(np.array([[0, 0, np.inf]]), "mesh")
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: points of mesh hold NaN or Inf; coordinates must be finite
    """
    if np.dtype(points.dtype).kind != "f" or np.dtype(points.dtype).itemsize < 4:
        raise InvalidDataSetError(
            f"points of {owner} must be float32 or float64, got {points.dtype}"
        )
    if not all_finite(points):
        raise InvalidDataSetError(f"points of {owner} hold NaN or Inf; coordinates must be finite")


def written_out(array, what: str):
    """``array``, or a copy of it if it is a small broadcast (zero-stride) view.

    A large broadcast view is refused: checks and kernels would read (and
    their temporaries hold) every entry it pretends to have.

    Examples
    --------
    >>> import numpy as np
    >>> written_out(np.broadcast_to(np.zeros(3), (2, 3)), "points").strides
    (24, 8)
    """
    if not any(n > 1 and step == 0 for n, step in zip(array.shape, array.strides)):
        return array
    size = array.size * array.dtype.itemsize
    if size > BROADCAST_COPY_BYTES:
        raise InvalidDataSetError(
            f"{what} is a broadcast view (stride 0) of {array.size:,} entries "
            f"({size:,} bytes); pass an array that holds its values"
        )
    return array.copy()


def read_only(array):
    """A read-only NumPy view of ``array`` (device arrays as they are).

    The caller's own array stays writable; the view only keeps daxpy, and
    whoever reads the grid's attributes, from writing into it.

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.arange(3)
    >>> (read_only(ids).flags.writeable, ids.flags.writeable)
    (False, True)
    """
    if not isinstance(array, np.ndarray):
        return array
    view = array.view()
    view.flags.writeable = False
    return view


def topology_array(values: Any, what: str):
    """``values`` as a 1-D NumPy or CuPy (left where it is) integer array;
    empty arrays become int64.

    Examples
    --------
    >>> import numpy as np
    >>> topology_array(np.broadcast_to(np.int8(3), (10**12,)), "offsets of mesh")
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: offsets of mesh is a broadcast view (stride 0) of 1,000,000,000,000 entries (1,000,000,000,000 bytes); pass an array that holds its values
    """
    array = checked_array(values, what, InvalidDataSetError)
    if array.ndim != 1:
        raise InvalidDataSetError(f"{what} must be 1-D, got shape {array.shape}")
    if not array.size:
        return array.astype(np.int64)
    if np.dtype(array.dtype).kind not in "iu":
        raise InvalidDataSetError(f"{what} must hold integers, got {array.dtype}")
    return written_out(array, what)


def signed(array):
    """``array``, copied to int64 if it is uint64 (its values checked to fit), so
    that index arithmetic with int64 never turns into float64.

    Examples
    --------
    >>> import numpy as np
    >>> signed(np.array([0, 4], np.uint64)).dtype
    dtype('int64')
    """
    return array.astype(np.int64) if np.dtype(array.dtype) == np.uint64 else array


def _first(mask) -> int:
    return int(np.argmax(mask))


def check_offsets(offs: np.ndarray, n_cells: int, n_ids: int, owner: str) -> None:
    """Offsets: ``n_cells + 1`` entries from 0 to ``n_ids``, never decreasing.

    Examples
    --------
    >>> import numpy as np
    >>> check_offsets(np.array([0, 3, 2, 4]), 3, 4, "mesh")
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: offsets of mesh decrease at position 2 (from 3 to 2); they must not decrease
    """
    if offs.shape[0] != n_cells + 1:
        raise InvalidDataSetError(
            f"offsets of {owner} must have n_cells + 1 = {n_cells + 1} entries (one more "
            f"than cell_types), got {offs.shape[0]}"
        )
    if int(offs[0]) != 0:
        raise InvalidDataSetError(f"offsets of {owner} must start at 0, got {int(offs[0])}")
    low, high = int(offs.min()), int(offs.max())
    if low < 0:
        raise InvalidDataSetError(
            f"offsets of {owner} hold {low} at position {_first(offs == low)}; offsets "
            "must be >= 0"
        )
    if high > n_ids:
        raise InvalidDataSetError(
            f"offsets of {owner} hold {high} at position {_first(offs == high)}, past the "
            f"end of the connectivity ({n_ids} entries)"
        )
    # Compared in their own dtype, which holds both sides: no cast, no wrap.
    falls = offs[1:] < offs[:-1]
    if np.any(falls):
        at = _first(falls) + 1
        raise InvalidDataSetError(
            f"offsets of {owner} decrease at position {at} (from {int(offs[at - 1])} to "
            f"{int(offs[at])}); they must not decrease"
        )
    if int(offs[-1]) != n_ids:
        raise InvalidDataSetError(
            f"last offset of {owner} is {int(offs[-1])} but connectivity has "
            f"{n_ids} entries"
        )


def check_point_ids(conn, n_points: int, owner: str) -> None:
    """Every id of ``conn`` (host or device) lies in ``[0, n_points)``.

    Examples
    --------
    >>> import numpy as np
    >>> check_point_ids(np.array([0, -1]), 3, "mesh")
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: connectivity of mesh holds point id -1, outside [0, 3)
    """
    if not conn.size:
        return
    if is_device_array(conn):
        from .validate import count_out_of_range

        if count_out_of_range(conn, n_points) == 0:
            return
    low, high = int(conn.min()), int(conn.max())
    if low < 0 or high >= n_points:
        raise InvalidDataSetError(
            f"connectivity of {owner} holds point id {low if low < 0 else high}, outside "
            f"[0, {n_points})"
        )


def check_cell_types(types: np.ndarray, owner: str, legacy: bool = True) -> None:
    """Every type is a supported VTK id (pixels and voxels only if ``legacy``).

    Examples
    --------
    >>> import numpy as np
    >>> check_cell_types(np.array([12, 300]), "mesh")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: cell_types of mesh holds unsupported VTK cell type 300 at cell 1; supported: [1, 3, ...]
    """
    if not types.size:
        return
    require_bytes(types.shape[0] * 24, f"checking the {types.shape[0]:,} cells of {owner}")
    low, high = int(types.min()), int(types.max())
    if low < 0 or high >= _CORNERS.shape[0]:
        bad = low if low < 0 else high
        unknown = types == bad
    else:
        unknown = _CORNERS[types] < 0
        if not legacy:
            unknown |= (types == PIXEL) | (types == VOXEL)
        if not np.any(unknown):
            return
        bad = int(types[_first(unknown)])
    supported = sorted(CELL_SHAPES) if legacy else sorted(set(CELL_SHAPES) - {PIXEL, VOXEL})
    raise InvalidDataSetError(
        f"cell_types of {owner} holds unsupported VTK cell type {bad} at cell "
        f"{_first(unknown)}; supported: {supported}"
        + ("" if legacy else f" (pixels and voxels are renumbered to {QUAD} and "
           f"{HEXAHEDRON} only when a grid is built)")
    )


def check_sizes(offs: np.ndarray, types: np.ndarray, owner: str) -> None:
    """Each cell has the corner count of its type (types already checked).

    Examples
    --------
    >>> import numpy as np
    >>> check_sizes(np.array([0, 3]), np.array([12]), "mesh")
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: cell 0 of mesh is a hex with 3 points; expected 8
    """
    # Offsets are checked: in range and non-decreasing, so differences never wrap.
    wrong = np.diff(offs) != _CORNERS[types]
    if np.any(wrong):
        cell = _first(wrong)
        shape = CELL_SHAPES[int(types[cell])]
        raise InvalidDataSetError(
            f"cell {cell} of {owner} is a {shape.name} with "
            f"{int(offs[cell + 1]) - int(offs[cell])} points; expected {shape.n_corners}"
        )


def check_repeated_points(blocks, owner: str) -> None:
    """No cell lists a point twice (sorted in slabs: no full-size temporaries).

    Examples
    --------
    >>> import numpy as np
    >>> from daxpy.data.unstructured import CellBlock
    >>> from daxpy.data.celltypes import CELL_SHAPES
    >>> block = CellBlock(CELL_SHAPES[3], np.array([0]), np.array([[4, 4]]))
    >>> check_repeated_points([block], "mesh")
    Traceback (most recent call last):
    ...
    daxpy.errors.InvalidDataSetError: cell 0 of mesh (line) repeats a point id: [4, 4]
    """
    for block in blocks:
        for start in range(0, block.corners.shape[0], REPEAT_CHECK_ROWS):
            corners = block.corners[start:start + REPEAT_CHECK_ROWS]
            ordered = np.sort(corners, axis=1)
            repeated = np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)
            if np.any(repeated):
                row = _first(repeated)
                raise InvalidDataSetError(
                    f"cell {int(block.cell_ids[start + row])} of {owner} "
                    f"({block.shape.name}) repeats a point id: {corners[row].tolist()}"
                )
