"""Turn (worklet, grid, dtype, components, static parameters) into the list of
specialized kernels to launch: one for a structured grid or an elementwise
map, one per cell shape for unstructured cells, one over point links for
unstructured points. Nothing here needs a GPU, so sources can be printed and
compiled anywhere.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.worklet import get_worklet
>>> g = daxpy.UniformGrid(dims=(4, 4, 4))
>>> p = make_plan(get_worklet("pass_through"), g, "points", np.dtype("float32"), (),
...               {"dtype": "float64"})
>>> [launch.kernel.name for launch in p.launches]
['pass_through__f32__f64__v2']
"""

from __future__ import annotations

import math

import numpy as np

from . import topology as topo_mod
from .codegen import (PER_THREAD, KernelSource, Launch, Plan, ctype, dtype_tag, index_ctype,
                      io_params, kernel_name)
from .march import topological_launch
from .spec import spec_of
from .stages import Step, map_chain_launch, map_stage, option_values, plain_io

__all__ = ["Launch", "Plan", "PER_THREAD", "make_plan", "spec_of", "vector_width"]




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


def _call_args(options) -> str:
    names = options.call if options.call is not None else [n for _, n in options.params]
    return "".join(f", {name}" for name in names)


def _targs(options) -> str:
    return "".join(f", {a}" for a in options.template_args)


def make_plan(worklet, dataset, association: str, in_dtype: np.dtype, tail: tuple,
              params: dict, aligned: bool = True, index: str | None = None) -> Plan:
    """Plan the kernels for one call.

    Parameters
    ----------
    worklet : Worklet
        The worklet's declaration; it has a ``cuda`` spec.
    dataset : DataSet
        The grid the kernels run over.
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
                     index, wide, aligned, n_in, params)
    # Point sums over shapes with nothing to add (only vertices) stay zero.
    zero_fill = spec.domain == "points" and dataset.family == "unstructured" and not launches
    return Plan(out_dtype, (n_out,) + tuple(out_tail), launches, zero_fill)


def _flat(worklet, spec, dataset, in_dtype, out_dtype, components, options, index,
          wide, aligned, n_in, params):
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
        io_params(in_ct, out_ct) + [(f"const {index}", "n_vec"), (f"const {index}", "n_items")]
        + options.params,
        "n_items", body, index=index, per_thread=PER_THREAD["flat"],
        preamble=options.preamble)
    return [Launch(kernel, n_vec + n_tail,
                   lambda i, o: [i, o, idt(n_vec), idt(n_vec + n_tail)] + option_values(options))]


def _tuples(worklet, spec, dataset, in_dtype, out_dtype, components, options, index,
            wide, aligned, n_in, params):
    # A lone map is a chain of one map stage (``dax::map_chain``).
    c = max(components, 1)
    stage = map_stage(Step(worklet.name, params), in_dtype, (c,) if components > 1 else (), n_in)
    return [map_chain_launch([stage], in_dtype, c, n_in, aligned, index,
                             (worklet.name, dtype_tag(in_dtype), f"c{c}", *options.tags))]


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
                 index, wide, aligned, n_in, params):
    c = max(components, 1)
    out_c = math.prod(spec.output(in_dtype, (c,) if components > 1 else (), {})[1]) or 1
    coord = _coordinate_dtype(spec, dataset, out_dtype)
    coord_tag = f"x{dtype_tag(coord)}" if coord != out_dtype else None
    io = plain_io(in_dtype, c, out_dtype, out_c, aligned)
    return [topological_launch(spec, dataset, topo, n_items, count, io,
                               (worklet.name, topo.name, dtype_tag(in_dtype), f"c{c}", coord_tag,
                                *options.tags), index, wide, aligned, options)
            for topo, n_items, count in _topologies(spec, dataset, index, coord)]


