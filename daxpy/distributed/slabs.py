"""One slab per worker, and the ghost planes each slab takes from its neighbours.

A structured grid run by resident workers (:mod:`daxpy.distributed.resident`)
is cut along its slowest axis into one slab per worker
(:func:`slab_pieces`). Each worker keeps its slab's fields in buffers over the
slab's *read box* (the owned planes plus ``depth`` ghost planes on each side
that has a neighbour), so the pipeline runs on them in place. Only the ghost
planes come from elsewhere: :func:`ghost_moves` says which owned planes of
which neighbour fill them. In C order the planes of a slab are contiguous, so
every move is one contiguous copy.

Examples
--------
>>> pieces = slab_pieces((4, 3, 10), 2, 1)
>>> [(p.lo[2], p.own_lo[2], p.own_hi[2], p.hi[2]) for p in pieces]
[(0, 0, 5, 6), (4, 5, 10, 10)]
>>> ghost_moves(pieces, 1, "points")
[Move(source=1, target=0, source_planes=(1, 2), target_planes=(5, 6)), \
Move(source=0, target=1, source_planes=(4, 5), target_planes=(0, 1))]
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from ..data.decomposition import Piece
from ..data.partition import even_split, first_axis, merge_small


class Move(NamedTuple):
    """Planes ``source_planes`` of slab ``source``'s buffer, copied into planes
    ``target_planes`` of slab ``target``'s buffer (local plane numbers, along
    the slab axis, ``(first, stop)``)."""

    source: int
    target: int
    source_planes: tuple[int, int]
    target_planes: tuple[int, int]


def slab_axis(dims: Sequence[int]) -> int:
    """The axis (0, 1, 2 for x, y, z) slabs are cut along: the slowest with
    more than one point.

    Examples
    --------
    >>> slab_axis((8, 8, 8)), slab_axis((8, 8, 1))
    (2, 1)
    """
    return 2 - first_axis(tuple(dims[::-1]))


def slab_pieces(dims: Sequence[int], parts: int, depth: int) -> list[Piece]:
    """``parts`` slabs (fewer if the axis is too short) with ``depth`` ghost planes.

    Slabs are near-equal, larger ones first, and at least ``depth`` planes
    thick (the last ``depth + 1``: its cells), so a slab's ghost planes are
    all owned by its two neighbours.

    Parameters
    ----------
    dims : sequence of int
        Points along x, y, z.
    parts : int
        Slabs wanted (one per worker).
    depth : int
        The pipeline's depth (:attr:`daxpy.engine.probe.Probe.depth`).

    Returns
    -------
    list of Piece
        With ``index`` set to the slab's position.

    Examples
    --------
    >>> [p.own_hi[2] - p.own_lo[2] for p in slab_pieces((2, 2, 9), 4, 2)]
    [3, 2, 4]
    """
    dims = tuple(int(n) for n in dims)
    axis = slab_axis(dims)
    sizes = merge_small(even_split(dims[axis], parts), max(depth, 1), depth + 1)
    pieces, start = [], 0
    for index, size in enumerate(sizes):
        lo, hi, own_lo, own_hi = [0, 0, 0], list(dims), [0, 0, 0], list(dims)
        own_lo[axis], own_hi[axis] = start, start + size
        lo[axis], hi[axis] = max(start - depth, 0), min(start + size + depth, dims[axis])
        pieces.append(Piece(tuple(lo), tuple(hi), tuple(own_lo), tuple(own_hi), dims,
                            index=index))
        start += size
    return pieces


def ghost_moves(pieces: Sequence[Piece], depth: int, association: str) -> list[Move]:
    """Every copy that fills the ghost planes of ``pieces`` for one association.

    Parameters
    ----------
    pieces : sequence of Piece
        From :func:`slab_pieces`.
    depth : int
        Their ghost planes.
    association : {"points", "cells"}

    Returns
    -------
    list of Move
        In target order, the lower ghost planes first. (A slab reads the cells
        between its points, so with depth 1 it takes no cells from above.)

    Examples
    --------
    >>> pieces = slab_pieces((2, 2, 9), 3, 1)
    >>> [(m.source, m.target) for m in ghost_moves(pieces, 1, "cells")]
    [(0, 1), (1, 2)]
    """
    if depth == 0 or len(pieces) < 2:
        return []
    axis = slab_axis(pieces[0].dims)
    moves = []
    for target in pieces:
        read_lo, read_hi = target.read_box(association)[axis]
        own_lo, own_hi = target.owned_box(association)[axis]
        for first, stop in ((read_lo, own_lo), (own_hi, read_hi)):
            for source in pieces:
                src_lo, src_hi = source.owned_box(association)[axis]
                lo, hi = max(first, src_lo), min(stop, src_hi)
                if source is target or lo >= hi:
                    continue
                base = source.read_box(association)[axis][0]
                moves.append(Move(source.index, target.index, (lo - base, hi - base),
                                  (lo - read_lo, hi - read_lo)))
    return sorted(moves, key=lambda m: (m.target, m.target_planes))
