"""Turn (worklet, grid, dtype, components, static parameters) into the list of
specialized kernels to launch: one for a structured grid or an elementwise
map, one per cell shape for unstructured cells, one over point links for
unstructured points. Nothing here needs a GPU, so sources can be printed and
compiled anywhere.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.worklet import get_worklet
>>> g = daxpy.UniformGrid(dims=(4, 4, 4))
>>> p = make_plan(get_worklet("pass_through"), g, "points", np.dtype("float32"), (),
...               {"dtype": "float64"})
>>> [launch.kernel.name for launch in p.launches]
['pass_through__f32__f64__v2']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import BackendError
from . import topology as topo_mod
from .codegen import BLOCK_SIZE, KernelSource, ctype, dtype_tag, index_ctype, kernel_name
from .spec import CudaSpec


PER_THREAD = {"flat": 1, "tuples": 1, "cells": 4, "points": 4}
"""Work items per thread by domain (more loads in flight; measured on H200)."""


@dataclass
class Launch:
    """One kernel launch of a plan.

    Attributes
    ----------
    kernel : KernelSource
        The specialized kernel.
    n_items : int
        Work items (threads) to launch.
    values : callable
        ``values(in_array, out_array) -> list`` of launch arguments.
    """

    kernel: KernelSource
    n_items: int
    values: Callable[[Any, Any], list]
    grid: tuple | None = None
    block: tuple | None = None

    def dims(self) -> tuple[tuple, tuple]:
        """(grid, block) launch dimensions.

        Examples
        --------
        >>> Launch(KernelSource("k", (), [], "n", ""), 300, list).dims()
        ((2,), (256,))
        """
        if self.grid is not None:
            return self.grid, self.block
        return (self.kernel.blocks(self.n_items),), (BLOCK_SIZE,)


@dataclass
class Plan:
    """Everything one worklet call needs: output layout and kernel launches."""

    out_dtype: np.dtype
    out_shape: tuple
    launches: list
    zero_fill: bool = False


def vector_width(in_dtype: np.dtype, out_dtype: np.dtype) -> int:
    """Elements per work item of a flat map: 16 bytes of the wider type, so
    that every store instruction of a warp writes contiguous bytes (two
    16-byte stores 16 bytes apart half-fill their sectors; benchmarks/NOTES.md).

    Examples
    --------
    >>> vector_width(np.dtype("float32"), np.dtype("float64"))
    2
    """
    return 16 // max(in_dtype.itemsize, out_dtype.itemsize)


def spec_of(worklet) -> CudaSpec:
    """The worklet's CudaSpec, or BackendError if it has none.

    Examples
    --------
    >>> from daxpy.worklet import get_worklet
    >>> spec_of(get_worklet("pass_through")).domain
    'flat'
    """
    if worklet.cuda is None:
        raise BackendError(
            f"worklet {worklet.name!r} has no CUDA implementation yet; use backend='cpu'"
        )
    return worklet.cuda


def _option_values(options) -> list:
    return [v() if callable(v) else v for v in options.values]


def _call_args(options) -> str:
    names = options.call if options.call is not None else [n for _, n in options.params]
    return "".join(f", {name}" for name in names)


def _targs(options) -> str:
    return "".join(f", {a}" for a in options.template_args)


def _io_params(in_ct: str, out_ct: str) -> list:
    return [(f"const {in_ct}* __restrict__", "in"), (f"{out_ct}* __restrict__", "out")]


def make_plan(worklet, dataset, association: str, in_dtype: np.dtype, tail: tuple,
              params: dict, aligned: bool = True, index: str | None = None) -> Plan:
    """Plan the kernels for one call.

    Parameters
    ----------
    worklet : Worklet
        Declaration with a ``cuda`` spec.
    dataset : DataSet
        The grid.
    association : {"points", "cells"}
        Where the input field lives.
    in_dtype : numpy.dtype
        Input dtype.
    tail : tuple
        Input shape past the first axis (``()`` or ``(c,)``).
    params : dict
        Static worklet parameters.
    aligned : bool
        Whether the input and output are 16-byte aligned (vector loads).
    index : {"int", "long long"}, optional
        Index type; by default 32-bit unless the element count needs 64.

    Returns
    -------
    Plan
    """
    spec = spec_of(worklet)
    spec.check_params(worklet.name, params)
    out_dtype, out_tail = spec.output(in_dtype, tail, params)
    components = math.prod(tail)
    n_in = dataset.n_points if association == "points" else dataset.n_cells
    out_assoc = worklet.output_association or association
    n_out = dataset.n_points if out_assoc == "points" else dataset.n_cells
    biggest = max(n_in * max(components, 1), n_out * max(math.prod(out_tail), 1),
                  3 * dataset.n_points)
    index = index or index_ctype(biggest)
    options = spec.options(params, in_dtype, out_dtype, components, n_in * max(components, 1))
    wide = "i64" if index != "int" else None
    build = {"flat": _flat, "tuples": _tuples, "cells": _topological,
             "points": _topological}[spec.domain]
    launches = build(worklet, spec, dataset, in_dtype, out_dtype, components, options,
                     index, wide, aligned, n_in)
    # Point sums over shapes with nothing to add (only vertices) stay zero.
    zero_fill = spec.domain == "points" and dataset.family == "unstructured" and not launches
    return Plan(out_dtype, (n_out,) + tuple(out_tail), launches, zero_fill)


def _flat(worklet, spec, dataset, in_dtype, out_dtype, components, options, index,
          wide, aligned, n_in):
    n_flat = n_in * max(components, 1)
    width = vector_width(in_dtype, out_dtype) if aligned else 1
    n_vec, n_tail = divmod(n_flat, width)
    in_ct, out_ct = ctype(in_dtype), ctype(out_dtype)
    out_tag = dtype_tag(out_dtype) if out_dtype != in_dtype else None
    name = kernel_name(worklet.name, dtype_tag(in_dtype), out_tag, *options.tags,
                       f"v{width}" if width > 1 else None, wide)
    call = f"dax::{spec.function}<{{V}}, {index}, {in_ct}, {out_ct}{_targs(options)}>"
    args = _call_args(options)
    body = f"{call.format(V=width)}(item, in, out{args});"
    if width > 1:
        # The last n_flat % V elements, one per work item, after the vectors.
        body = (f"if (item < n_vec) {body}\n"
                f"  else {call.format(V=1)}(n_vec * {width} + (item - n_vec), in, out{args});")
    idt = np.int32 if index == "int" else np.int64
    kernel = KernelSource(
        name, (spec.header,),
        _io_params(in_ct, out_ct) + [(f"const {index}", "n_vec"), (f"const {index}", "n_items")]
        + options.params,
        "n_items", body, index=index, per_thread=PER_THREAD["flat"],
        preamble=options.preamble)
    return [Launch(kernel, n_vec + n_tail,
                   lambda i, o: [i, o, idt(n_vec), idt(n_vec + n_tail)] + _option_values(options))]


def _tuples(worklet, spec, dataset, in_dtype, out_dtype, components, options, index,
            wide, aligned, n_in):
    in_ct, out_ct = ctype(in_dtype), ctype(out_dtype)
    c = max(components, 1)
    name = kernel_name(worklet.name, dtype_tag(in_dtype), f"c{c}", *options.tags, wide)
    idt = np.int32 if index == "int" else np.int64
    kernel = KernelSource(
        name, (spec.header,),
        _io_params(in_ct, out_ct) + [(f"const {index}", "n_items")] + options.params,
        "n_items",
        f"dax::{spec.function}<{c}, {index}, {in_ct}, {out_ct}{_targs(options)}>"
        f"(item, in, out{_call_args(options)});",
        index=index, per_thread=PER_THREAD["tuples"], preamble=options.preamble)
    return [Launch(kernel, n_in, lambda i, o: [i, o, idt(n_in)] + _option_values(options))]


def _coordinate_dtype(spec, dataset, out_dtype) -> np.dtype:
    coord = out_dtype if out_dtype.kind == "f" else np.dtype(np.float64)
    if spec.uses_coordinates and dataset.family in ("curvilinear", "unstructured"):
        coord = np.result_type(coord, dataset.points().dtype)
    return np.dtype(coord)


def _topologies(spec, dataset, index, coord):
    """(topology, work items, count expression) triples: one structured
    topology, per-shape blocks (cells), or point links (points)."""
    with_coords = spec.uses_coordinates
    if dataset.family != "unstructured":
        t = topo_mod.structured(dataset, index, coord, with_coords)
        if spec.domain == "cells":
            return [(t, dataset.n_cells, "topo.n_cells()")]
        return [(t, dataset.n_points, "topo.n_points()")]
    blocks = dataset.cell_blocks()
    if spec.domain == "cells":
        return [(topo_mod.cell_block(dataset, shape, index, coord, with_coords),
                 block.cell_ids.size, "topo.n_cells()") for shape, block in blocks.items()]
    if spec.point_links == "cells":
        return [(topo_mod.links(dataset, index), dataset.n_points, "topo.n_points()")]
    shapes = [s for s, b in blocks.items() if b.shape.dimension > 0]
    return [(topo_mod.shape_links(dataset, shape, index, coord, first=i == 0,
                                  last=i == len(shapes) - 1), dataset.n_points, "topo.n_points()")
            for i, shape in enumerate(shapes)]


def _topological(worklet, spec, dataset, in_dtype, out_dtype, components, options,
                 index, wide, aligned, n_in):
    c = max(components, 1)
    out_c = math.prod(spec.output(in_dtype, (c,) if components > 1 else (), {})[1]) or 1
    coord = _coordinate_dtype(spec, dataset, out_dtype)
    coord_tag = f"x{dtype_tag(coord)}" if coord != out_dtype else None
    io = plain_io(in_dtype, c, out_dtype, out_c, aligned)
    return [topological_launch(spec, dataset, topo, n_items, count, io,
                               (worklet.name, topo.name, dtype_tag(in_dtype), f"c{c}", coord_tag,
                                *options.tags), index, wide, aligned, options)
            for topo, n_items, count in _topologies(spec, dataset, index, coord)]


@dataclass
class IO:
    """How a kernel reads its input and writes its output: the arrays, and
    the C++ types of ``src`` and ``dst`` (:file:`_fields.cuh`), plain or
    wrapped in map stages (fusion).

    Attributes
    ----------
    in_dtype, out_dtype : numpy.dtype
        The ``in`` and ``out`` arrays (of the first and last stage).
    in_c, out_c : int
        Their components.
    source, sink : str
        C++ types of ``src`` and ``dst``.
    source_init, sink_init : tuple of str
        Initializers of the map stages around ``in`` / ``out``, in chain order.
    options : tuple of KernelOptions
        Extra kernel arguments, preambles and headers of the map stages.
    """

    in_dtype: np.dtype
    in_c: int
    out_dtype: np.dtype
    out_c: int
    source: str
    sink: str
    source_init: tuple = ()
    sink_init: tuple = ()
    options: tuple = ()

    def setup(self) -> list[str]:
        """Statements building ``src`` and ``dst``.

        Examples
        --------
        >>> f32 = np.dtype("float32")
        >>> plain_io(f32, 1, f32, 3, True).setup()[0]
        'const dax::ArraySource<float, 1, true> src{in};'
        """
        return [f"const {self.source} src{_nest('in', self.source_init, outer=True)};",
                f"const {self.sink} dst{_nest('out', self.sink_init, outer=False)};"]


def plain_io(in_dtype, in_c: int, out_dtype, out_c: int, aligned: bool) -> IO:
    """Array in, array out.

    Examples
    --------
    >>> plain_io(np.dtype("float64"), 3, np.dtype("float64"), 9, False).sink
    'dax::ArraySink<double, 9>'
    """
    return IO(np.dtype(in_dtype), in_c, np.dtype(out_dtype), out_c,
              f"dax::ArraySource<{ctype(in_dtype)}, {in_c}, {str(aligned).lower()}>",
              f"dax::ArraySink<{ctype(out_dtype)}, {out_c}>")


def _nest(array: str, inits: tuple, outer: bool) -> str:
    """Aggregate initializer of nested map stages around ``array``.

    A source nests its first stage innermost, ``{{{in}, m0}, m1}``; a sink
    outermost, ``{m0, {m1, {out}}}``.

    Examples
    --------
    >>> _nest("in", ("{a}", "{b}"), outer=True), _nest("out", ("{a}", "{b}"), outer=False)
    ('{{{in}, {a}}, {b}}', '{{a}, {{b}, {out}}}')
    """
    text = f"{{{array}}}"
    for init in (inits if outer else reversed(inits)):
        text = f"{{{text}, {init}}}" if outer else f"{{{init}, {text}}}"
    return text


MARCH_PLANES = {"point_gradient_march": 4, "point_to_cell_march": 4, "cell_to_point_march": 8}
"""Planes per marching chunk, by marching function: the fastest of 4, 8, 16
and 32 on the H200 (benchmarks/NOTES.md). Fewer, longer chunks re-read fewer
halo planes but give the scheduler fewer independent blocks."""
MARCH_ROWS = 8
"""Rows (warps) per marching block (``dax::kMarchRows``)."""
STAGE_BYTES = 32 * 1024
"""Most shared memory a marching block may stage its outputs in."""


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _march_extent(spec, dataset) -> tuple[int, int, int]:
    """(x items, rows, planes) a marching kernel walks: cells or points."""
    nx, ny, nz = dataset.dims
    return (nx - 1, ny - 1, nz - 1) if spec.domain == "cells" else (nx, ny, nz)


def march_geometry(spec, dataset, io: IO, aligned: bool) -> tuple[int, int] | None:
    """(V, W) of a marching kernel, or None where the per-item kernel runs.

    V: items per thread along x (V divides nx; a load moves V tuples of the
    input, at most 16 bytes, 4 values; one on curvilinear gradients, whose
    coordinates fill the registers). W: values per staged store (16 bytes
    where every output row starts 16-byte aligned). Only 3-D structured grids
    march.

    Examples
    --------
    >>> import daxpy
    >>> from daxpy.worklet import get_worklet
    >>> f32 = np.dtype("float32")
    >>> march_geometry(get_worklet("point_gradient").cuda, daxpy.UniformGrid(dims=(8, 3, 3)),
    ...                plain_io(f32, 1, f32, 3, True), True)
    (4, 4)
    """
    if spec.march is None or dataset.family == "unstructured" or len(dataset.cell_axes) != 3:
        return None
    nx = dataset.dims[0]
    v = 1
    if aligned and not (spec.uses_coordinates and dataset.family == "curvilinear"):
        v = next((w for w in (4, 2) if w * io.in_c <= 4 and nx % w == 0
                  and w * io.in_c * io.in_dtype.itemsize <= 16), 1)
    row, rows, planes = _march_extent(spec, dataset)
    size = io.out_dtype.itemsize
    w = 16 // size if aligned and (row * io.out_c * size) % 16 == 0 else 1
    stage = MARCH_ROWS * 32 * v * io.out_c * size
    if (stage > STAGE_BYTES or _ceil(rows, MARCH_ROWS) > 65535
            or _ceil(planes, MARCH_PLANES[spec.march]) > 65535):
        return None
    return v, w


def topological_launch(spec, dataset, topo, n_items: int, count: str, io: IO, parts: tuple,
                       index: str, wide, aligned: bool, options) -> Launch:
    """The launch of one topology's kernel: marching on 3-D structured grids
    (:func:`march_geometry`), one work item per cell or point otherwise."""
    extra = [options, *io.options]
    params = (_io_params(ctype(io.in_dtype), ctype(io.out_dtype)) + topo.params
              + [p for o in extra for p in o.params])
    preamble = [line for o in extra for line in o.preamble]
    headers = tuple(dict.fromkeys([spec.header, *(h for o in io.options for h in o.headers)]))
    setup = topo.declaration() + io.setup()
    geometry = march_geometry(spec, dataset, io, aligned)

    def values(i, o, t=topo):
        return [i, o] + t.values() + [v for opt in extra for v in _option_values(opt)]

    if geometry is None:
        kernel = KernelSource(
            kernel_name(*parts, wide), headers, params, count,
            f"dax::{spec.function}(topo, item, src, dst);", setup=setup, index=index,
            per_thread=PER_THREAD[spec.domain], preamble=preamble)
        return Launch(kernel, n_items, values)
    v, w = geometry
    zc = MARCH_PLANES[spec.march]
    nx = dataset.dims[0]
    _, rows, planes = _march_extent(spec, dataset)
    kernel = KernelSource(
        kernel_name(*parts, f"march{v}", f"w{w}" if w > 1 else None, wide), headers,
        params + [("const int", "zc")], "", f"dax::{spec.march}<{v}, {w}>(topo, src, dst, zc);",
        setup=setup, index=index, preamble=preamble, whole=True)
    grid = (_ceil(_ceil(nx, v), 32), _ceil(rows, MARCH_ROWS), _ceil(planes, zc))
    return Launch(kernel, n_items, lambda i, o: values(i, o) + [np.int32(zc)], grid,
                  (32, MARCH_ROWS, 1))
