"""A host surface's cell offsets (filters/_offsets.py): views of one shared read-only
array, grown as surfaces grow, equal to NumPy's ``arange`` whatever was asked before;
surfaces past the shared size get their own; the surfaces that hold them stay right."""

import threading

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import daxpy
from daxpy.filters import Contour
from daxpy.filters import _offsets


def _arange(n_cells, k):
    return np.arange(0, n_cells * k + 1, k, dtype=np.int64)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3 * _offsets.ON_THREADS), st.integers(1, 4)),
                min_size=1, max_size=6))
def test_offsets_are_aranges_in_any_order_of_sizes(asks):
    for n_cells, k in asks:
        offsets = _offsets.host_offsets(n_cells, k)
        assert offsets.dtype == np.int64 and not offsets.flags.writeable
        np.testing.assert_array_equal(offsets, _arange(n_cells, k))


def test_many_cells_view_the_shared_array_and_past_it_their_own(monkeypatch):
    monkeypatch.setattr(_offsets, "SHARED_CELLS", 4 * _offsets.ON_THREADS)
    monkeypatch.setattr(_offsets, "_shared", {})
    n = _offsets.ON_THREADS + 7
    first, second = _offsets.host_offsets(n, 3), _offsets.host_offsets(n - 5, 3)
    assert np.shares_memory(first, second)
    grown = _offsets.host_offsets(3 * _offsets.ON_THREADS, 3)  # grows: a new array
    np.testing.assert_array_equal(first, _arange(n, 3))  # the old views stay right
    np.testing.assert_array_equal(grown, _arange(3 * _offsets.ON_THREADS, 3))
    beyond = _offsets.host_offsets(4 * _offsets.ON_THREADS + 1, 3)
    assert not np.shares_memory(beyond, _offsets._shared[3])
    np.testing.assert_array_equal(beyond, _arange(4 * _offsets.ON_THREADS + 1, 3))
    with np.testing.assert_raises(ValueError):
        grown[1] = 0  # read-only: no surface can change another's offsets


def test_threads_asking_at_once_get_right_offsets(monkeypatch):
    monkeypatch.setattr(_offsets, "_shared", {})
    sizes = [_offsets.ON_THREADS * (1 + i % 5) + i for i in range(16)]
    wrong = []

    def ask(n_cells):
        for _ in range(5):
            if not np.array_equal(_offsets.host_offsets(n_cells, 2), _arange(n_cells, 2)):
                wrong.append(n_cells)

    threads = [threading.Thread(target=ask, args=(n,)) for n in sizes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_contours_of_different_sizes_keep_their_offsets(monkeypatch):
    monkeypatch.setattr(_offsets, "ON_THREADS", 256)  # both surfaces view the shared array
    monkeypatch.setattr(_offsets, "_shared", {})
    def surface(n):
        x = np.linspace(-1, 1, n)
        r = np.sqrt(x[None, None, :] ** 2 + x[None, :, None] ** 2 + x[:, None, None] ** 2)
        grid = daxpy.UniformGrid(dims=(n, n, n), point_data={"r": r.ravel()})
        return Contour("r", values=[0.6], backend="cpu")(grid)

    small, large = surface(48), surface(96)  # the large one grows the shared array
    for made in (small, large):
        offsets, connectivity = made.cell_array("polys")
        assert offsets.shape[0] == made.n_cells + 1 and connectivity.shape[0] == 3 * made.n_cells
        np.testing.assert_array_equal(offsets, _arange(made.n_cells, 3))
    assert np.shares_memory(small.cell_array("polys")[0], _offsets._shared[3]) is False
    assert np.shares_memory(large.cell_array("polys")[0], _offsets._shared[3])
