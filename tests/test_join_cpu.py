"""Host arrays joined end to end on every core (worklets/_join_cpu.py): NumPy's
concatenation bit for bit, each part shifted by its own number, across blocks and
thread counts; and a contour of several values, whose surface joins its values'
cells and points that way, the same as one joined by NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

import numba  # noqa: E402

import daxpy  # noqa: E402
from daxpy.filters import Contour  # noqa: E402
from daxpy.filters import _surface  # noqa: E402
from daxpy.worklets._join_cpu import _BLOCK, MIN_VALUES, joined_shifted  # noqa: E402
from daxpy.worklets._numba import CompiledUnavailable  # noqa: E402


def _expected(parts, shifts):
    return np.concatenate([p + s for p, s in zip(parts, shifts)]) if any(shifts) else (
        np.concatenate(parts))


@pytest.mark.parametrize("threads", [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1])
def test_shifted_ids_across_blocks(threads):
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        sizes = [_BLOCK - 1, 0, 3 * _BLOCK + 5, _BLOCK, 1]
        parts = [np.arange(n, dtype=np.int64) * 3 - 7 for n in sizes]
        shifts = [0, 4, 1 << 40, -9, 17]
        out = joined_shifted(parts, shifts)
        assert out.dtype == np.int64
        np.testing.assert_array_equal(out, _expected(parts, shifts))
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_rows_joined_as_bits(dtype):
    rng = np.random.default_rng(5)
    parts = [rng.integers(0, 255, (n, 3)).astype(dtype) for n in (MIN_VALUES // 3, 7, 40_000)]
    if np.dtype(dtype).kind == "f":
        # NaN with a payload and a negative zero come out as they went in.
        parts[1].view(f"u{np.dtype(dtype).itemsize}")[0, 0] = np.array(
            np.nan, dtype).view(f"u{np.dtype(dtype).itemsize}") | 1
        parts[1][0, 1] = -0.0
    out = joined_shifted(parts, [0, 0, 0])
    assert out.dtype == dtype and out.shape == (sum(p.shape[0] for p in parts), 3)
    expected = np.concatenate(parts)
    np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2 * _BLOCK), st.integers(-(1 << 33), 1 << 33)),
                min_size=1, max_size=5))
def test_any_parts_and_shifts(spec):
    parts = [np.arange(n, dtype=np.int64)[::-1].copy() for n, _ in spec]
    shifts = [s for _, s in spec]
    try:
        out = joined_shifted(parts, shifts)
    except CompiledUnavailable:
        assert sum(n for n, _ in spec) < MIN_VALUES
        return
    np.testing.assert_array_equal(out, _expected(parts, shifts))


@pytest.mark.parametrize("parts, shifts", [
    ([np.zeros(MIN_VALUES), np.zeros(5)], [0, 1]),                      # floats shifted
    ([np.zeros(MIN_VALUES, np.int64), np.zeros(5, np.int32)], [0, 0]),  # mixed dtypes
    ([np.zeros((MIN_VALUES, 3)), np.zeros((5, 2))], [0, 0]),            # mixed rows
    ([np.zeros(8, np.int64)], [3]),                                      # few values
])
def test_refused_where_numpy_serves(parts, shifts):
    with pytest.raises(CompiledUnavailable):
        joined_shifted(parts, shifts)
    # ... and the surface's join then gives NumPy's result.
    if len({p.shape[1:] for p in parts}) == 1 and (
            all(p.dtype.kind in "iu" for p in parts) or not any(shifts)):
        np.testing.assert_array_equal(_surface._JOINED_SHIFTED(parts, shifts),
                                      _expected(parts, shifts))


def test_surface_of_several_values_joined_as_numpy_would(monkeypatch):
    g = daxpy.UniformGrid(dims=(40, 36, 32), spacing=(0.5, 1.0, 0.25))
    x, y, z = np.asarray(g.points(), np.float64).T
    g.point_data["t"] = (np.sin(x) * np.cos(y / 3) + z / 8).astype(np.float32)
    g.point_data["u"] = (x * y).astype(np.float64)
    contour = Contour("t", n_values=6, backend="cpu")
    made = contour(g)
    # The same surface, every join by NumPy.
    monkeypatch.setattr(_surface, "_JOINED_SHIFTED", _surface._numpy_joined)
    reference = contour(g)
    assert made.cell_array("polys")[1].shape[0] >= MIN_VALUES   # the compiled join ran
    np.testing.assert_array_equal(made.points(), reference.points())
    for a, b in zip(made.cell_array("polys"), reference.cell_array("polys")):
        np.testing.assert_array_equal(a, b)
    for name in ("t", "u"):
        np.testing.assert_array_equal(made.point_data[name], reference.point_data[name])
