"""The dataset base class: point and cell fields over a topology.

Concrete grids live in :mod:`daxpy.data.structured` and :mod:`daxpy.data.unstructured`.

Examples
--------
>>> import numpy as np, daxpy
>>> grid = daxpy.UniformGrid(dims=(3, 3, 3))
>>> grid.point_data["t"] = np.arange(27.0)
>>> grid.field("t")[1]
'points'
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

from ..errors import FieldError, InvalidDataSetError, UnknownFieldError
from .fields import FieldData, check_association
from .fingerprint import DerivedCache, checked_in_run, fingerprint

CONVERTERS: dict[str, Any] = {}
"""Converters to other toolkits' datasets, by name (``"vtk"``, ``"pyvista"``).

:mod:`daxpy.io.interop` adds its ``to_vtk`` and ``to_pyvista`` here when it is
imported (``import daxpy`` imports it): the data model sits below the io layer
and does not import it.
"""


class DataSet:
    """Points, cells and the fields attached to them.

    Subclasses set ``n_points`` and ``n_cells``, validate their arrays, then call
    :meth:`_init_fields`. Fields are stored by reference; filters return new
    datasets whose field mappings are new but whose arrays are shared with the
    input.

    Arrays that describe the grid (points, coordinates, connectivity, offsets,
    cell types) are shared with the caller, not copied; the dataset holds
    read-only views of them and checked their contents when it was built. A
    caller who writes into them afterwards must call :meth:`validate` (or
    build a new dataset). Every cache derived from them is keyed on their
    :mod:`fingerprint <daxpy.data.fingerprint>`, so a change it sees drops the
    caches and validates the arrays again before they are used.
    """

    name: str = "dataset"
    cuda_ready: bool = True
    """Whether the CUDA backend's kernels take this kind of dataset."""
    n_points: int
    n_cells: int

    def _init_fields(self, point_data=None, cell_data=None) -> None:
        self.point_data = FieldData("points", self.n_points, owner=self.name)
        self.cell_data = FieldData("cells", self.n_cells, owner=self.name)
        # The arrays are validated by now: what they hold is what caches may use.
        self._derived_cache()
        for key, values in (point_data or {}).items():
            self.point_data[key] = values
        for key, values in (cell_data or {}).items():
            self.cell_data[key] = values

    def _validated_arrays(self) -> tuple:
        """The arrays whose contents the constructor checked (none here)."""
        return ()

    def _check_contents(self) -> None:
        """Check the contents of :meth:`_validated_arrays` again (nothing here)."""

    def _derived_cache(self) -> DerivedCache:
        derived = self.__dict__.get("_derived")
        if derived is None:
            derived = self.__dict__["_derived"] = DerivedCache(
                fingerprint(self._validated_arrays()))
        return derived

    @property
    def _cache(self) -> dict[str, Any]:
        """Topology derived from the validated arrays (shape partitions, device
        copies, links), shared with the datasets that filters derive from this one.

        Reading it compares the arrays' fingerprint with the validated one: after
        a change it is emptied and the arrays are validated again (raising
        InvalidDataSetError if they no longer hold a valid grid).
        """
        self.check_unchanged()
        return self._derived_cache().entries

    def check_unchanged(self) -> None:
        """Validate the grid's arrays again if their fingerprint changed since
        they were last validated (dropping the derived caches); cheap otherwise.

        Every worklet call runs it first, so a change it sees is never computed on.

        Raises
        ------
        InvalidDataSetError
            If the arrays changed and no longer describe a valid grid.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> x = np.array([0.0, 1.0, 2.0])
        >>> grid = daxpy.RectilinearGrid(x)
        >>> x[2] = -1
        >>> grid.check_unchanged()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        daxpy.errors.InvalidDataSetError: rectilinear grid was changed after it was built ...
        """
        if checked_in_run(self):
            return
        if fingerprint(self._validated_arrays()) != self._derived_cache().fingerprint:
            self.revalidate_changed()

    def _stamp_written(self) -> None:
        """Take the fingerprint of the validated arrays again, once a write into them
        that was under way when the dataset was made has ended (a download into
        its buffers, overlapped with making it): taken before, it would hold bytes
        that were still to land, and the next check would validate every array
        again."""
        self._derived_cache().fingerprint = fingerprint(self._validated_arrays())

    def revalidate_changed(self) -> None:
        """:meth:`validate`, for arrays known or suspected to have changed since
        the grid was built: an error says so.

        Examples
        --------
        >>> import daxpy
        >>> daxpy.UniformGrid(dims=(2,)).revalidate_changed()
        """
        try:
            self.validate()
        except InvalidDataSetError as err:
            raise InvalidDataSetError(
                f"{self.name} was changed after it was built and is no longer valid: "
                f"{err}; restore its arrays or build a new grid") from None

    def validate(self) -> None:
        """Check the grid's arrays again and drop every cache derived from them.

        Call it after writing into arrays the grid was built from (they are
        shared, not copied). Changes to small arrays, and most changes to
        large ones, are also found without it, before any cache is used.

        Raises
        ------
        InvalidDataSetError
            If the arrays no longer describe a valid grid (the caches stay empty).

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.data.celltypes import LINE
        >>> ids = np.array([0, 1])
        >>> grid = daxpy.UnstructuredGrid(np.eye(3), ids, [0, 2], [LINE])
        >>> ids[1] = 5
        >>> grid.validate()
        Traceback (most recent call last):
        ...
        daxpy.errors.InvalidDataSetError: connectivity of unstructured grid holds point id 5, outside [0, 3)
        """
        derived = self._derived_cache()
        derived.entries.clear()
        self._check_contents()
        derived.fingerprint = fingerprint(self._validated_arrays())

    @property
    def topology_name(self) -> str:
        """Name of the topology, as used in kernel names (``uniform3d``...)."""
        raise NotImplementedError

    @property
    def family(self) -> str:
        """Grid family: ``uniform``, ``rectilinear``, ``curvilinear`` or ``unstructured``."""
        raise NotImplementedError

    def fields(self, association: str) -> FieldData:
        """Return the point or the cell field mapping.

        Examples
        --------
        >>> import daxpy
        >>> daxpy.UniformGrid(dims=(2, 2)).fields("cells").size
        1
        """
        check_association(association)
        return self.point_data if association == "points" else self.cell_data

    def field(self, name: str, association: str | None = None) -> tuple[Any, str]:
        """Look a field up by name; return ``(array, association)``.

        Parameters
        ----------
        name : str
            Field name.
        association : {"points", "cells"}, optional
            Where to look; by default points, then cells.

        Raises
        ------
        UnknownFieldError
            If no field of that name exists where asked.
        FieldError
            If the name exists at both points and cells and no association is given.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> g = daxpy.UniformGrid(dims=(2, 2), cell_data={"c": np.ones(1)})
        >>> g.field("c")[1]
        'cells'
        """
        if association is not None:
            data = self.fields(association)
            other = "cells" if association == "points" else "points"
            if name not in data and name in self.fields(other):
                raise UnknownFieldError(
                    f"{self.name} has no {association[:-1]} field {name!r}: {name!r} is a "
                    f"{other[:-1]} field (wrong association)"
                )
            if name not in data:
                raise UnknownFieldError(
                    f"{self.name} has no {association[:-1]} field {name!r}; "
                    f"it has {sorted(data)}"
                )
            return data[name], association
        in_points, in_cells = name in self.point_data, name in self.cell_data
        if in_points and in_cells:
            raise FieldError(
                f"{name!r} is both a point and a cell field of {self.name}; "
                "pass association='points' or 'cells'"
            )
        if in_points:
            return self.point_data[name], "points"
        if in_cells:
            return self.cell_data[name], "cells"
        raise UnknownFieldError(
            f"{self.name} has no field {name!r}; point fields: "
            f"{sorted(self.point_data)}, cell fields: {sorted(self.cell_data)}"
        )

    def with_fields(self, point_data: Mapping[str, Any] | None = None,
                    cell_data: Mapping[str, Any] | None = None) -> "DataSet":
        """Return a shallow copy with fields added; ``self`` is not modified.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> g = daxpy.UniformGrid(dims=(2,))
        >>> h = g.with_fields(point_data={"a": np.zeros(2)})
        >>> ("a" in h.point_data, "a" in g.point_data)
        (True, False)
        """
        other = copy.copy(self)
        other.point_data = self.point_data.copy()
        other.cell_data = self.cell_data.copy()
        for key, values in (point_data or {}).items():
            other.point_data[key] = values
        for key, values in (cell_data or {}).items():
            other.cell_data[key] = values
        return other

    def to_vtk(self) -> Any:
        """Return the equivalent VTK dataset, sharing field memory where possible.

        Examples
        --------
        >>> import daxpy
        >>> daxpy.UniformGrid(dims=(2, 2, 2)).to_vtk().GetNumberOfPoints()
        8
        """
        return CONVERTERS["vtk"](self)

    def to_pyvista(self) -> Any:
        """Return the equivalent PyVista dataset, sharing field memory where possible.

        Examples
        --------
        >>> import daxpy
        >>> daxpy.UniformGrid(dims=(2, 2, 2)).to_pyvista().n_points
        8
        """
        return CONVERTERS["pyvista"](self)

    def plot(self, **kwargs: Any) -> Any:
        """Plot with PyVista: ``self.to_pyvista().plot(**kwargs)``.

        PyVista's ``pv.wrap`` and ``Plotter.add_mesh`` accept only VTK, meshio
        and trimesh objects (PyVista has no hook for other types): give them
        :meth:`to_pyvista`, which shares the arrays.

        Examples
        --------
        >>> import daxpy
        >>> grid = daxpy.UniformGrid(dims=(2, 2, 2))
        >>> grid.plot(off_screen=True, screenshot=False) is None
        True
        """
        return self.to_pyvista().plot(**kwargs)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.topology_name}, n_points={self.n_points}, "
            f"n_cells={self.n_cells}, point_data={list(self.point_data)}, "
            f"cell_data={list(self.cell_data)})"
        )
