"""Each cell's case of a structured grid: bit ``i`` set where corner ``i`` (VTK's
voxel, pixel or line order) is in.

On the host a case is built from one shifted view of the grid's in/out mask per
corner; on the GPU one kernel reads each cell's corners once
(:mod:`daxpy.cuda.cases`). Both compare as :func:`~daxpy.worklets._marching.at_least`
does, so they give the same cases.

Examples
--------
>>> import numpy as np
>>> structured_cases(np.array([0.0, 1.0, 2.0]), (3, 1, 1), 1.0).tolist()
[2, 3]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from daxpy.data.arrays import array_module

from ._marching import IMAGE_CELL_CORNERS, at_least_bound, kept_side


def mask_cases(mask: Any, offsets: tuple) -> Any:
    """Each cell's case (uint8, in cell id order) from a ``(z, y, x)`` mask of the
    grid's axes of more than one point and the corners' ``offsets`` along them.

    Examples
    --------
    >>> mask_cases(np.array([[True, False], [True, True]]), IMAGE_CELL_CORNERS[2]).tolist()
    [13]
    """
    xp = array_module(mask)
    shape = tuple(n - 1 for n in mask.shape)
    cases = xp.zeros(shape, xp.uint8)
    for bit, offset in enumerate(offsets):
        # Offsets are along (x, y, z); the array is (z, y, x).
        window = tuple(slice(o, o + n) for o, n in zip(reversed(offset), shape))
        cases |= mask[window].astype(xp.uint8) << bit
    return cases.ravel()


def structured_cases(scalars: Any, dims: tuple, value: float, invert: bool = False) -> Any:
    """Each cell's case (uint8, in cell id order) of a grid of ``dims`` points: bit
    ``i`` set where corner ``i``'s scalar is at or above ``value`` (below it, NaN
    included, with ``invert``), where ``scalars`` live.

    Examples
    --------
    >>> structured_cases(np.array([0.0, 1.0, 2.0]), (3, 1, 1), 1.0, invert=True).tolist()
    [1, 0]
    """
    dims = tuple(int(d) for d in dims)
    active = [a for a in range(3) if dims[a] > 1]
    if array_module(scalars).__name__ != "numpy" and \
            scalars.dtype in (np.float32, np.float64):
        from daxpy.cuda.cases import structured_cases as on_device

        return on_device(scalars, dims, at_least_bound(scalars.dtype, value), invert)
    sizes = tuple(dims[a] for a in reversed(active))
    inside = kept_side(scalars.reshape(sizes), value, invert)
    return mask_cases(inside, IMAGE_CELL_CORNERS[len(active)])
