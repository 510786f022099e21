"""The decomposition type: a structured piece's flat selections are its boxes."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from daxpy.data.decomposition import Piece, box_ids, compose, ids_of


@st.composite
def pieces(draw):
    """A structured piece: an owned box grown by a halo, inside a grid."""
    dims = tuple(draw(st.integers(1, 6)) for _ in range(3))
    depth = draw(st.integers(1, 2))
    lo, hi, own_lo, own_hi = [], [], [], []
    for n in dims:
        first = draw(st.integers(0, n - 1))
        stop = draw(st.integers(first + 1, n))
        lo.append(max(first - depth, 0)), hi.append(min(stop + depth, n))
        own_lo.append(first), own_hi.append(stop)
    return Piece(tuple(lo), tuple(hi), tuple(own_lo), tuple(own_hi), dims)


def _grid_ids(extent):
    """Flat ids of a grid of ``extent`` (x, y, z) in C-order shape (z, y, x)."""
    return np.arange(int(np.prod(extent))).reshape(tuple(extent)[::-1])


def _c_order(box):
    return tuple(slice(a, b) for a, b in box[::-1])


@given(pieces())
def test_flat_selections_are_the_boxes(piece):
    for association in ("points", "cells"):
        extent = piece.dims if association == "points" else tuple(max(n - 1, 1) for n in piece.dims)
        ids = _grid_ids(extent)
        read = ids[_c_order(piece.read_box(association))]
        np.testing.assert_array_equal(ids_of(piece.read(association)), read.ravel())
        np.testing.assert_array_equal(ids_of(piece.written(association)),
                                      ids[_c_order(piece.owned_box(association))].ravel())
        # The owned local ids pick, from what is read, what is written.
        np.testing.assert_array_equal(read.ravel()[piece.owned(association)],
                                      read[piece.owned_slices(association)].ravel())
        np.testing.assert_array_equal(read[piece.owned_slices(association)].ravel(),
                                      ids_of(piece.written(association)))


@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), st.data())
def test_box_ids_is_a_slice_exactly_when_contiguous(nx, ny, nz, data):
    extent = (nx, ny, nz)
    box = tuple(tuple(sorted(data.draw(st.lists(st.integers(0, n), min_size=2, max_size=2))))
                for n in extent)
    selected = box_ids(box, extent)
    expected = _grid_ids(extent)[_c_order(box)].ravel()
    np.testing.assert_array_equal(ids_of(selected), expected)
    contiguous = expected.size == 0 or expected[-1] - expected[0] + 1 == expected.size
    assert isinstance(selected, slice) or not contiguous or expected.size == 0


@given(st.lists(st.integers(0, 30), unique=True).map(sorted), st.data())
def test_compose_is_indexing(read_ids, data):
    read = np.array(read_ids, dtype=np.int64)
    owned = np.array(sorted(data.draw(st.sets(st.integers(0, max(len(read) - 1, 0)),
                                              max_size=len(read)))), dtype=np.int64)
    np.testing.assert_array_equal(ids_of(compose(read, owned)), read[owned])
    start = data.draw(st.integers(0, 10))
    np.testing.assert_array_equal(ids_of(compose(slice(start, start + 40), owned)), owned + start)
