"""Compiled, threaded gathers for assembling a new dataset on the host: a field's
rows at some ids, and the coordinates of uniform and rectilinear grids' points
from their axes. NumPy's fancy indexing does the same on one thread.

Rows are copied as raw bits (through unsigned integer views), so the results are
NumPy's bit for bit, NaN payloads included. Each output row is written by one
thread.

Examples
--------
>>> import numpy as np
>>> take(np.arange(10.0 * (1 << 16)), np.array([5, 2] * (1 << 15)))[:2].tolist()
[5.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, over_blocks
from ._numba import CompiledUnavailable, kernel
from ._weighted_cpu import quotient

_CHUNK = 1 << 14
"""Rows a block of the passes."""

MIN_ROWS = 1 << 16
"""Fewer rows than this are gathered by NumPy: threads would not pay off."""


@kernel(inline="always")
def _copy_rows(src, rows, to, width):
    """``to[q] = src[rows[q]]`` for rows in range; how many ids were out of it."""
    n = src.shape[0]
    wrong = 0
    for q in range(rows.shape[0]):
        p = rows[q]
        # NumPy's indexing: negative ids count from the end.
        p = p + n if p < 0 else p
        if p < 0 or p >= n:
            wrong += 1
            continue
        row, copy = src[p], to[q]
        for c in range(width):
            copy[c] = row[c]
    return wrong


@kernel()
def _take_chunk(src, ids, out, first, last):
    """Rows ``first`` to ``last``; how many ids were out of range."""
    # Slices indexed from 0, rows by ids made positive: indices Numba cannot prove
    # positive are checked for wrapping (15% slower on 1 thread).
    rows, to = ids[first:last], out[first:last]
    # A scalar's and a point's words, a constant: a loop the compiler unrolls (a
    # float32 field of 5M rows 2.4 times faster on 1 thread, float32 points 1.4).
    if src.shape[1] == 1:
        return _copy_rows(src, rows, to, 1)
    if src.shape[1] == 3:
        return _copy_rows(src, rows, to, 3)
    return _copy_rows(src, rows, to, src.shape[1])


@block_kernel()
def _take(src, ids, out, bad, first, last):
    # Each chunk in a function of its own: loops in a parallel loop's body run
    # several times slower (_weighted_cpu._weighted says by how much).
    m = ids.shape[0]
    for chunk in range(first, last):
        bad[chunk] = _take_chunk(src, ids, out, chunk * _CHUNK, min(m, (chunk + 1) * _CHUNK))


@kernel()
def _axis_chunk(x, y, z, nx, nxy, ids, out, first, last):
    n = nxy * z.shape[0]
    wrong = 0
    # Slices indexed from 0 and indices unsigned once checked: Numba checks an index
    # it cannot prove non-negative for wrapping.
    rows, to = ids[first:last], out[first:last]
    for q in range(rows.shape[0]):
        p = rows[q]
        if p < 0 or p >= n:
            wrong += 1
            continue
        k = quotient(p, nxy, 1.0 / nxy)
        j = quotient(p - k * nxy, nx, 1.0 / nx)
        # Stored in the output's dtype: float32 rounded once, as NumPy's astype.
        to[q, 0] = x[np.uint64(p - k * nxy - j * nx)]
        to[q, 1] = y[np.uint64(j)]
        to[q, 2] = z[np.uint64(k)]
    return wrong


@block_kernel()
def _axis_points(x, y, z, nx, nxy, ids, out, bad, first, last):
    m = ids.shape[0]
    for chunk in range(first, last):
        bad[chunk] = _axis_chunk(x, y, z, nx, nxy, ids, out, chunk * _CHUNK,
                                 min(m, (chunk + 1) * _CHUNK))


def _checked(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``ids`` contiguous (one kernel for all: a column of a table is copied), and
    one bad-id count per chunk of them, after checking they are many
    (:data:`MIN_ROWS`) int64s in one dimension."""
    if ids.ndim != 1 or ids.dtype != np.int64 or ids.shape[0] < MIN_ROWS:
        raise CompiledUnavailable("NumPy gathers few or odd ids")
    return (np.ascontiguousarray(ids),
            host_empty((ids.shape[0] + _CHUNK - 1) // _CHUNK, np.int64))


def _refuse_bad(bad: np.ndarray) -> None:
    # NumPy, run again, says what is wrong with the ids, as it would have.
    if bad.any():
        raise CompiledUnavailable("ids out of range")


def _as_words(array: np.ndarray) -> np.ndarray:
    """A C-contiguous array's rows as 2-D unsigned integers of the widest size that
    divides a row's bytes (a view)."""
    rows = array.reshape(array.shape[0], -1).view(np.uint8)
    width = next(w for w in (8, 4, 2, 1) if rows.shape[1] % w == 0)
    return rows.view(np.dtype(f"u{width}"))


def take(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``values[ids]`` along the first axis, on every thread.

    Raises
    ------
    CompiledUnavailable
        For few ids, ids other than 1-D int64 or out of range, and values that
        are not a C-contiguous array of plain numbers: NumPy serves them.
    Examples
    --------
    >>> import numpy as np
    >>> ids = np.arange(1 << 16)[::-1].copy()
    >>> take(np.arange(1 << 16, dtype=np.int32).reshape(-1, 1), ids)[:2, 0].tolist()
    [65535, 65534]
    """
    ids, bad = _checked(ids)
    if (not isinstance(values, np.ndarray) or values.ndim == 0 or values.dtype.hasobject
            or values.dtype.fields is not None or not values.flags.c_contiguous
            or values.shape[0] == 0):
        raise CompiledUnavailable("NumPy gathers other arrays")
    out = host_empty((ids.shape[0],) + values.shape[1:], values.dtype)
    if out.size:
        over_blocks(_take, bad.shape[0], _as_words(values), ids, _as_words(out), bad)
        _refuse_bad(bad)
    return out


def axis_points(grid, ids: np.ndarray, dtype=np.float32) -> np.ndarray:
    """The coordinates of a uniform or rectilinear grid's points ``ids``, from its
    axes, on every thread: float32 as VTK makes an image's points, or (``dtype``
    float64) the axes' values, as vtkTableBasedClipDataSet reads them.

    Raises
    ------
    CompiledUnavailable
        For few ids, ids other than 1-D int64 or out of range, or axes other
        than float32 or float64: NumPy serves them.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(256, 256, 2))
    >>> axis_points(g, np.arange(1 << 17) * 0 + 257)[0].tolist()
    [1.0, 1.0, 0.0]
    >>> axis_points(g, np.arange(1 << 17) * 0 + 257, np.float64).dtype.name
    'float64'
    """
    ids, bad = _checked(ids)
    axes = [np.ascontiguousarray(grid.axis_coordinates(a)) for a in range(3)]
    if any(axis.dtype not in (np.float32, np.float64) for axis in axes):
        raise CompiledUnavailable("NumPy converts other axes")
    # Each axis converted to float32 on its own: NumPy stacks them in their
    # common dtype first, which holds each one exactly.
    out = host_empty((ids.shape[0], 3), dtype)
    nx, ny = axes[0].shape[0], axes[1].shape[0]
    over_blocks(_axis_points, bad.shape[0], *axes, nx, nx * ny, ids, out, bad)
    _refuse_bad(bad)
    return out


@block_kernel()
def _column(table, column, out, first, last):
    """Rows ``first * _CHUNK`` to ``last * _CHUNK`` of the column."""
    start, stop = first * _CHUNK, min(out.shape[0], last * _CHUNK)
    rows, to = table[start:stop], out[start:stop]   # slices indexed from 0
    for r in range(stop - start):
        to[r] = rows[r, column]


def column(table: np.ndarray, n_rows: int, at: int = 0) -> np.ndarray:
    """``table[:n_rows, at]`` as a contiguous array, on every thread (a clip's kept
    points' ids, the first column of its terms).

    Raises
    ------
    CompiledUnavailable
        For fewer than :data:`MIN_ROWS` rows, and tables that are not 2-D
        C-contiguous int64: NumPy copies them.

    Examples
    --------
    >>> import numpy as np
    >>> column(np.arange(4 * MIN_ROWS).reshape(-1, 2), MIN_ROWS)[:3].tolist()
    [0, 2, 4]
    """
    if (not isinstance(table, np.ndarray) or table.ndim != 2 or table.dtype != np.int64
            or not table.flags.c_contiguous or n_rows < MIN_ROWS):
        raise CompiledUnavailable("NumPy copies other columns")
    out = host_empty(n_rows, np.int64)
    over_blocks(_column, -(-n_rows // _CHUNK), table, int(at), out)
    return out
