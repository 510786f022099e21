"""What the averaging and norm worklets share: result dtype, input and output
checks; the averages' declaration; for structured averages, the view of a field over
the cell axes and the slabs that the passes run over, on several threads; for
unstructured averages, narrow id arrays and the gathers that read them.

Examples
--------
>>> import numpy as np
>>> float_dtype(np.dtype(np.int32))
dtype('float64')
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np

from daxpy.data.worklet import Worklet, register
from daxpy.errors import ArgumentError, FieldError

from ._blocks_cpu import on_threads
from ._cuda_specs import CUDA
from ._numba import compiled

SLAB_BYTES = 4 << 20
"""Target size of one slab's temporaries: small enough to stay in cache, so each
structured pass reads the field from memory once."""

THREADS = max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                     else (os.cpu_count() or 1), 8))
"""Threads that share the slabs of one structured average. NumPy's ufuncs
release the GIL, so slabs run in parallel as vtkSMPTools' threads do."""

def float_dtype(dtype: np.dtype) -> np.dtype:
    """Dtype of a computed field (average, norm): floats keep theirs, integers
    give float64.

    Examples
    --------
    >>> import numpy as np
    >>> float_dtype(np.dtype(np.float32))
    dtype('float32')
    """
    dtype = np.dtype(dtype)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def sum_dtype(dtype: np.dtype) -> np.dtype:
    """Dtype in which averages add: float64 (or wider), as VTK's averages do.

    Sums of float32 values near float32's maximum overflow in float32, where
    VTK, adding in double, returns their finite mean.

    Examples
    --------
    >>> import numpy as np
    >>> sum_dtype(np.dtype(np.float32))
    dtype('float64')
    """
    return np.result_type(np.float64, dtype)


def check_tuples(values: np.ndarray, expected: int, what: str, owner: str) -> None:
    """Raise FieldError unless ``values`` is ``(expected,)`` or ``(expected, c)``.

    Examples
    --------
    >>> import numpy as np
    >>> check_tuples(np.zeros((4, 3)), 4, "point", "grid")
    """
    if values.ndim not in (1, 2) or values.shape[0] != expected:
        raise FieldError(
            f"the {what} field must have shape ({expected},) or ({expected}, components) "
            f"for the {expected} {what}s of {owner}, got {values.shape}"
        )


def output_array(out: np.ndarray | None, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Return ``out`` after checking it, or a new array of ``shape`` and ``dtype``.

    Raises
    ------
    ArgumentError
        If ``out`` is given with another shape or dtype, or is not C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> output_array(None, (2, 3), np.dtype(np.float32)).shape
    (2, 3)
    """
    if out is None:
        return np.empty(shape, dtype=dtype)
    if out.shape != shape or out.dtype != dtype or not out.flags.c_contiguous:
        raise ArgumentError(
            f"out must be a C-contiguous {dtype} array of shape {shape}, got "
            f"{out.dtype} {out.shape}"
        )
    return out


def average_output(grid, values: np.ndarray, source: str, out: np.ndarray | None) -> np.ndarray:
    """Check ``values`` as a field over the ``source`` ("point" or "cell") of
    ``grid``, and return the output of its average onto the other association:
    ``out`` after checking it, or a new array.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,))
    >>> average_output(g, np.zeros((3, 2), np.int32), "point", None).shape
    (2, 2)
    """
    n_in, n_out = ((grid.n_points, grid.n_cells) if source == "point"
                   else (grid.n_cells, grid.n_points))
    check_tuples(values, n_in, source, grid.name)
    return output_array(out, (n_out,) + values.shape[1:], float_dtype(values.dtype))


def id_dtype(n: int) -> np.dtype:
    """The narrowest of int32 and int64 that holds the ids ``0 .. n - 1``.

    Gathers are bound by memory: cached int32 ids halve the bytes they read.

    Examples
    --------
    >>> id_dtype(1000), id_dtype(1 << 31)
    (dtype('int32'), dtype('int64'))
    """
    return np.dtype(np.int32) if n <= np.iinfo(np.int32).max else np.dtype(np.int64)


def gather(values: np.ndarray, ids: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
    """``out[...] = values[ids]`` along axis 0, for ids known to be in range.

    Parameters
    ----------
    values : numpy.ndarray, shape (n,) or (n, c)
    ids : numpy.ndarray of int32 or int64, any shape
        Valid row ids of ``values`` (the grid checked them when it was built).
    out : numpy.ndarray, shape ``ids.shape + values.shape[1:]``, ``values.dtype``
    scratch : numpy.ndarray of intp, 1-D, at least ``ids.size`` long
        Where narrower ids are widened: ``np.take`` would otherwise allocate
        and convert a copy on every call.

    Examples
    --------
    >>> import numpy as np
    >>> out = np.empty(3)
    >>> gather(np.array([5.0, 6.0, 7.0]), np.array([2, 0, 2], np.int32), out,
    ...        np.empty(3, np.intp))
    >>> out.tolist()
    [7.0, 5.0, 7.0]
    """
    if ids.dtype != np.intp:
        widened = scratch[:ids.size].reshape(ids.shape)
        np.copyto(widened, ids)
        ids = widened
    # mode="wrap" skips take's bounds check; on ids in range it never wraps.
    np.take(values, ids, axis=0, out=out, mode="wrap")


def sum_rows(rows: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = rows[0] + rows[1] + ...``, added in row order in ``out``'s dtype.

    ``np.add.reduce(rows, axis=0)`` is not used: where a row holds a single
    element NumPy sums the rows pairwise, so a cell or point averaged alone
    (a block or chunk of one) would differ in the last bit from the same one
    averaged among others.

    Examples
    --------
    >>> import numpy as np
    >>> rows, out = np.array([[1e16], [1.0], [-1e16], [1.0]] * 2), np.empty(1)
    >>> sum_rows(rows, out)
    >>> out.tolist(), np.add.reduce(rows, axis=0).tolist()
    ([1.0], [0.0])
    """
    np.copyto(out, rows[0])
    for row in rows[1:]:
        np.add(out, row, out=out)


def structured_view(grid, values: np.ndarray, association: str) -> np.ndarray:
    """View a structured point or cell field as ``(n_k, n_j, n_i, components)``
    over the grid's cell axes only (axes with one point are dropped).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(4, 1, 3))
    >>> structured_view(g, np.zeros(12), "points").shape
    (3, 4, 1)
    """
    components = values.shape[1] if values.ndim == 2 else 1
    per_axis = grid.dims if association == "points" else grid.cell_dims
    sides = tuple(s for d, s in zip(grid.dims[::-1], per_axis[::-1]) if d > 1)
    return values.reshape(sides + (components,))


def slab_planes(view: np.ndarray) -> int:
    """How many planes of ``view``'s first axis make one cache-sized slab.

    Examples
    --------
    >>> import numpy as np
    >>> slab_planes(np.zeros((10, 1000, 1000, 1))) >= 1
    True
    """
    plane_bytes = max(view[:1].nbytes, 1)
    return max(1, SLAB_BYTES // plane_bytes)


def run_slabs(work: Callable[[list[int]], None], n_planes: int, planes: int) -> None:
    """Call ``work(starts)`` on contiguous runs of slab starts, one run per thread.

    Parameters
    ----------
    work : callable
        Processes the slabs that begin at each of ``starts`` (``planes`` planes
        each, the last one possibly shorter); allocates its own buffers.
    n_planes : int
        Planes along the slab axis of the output.
    planes : int
        Planes per slab.

    Examples
    --------
    >>> seen = []
    >>> run_slabs(seen.extend, 10, 4)
    >>> sorted(seen)
    [0, 4, 8]
    """
    starts = list(range(0, n_planes, planes))
    threads = min(THREADS, len(starts))
    if threads <= 1:
        work(starts)
        return
    per = -(-len(starts) // threads)
    runs = [starts[i:i + per] for i in range(0, len(starts), per)]
    on_threads(lambda thread, _: work(runs[thread]), len(runs))


def structured_average(grid, values: np.ndarray, out: np.ndarray | None, source: str,
                       slabs: Callable) -> np.ndarray:
    """Average ``values``, a field over the ``source`` ("point" or "cell") of a
    structured ``grid``, onto the other association: views over the cell axes, then
    ``slabs(src, dst, starts, planes)`` on every thread, for slabs of the point view
    sized to stay in cache.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3, 2))
    >>> fill = lambda src, dst, starts, planes: dst.fill(src.max())
    >>> structured_average(g, np.arange(6.0), None, "point", fill).tolist()
    [5.0, 5.0]
    """
    out = average_output(grid, values, source, out)
    point_field = values if source == "point" else out
    src = structured_view(grid, values, source + "s")
    dst = structured_view(grid, out, "cells" if source == "point" else "points")
    if src.ndim == 1:  # a single point is a single vertex cell
        np.copyto(out, values)
        return out
    planes = slab_planes(structured_view(grid, point_field, "points"))
    run_slabs(lambda starts: slabs(src, dst, starts, planes), dst.shape[0], planes)
    return out


def register_average(name: str, input_association: str, structured: Callable,
                     unstructured: Callable, doc: str) -> Worklet:
    """Declare and register the average of a field over ``input_association``
    ("points" or "cells") onto the other association: ``structured`` on the
    structured families, ``unstructured`` on unstructured grids and PolyData,
    and on the CPU backend their compiled twins, of the same names, in
    ``averaging_structured_cpu`` and ``<name>_cpu`` (the same bits, no
    temporaries). The NumPy implementations stay as the twins' references, for
    other dtypes and without Numba.

    Both are called as ``impl(grid, values, out=None)``:

    - ``grid``: a grid of their families (only its topology matters);
    - ``values``: a :class:`numpy.ndarray` of shape ``(n_in,)`` or ``(n_in, c)``,
      the field over ``input_association``;
    - ``out``: optionally, the C-contiguous output, of shape
      ``(n_out,) + values.shape[1:]``;

    and return the averaged field over the other association: float dtypes are
    kept, integers give float64.

    Examples
    --------
    >>> from daxpy.data.worklet import registered_worklets
    >>> registered_worklets()["point_to_cell"].numpy_impl("polydata").__name__
    'point_to_cell_unstructured'
    """
    unstructured_families = ("unstructured", "polydata")
    return register(Worklet(
        name=name,
        input_association=input_association,
        output_association="cells" if input_association == "points" else "points",
        halo=1,
        # PolyData cells are blocks of corners as an unstructured grid's are
        # (daxpy.data.polydata.cell_shape): the same kernels average them.
        numpy={**dict.fromkeys(("uniform", "rectilinear", "curvilinear"), structured),
               **dict.fromkeys(unstructured_families, unstructured)},
        cpu={**dict.fromkeys(("uniform", "rectilinear", "curvilinear"),
                             compiled("averaging_structured_cpu", structured.__name__,
                                      structured)),
             **dict.fromkeys(unstructured_families,
                             compiled(f"{name}_cpu", unstructured.__name__, unstructured))},
        cuda=CUDA[name],
        doc=doc,
    ))
