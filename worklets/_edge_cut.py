"""What the emit pass of an edge-cutting worklet (contour, slice) hands back.

Contour and slice make every output point on an edge of the input grid, at a weight
along it, and join the points into output cells (triangles, segments or points).
Each grid family's implementation, on either backend, returns one :class:`EdgeCut`
per value; the filter turns it into a surface with its fields
(:func:`interpolate` gives each point field on the output points).

The order of the output points and cells is part of each implementation's
contract: the CPU and CUDA implementations of a family give the same order.

Examples
--------
>>> import numpy as np
>>> cut = EdgeCut(lo=np.array([0]), hi=np.array([1]), t=np.array([0.25]),
...               cells={1: np.zeros((1, 1), np.int64)}, source={1: np.array([0])})
>>> interpolate(np.array([2.0, 6.0]), cut).tolist()
[3.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daxpy.data.arrays import array_module
from ._numba import compiled


@dataclass(frozen=True)
class EdgeCut:
    """The output of one cut at one value, on the host (NumPy) or the device (CuPy).

    Attributes
    ----------
    lo, hi : int64 arrays, shape (m,), or None
        Each output point lies on the input edge from point ``lo`` to point ``hi``
        (``lo < hi``: an edge shared by several cells is cut the same way in each).
        None only with ``points`` given, for a caller that asked for no edges (the
        compiled march's ``edges=False``: it interpolates no field).
    t : float64 array, shape (m,), or None
        Where along the edge: ``(value - s[lo]) / (s[hi] - s[lo])`` for the cut scalars
        ``s``; None with ``lo``.
    cells : dict of int to int64 array, shape (n_k, k)
        Output cells as output point indices, by size ``k``: 3 triangles, 2 segments,
        1 points (a grid of 3-D and 2-D cells gives triangles and segments).
    source : dict of int to int64 array, shape (n_k,)
        The input cell each output cell was cut from, by size (empty for a caller
        that asked for none: the compiled march's ``sources=False``).
    points : array, shape (m, 3), or None
        The output points' coordinates where the cut made them as it wrote the
        edges (the compiled march of uniform and rectilinear grids), the bits
        :func:`daxpy.filters._surface.coordinates` makes from ``lo``, ``hi`` and
        ``t``; None: made from those.
    """

    lo: Any
    hi: Any
    t: Any
    cells: Any
    source: Any
    points: Any = None

    @property
    def n_points(self) -> int:
        """Number of output points.

        Examples
        --------
        >>> import numpy as np
        >>> EdgeCut(np.zeros(2, int), np.ones(2, int), np.zeros(2), {}, {}).n_points
        2
        """
        return int((self.lo if self.lo is not None else self.points).shape[0])

    @property
    def module(self) -> Any:
        """NumPy or CuPy: where the cut lives.

        Examples
        --------
        >>> import numpy as np
        >>> EdgeCut(None, None, None, {}, {}, points=np.zeros((1, 3))).module is np
        True
        """
        return array_module(self.lo if self.lo is not None else self.points)


def interpolate(values: Any, cut: EdgeCut) -> Any:
    """A point field on the cut's output points: ``v[lo] + t (v[hi] - v[lo])``.

    Float fields keep their dtype (``t`` is rounded to it first, so that float32
    fields are computed in float32 as VTK does); integer fields are interpolated in
    float64 and rounded to the nearest integer of their dtype, as VTK's
    ``InterpolateTuple`` does.

    Parameters
    ----------
    values : array, shape (n_points,) or (n_points, k)
        A point field of the cut grid, where the cut lives (host or device).
    cut : EdgeCut

    Returns
    -------
    array, shape (m,) or (m, k)

    Examples
    --------
    >>> import numpy as np
    >>> cut = EdgeCut(np.array([0, 1]), np.array([1, 2]), np.array([0.5, 0.75]), {}, {})
    >>> interpolate(np.array([0, 10, 20], np.int32), cut).tolist()
    [5, 18]
    """
    xp = array_module(values)
    if xp.__name__ == "numpy":
        if xp.issubdtype(values.dtype, xp.floating):
            return _EDGE_VALUES(values, cut)
    else:
        from daxpy.cuda.edge_values import edge_values

        # One kernel, the array program's bits (six CuPy passes, each a launch the
        # GPU waits for after a cut's sizes are known).
        made = edge_values(values, cut.lo, cut.hi, cut.t)
        if made is not None:
            return made
    return _array_interpolate(values, cut)


def _array_interpolate(values: Any, cut: EdgeCut) -> Any:
    """:func:`interpolate` as an array program (CuPy on the device; NumPy for integer
    fields and where the compiled kernel does not serve)."""
    xp = array_module(values)
    low, high = values[cut.lo], values[cut.hi]
    t = cut.t.reshape((-1,) + (1,) * (values.ndim - 1))
    if xp.issubdtype(values.dtype, xp.floating):
        t = t.astype(values.dtype, copy=False)
        return low + t * (high - low)
    mixed = low + t * (high.astype(xp.float64) - low)
    return xp.rint(mixed).astype(values.dtype)


_EDGE_VALUES = compiled("_edge_points_cpu", "edge_values", _array_interpolate)
