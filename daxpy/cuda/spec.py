"""What a worklet family declares for the CUDA backend (``Worklet.cuda``).

A :class:`CudaSpec` names the worklet's ``.cuh`` template and device function
and the domain its work items range over; the control layer derives every
specialization from that, so it never needs to know a worklet by name.

Domains, and the device call each implies (``I`` the index type, ``C`` the
input components):

- ``flat``: ``fn<V, I, In, Out, ...>(item, in, out, ...)`` handles flat
  elements ``[item*V, item*V+V)``; V > 1 moves them as 16-byte vectors.
- ``tuples``: the worklet's ``map`` struct runs over V tuples per work item
  (``dax::map_chain``), alone or as a stage of a fused kernel.
- ``cells`` / ``points``: ``fn<C, ...>(topo, item, in, out, ...)`` handles one
  cell or point of a topology from :mod:`daxpy.cuda.topology`.

Examples
--------
>>> spec = CudaSpec("point_to_cell.cuh", "point_to_cell", "cells")
>>> spec.output(np.dtype("int32"), (), {})
(dtype('float64'), ())
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import ArgumentError, BackendError

DOMAINS = ("flat", "tuples", "cells", "points")


@dataclass
class KernelOptions:
    """Static parameters of one specialization beyond topology, dtypes and C.

    Attributes
    ----------
    template_args : list of str
        Extra C++ template arguments of the device function.
    tags : list of str
        Extra parts of the kernel name (one per template argument that varies).
    params : list of (str, str)
        Extra kernel arguments (C++ type, name), passed on to the device function.
    values : list
        Their launch values (device arrays or NumPy scalars), or callables
        that make them at launch time (so plans need no GPU).
    call : list of str, optional
        C++ expressions passed to the device function instead of the
        parameter names (e.g. wrapping a pointer in a small struct).
    preamble : list of str
        Generated C++ placed before the kernel (e.g. an expression struct).
    headers : tuple of str
        ``.cuh`` files the kernel needs besides the worklet's own (the
        headers of fused map stages).
    member_types : list of str
        Template arguments of the worklet's map struct after ``template_args``.
    members : list of str
        Initializers of the map struct's data members (from ``params``).
    """

    template_args: list = field(default_factory=list)
    tags: list = field(default_factory=list)
    params: list = field(default_factory=list)
    values: list = field(default_factory=list)
    call: list | None = None
    preamble: list = field(default_factory=list)
    headers: tuple = ()
    member_types: list = field(default_factory=list)
    members: list = field(default_factory=list)


def float_result(dtype: np.dtype, params: dict) -> np.dtype:
    """Floats keep their dtype; integers compute in float64.

    Examples
    --------
    >>> float_result(np.dtype("float32"), {})
    dtype('float32')
    """
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def same_tail(tail: tuple, params: dict) -> tuple:
    """Output tuples have the input's components.

    Examples
    --------
    >>> same_tail((3,), {})
    (3,)
    """
    return tail


def no_options(params: dict, in_dtype: np.dtype, out_dtype: np.dtype,
               components: int, n_values: int, prefix: str = "") -> KernelOptions:
    """No static parameters beyond the defaults.

    Examples
    --------
    >>> no_options({}, None, None, 1, 0).tags
    []
    """
    return KernelOptions()


@dataclass(frozen=True)
class CudaSpec:
    """CUDA declaration of a worklet family.

    Parameters
    ----------
    header : str
        ``.cuh`` file in ``daxpy.worklets`` holding the device function.
    function : str
        Name of the device function template (in namespace ``dax``).
    domain : {"flat", "tuples", "cells", "points"}
        What one work item is.
    out_dtype : callable, optional
        ``(in_dtype, params) -> dtype`` of the output (default: floats kept,
        integers to float64).
    out_tail : callable, optional
        ``(in_shape[1:], params) -> out_shape[1:]`` (default: unchanged).
    options : callable, optional
        ``(params, in_dtype, out_dtype, components, n_values, prefix="") ->
        KernelOptions`` (``n_values``: elements of the input field; ``prefix``
        starts every kernel argument name, so fused stages do not collide).
    accepted_params : tuple of str
        Keyword parameters the worklet takes; others are an error.
    uses_coordinates : bool
        Whether kernels read point coordinates (computed in the wider of the
        output's and the points' float types); otherwise none are uploaded.
    point_links : {"cells", "corners"}
        How a ``points`` worklet sees an unstructured grid: one launch over
        point -> cell links, or one launch per cell shape over point ->
        corner links (accumulating in the output in a fixed order).
    march : str, optional
        Device function of the marching variant for 3-D structured grids
        (``fn<V, W>(topo, src, dst, zc)``, see :file:`_march.cuh`).
    march_planes : int
        Planes per marching chunk: the fastest of 4, 8, 16 and 32 on the H200
        for this worklet (benchmarks/NOTES.md). Fewer, longer chunks re-read
        fewer halo planes but give the scheduler fewer independent blocks.
    map : str, optional
        For elementwise worklets: the map struct template
        (``Map<C, In, Out, ...>``) that fuses them into other kernels.
    hexahedra : tuple of str, optional
        For ``point_links="corners"``: device functions of the three kernels that
        run instead of ``function`` over a grid's first shape where it is the
        hexahedron (:mod:`daxpy.cuda.hex_gradient`).
    """

    header: str
    function: str
    domain: str
    out_dtype: Callable[[np.dtype, dict], np.dtype] = float_result
    out_tail: Callable[[tuple, dict], tuple] = same_tail
    options: Callable[..., KernelOptions] = no_options
    accepted_params: tuple = ()
    uses_coordinates: bool = False
    point_links: str = "cells"
    march: str | None = None
    march_planes: int = 4
    map: str | None = None
    hexahedra: tuple | None = None

    def __post_init__(self):
        if self.domain not in DOMAINS:
            raise ArgumentError(f"CudaSpec domain must be one of {DOMAINS}, got {self.domain!r}")

    def output(self, in_dtype: np.dtype, tail: tuple, params: dict) -> tuple[np.dtype, tuple]:
        """Output dtype and per-tuple shape for an input of ``in_dtype`` and ``tail``.

        Examples
        --------
        >>> CudaSpec("x.cuh", "x", "tuples").output(np.dtype("float32"), (3,), {})
        (dtype('float32'), (3,))
        """
        return np.dtype(self.out_dtype(np.dtype(in_dtype), params)), tuple(self.out_tail(tail, params))

    def check_params(self, worklet: str, params: dict[str, Any]) -> None:
        """Raise ArgumentError for keyword parameters the worklet does not take.

        Examples
        --------
        >>> CudaSpec("x.cuh", "x", "flat", accepted_params=("dtype",)).check_params("x", {"dtype": 1})
        """
        unknown = sorted(set(params) - set(self.accepted_params))
        if unknown:
            raise ArgumentError(
                f"worklet {worklet!r} got unexpected parameter(s) {unknown}; "
                f"it takes {list(self.accepted_params)}"
            )


def spec_of(worklet) -> "CudaSpec":
    """The worklet's CudaSpec, or BackendError if it has none.

    Examples
    --------
    >>> from daxpy.data.worklet import get_worklet
    >>> spec_of(get_worklet("pass_through")).domain
    'flat'
    """
    if worklet.cuda is None:
        raise BackendError(
            f"worklet {worklet.name!r} has no CUDA implementation yet; use backend='cpu'"
        )
    return worklet.cuda
