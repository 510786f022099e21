"""The careful path of the compiled contour (:mod:`daxpy.worklets.contour_cpu`):
rows of the grid near a NaN, an Inf or a point equal to the value.

There the NumPy implementation's rules apply point by point: a cell with a
non-finite corner makes nothing, so an edge gives a point only where some cell
with finite corners cuts it; an edge ending at a point equal to the value gives
that point (keyed ``(p, p)``, before the point's own edges), and output cells
that list a point twice then are dropped. Rows away from such points take the
fast path, where every cut edge gives its own point.

Examples
--------
>>> import numpy as np
>>> _near(np.array([[False, False, False], [False, True, False]]), 0).astype(int).tolist()
[[1, 1, 0], [1, 1, 0]]
"""

from __future__ import annotations

import numpy as np

from ._numba import kernel

HELPER = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}
"""Options of the contour's helpers, called only from compiled code: without the
wrappers for calls from Python, which cost each function a fraction of a second
cold."""


@kernel(**HELPER)
def _screen_row(s, equal, zero, first, n):
    """Whether ``s[first:first + n]`` holds a NaN, an Inf or ``equal`` (the value,
    in the field's dtype: NaN where the dtype cannot hold it). All in the field's
    dtype, so that the loop vectorizes."""
    bad = False
    row = s[first:first + n]
    for p in range(n):
        x = row[p]
        # x - x is NaN for NaN and Inf, 0 otherwise.
        bad |= (x - x != zero) | (x == equal)
    return bad


def screen_values(dtype: np.dtype, value: float) -> tuple:
    """``(equal, zero)`` for :func:`_screen_row`: the value in ``dtype`` where it
    holds it exactly (else NaN, equal to nothing), and 0.

    Examples
    --------
    >>> [float(x) for x in screen_values(np.dtype(np.float32), 0.5)]
    [0.5, 0.0]
    >>> [float(x) for x in screen_values(np.dtype(np.float32), 0.1)]   # 0.1 is no float32
    [nan, 0.0]
    """
    same = dtype.type(value)
    return (same if float(same) == value else dtype.type(np.nan)), dtype.type(0)


@kernel(**HELPER)
def _finite_cell(s, ci, cj, ck, nx, nxy, zc):
    base = ci + cj * nx + ck * nxy
    for dk in range(zc):
        for dj in range(2):
            for di in range(2):
                x = s[base + di + dj * nx + dk * nxy]
                if x - x != 0.0:
                    return False
    return True


@kernel(**HELPER)
def _span(c, n, along):
    """The cells beside coordinate ``c`` on an axis of ``n`` points: its own cell
    along the edge, else the cells before and after it."""
    if along:
        return c, c
    # (Not min and max: each call of theirs is compiled again, cold.)
    return (c - 1 if c > 0 else 0), (c if c < n - 2 else n - 2)


@kernel(**HELPER)
def _edge_used(s, bound, i, j, k, axis, nx, ny, nz, zc):
    """Whether the edge from point (i, j, k) along ``axis`` is cut by a cell with
    finite corners (such a cell cuts every edge it crosses)."""
    nxy = nx * ny
    p = i + j * nx + k * nxy
    step = 1 if axis == 0 else (nx if axis == 1 else nxy)
    if (s[p] >= bound) == (s[p + step] >= bound):
        return False
    i0, i1 = _span(i, nx, axis == 0)
    j0, j1 = _span(j, ny, axis == 1)
    k0, k1 = _span(k, nz, axis == 2) if zc == 2 else (0, 0)
    for ck in range(k0, k1 + 1):
        for cj in range(j0, j1 + 1):
            for ci in range(i0, i1 + 1):
                if _finite_cell(s, ci, cj, ck, nx, nxy, zc):
                    return True
    return False


@kernel(**HELPER)
def _careful_flags(s, value, bound, i, j, k, nx, ny, nz, zc):
    """A point's outputs, bit 0 for the point itself (snapped), bits 1.. for its
    edges along x, y, z: any grid, any values."""
    ijk = (i, j, k)
    size = (nx, ny, nz)
    steps = (1, nx, nx * ny)
    p = i + j * nx + k * nx * ny
    at_point = s[p] == value
    flags, touched = 0, False
    for axis in range(zc + 1):
        c = ijk[axis]
        if c + 1 < size[axis] and _edge_used(s, bound, i, j, k, axis, nx, ny, nz, zc):
            touched = True
            if not at_point and s[p + steps[axis]] != value:
                flags |= 2 << axis
        if at_point and not touched and c > 0:
            back = (i - (axis == 0), j - (axis == 1), k - (axis == 2))
            touched = _edge_used(s, bound, back[0], back[1], back[2], axis, nx, ny,
                                 nz, zc)
    return flags | (1 if at_point and touched else 0)


@kernel(**HELPER)
def _corner_key(s, value, base, offsets, a, b, careful):
    """The output point of a cell's edge from corner ``a`` to ``b`` (``a < b``):
    ``(lo, hi, row)``, ``row`` the cell's point row holding ``lo``."""
    pa, pb = base + offsets[a], base + offsets[b]
    if careful is not None and careful:
        if s[pa] == value:
            return pa, pa, a >> 1
        if s[pb] == value:
            return pb, pb, b >> 1
    return pa, pb, a >> 1


@kernel(**HELPER)
def _repeats(found, cut):
    """Whether the output cell through the edges ``cut`` lists one point twice."""
    for a in range(cut.shape[0]):
        for b in range(a + 1, cut.shape[0]):
            if found[cut[a]] == found[cut[b]]:
                return True
    return False


def _near(bad: np.ndarray, reach: int) -> np.ndarray:
    """Rows (z, y) within ``reach`` rows before (and one after, for ``reach`` 1) of
    a bad row: the rows whose points or cells read it."""
    nz, ny = bad.shape
    padded = np.zeros((nz + 2, ny + 2), bool)
    padded[1:-1, 1:-1] = bad
    near = np.zeros_like(bad)
    for dk in range(-reach, 2):
        for dj in range(-reach, 2):
            near |= padded[1 + dk:1 + dk + nz, 1 + dj:1 + dj + ny]
    return near


def _careful_rows(bad: np.ndarray, zc: int) -> tuple[np.ndarray, np.ndarray]:
    """From the bad point rows (z, y): the point rows and the cell rows that take the
    careful path. A careful cell row starts at a careful point row: a cell row is
    careful where one of its four point rows is bad, and a point row within one row
    of a bad one is careful."""
    nz, ny = bad.shape
    points = _near(bad, 1)
    cells = _near(bad, 0)
    cells[:, -1] = False  # the last rows have no cells
    if zc == 2:
        cells[-1] = False
    return points.ravel(), cells[:max(nz - 1, 1), :ny - 1].ravel()


def _beside(rows: np.ndarray, zc: int) -> np.ndarray:
    """The cell rows with any of their point rows among ``rows`` (z, y).

    Examples
    --------
    >>> _beside(np.array([[False, False, True]]), 1).tolist()
    [False, True]
    """
    near = rows[:, :-1] | rows[:, 1:]
    return (near[:-1] | near[1:] if zc == 2 else near).ravel()


def _around(cell_rows: np.ndarray, nz: int, zc: int) -> np.ndarray:
    """The point rows (z, y) that are a corner row of any of ``cell_rows`` (z, y)
    (3-D: each cell row has four point rows; 2-D, ``zc`` 1: two).

    Examples
    --------
    >>> _around(np.array([[False, True, False]]), 1, 1).astype(int).tolist()
    [[0, 1, 1, 0]]
    """
    layers, ny = cell_rows.shape[0], cell_rows.shape[1] + 1
    near = np.zeros((nz, ny), bool)
    for dz in range(zc):
        near[dz:dz + layers, :-1] |= cell_rows
        near[dz:dz + layers, 1:] |= cell_rows
    return near


def _outputs_of(rows: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The outputs of ``rows``, each row's ``counts[row]`` from ``starts[row]``.

    Examples
    --------
    >>> _outputs_of(np.array([0, 2]), np.array([0, 2, 2, 5]), np.array([2, 0, 3])).tolist()
    [0, 1, 2, 3, 4]
    """
    sizes = counts[rows]
    before = np.cumsum(sizes) - sizes   # the outputs of the rows before each
    return np.repeat(starts[rows] - before, sizes) + np.arange(sizes.sum())
