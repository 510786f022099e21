"""Marching kernels for 3-D structured grids (:file:`_march.cuh`): when they
run, their geometry, and the launch of any topological worklet's kernel.

Examples
--------
>>> MARCH_ROWS
8
"""

from __future__ import annotations

import numpy as np

from .codegen import PER_THREAD, KernelSource, Launch, ctype, io_params, kernel_name
from .hex_gradient import hexahedra_launch
from .stages import IO, option_values


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

    V: items per thread along x (V divides nx; at most 4 values, 16 bytes, of
    what the worklet sees, and 12 values of the array read, so magnitude on
    load reads four 3-component points as three 16-byte words; one on
    curvilinear gradients, whose coordinates fill the registers). W: values per staged store (16 bytes
    where every output row starts 16-byte aligned). Only 3-D structured grids
    march.

    Examples
    --------
    >>> import daxpy
    >>> from daxpy.data.worklet import get_worklet
    >>> from daxpy.cuda.stages import plain_io
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
        core_c = io.core_c or io.in_c
        v = next((w for w in (4, 2) if w * core_c <= 4 and w * io.in_c <= 12 and nx % w == 0
                  and w * min(io.in_c, core_c) * io.in_dtype.itemsize <= 16), 1)
    row, rows, planes = _march_extent(spec, dataset)
    size = io.out_dtype.itemsize
    w = 16 // size if aligned and (row * io.out_c * size) % 16 == 0 else 1
    stage = MARCH_ROWS * 32 * v * io.out_c * size
    if (stage > STAGE_BYTES or _ceil(rows, MARCH_ROWS) > 65535
            or _ceil(planes, spec.march_planes) > 65535):
        return None
    return v, w


def topological_launch(spec, dataset, topo, n_items: int, count: str, io: IO, parts: tuple,
                       index: str, wide, aligned: bool, options) -> Launch:
    """The launch of one topology's kernel: marching on 3-D structured grids
    (:func:`march_geometry`), three kernels over hexahedra where the worklet has
    them (:mod:`.hex_gradient`), one work item per cell or point otherwise."""
    extra = [options, *io.options]
    params = (io_params(ctype(io.in_dtype), ctype(io.out_dtype)) + topo.params
              + [p for o in extra for p in o.params])
    preamble = [line for o in extra for line in o.preamble]
    headers = tuple(dict.fromkeys([spec.header, *(h for o in io.options for h in o.headers)]))
    setup = topo.declaration() + io.setup()
    geometry = march_geometry(spec, dataset, io, aligned)

    def values(i, o, t=topo):
        return [i, o] + t.values() + [v for opt in extra for v in option_values(opt)]

    if spec.hexahedra and topo.first_hexahedra:
        return hexahedra_launch(spec.hexahedra, n_items, count, headers, params, setup, index,
                                preamble, (*parts, wide), values)
    if geometry is None:
        kernel = KernelSource(
            kernel_name(*parts, wide), headers, params, count,
            f"dax::{spec.function}(topo, item, src, dst);", setup=setup, index=index,
            per_thread=PER_THREAD[spec.domain], preamble=preamble)
        return Launch(kernel, n_items, values)
    v, w = geometry
    zc = spec.march_planes
    nx = dataset.dims[0]
    _, rows, planes = _march_extent(spec, dataset)
    kernel = KernelSource(
        kernel_name(*parts, f"march{v}", f"w{w}" if w > 1 else None, wide), headers,
        params + [("const int", "zc")], "", f"dax::{spec.march}<{v}, {w}>(topo, src, dst, zc);",
        setup=setup, index=index, preamble=preamble, whole=True)
    grid = (_ceil(_ceil(nx, v), 32), _ceil(rows, MARCH_ROWS), _ceil(planes, zc))
    return Launch(kernel, n_items, lambda i, o: values(i, o) + [np.int32(zc)], grid,
                  (32, MARCH_ROWS, 1))
