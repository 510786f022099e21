"""What the elementwise map worklets share (pass_through, magnitude, normalize,
bias_add, and divergence, vorticity and Q-criterion): their declaration and their
calling convention, documented once in :func:`register_map`.

Examples
--------
>>> from daxpy.data.worklet import get_worklet
>>> get_worklet("magnitude").halo, get_worklet("magnitude").output_association
(0, None)
"""

from __future__ import annotations

from typing import Any, Callable

from daxpy.data.worklet import ANY_FAMILY, Worklet, register

from ._numba import compiled


def register_map(function: Callable, cuda: Any, *, compiled_cpu: bool = False,
                 cpu_tuple: bool = False, doc: str = "") -> Worklet:
    """Declare and register ``function`` as an elementwise map named after it: on
    every grid family, at either association, with no halo.

    Every map is called as ``function(grid, values, **params, out=None)``:

    - ``grid`` (a DataSet, or None) is unused, as a map does not depend on the
      topology;
    - ``values`` are the field's tuples, a :class:`numpy.ndarray` of shape
      ``(n,)`` or ``(n, c)``;
    - ``out``, where given, is a C-contiguous :class:`numpy.ndarray` of the result's
      shape and dtype, which the map fills and returns.

    With ``compiled_cpu``, the CPU backend runs the compiled, threaded twin of the
    same name in ``<name>_cpu`` on float32 and float64 fields (the same bits); the
    NumPy ``function`` stays as its reference and serves integer fields. With
    ``cpu_tuple``, ``<name>_tuple`` in ``<name>_cpu`` is its per-tuple code in
    fused CPU kernels (:mod:`daxpy.worklets._tuple_code`).

    Examples
    --------
    >>> from daxpy.data.worklet import registered_worklets
    >>> registered_worklets()["normalize"].cpu_impl("uniform").__name__
    'normalize'
    """
    name = function.__name__
    return register(Worklet(
        name=name,
        input_association="any",
        output_association=None,
        halo=0,
        numpy={ANY_FAMILY: function},
        cpu={ANY_FAMILY: compiled(f"{name}_cpu", name, function)} if compiled_cpu else {},
        cuda=cuda,
        cpu_tuple=compiled(f"{name}_cpu", f"{name}_tuple", None) if cpu_tuple else None,
        doc=doc,
    ))
