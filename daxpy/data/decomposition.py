"""What a piece of a grid reads, owns and writes: one type for every decomposition.

A :class:`Piece` is a part of a grid computed on its own: a streaming chunk
(:mod:`daxpy.stream.chunks`), a Dask block (:mod:`daxpy.data.partition`) or
an unstructured piece with ghost cells (:mod:`daxpy.distributed.ghosts`). It
reads more than it owns (its halo), and the results it owns go to their place
in the whole output, so pieces put back together give the whole-grid result.

- Structured grids are cut into boxes of point indices along x, y and z:
  ``lo``/``hi`` is the box read (the owned box grown by the halo),
  ``own_lo``/``own_hi`` the box owned and ``dims`` the whole grid's points.
  A piece owns the cells whose first corner (lowest index) it owns, so the
  owned cells of neighbouring pieces tile the grid's cells.
- Unstructured grids are cut into ids: ``point_ids``/``cell_ids`` are the
  global ids the piece reads, in its own order, and
  ``owned_points``/``owned_cells`` the local ids of those it owns.

Either way :meth:`Piece.read`, :meth:`Piece.owned` and :meth:`Piece.written`
give flat selections (a ``slice`` where the ids are contiguous, else an
ascending int64 array): the global ids read, the local ids owned, and the
global ids the owned results are written to.

Examples
--------
>>> piece = Piece((0, 0, 2), (4, 3, 6), (0, 0, 3), (4, 3, 6), dims=(4, 3, 6))
>>> piece.read("points"), piece.owned("points"), piece.written("points")
(slice(24, 72, None), slice(12, 48, None), slice(36, 72, None))
>>> piece.written("cells"), piece.owned_slices("cells")
(slice(18, 30, None), (slice(1, 3, None), slice(0, 2, None), slice(0, 3, None)))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Box = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Piece:
    """One independently computed piece of a grid.

    Attributes
    ----------
    lo, hi : tuple of int, optional
        Structured grids: first and one-past-last point read along x, y, z.
    own_lo, own_hi : tuple of int, optional
        Structured grids: the same for the points owned (inside the read box).
    dims : tuple of int, optional
        Structured grids: the whole grid's points along x, y, z (cells need it).
    index : int
        Position among the pieces.
    grid : DataSet, optional
        The piece's sub-grid, with true coordinates, where it is built ahead.
    point_ids, cell_ids : slice or numpy.ndarray, optional
        Unstructured grids: global ids of the sub-grid's points and cells, in
        its order (a slice when contiguous, else an ascending int64 array).
    owned_points, owned_cells : slice or numpy.ndarray, optional
        Unstructured grids: local ids of the points and cells owned.
    """

    lo: tuple[int, int, int] | None = None
    hi: tuple[int, int, int] | None = None
    own_lo: tuple[int, int, int] | None = None
    own_hi: tuple[int, int, int] | None = None
    dims: tuple[int, int, int] | None = None
    index: int = 0
    grid: Any = None
    point_ids: Any = None
    cell_ids: Any = None
    owned_points: Any = None
    owned_cells: Any = None
    # Selections already worked out: a streamed run asks for them per chunk per
    # run, and each is a few microseconds of Python that the chunk loop cannot hide.
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def _remember(self, kind: str, association: str, make):
        key = (kind, association)
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    @property
    def shape(self) -> tuple[int, int, int]:
        """Points read along x, y and z (structured).

        Examples
        --------
        >>> Piece((1, 0, 0), (4, 1, 1), (1, 0, 0), (4, 1, 1)).shape
        (3, 1, 1)
        """
        return tuple(h - l for l, h in zip(self.lo, self.hi))

    def read_box(self, association: str) -> Box:
        """``(first, stop)`` along x, y, z of the points or cells read (structured).

        Along an axis of one point there is one layer of cells, as in the grid.

        Examples
        --------
        >>> Piece((2, 0, 0), (6, 1, 1), (3, 0, 0), (6, 1, 1), (6, 1, 1)).read_box("cells")
        ((2, 5), (0, 1), (0, 1))
        """
        return _box(self.lo, self.hi, self.dims, association, 1)

    def owned_box(self, association: str) -> Box:
        """``(first, stop)`` along x, y, z of the points or cells owned (structured):
        the cells whose first corner is owned.

        Examples
        --------
        >>> piece = Piece((0, 0, 0), (4, 3, 1), (2, 0, 0), (4, 3, 1), dims=(4, 3, 1))
        >>> piece.owned_box("points"), piece.owned_box("cells")
        (((2, 4), (0, 3), (0, 1)), ((2, 3), (0, 2), (0, 1)))
        """
        return _box(self.own_lo, self.own_hi, self.dims, association, 0)

    def _local_owned_box(self, association: str) -> Box:
        read = self.read_box(association)
        return tuple((a - r, b - r) for (a, b), (r, _) in zip(self.owned_box(association), read))

    def owned_slices(self, association: str) -> tuple[slice, ...]:
        """C-order slices that keep the owned points or cells of a result over
        the read box (structured).

        Examples
        --------
        >>> Piece((2, 0, 0), (6, 1, 1), (3, 0, 0), (6, 1, 1), (6, 1, 1)).owned_slices("points")
        (slice(0, 1, None), slice(0, 1, None), slice(1, 4, None))
        """
        return tuple(slice(a, b) for a, b in self._local_owned_box(association)[::-1])

    def read(self, association: str):
        """Global ids of the points or cells read (``"points"`` or ``"cells"``).

        Examples
        --------
        >>> Piece(point_ids=slice(4, 9), cell_ids=np.array([1, 5])).read("cells")
        array([1, 5])
        """
        if self.lo is None:
            return self.point_ids if association == "points" else self.cell_ids
        return self._remember("read", association, lambda: box_ids(
            self.read_box(association), _extent(self.dims, association)))

    def owned(self, association: str):
        """Local ids, among those read, of the points or cells owned.

        Examples
        --------
        >>> Piece(point_ids=slice(4, 9), owned_points=slice(1, 3)).owned("points")
        slice(1, 3, None)
        """
        if self.lo is None:
            return self.owned_points if association == "points" else self.owned_cells
        read = self.read_box(association)
        return self._remember("owned", association, lambda: box_ids(
            self._local_owned_box(association), tuple(b - a for a, b in read)))

    def written(self, association: str):
        """Global ids the owned results go to in the whole output.

        Examples
        --------
        >>> Piece(point_ids=slice(4, 9), owned_points=slice(1, 3)).written("points")
        slice(5, 7, None)
        >>> Piece(point_ids=np.array([2, 3, 4, 8]), owned_points=slice(0, 3)).written("points")
        slice(2, 5, None)
        """
        if self.lo is None:
            return self._remember("written", association, lambda: compose(
                self.read(association), self.owned(association)))
        return self._remember("written", association, lambda: box_ids(
            self.owned_box(association), _extent(self.dims, association)))

    def keep(self, values, association: str):
        """The owned rows of ``values``, a flat result over the piece's points or cells.

        Examples
        --------
        >>> Piece(cell_ids=slice(2, 6), owned_cells=slice(1, 3)).keep(np.arange(4), "cells")
        array([1, 2])
        """
        return values[self.owned(association)]


def _box(lo, hi, dims, association: str, past: int) -> Box:
    """The points ``[lo, hi)`` along x, y, z, or their cells: along an axis of
    several points, the cells from ``lo`` up to ``hi - past`` (1: the cells
    between the points; 0: the cells whose first corner is among them), never
    past the grid's last; along an axis of one point, its one layer of cells."""
    if association == "points":
        return tuple(zip(lo, hi))
    return tuple((l, min(h - past, n - 1)) if n > 1 else (0, 1) for l, h, n in zip(lo, hi, dims))


def _extent(dims, association: str) -> tuple[int, ...]:
    """Points, or cells (one layer along an axis of one point), along x, y, z."""
    return tuple(dims) if association == "points" else tuple(max(n - 1, 1) for n in dims)


def box_ids(box: Box, extent) -> Any:
    """Flat ids (x fastest) of ``box`` in a grid of ``extent``: a slice when
    they are contiguous, else an int64 array.

    Examples
    --------
    >>> box_ids(((0, 4), (1, 3), (0, 1)), (4, 5, 1))
    slice(4, 12, None)
    >>> box_ids(((1, 3), (1, 3), (0, 1)), (4, 5, 1)).tolist()
    [5, 6, 9, 10]
    """
    strides = (1, extent[0], extent[0] * extent[1])
    slowest = max((a for a, (l, h) in enumerate(box) if h - l > 1), default=0)
    if all(box[a] == (0, extent[a]) for a in range(slowest)):
        first = sum(l * s for (l, _), s in zip(box, strides))
        return slice(first, first + math.prod(h - l for l, h in box))
    axes = [np.arange(l, h, dtype=np.int64) * s for (l, h), s in zip(box, strides)]
    return (axes[2][:, None, None] + axes[1][:, None] + axes[0]).ravel()


def as_selection(ids: np.ndarray):
    """A slice for a contiguous ascending id array, else the array itself (int64).

    Examples
    --------
    >>> as_selection(np.array([3, 4, 5])), as_selection(np.array([1, 5]))
    (slice(3, 6, None), array([1, 5]))
    """
    if ids.size == 0:
        return slice(0, 0)
    if int(ids[-1]) - int(ids[0]) + 1 == ids.size:
        return slice(int(ids[0]), int(ids[-1]) + 1)
    return ids.astype(np.int64, copy=False)


def compose(read, owned):
    """``read[owned]`` for selections: the global ids of the owned local ids.

    Examples
    --------
    >>> compose(slice(10, 20), slice(2, 4)), compose(slice(10, 20), np.array([0, 5]))
    (slice(12, 14, None), array([10, 15]))
    """
    if isinstance(read, slice):
        if isinstance(owned, slice):
            return slice(read.start + owned.start, read.start + owned.stop)
        return owned + read.start
    return as_selection(read[owned])


def read_count(selection) -> int:
    """Number of ids a ``slice`` or id array selects.

    Examples
    --------
    >>> read_count(slice(4, 10)), read_count(np.arange(3))
    (6, 3)
    """
    if isinstance(selection, slice):
        return selection.stop - selection.start
    return len(selection)


def ids_of(selection) -> np.ndarray:
    """The ids a ``slice`` or id array selects, as an int64 array.

    Examples
    --------
    >>> ids_of(slice(2, 5)).tolist(), ids_of(np.array([7])).tolist()
    ([2, 3, 4], [7])
    """
    if isinstance(selection, slice):
        return np.arange(selection.start, selection.stop, dtype=np.int64)
    return np.asarray(selection, dtype=np.int64)
