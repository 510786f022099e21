"""A clip's output grid (:func:`clipped_grid`): the kept points' values copied as they
are, the made points' (cut edges, centres) as weighted sums, each output array made
once where the clip ran.

Examples
--------
>>> callable(clipped_grid)
True
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import numpy as np

from daxpy.data.arrays import array_module, is_device_array
from daxpy.data.unstructured import UnstructuredGrid
from daxpy.stream.placement import placed

from ._geometry import (axis_values, dataset_array, grid_axes, point_coordinates, take_rows,
                        taken, weighted_sum)


def clipped_grid(dataset: Any, made: Any) -> UnstructuredGrid:
    """The unstructured grid of a clip's output ``made`` (a
    :class:`~daxpy.worklets.clip.Clipped`) of ``dataset``: its cells, its points and
    every point and cell field, made where the clip ran and placed where the run puts
    the new dataset.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.worklets.clip import clip_cells
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.array([0.0, 1, 2])})
    >>> clipped_grid(g, clip_cells(g, g.point_data["t"], 0.5)).point_data["t"].tolist()
    [1.0, 2.0, 0.5]
    """
    # Points and fields are made where the clip ran; only the results move.
    terms = (made.ids, made.weights, (made.centre_rows, made.centre_ids, made.centre_weights))
    axis_aligned = dataset.family in ("uniform", "rectilinear")
    dtype = np.float64 if axis_aligned else dataset.points().dtype
    # The host's axes only where the host makes the points: three arrays and a check
    # of the memory left a call, before the GPU's next launch.
    axes = partial(grid_axes, dataset, np) if axis_aligned else None
    points = _joined(made, (3,), dtype, partial(_kept_points, dataset, made),
                     partial(_weighted_points, dataset, *terms),
                     partial(_host_rows, None if axis_aligned else dataset.points(), made,
                             terms, axes, dtype))
    point_data = {}
    for name, values in dataset.point_data.items():
        values = dataset_array(dataset, values, array_module(made.ids))
        point_data[name] = placed(_joined(made, values.shape[1:], values.dtype,
                                          partial(_kept_values, values, made),
                                          partial(_weighted, values, *terms),
                                          partial(_host_rows, values, made, terms, None,
                                                  values.dtype)))
    cell_data = {n: taken(v, made.source) for n, v in dataset.cell_data.items()}
    # The clip's own cells: ids in range, known types, no repeated point.
    return UnstructuredGrid.from_checked(placed(points), placed(made.connectivity),
                                         placed(made.offsets), placed(made.cell_types),
                                         point_data=point_data, cell_data=cell_data,
                                         name=f"clip of {dataset.name}")


def _joined(made: Any, row_shape: tuple, dtype: Any, kept: Callable[..., Any],
            cut: Callable[..., Any], host: Callable[[], Any]) -> Any:
    """An output point array of rows of ``row_shape`` in ``dtype``: the kept points'
    rows (``kept(out)``), then the made points' (``cut(out)``), where the clip ran.
    On the GPU each part is written into its rows of one array; on the host both in
    one compiled pass (``host()``) where it serves. Joined after, every output array
    was copied once more (on the GPU as long as the gathers took; on the host, into
    new pages, as long as the sums)."""
    if not is_device_array(made.ids):
        both = host()
        if both is not None:
            return both
        return kept(None) if made.ids.shape[0] == 0 else np.concatenate([kept(None),
                                                                         cut(None)])
    import cupy

    out = cupy.empty((made.n_points, *row_shape), dtype)
    kept(out[:made.n_kept])
    cut(out[made.n_kept:])
    return out


def _kept_points(dataset: Any, made: Any, out: Any) -> Any:
    """The kept points' coordinates, as they are (into ``out`` on the GPU): an image's
    or rectilinear grid's its axes' float64 values (as :func:`_weighted_points`
    makes the others)."""
    axis_aligned = dataset.family in ("uniform", "rectilinear")
    if made.kept is None:
        import cupy

        words = made.kept_words
        if not axis_aligned:
            return words.take(dataset_array(dataset, dataset.points(), cupy), out)
        if words.axis_points(grid_axes(dataset, cupy), int(dataset.dims[1]), np.float64,
                             out) is not None:
            return out
        made = made.with_ids()
    return _into(point_coordinates(dataset, made.kept, np.float64 if axis_aligned else
                                   dataset.points().dtype), out)


def _kept_values(values: Any, made: Any, out: Any) -> Any:
    """A point field (where the clip ran) at the kept points, copied as it is (NaN,
    infinities and every integer kept), into ``out`` on the GPU."""
    if made.kept is None:
        return made.kept_words.take(values, out)
    return _into(take_rows(values, made.kept), out)


def _host_rows(values: Any, made: Any, terms: tuple, axes: Callable[[], Any] | None,
               dtype: Any) -> Any:
    """On the host, the kept points' rows as they are, then the made points' sums,
    into one array on every core (:func:`daxpy.worklets._weighted_cpu.weighted_rows`:
    ``values`` rows by point id, or a grid's axes, as ``axes()`` gives them); None
    where the compiled kernel does not serve (no Numba, integer fields, wide rows)."""
    if np.dtype(dtype).kind != "f":
        return None  # integers are rounded from the sums, copied where kept
    try:
        from daxpy.worklets._numba import CompiledUnavailable
        from daxpy.worklets._weighted_cpu import weighted_rows
    except ImportError as err:  # no Numba
        if err.name != "numba":
            raise
        return None
    try:
        ids, weights, centres = terms
        return weighted_rows(values, ids, weights, centres,
                             axes=None if axes is None else axes(), dtype=dtype, kept=made.kept)
    except CompiledUnavailable:
        return None


def _into(found: Any, out: Any) -> Any:
    if out is None:
        return found
    out[...] = found
    return out


def _weighted_points(dataset: Any, ids: Any, weights: Any, centres: tuple, out: Any) -> Any:
    """The made points where the clip ran: on every host core, or on the GPU in one
    kernel (into ``out``). An image's or rectilinear grid's in float64 from its axes,
    as vtkTableBasedClipDataSet makes them (float32 would round a small cut cell's
    volume by more than 1e-5); other grids' in their points' dtype."""
    on_device = is_device_array(ids)
    if dataset.family in ("uniform", "rectilinear"):
        if not on_device:
            return weighted_sum(lambda i: axis_values(dataset, i), ids, weights, centres,
                                axes=grid_axes(dataset, np), dtype=np.float64)
        import cupy

        from daxpy.cuda.interpolation import weighted_axes

        # The grid's axes uploaded once and kept with it: uploaded from pageable
        # memory on every clip, they waited for the emit, and the GPU for the host.
        return weighted_axes(tuple(grid_axes(dataset, cupy)), ids, weights, centres,
                             dtype=np.float64, out=out)
    dtype = dataset.points().dtype
    if not on_device:
        return weighted_sum(dataset.points(), ids, weights, centres, dtype=dtype)
    import cupy

    from daxpy.cuda.interpolation import weighted_values

    return weighted_values(dataset_array(dataset, dataset.points(), cupy), ids, weights,
                           centres, dtype=dtype, out=out)


def _weighted(values: Any, ids: Any, weights: Any, centres: tuple, out: Any) -> Any:
    """A point field (where the clip ran) at the made points: weights over input
    points, the centre points' later terms in ``centres`` (dtype kept; integers
    rounded, as VTK's interpolation), into ``out`` on the GPU."""
    if is_device_array(ids):
        from daxpy.cuda.interpolation import weighted_values

        return weighted_values(values, ids, weights, centres, dtype=values.dtype, out=out)
    if np.issubdtype(values.dtype, np.floating):
        return weighted_sum(values, ids, weights, centres, dtype=values.dtype)
    return np.rint(weighted_sum(values, ids, weights, centres)).astype(values.dtype)
