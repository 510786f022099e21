"""Worklet declarations and their registry.

A worklet family declares what it reads and writes and gives one implementation
per grid family and backend. The control layer only ever sees these
declarations; it never imports a worklet module by name.

Examples
--------
>>> from daxpy.data.worklet import get_worklet
>>> get_worklet("pass_through").output_association is None
True
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..errors import ArgumentError, BackendError

ANY_FAMILY = "any"
"""Key of an implementation that works on every grid family (elementwise maps)."""

FIELD_KIND = "field"
"""Kind of a worklet that writes one field over the input's points or cells
(elementwise maps and topology maps)."""

GENERATING_KIND = "topology-generating"
"""Kind of a worklet that makes new topology (contour, threshold, clip, slice): it
classifies, counts, scans and emits, and its CPU and CUDA implementations are
functions per grid family that return the new geometry."""


@dataclass(frozen=True)
class Worklet:
    """Declaration of one worklet family.

    Attributes
    ----------
    name : str
        Registry key and first part of every kernel name (``point_gradient``).
    input_association : {"points", "cells", "any"}
        Where the input field must live.
    output_association : {"points", "cells"} or None
        Where the result lives; None means "same as the input".
    halo : int
        Layers of neighbouring points a work item reads (0 for maps, 1 for
        stencils); chunked and distributed runs use it.
    numpy : mapping of str to callable
        NumPy implementation per grid family (``uniform``, ``rectilinear``,
        ``curvilinear``, ``unstructured``, or ``any``). Each is called as
        ``impl(grid, values, **params)`` and returns a new array. It is the
        reference the compiled kernels are tested against, and the CPU
        backend where no compiled kernel is declared.
    cpu : mapping of str to callable, optional
        Compiled, multi-threaded CPU implementation per grid family (Numba
        kernels, loaded at their first call), called as the NumPy ones are.
        Families missing here run their NumPy implementation.
    cuda : object, optional
        CUDA code generator for this family of kernels (see :mod:`daxpy.cuda`).
    aliases : tuple of str
        Other names users know the worklet by (``daxpy source gradient``), besides
        its name and the name of its filter, which match without underscores.
    kind : {"field", "topology-generating"}
        :data:`FIELD_KIND` (the default) or :data:`GENERATING_KIND`. A generating
        worklet's ``cuda`` is a mapping of grid family to a function called as the
        NumPy ones are, which launches its kernels itself.
    cpu_tuple : object, optional
        An elementwise map's per-tuple code for fused CPU kernels: a lazy
        reference (:class:`daxpy.worklets._numba.compiled`) to a template that
        writes the map's arithmetic for one tuple as its compiled CPU kernel
        does it (see :mod:`daxpy.worklets._tuple_code`). None: the map does not
        fuse on the CPU.
    """

    name: str
    input_association: str
    output_association: str | None
    halo: int
    numpy: Mapping[str, Callable[..., Any]]
    cuda: Any = None
    cpu: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    doc: str = field(default="", compare=False)
    aliases: tuple = ()
    kind: str = FIELD_KIND
    cpu_tuple: Any = None

    def numpy_impl(self, family: str) -> Callable[..., Any]:
        """Return the NumPy implementation for a grid family, chosen once per call.

        Examples
        --------
        >>> get_worklet("pass_through").numpy_impl("uniform").__name__
        'pass_through'
        """
        impl = self.numpy.get(family) or self.numpy.get(ANY_FAMILY)
        if impl is None:
            raise ArgumentError(
                f"worklet {self.name!r} has no implementation for {family} grids; "
                f"it supports {sorted(self.numpy)}"
            )
        return impl


    def cpu_impl(self, family: str) -> Callable[..., Any]:
        """Return the CPU implementation for a grid family: compiled where declared,
        NumPy otherwise.

        Examples
        --------
        >>> get_worklet("pass_through").cpu_impl("uniform").__name__
        'pass_through'
        """
        impl = self.cpu.get(family) or self.cpu.get(ANY_FAMILY)
        return impl if impl is not None else self.numpy_impl(family)


    def cuda_impl(self, family: str) -> Callable[..., Any]:
        """Return the CUDA implementation of a topology-generating worklet for a
        grid family.

        Raises
        ------
        BackendError
            If the worklet has none for that family.

        Examples
        --------
        >>> try:
        ...     get_worklet("pass_through").cuda_impl("uniform")
        ... except BackendError as err:
        ...     print(str(err)[:47])
        worklet 'pass_through' has no CUDA function for
        """
        impl = (self.cuda.get(family) or self.cuda.get(ANY_FAMILY)
                if self.kind == GENERATING_KIND else None)
        if impl is None:
            raise BackendError(
                f"worklet {self.name!r} has no CUDA function for {family} grids; "
                "use backend='cpu'")
        return impl


_REGISTRY: dict[str, Worklet] = {}


def register(worklet: Worklet) -> Worklet:
    """Add a worklet declaration to the registry (called by worklet modules).

    Examples
    --------
    >>> w = get_worklet("pass_through")
    >>> register(w) is w
    True
    """
    _REGISTRY[worklet.name] = worklet
    return worklet


def _load_worklets() -> None:
    # Importing the package runs every worklet module's register() call.
    importlib.import_module("daxpy.worklets")


def get_worklet(name: str) -> Worklet:
    """Look a worklet declaration up by name.

    Raises
    ------
    ArgumentError
        If no worklet of that name is registered.

    Examples
    --------
    >>> get_worklet("pass_through").halo
    0
    """
    _load_worklets()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ArgumentError(
            f"unknown worklet {name!r}; known: {sorted(_REGISTRY)}"
        ) from None


def registered_worklets() -> dict[str, Worklet]:
    """All registered worklets, by name.

    Examples
    --------
    >>> "pass_through" in registered_worklets()
    True
    """
    _load_worklets()
    return dict(_REGISTRY)
