"""What every filter shares: its declarations, its NaN policy, and the call
that runs it through the engine as a one-stage pipeline.

Examples
--------
>>> from daxpy.filters import PassThrough
>>> PassThrough("t").backend
'auto'
"""

from __future__ import annotations

from typing import Any

from daxpy.data.arrays import all_finite, is_device_array
from daxpy.data.dataset import DataSet
from daxpy.errors import ArgumentError, NaNPolicyError
from daxpy.data.fields import check_association
from daxpy.engine.backend import backend_for, resolve_backend
from daxpy.engine.dispatch import execute

from ._names import as_dataset, result_name


NAN_POLICIES = ("propagate", "raise")
"""What a filter does with NaN or Inf in its inputs."""


class Filter:
    """Base class: a filter reads fields of a dataset and returns a new dataset.

    A filter declares what the engine needs to plan it: the fields it reads
    (:meth:`reads`), the fields it writes (:meth:`outputs`) and where
    (:meth:`output_association`), the worklet steps it fuses into (:meth:`fusion_steps`),
    and whether it may run on pieces of a field (:meth:`position_free`).
    Subclasses implement :meth:`compute`, which returns the new fields as
    ``{"points": {...}, "cells": {...}}``. The input dataset is never modified.

    Calling a filter runs it as a one-stage pipeline through the engine
    (:func:`daxpy.stream.streaming.run_stages`), so a call gets what a pipeline
    run gets: host data streamed in overlapped chunks on the GPU, the streaming
    and out-of-core settings of :func:`daxpy.stream.streaming.configure`, and a
    profile. A sequence of filter calls on host data is a sequence of round trips
    to the GPU; chain the steps in a :func:`daxpy.pipeline`, or keep the fields on
    the device (CuPy arrays), to pay the transfers once.

    Parameters
    ----------
    backend : {"auto", "cpu", "cuda"}
        Where the worklets run.
    nan_policy : {"propagate", "raise"}
        ``"propagate"`` (default): NaN and Inf flow to the outputs that read
        them. ``"raise"``: a NaN or Inf in an input field raises
        :class:`~daxpy.errors.NaNPolicyError` naming the field.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.filters import Magnitude
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"v": np.ones((2, 3))})
    >>> out, profile = Magnitude("v", backend="cpu")(g, profile=True)
    >>> [r.verb for r in profile.stages], sorted(out.point_data)
    (['magnitude'], ['v', 'v_magnitude'])
    """

    verb = ""
    """The pipeline verb (and ``daxpy run`` step) that makes this filter."""

    result: str
    """The name of the field the filter writes (set by each filter)."""

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

    # -- declarations: what the engine plans with --------------------------------

    def reads(self) -> dict[str, str | None]:
        """The fields read, by name, with the association each is read at
        (None: points, then cells).

        Examples
        --------
        >>> from daxpy.filters import PointToCell
        >>> PointToCell("t").reads()
        {'t': 'points'}
        """
        raise NotImplementedError

    def outputs(self) -> tuple[str, ...]:
        """The names of the fields the filter writes.

        Examples
        --------
        >>> from daxpy.filters import Gradient
        >>> Gradient("t", vorticity=True, compute_gradient=False).outputs()
        ('Vorticity',)
        """
        return (self.result,) if self.writes_result else ()

    def output_association(self, association: str) -> str:
        """Where the outputs live when the input lives at ``association``.

        Examples
        --------
        >>> from daxpy.filters import PointToCell
        >>> PointToCell("t").output_association("points")
        'cells'
        """
        return association

    def fusion_steps(self, association: str,
                     dataset: DataSet) -> list[tuple[str, dict]] | None:
        """The worklet calls, ``(worklet name, parameters)``, that compute the
        filter's one output from its first input at ``association`` within a
        fused kernel; None where the filter does not fuse (it then runs on its own,
        through :meth:`compute`, which also raises its own errors).

        Examples
        --------
        >>> Filter().fusion_steps("points", None) is None
        True
        """
        return None

    def position_free(self, components: int) -> bool:
        """Whether the filter gives the same value for a tuple wherever it sits in
        the field (of ``components`` values per tuple), so that it may run on
        pieces of the field (streamed chunks, Dask blocks).

        Examples
        --------
        >>> Filter().position_free(3)
        True
        """
        return True

    # -- running --------------------------------------------------------------------

    def compute(self, dataset: DataSet) -> dict[str, dict[str, Any]]:
        """Return the new fields by association; implemented by each filter."""
        raise NotImplementedError

    def apply(self, dataset: DataSet) -> DataSet:
        """Run the filter's worklets on ``dataset`` as it is (the engine's call:
        no staging, streaming or residency rules); return a new dataset holding
        the input's fields and the new ones.

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.filters import Magnitude
        >>> g = daxpy.UniformGrid(dims=(2,), point_data={"v": np.ones((2, 4))})
        >>> Magnitude("v", backend="cpu").apply(g).point_data["v_magnitude"].tolist()
        [2.0, 2.0]
        """
        new = self.compute(dataset)
        return dataset.with_fields(new.get("points"), new.get("cells"))

    def execute(self, data: Any, *, to: str | None = None, profile: bool = False) -> Any:
        """Run the filter as a one-stage pipeline; return a new dataset holding
        the input's fields and the new ones.

        Parameters
        ----------
        data : DataSet, vtkDataSet or pyvista.DataSet
            The input, converted without copying its arrays.
        to : {"host", "device"}, optional
            Where the new fields live. By default, where the input lived: on
            the device (CuPy) when a field read is a device array and the
            filter runs on the GPU, else on the host (NumPy).
        profile : bool
            Also return the run's :class:`daxpy.engine.run.Profile`.

        Returns
        -------
        DataSet or (DataSet, Profile)

        Examples
        --------
        >>> import numpy as np, daxpy
        >>> from daxpy.filters import PointToCell
        >>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.array([0.0, 2.0, 6.0])})
        >>> PointToCell("t", backend="cpu").execute(g).cell_data["t"].tolist()
        [1.0, 4.0]
        """
        from daxpy.engine.stage import Stage
        from daxpy.stream.streaming import run_stages

        dataset = as_dataset(data)
        inputs = tuple(self.reads())
        if to is None:
            to = where_results_go(dataset, self.reads(), self.backend)
        elif to not in ("host", "device"):
            raise ArgumentError(f"to must be 'host' or 'device', got {to!r}")
        outputs = self.outputs()
        stage = Stage(1, self.verb or type(self).__name__, self, inputs,
                      outputs[0] if outputs else getattr(self, "result", ""))
        ran, report = run_stages(dataset, [stage], list(outputs), self.backend, to,
                                 timed=profile)
        result = dataset.with_fields(ran.point_data, ran.cell_data)
        return (result, report) if profile else result

    __call__ = execute


def where_results_go(dataset: DataSet, reads: dict, backend: str) -> str:
    """``"device"`` when a field read lives on the device and ``backend`` is the
    GPU, else ``"host"``: results come back where the input lived.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"t": np.zeros(2)})
    >>> where_results_go(g, {"t": None}, "cpu")
    'host'
    """
    if resolve_backend(backend_for(dataset, backend)) != "cuda":
        return "host"
    for name, association in reads.items():
        if is_device_array(dataset.field(name, association)[0]):
            return "device"
    return "host"


class FieldFilter(Filter):
    """A filter that reads one named field.

    Parameters
    ----------
    field : str
        Name of the input field.
    association : {"points", "cells"}, optional
        Where to find it; by default points, then cells.
    backend, nan_policy
        As for every :class:`Filter`.
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

    def reads(self) -> dict[str, str | None]:
        return {self.field: self.association}

    def input_field(self, dataset: DataSet) -> tuple[Any, str]:
        """Return ``(values, association)`` of the input field (checked per ``nan_policy``)."""
        values, association = dataset.field(self.field, self.association)
        return self.checked(self.field, values), association


class TupleMapFilter(FieldFilter):
    """A filter that maps each tuple of one field through one elementwise
    worklet (:attr:`worklet`), writing ``<field>_<suffix>`` by default at the
    input's association.

    Subclasses set :attr:`worklet` (also their verb) and :attr:`suffix`; their
    parameters are those of :class:`FieldFilter` plus ``result``.

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
        self.verb = self.worklet

    def fusion_steps(self, association, dataset):
        return [(self.worklet, {})]

    def compute(self, dataset):
        values, association = self.input_field(dataset)
        mapped = execute(self.worklet, dataset, values, association, backend=self.backend)
        return {association: {self.result: mapped}}
