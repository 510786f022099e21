"""Compiled, threaded weighted sums of point rows: each output point as a weighted
sum of input points (the points a clip makes), in float64, with the NumPy
program's bits (:func:`daxpy.filters._geometry.weighted_sum`).

Each output row is one thread's: its first two terms added; a centre point's
row is then made again, whole, by a second pass over the centre table: its
first two terms added, its later terms added among themselves, and their sum
last, as NumPy adds columns. No fused multiply-add: Numba compiles
without contraction, as NumPy computes.

Examples
--------
>>> import numpy as np
>>> centres = (np.array([0]), np.array([[2]]), np.array([[0.25]]))
>>> weighted_rows(np.array([0.0, 10.0, 20.0]), np.array([[0, 1], [2, 2]]),
...               np.array([[0.5, 0.25], [1.0, 0.0]]), centres).tolist()
[7.5, 20.0]
"""

from __future__ import annotations

import numpy as np
from numba import set_num_threads

from daxpy.data.arrays import native_order
from daxpy.data.host_pool import host_empty

from ._blocks_cpu import block_kernel, over_blocks
from ._numba import KERNEL_DTYPES, CompiledUnavailable, kernel, threads

_VALUE_KINDS = "iuf"
"""Integer and float fields (float16 excepted) are summed here; others by NumPy."""

_BLOCK = 4096
"""Output rows per block dealt to a thread of the pool."""


@kernel(inline="always")
def quotient(a, b, inverse):
    """``a // b`` for 0 <= a < 2**52 and b > 0, from a multiply by ``inverse`` (1 / b)
    and one correction: an integer division costs several times more.

    Examples
    --------
    >>> quotient(17, 5, 1 / 5), quotient(2**40 - 1, 3, 1 / 3) == (2**40 - 1) // 3
    (3, True)
    """
    q = np.int64(a * inverse)
    if q * b > a:
        return q - 1
    if (q + 1) * b <= a:
        return q + 1
    return q


@kernel(inline="always")
def _row(values, axes, nx, ny, point):
    """A point's row of up to three components in float64, as scalars (zeros past
    the last): a field's values, or (``axes`` given) a structured grid's
    coordinates, its axes' float64 values (its grid index found once)."""
    if axes.shape[1] == 0:
        # Unsigned: ids are in range, and need no check for wrapping.
        comps, at = values.shape[1], np.uint64(point)
        return (np.float64(values[at, 0]),
                np.float64(values[at, 1]) if comps > 1 else 0.0,
                np.float64(values[at, 2]) if comps > 2 else 0.0)
    rest = quotient(point, nx, 1.0 / nx)
    k = quotient(rest, ny, 1.0 / ny)
    return (np.float64(axes[0, np.uint64(point - rest * nx)]),
            np.float64(axes[1, np.uint64(rest - k * ny)]), np.float64(axes[2, np.uint64(k)]))


@kernel(inline="always")
def _gather(values, axes, nx, ny, point, into):
    """A point's row of any width into ``into`` (``_row``'s, for wider fields)."""
    if axes.shape[1] == 0:
        for c in range(into.shape[0]):
            into[c] = np.float64(values[point, c])
        return
    into[0], into[1], into[2] = _row(values, axes, nx, ny, point)


@kernel(inline="always")
def _pair(values, axes, nx, ny, ids, weights, p, row, total):
    """Row ``p``'s first terms (one or two columns), added in order."""
    _gather(values, axes, nx, ny, ids[p, 0], row)
    for c in range(total.shape[0]):
        total[c] = row[c] * weights[p, 0]
    if ids.shape[1] > 1:
        _gather(values, axes, nx, ny, ids[p, 1], row)
        for c in range(total.shape[0]):
            total[c] = total[c] + row[c] * weights[p, 1]


@kernel(inline="always")
def _pair3(values, axes, nx, ny, ids, weights, p):
    """``_pair`` of a row of up to three components, in scalars."""
    a, b, w, v = ids[p, 0], ids[p, 1], weights[p, 0], weights[p, 1]
    x, y, z = _row(values, axes, nx, ny, a)
    if b != a:   # a kept point's two ends are one point: read once
        x1, y1, z1 = _row(values, axes, nx, ny, b)
    else:
        x1, y1, z1 = x, y, z
    return x * w + x1 * v, y * w + y1 * v, z * w + z1 * v


@kernel(inline="always")
def _store3(out, p, x, y, z):
    """A row of up to three components, rounded once to the output's dtype."""
    out[p, 0] = x
    if out.shape[1] > 1:
        out[p, 1] = y
    if out.shape[1] > 2:
        out[p, 2] = z


@kernel()
def _weighted_block(values, axes, nx, ny, ids, weights, out, wide, first, last):
    """Rows ``first`` to ``last``: up to three components (points, most fields) in
    scalars, which stay in registers (``wide`` None); wider rows through small
    arrays. Numba drops the other path of ``wide is None`` before typing it: each
    path compiles only for a call that takes it (seconds, cold)."""
    if wide is None:
        for p in range(first, last):
            x, y, z = _pair3(values, axes, nx, ny, ids, weights, p)
            _store3(out, p, x, y, z)
        return
    row, total = np.empty(out.shape[1]), np.empty(out.shape[1])
    for p in range(first, last):
        _pair(values, axes, nx, ny, ids, weights, p, row, total)
        for c in range(out.shape[1]):
            out[p, c] = total[c]


@block_kernel()
def _kept_and_weighted(values, axes, nx, ny, kept, ids, weights, whole, out, wide, first,
                       last):
    """Blocks ``first`` to ``last``: the kept rows' blocks first (:func:`_kept_block`,
    into ``whole``'s first rows), then the weighted rows' (:func:`_weighted_block`,
    into ``out``, ``whole``'s rows after them, sliced by the caller: a slice made here
    is typed with any layout, and its loops ran slower).

    Each block is a function of its own: loops in the caller's body ran several
    times slower (1.16M rows of a clip, one thread: 8.8 ms there, 2.4 ms in a
    function called from it). One pass, not one each, since each pass costs its
    threads' starts under the GIL; on the GPU machine's 16 cores the clips measured
    level with two passes, within that host's noise
    (`benchmarks/results/cpu-clip-one-pass-16core.log`). Unsigned bounds: no index
    below zero to wrap around."""
    n_kept, m = kept.shape[0], ids.shape[0]
    kept_blocks = (n_kept + _BLOCK - 1) // _BLOCK
    for block in range(first, last):
        if block < kept_blocks:
            _kept_block(values, axes, nx, ny, kept, whole, np.uint64(block * _BLOCK),
                        np.uint64(min(n_kept, (block + 1) * _BLOCK)))
        else:
            b = block - kept_blocks
            _weighted_block(values, axes, nx, ny, ids, weights, out, wide,
                            np.uint64(b * _BLOCK), np.uint64(min(m, (b + 1) * _BLOCK)))


@kernel()
def _centres_block(values, axes, nx, ny, ids, weights, rows, centre_ids, centre_weights, out,
                   wide, first, last):
    """Centre rows ``first`` to ``last``, as ``_weighted_block`` computes rows."""
    if wide is None:
        for r in range(first, last):
            p = rows[r]
            x, y, z = _pair3(values, axes, nx, ny, ids, weights, p)
            u, v, w = _row(values, axes, nx, ny, centre_ids[r, 0])
            share = centre_weights[r, 0]
            u, v, w = u * share, v * share, w * share
            for j in range(1, centre_ids.shape[1]):
                x1, y1, z1 = _row(values, axes, nx, ny, centre_ids[r, j])
                share = centre_weights[r, j]
                u, v, w = u + x1 * share, v + y1 * share, w + z1 * share
            _store3(out, p, x + u, y + v, z + w)
        return
    comps = out.shape[1]
    row, total, extra = np.empty(comps), np.empty(comps), np.empty(comps)
    for r in range(first, last):
        p = rows[r]
        _pair(values, axes, nx, ny, ids, weights, p, row, total)
        _gather(values, axes, nx, ny, centre_ids[r, 0], row)
        for c in range(comps):
            extra[c] = row[c] * centre_weights[r, 0]
        for j in range(1, centre_ids.shape[1]):
            _gather(values, axes, nx, ny, centre_ids[r, j], row)
            for c in range(comps):
                extra[c] = extra[c] + row[c] * centre_weights[r, j]
        for c in range(comps):
            out[p, c] = total[c] + extra[c]


@block_kernel()
def _centres(values, axes, nx, ny, ids, weights, rows, centre_ids, centre_weights, out, wide,
             first, last):
    """Blocks ``first`` to ``last`` of the centre rows again, whole: their first
    terms, then their later ones summed among themselves and added last, as the
    array program adds them."""
    m = rows.shape[0]
    for block in range(first, last):
        _centres_block(values, axes, nx, ny, ids, weights, rows, centre_ids, centre_weights,
                       out, wide, np.uint64(block * _BLOCK),
                       np.uint64(min(m, (block + 1) * _BLOCK)))


@kernel()
def _kept_block(values, axes, nx, ny, kept, out, first, last):
    """Rows ``first`` to ``last`` of the kept points: their rows as they are (read in
    float64, which holds every float32 and float64 value, infinities and NaN
    included, exactly)."""
    for p in range(first, last):
        x, y, z = _row(values, axes, nx, ny, kept[p])
        _store3(out, p, x, y, z)


def weighted_rows(values, ids: np.ndarray, weights: np.ndarray, centres=None, axes=None,
                  dtype=None, kept=None) -> np.ndarray:
    """``sum_j weights[:, j] * values[ids[:, j]]`` in float64, plus the centre rows'
    later terms, on every core, rounded once to ``dtype`` (float32 or float64,
    float64 by default) as it is stored; after the rows of the points ``kept``
    where given, copied as they are (a clip's kept points: a weighted sum of a
    point with itself would make NaN of an infinity).

    Parameters
    ----------
    values : array, shape (n, ...)
        Rows by point id (unused with ``axes``).
    ids : int array, shape (m, k), k = 1 or 2
    weights : float64 array, shape (m, k)
    centres : (rows, ids, weights), optional
        Rows (int, shape (c,)) and their later terms (shape (c, w)), as
        :func:`daxpy.filters._geometry.weighted_sum` takes them.
    axes : three float arrays, optional
        A uniform or rectilinear grid's axis coordinates: the rows are then its
        points' coordinates, computed from their grid indices (the axes' values in
        float64, as vtkTableBasedClipDataSet reads an image's points), shape (m, 3).
    dtype : dtype, optional
    kept : int array, shape (k,), optional
        Points whose rows come first, as they are.

    Returns
    -------
    array of ``dtype``, shape (k + m,) + values.shape[1:]

    Raises
    ------
    CompiledUnavailable
        For dtypes the kernel is not compiled for (float16, bool, objects...):
        the NumPy program serves them.

    Examples
    --------
    >>> import numpy as np
    >>> axes = (np.array([0.0, 1.0]), np.array([5.0]), np.array([0.5]))
    >>> weighted_rows(None, np.array([[0, 1]]), np.array([[0.5, 0.5]]), axes=axes).tolist()
    [[0.5, 5.0, 0.5]]
    """
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    if weights.dtype != np.float64 or ids.dtype.kind not in "iu" or dtype not in KERNEL_DTYPES:
        raise CompiledUnavailable("weights must be float64, ids integers, sums float")
    if axes is None:
        values = native_order(np.asarray(values))
        if values.dtype.kind not in _VALUE_KINDS or values.dtype == np.float16:
            raise CompiledUnavailable(f"no weighted sum kernel for {values.dtype}")
        shape = values.shape[1:]
        # A read-only view whatever the caller's array: Numba types a read-only
        # array apart, and a clip's points (read-only) and fields (writable) then
        # compiled every kernel twice (2-5 s each, cold).
        table = np.ascontiguousarray(values.reshape(values.shape[0], -1)).view()
        table.flags.writeable = False
        grid_axes = np.zeros((3, 0), np.float64)
    else:
        shape = (3,)
        # No rows read: float32 and read-only, the kernels' types for a float32
        # field (the usual one), so that the coordinates and the fields of a clip
        # share one compile.
        table = np.zeros((0, 3), np.float32)
        table.flags.writeable = False
        grid_axes = np.zeros((3, max(len(a) for a in axes)), np.float64)
        for a, coordinates in enumerate(axes):
            grid_axes[a, :len(coordinates)] = coordinates
    # Summed in float64 whatever the dtype asked, each sum rounded once as it is
    # stored in ``dtype`` (to nearest, as NumPy's ``astype`` rounds). Each out dtype
    # is a compile of its own (0.7 s cold, then from the disk cache); sums kept in
    # float64 and rounded by a pass after cost every float32 field's call a write
    # and a read of twice its bytes (6 ms of a 10M-hexahedra clip on 16 cores).
    comps = int(np.prod(shape, dtype=np.int64))
    kept = np.zeros(0, np.int64) if kept is None else _rows(kept.astype(np.int64, copy=False))
    if kept.shape[0] and not 1 <= comps <= 3:
        raise CompiledUnavailable("kept rows are copied for one to three components")
    whole = host_empty((kept.shape[0] + ids.shape[0], comps), dtype)
    sizes = (len(axes[0]) if axes else 1, len(axes[1]) if axes else 1)
    ids, weights = _rows(ids), _rows(weights)
    gathered = (table, grid_axes, *sizes, ids, weights)
    set_num_threads(threads())
    out = whole[kept.shape[0]:]
    # Serial kernels on the thread pool, blocks dealt as threads free up (one
    # slowed by another process's load does not hold up the rest), not Numba
    # parallel loops: those cost a clip's first use 2.9-5.0 s each to compile.
    # Rows of one to three components from two terms, in scalars; else, arrays.
    wide = None if ids.shape[1] == 2 and 1 <= out.shape[1] <= 3 else host_empty(0)
    over_blocks(_kept_and_weighted, _blocks(kept.shape[0]) + _blocks(ids.shape[0]),
                table, grid_axes, *sizes, kept, ids, weights, whole, out, wide)
    if centres is not None and centres[0].shape[0] and centres[1].shape[1]:
        rows, centre_ids, centre_weights = centres
        over_blocks(_centres, _blocks(rows.shape[0]), *gathered,
                    _rows(rows.astype(np.int64, copy=False)),
                    _rows(centre_ids.astype(np.int64, copy=False)),
                    _rows(centre_weights.astype(np.float64, copy=False)), out, wide)
    return whole.reshape((whole.shape[0],) + shape)


def _blocks(m: int) -> int:
    return (m + _BLOCK - 1) // _BLOCK


def _rows(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(native_order(array))
