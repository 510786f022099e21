"""What the geometry filters share (contour, threshold, clip, slice): they make a
new dataset, not a field of the input.

Examples
--------
>>> GeometryFilter.writes_result
False
"""

from __future__ import annotations

from typing import Any

from daxpy.data.dataset import DataSet
from daxpy.errors import ArgumentError

from ._base import Filter
from ._names import as_dataset


class GeometryFilter(Filter):
    """Base class of the filters whose output is a new dataset.

    Subclasses implement :meth:`make`, which runs their topology-generating
    worklet on the dataset as it is and returns the new dataset (its arrays on
    the host). Their declarations say which fields they read (:meth:`reads`); they
    write no field into their input, so :meth:`outputs` is empty.

    Examples
    --------
    >>> GeometryFilter().outputs()
    ()
    """

    writes_result = False
    makes_dataset = True
    """The engine runs this filter last and returns what :meth:`apply` makes."""

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
        """Run the filter; return the new dataset (arrays on the host).

        Parameters
        ----------
        data : DataSet, vtkDataSet or pyvista.DataSet
            The input, converted without copying its arrays.
        to : {"host"}, optional
            Where the new dataset's arrays live: on the host.
        profile : bool
            Also return the run's :class:`daxpy.engine.run.Profile`.

        Examples
        --------
        >>> GeometryFilter.execute.__doc__.split(";")[0]
        'Run the filter'
        """
        if to not in (None, "host"):
            raise ArgumentError(f"{type(self).__name__} returns its dataset on the host; "
                                f"to={to!r} is not supported")
        from daxpy.engine.stage import Stage
        from daxpy.stream.streaming import run_stages

        dataset = as_dataset(data)
        stage = Stage(1, self.verb or type(self).__name__, self, tuple(self.reads()), "")
        made, report = run_stages(dataset, [stage], [], self.backend, "host")
        return (made, report) if profile else made

    __call__ = execute


def no_result_name(verb: str, result: str | None) -> None:
    """Refuse a result name for a geometry step (``contour=1:NAME``): its output is a
    dataset, not a field.

    Examples
    --------
    >>> no_result_name("contour", None)
    """
    if result is not None:
        raise ArgumentError(f"{verb} makes a new dataset, not a field: it takes no result "
                            f"name (drop ':{result}')")


def point_coordinates(dataset: Any, ids: Any) -> Any:
    """The coordinates of the points ``ids`` (host int array): uniform and rectilinear
    grids from their axes (as float32, as VTK gives them), never materialized.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> point_coordinates(daxpy.UniformGrid(dims=(3, 2)), np.array([4])).tolist()
    [[1.0, 1.0, 0.0]]
    """
    import numpy as np

    from daxpy.data.arrays import to_host

    if dataset.family in ("uniform", "rectilinear"):
        dims = tuple(int(d) for d in dataset.dims)
        axes = [dataset.axis_coordinates(a) for a in range(3)]
        i, j, k = ids % dims[0], ids // dims[0] % dims[1], ids // (dims[0] * dims[1])
        return np.stack([axes[0][i], axes[1][j], axes[2][k]], axis=1).astype(np.float32)
    return to_host(dataset.points())[ids]
