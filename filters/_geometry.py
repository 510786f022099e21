"""What the geometry filters share (contour, threshold, clip, slice): they make a
new dataset, not a field of the input.

Examples
--------
>>> GeometryFilter.writes_result
False
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from daxpy.data.arrays import array_module
from daxpy.data.dataset import DataSet
from daxpy.errors import ArgumentError
from daxpy.worklets._numba import compiled

from ._base import Filter
from ._names import as_dataset


class GeometryFilter(Filter):
    """Base class of the filters whose output is a new dataset.

    Subclasses implement :meth:`make`, which runs their topology-generating
    worklet on the dataset as it is and returns the new dataset, its arrays
    placed by :func:`daxpy.stream.transfer.placed` (on the host, or left on the
    device where the run asks for that and ``device_results`` says the filter
    can). Their declarations say which fields they read (:meth:`reads`); they
    write no field into their input, so :meth:`outputs` is empty.

    Examples
    --------
    >>> GeometryFilter().outputs()
    ()
    """

    writes_result = False
    makes_dataset = True
    """The engine runs this filter last and returns what :meth:`apply` makes."""

    device_results = False
    """Whether the new dataset can stay on the device (``to="device"``): a filter
    that assembles it on the host says False."""

    makes_family = ""
    """The grid family of the dataset made (``"polydata"``, ``"unstructured"``), which
    ``daxpy run`` checks the output file's format against before computing."""

    def made_family(self, dataset: DataSet) -> str:
        """The grid family of what :meth:`make` gives for ``dataset`` (``daxpy run``
        checks the output file's format against it before computing).

        Examples
        --------
        >>> import daxpy
        >>> GeometryFilter().made_family(daxpy.UniformGrid(dims=(2,)))
        ''
        """
        return self.makes_family

    def make(self, dataset: DataSet) -> DataSet:
        """Return the new dataset made from ``dataset``; implemented by each filter."""
        raise NotImplementedError

    def position_free(self, components: int) -> bool:
        # The new topology depends on where each value sits in the grid.
        return False

    def apply(self, dataset: DataSet) -> DataSet:
        """Run the filter's worklets on ``dataset`` as it is; return the new dataset.

        Examples
        --------
        >>> GeometryFilter.apply.__doc__.split(";")[0]
        "Run the filter's worklets on ``dataset`` as it is"
        """
        dataset.check_unchanged()
        return self.make(dataset)

    def execute(self, data: Any, *, to: str | None = None, profile: bool = False) -> Any:
        """Run the filter; return the new dataset.

        Parameters
        ----------
        data : DataSet, vtkDataSet or pyvista.DataSet
            The input, converted without copying its arrays.
        to : {"host", "device"}, optional
            Where the new dataset's arrays live. By default where the input
            lived, for the filters that can leave it on the device
            (``device_results``: threshold, clip, contour and slice on the GPU);
            others return it on the host.
        profile : bool
            Also return the run's :class:`daxpy.engine.run.Profile`.

        Examples
        --------
        >>> GeometryFilter.execute.__doc__.split(";")[0]
        'Run the filter'
        """
        from daxpy.engine.stage import Stage
        from daxpy.stream.streaming import run_stages

        from ._base import where_results_go

        dataset = as_dataset(data)
        if to is None:
            # The new dataset carries every field: it goes where any of them lives
            # (a clip by a plane reads none).
            every = {**dict.fromkeys(dataset.point_data, "points"),
                     **dict.fromkeys(dataset.cell_data, "cells"), **self.reads()}
            to = where_results_go(dataset, every, self.backend) \
                if self.device_results else "host"
        elif to not in ("host", "device"):
            raise ArgumentError(f"to must be 'host' or 'device', got {to!r}")
        stage = Stage(1, self.verb or type(self).__name__, self, tuple(self.reads()), "")
        made, report = run_stages(dataset, [stage], [], self.backend, to)
        return (made, report) if profile else made

    __call__ = execute


def last_step(node: Any, verb: str, result: str | None,
              make: Callable[[str], GeometryFilter]) -> Any:
    """Add the geometry filter ``make(field)`` on ``node``'s field as a pipeline step
    (the pipeline's last: it makes a new dataset, not a field).

    Raises
    ------
    ArgumentError
        If the step is given a ``result`` name (``contour=1:NAME``).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.filters import Contour
    >>> pipe = daxpy.pipeline(daxpy.UniformGrid(dims=(2,), point_data={"t": np.zeros(2)}))
    >>> try:
    ...     last_step(pipe.field("t"), "contour", "iso", lambda field: Contour(field, 0.5))
    ... except ArgumentError as err:
    ...     print(err)
    contour makes a new dataset, not a field: it takes no result name (drop ':iso')
    """
    if result is not None:
        raise ArgumentError(f"{verb} makes a new dataset, not a field: it takes no result "
                            f"name (drop ':{result}')")
    return node._then(verb, lambda src, out: make(src), None)


def dataset_array(dataset: Any, array: Any, xp: Any) -> Any:
    """``array``, one of ``dataset``'s (or ``dataset`` None: a passing array), where
    ``xp`` (NumPy or CuPy) computes. On the device a dataset's host array is copied
    once and cached with the dataset, since every cut, clip and interpolation of the
    same grid reads its points again; a passing array is not cached.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,))
    >>> dataset_array(g, g.points(), np).shape
    (2, 3)
    """
    from daxpy.data.arrays import to_host

    if xp.__name__ == "numpy":
        return to_host(array)
    from daxpy.cuda.device import to_device

    return to_device(array, dataset)


def point_coordinates(dataset: Any, ids: Any, dtype: Any = np.float32) -> Any:
    """The coordinates of the points ``ids``, where ``ids`` live (NumPy or CuPy):
    uniform and rectilinear grids from their axes (as float32, as VTK gives them, or
    in ``dtype``: float64 for the axes' values as they are), never materialized.
    Many host ids are gathered on every CPU thread.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> point_coordinates(daxpy.UniformGrid(dims=(3, 2)), np.array([4])).tolist()
    [[1.0, 1.0, 0.0]]
    """
    xp = array_module(ids)
    if dataset.family in ("uniform", "rectilinear"):
        return (_AXIS_POINTS(dataset, ids, dtype=dtype) if xp is np
                else _axis_points(dataset, ids, dtype=dtype))
    return take_rows(dataset_array(dataset, dataset.points(), xp), ids)


def weighted_sum(gather: Any, ids: Any, weights: Any, centres: Any = None, axes: Any = None,
                 dtype: Any = None) -> Any:
    """``weights[:, 0] * gather(ids[:, 0]) + weights[:, 1] * gather(ids[:, 1])`` in
    float64, where ``ids`` live, plus on the ``centres`` rows their later terms;
    rounded once to ``dtype`` (a float dtype) where one is given.

    ``gather`` maps point ids to rows (a field's values, or coordinates computed from a
    grid's axes), or is an array of rows by point id. ``ids`` and ``weights`` hold
    every point's first terms (a corner, a cut edge's ends), one or two columns;
    ``centres``, ``(rows, ids, weights)``, the few centre points' later terms
    (a :class:`~daxpy.worklets.clip.Clipped`'s centre table), so those rows alone
    read them. The order of operations is fixed, so NumPy, CuPy, the compiled kernel
    and the CUDA kernel give the same bits: ``total = t0 + t1`` on every row; on a
    centre row ``extra = c0 + c1 + ...`` (its table's columns, in order), then
    ``total + extra``. It is the sum over a row of all its terms, columns added as
    a table of them all would add them (NumPy's column by column), the later ones
    on the rows where one of their weights is not zero (every clip centre row).

    On the host, an array ``gather`` (or, with ``axes``, a uniform or rectilinear
    grid's coordinates: ``gather`` computes them from these three axis arrays) is
    summed by a compiled kernel on every core
    (:func:`daxpy.worklets._weighted_cpu.weighted_rows`); elsewhere, and without
    Numba, by the array program below.

    Examples
    --------
    >>> import numpy as np
    >>> values = np.array([0.0, 10.0, 20.0])
    >>> centres = (np.array([0]), np.array([[2]]), np.array([[0.25]]))
    >>> weighted_sum(lambda i: values[i], np.array([[0, 1], [2, 2]]),
    ...              np.array([[0.5, 0.25], [1.0, 0.0]]), centres).tolist()
    [7.5, 20.0]
    >>> weighted_sum(values, np.array([[0, 1]]), np.array([[0.5, 0.5]])).tolist()
    [5.0]
    """
    import numpy as np

    xp = array_module(ids)
    if xp is np and (axes is not None or not callable(gather)):
        try:
            from daxpy.worklets._numba import CompiledUnavailable
            from daxpy.worklets._weighted_cpu import weighted_rows
        except ImportError as err:  # no Numba: the array program
            if err.name != "numba":
                raise
        else:
            try:
                return weighted_rows(None if callable(gather) else gather, ids, weights,
                                     centres, axes, dtype)
            except CompiledUnavailable:
                pass
    if not callable(gather):
        gather = xp.asarray(gather).__getitem__

    def term(ids, weights, j):
        rows_values = gather(ids[:, j]).astype(xp.float64)
        return rows_values * weights[:, j].reshape((-1,) + (1,) * (rows_values.ndim - 1))

    total = term(ids, weights, 0)
    if ids.shape[1] > 1:
        total = total + term(ids, weights, 1)
    if centres is not None and centres[0].shape[0] and centres[1].shape[1]:
        rows, centre_ids, centre_weights = centres
        extra = term(centre_ids, centre_weights, 0)
        for j in range(1, centre_ids.shape[1]):
            extra = extra + term(centre_ids, centre_weights, j)
        total[rows] = total[rows] + extra
    return total if dtype is None else total.astype(dtype)


def taken(values: Any, ids: Any) -> Any:
    """``values[ids]`` gathered where ``ids`` live, brought to the host (many host
    ids gathered on every CPU thread).

    Examples
    --------
    >>> import numpy as np
    >>> taken(np.array([5, 6, 7]), np.array([2, 0])).tolist()
    [7, 5]
    """
    import numpy as np

    from daxpy.data.arrays import to_host
    from daxpy.stream.placement import placed

    xp = array_module(ids)
    return placed(take_rows(to_host(values) if xp is np else xp.asarray(values), ids))


def take_rows(values: Any, ids: Any) -> Any:
    """``values[ids]`` where both live (NumPy: on every CPU thread for many ids; CuPy:
    a row a GPU thread, :mod:`daxpy.cuda.gather`).

    Examples
    --------
    >>> import numpy as np
    >>> take_rows(np.array([[1, 2], [3, 4]]), np.array([1])).tolist()
    [[3, 4]]
    """
    if array_module(ids) is np:
        return _TAKE(values, ids)
    from daxpy.cuda.gather import gather_rows  # a row a thread, not an element

    made = gather_rows(values, ids)
    return made if made is not None else values[ids]


def grid_axes(dataset: Any, xp: Any) -> list:
    """An axis-aligned grid's coordinates along x, y and z (float64) where ``xp``
    computes. On the device they are uploaded once per grid and geometry and kept
    with it: a pageable upload waits for the work queued before it (a cut's emit
    kernel), and the GPU then waits for the host's next launch (about 0.1 ms of
    every 512³ contour).

    Examples
    --------
    >>> import daxpy
    >>> [a.tolist() for a in grid_axes(daxpy.UniformGrid(dims=(2, 1, 1)), np)]
    [[0.0, 1.0], [0.0], [0.0]]
    """
    if xp is np:
        return [dataset.axis_coordinates(a) for a in range(3)]
    from daxpy.cuda.device import cached, to_device

    if dataset.family == "rectilinear":  # cached by the arrays themselves
        return [to_device(dataset.coordinates[a], dataset, np.float64) for a in range(3)]
    key = f"axes:{tuple(dataset.dims)}:{tuple(dataset.origin)}:{tuple(dataset.spacing)}"
    return cached(dataset, key, lambda: [xp.asarray(dataset.axis_coordinates(a))
                                         for a in range(3)])


def axis_values(dataset: Any, ids: Any) -> Any:
    """A uniform or rectilinear grid's points ``ids`` as its axes' float64 values,
    shape ``(n, 3)``, where ``ids`` live (an array program: NumPy or CuPy).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> axis_values(daxpy.RectilinearGrid([0.0, 0.1], [5.0, 7.0]), np.array([3])).tolist()
    [[0.1, 7.0, 0.0]]
    """
    xp = array_module(ids)
    x, y, z = grid_axes(dataset, xp)
    nx, ny = x.shape[0], y.shape[0]
    return xp.stack([x[ids % nx], y[ids // nx % ny], z[ids // (nx * ny)]], axis=1)


def _axis_points(dataset: Any, ids: Any, dtype: Any = np.float32) -> Any:
    """The coordinates (float32, or ``dtype``) of a uniform or rectilinear grid's
    points ``ids`` from its axes, where ``ids`` live (float32 on the device in one
    kernel, the same bits: the array program's gathers and stack were most of a
    threshold's time)."""
    xp = array_module(ids)
    dims = tuple(int(d) for d in dataset.dims)
    axes = grid_axes(dataset, xp)
    if xp is not np and np.dtype(dtype) == np.float32:
        from daxpy.cuda.edge_points import grid_points

        made = grid_points(ids, dims, axes)
        if made is not None:
            return made
    i, j, k = ids % dims[0], ids // dims[0] % dims[1], ids // (dims[0] * dims[1])
    return xp.stack([axes[0][i], axes[1][j], axes[2][k]], axis=1).astype(dtype)


def _numpy_take(values: Any, ids: Any) -> Any:
    return values[ids]


# Compiled (Numba) gathers of host ids, the NumPy ones' bits on every CPU thread;
# NumPy where they do not pay (few ids) or do not apply.
_AXIS_POINTS = compiled("_gather_cpu", "axis_points", _axis_points)
_TAKE = compiled("_gather_cpu", "take", _numpy_take)
