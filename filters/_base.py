"""What every filter shares: input conversion, field lookup, output assembly.

Examples
--------
>>> from daxpy.filters import PassThrough
>>> PassThrough("t").backend
'auto'
"""

from __future__ import annotations

from typing import Any

from daxpy.data.arrays import all_finite
from daxpy.data.dataset import DataSet
from daxpy.errors import ArgumentError, NaNPolicyError
from daxpy.data.fields import check_association
from daxpy.engine.dispatch import execute


def as_dataset(data: Any) -> DataSet:
    """Accept a daxpy dataset, or a VTK/PyVista dataset wrapped without copying.

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.UniformGrid(dims=(2,))
    >>> as_dataset(g) is g
    True
    """
    if isinstance(data, DataSet):
        return data
    from daxpy.io.interop import from_vtk

    return from_vtk(data)


def output_name(option: bool | str, default: str, argument: str) -> str | None:
    """Resolve a PyVista-style ``bool | str`` option into an output field name.

    Examples
    --------
    >>> output_name(True, "Vorticity", "vorticity")
    'Vorticity'
    >>> output_name("w", "Vorticity", "vorticity")
    'w'
    >>> output_name(False, "Vorticity", "vorticity") is None
    True
    """
    if option is True:
        return default
    if option is False or option is None:
        return None
    if isinstance(option, str) and option:
        return option
    raise ArgumentError(f"{argument} must be a bool or a non-empty field name, got {option!r}")


def result_name(result: str | None, default: str) -> str:
    """Return the output field name: ``result``, or ``default`` when it is None.

    Raises
    ------
    ArgumentError
        If ``result`` is neither None nor a non-empty string.

    Examples
    --------
    >>> result_name(None, "t_copy")
    't_copy'
    >>> result_name("u", "t_copy")
    'u'
    """
    if result is None:
        return default
    if isinstance(result, str) and result:
        return result
    raise ArgumentError(f"result must be a non-empty field name, got {result!r}")


NAN_POLICIES = ("propagate", "raise")
"""What a filter does with NaN or Inf in its inputs."""


class Filter:
    """Base class: a filter reads fields of a dataset and returns a new dataset.

    Subclasses implement :meth:`compute`, which returns the new fields as
    ``{"points": {...}, "cells": {...}}``. The input dataset is never modified.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}
        Where the worklets run.
    nan_policy : {"propagate", "raise"}
        ``"propagate"`` (default): NaN and Inf flow to the outputs that read
        them. ``"raise"``: a NaN or Inf in an input field raises
        :class:`~daxpy.errors.NaNPolicyError` naming the field.
    """

    writes_result = True
    """Whether the filter writes its ``result`` field (False: only derived outputs)."""

    def __init__(self, *, backend: str = "auto", nan_policy: str = "propagate"):
        if nan_policy not in NAN_POLICIES:
            raise ArgumentError(
                f"nan_policy must be one of {NAN_POLICIES}, got {nan_policy!r}"
            )
        self.backend = backend
        self.nan_policy = nan_policy

    def checked(self, name: str, values: Any) -> Any:
        """Return ``values``; with ``nan_policy="raise"`` first check they are finite.

        The check is one reduction where the values live (host or device).

        Raises
        ------
        NaNPolicyError
            If ``nan_policy="raise"`` and the field holds NaN or Inf.

        Examples
        --------
        >>> import numpy as np
        >>> Filter(nan_policy="raise").checked("t", np.ones(2)).tolist()
        [1.0, 1.0]
        """
        if self.nan_policy == "raise" and not all_finite(values):
            raise NaNPolicyError(
                f"field {name!r} holds NaN or Inf and nan_policy='raise'; clean the "
                f"field or use nan_policy='propagate'"
            )
        return values

    def compute(self, dataset: DataSet) -> dict[str, dict[str, Any]]:
        """Return the new fields by association; implemented by each filter."""
        raise NotImplementedError

    def execute(self, data: Any) -> DataSet:
        """Run the filter; return a new dataset holding the input's and new fields.

        Parameters
        ----------
        data : DataSet, vtkDataSet or pyvista.DataSet
            The input, converted without copying its arrays.

        Returns
        -------
        DataSet
        """
        dataset = as_dataset(data)
        new = self.compute(dataset)
        return dataset.with_fields(new.get("points"), new.get("cells"))

    __call__ = execute


class FieldFilter(Filter):
    """A filter that reads one named field.

    Parameters
    ----------
    field : str
        Name of the input field.
    association : {"points", "cells"}, optional
        Where to find it; by default points, then cells.
    backend : {"auto", "cpu", "cuda"}
        Where the worklets run.
    nan_policy : {"propagate", "raise"}
        ``"propagate"`` (default): NaN and Inf flow to the outputs that read
        them. ``"raise"``: a NaN or Inf in an input field raises
        :class:`~daxpy.errors.NaNPolicyError` naming the field.
    """

    def __init__(self, field: str, *, association: str | None = None,
                 backend: str = "auto", nan_policy: str = "propagate"):
        super().__init__(backend=backend, nan_policy=nan_policy)
        if not isinstance(field, str) or not field:
            raise ArgumentError(f"field must be a non-empty field name, got {field!r}")
        if association is not None:
            check_association(association)
        self.field = field
        self.association = association

    def input_field(self, dataset: DataSet) -> tuple[Any, str]:
        """Return ``(values, association)`` of the input field (checked per ``nan_policy``)."""
        values, association = dataset.field(self.field, self.association)
        return self.checked(self.field, values), association


class TupleMapFilter(FieldFilter):
    """A filter that maps each tuple of one field through one elementwise
    worklet (:attr:`worklet`), writing ``<field>_<suffix>`` by default at the
    input's association.

    Subclasses set :attr:`worklet` and :attr:`suffix`; their parameters are
    those of :class:`FieldFilter` plus ``result``.

    Examples
    --------
    >>> from daxpy.filters import Magnitude
    >>> Magnitude("v").result
    'v_magnitude'
    """

    worklet: str = ""
    suffix: str = ""

    def __init__(self, field: str, result: str | None = None, *,
                 association: str | None = None, backend: str = "auto",
                 nan_policy: str = "propagate"):
        super().__init__(field, association=association, backend=backend,
                         nan_policy=nan_policy)
        self.result = result_name(result, f"{field}_{self.suffix}")

    def compute(self, dataset):
        values, association = self.input_field(dataset)
        mapped = execute(self.worklet, dataset, values, association, backend=self.backend)
        return {association: {self.result: mapped}}
