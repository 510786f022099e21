"""Describe a grid to a generated kernel: its C++ topology type, the scalar and
pointer arguments that build it, and (lazily) their values on the device.

Structured grids keep only their active axes (axes with more than one point),
so a 2-D slab of a 3-D grid is a 2-D topology. Unstructured grids are seen one
cell shape at a time (``CellBlock``), or through point -> cell links built
once on the device and cached on the dataset (on the host, and only uploaded,
for grids marked by :mod:`daxpy.cuda.host_links`: out-of-core chunks).

Everything uploaded or built here is cached in the dataset's ``_cache``,
which the dataset empties (and validates its arrays again) whenever their
fingerprint changes (:mod:`daxpy.data.fingerprint`). Kernels read through point
ids without bounds checks, and a write into an unsampled part of a large
array escapes the fingerprint, so ids are also checked in range with each
upload, before any kernel reads them
(:func:`daxpy.cuda.unstructured_arrays.checked_ids`): no kernel reads past the
points.

Examples
--------
>>> import daxpy
>>> t = structured(daxpy.UniformGrid(dims=(4, 1, 3)), "int", "float32")
>>> (t.name, t.ctype)
('uniform2d', 'dax::UniformGrid<2, int, float>')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .codegen import ctype
from .device import cached, to_device
from .unstructured_arrays import (all_points_finite, cells_per_point, coordinates, corner_ids,
                                  corner_links, index_dtype, padded_coordinates,
                                  point_cell_links)


@dataclass
class Topology:
    """What a kernel needs to know about the cells or points it runs over.

    Attributes
    ----------
    name : str
        Part of the kernel name (``uniform3d``, ``unstructured_hex``, ``links``).
    ctype : str
        C++ type of the ``topo`` object the worklet receives.
    params : list of (str, str)
        Kernel arguments that build it.
    setup : list of str
        Statements that build ``topo`` from those arguments.
    values : callable
        Returns the launch values of ``params`` (uploads what is missing).
    first_hexahedra : bool
        Point -> corner links of hexahedra that start the point sums (the grid's
        first shape): the three-kernel gradient may run (:mod:`.hex_gradient`).
    """

    name: str
    ctype: str
    params: list
    setup: list
    values: Callable[[], list] = field(repr=False)
    first_hexahedra: bool = False

    def declaration(self) -> list:
        """Setup statements, with the declaration of ``topo`` first.

        Examples
        --------
        >>> import daxpy
        >>> structured(daxpy.UniformGrid(dims=(2,)), "int", "float64").declaration()[0]
        'dax::UniformGrid<1, int, double> topo;'
        """
        return [f"{self.ctype} topo;"] + self.setup


def _vector_params(prefix: str, d: int, cty: str, member: str):
    names = [f"{prefix}{d}{c}" for c in "xyz"]
    return ([(f"const {cty}", n) for n in names],
            f"topo.{member}[{d}] = dax::V3<{cty}>{{{', '.join(names)}}};")


def structured(grid, index: str, coord, with_coords: bool = True) -> Topology:
    """Topology of a uniform, rectilinear or curvilinear grid.

    Parameters
    ----------
    grid : StructuredGrid
        The grid.
    index : {"int", "long long"}
        Index type of the kernel.
    coord : dtype-like
        Floating type in which coordinates and metrics are computed.

    Examples
    --------
    >>> import daxpy
    >>> structured(daxpy.UniformGrid(dims=(2, 2, 2)), "int", "float32").params[:3]
    [('const int', 'n0'), ('const int', 'n1'), ('const int', 'n2')]
    """
    axes = grid.cell_axes
    dim, cty = len(axes), ctype(coord)
    family = grid.family
    kind = {"uniform": "UniformGrid", "rectilinear": "RectilinearGrid",
            "curvilinear": "CurvilinearGrid"}[family]
    params = [(f"const {index}", f"n{d}") for d in range(dim)]
    setup = [f"topo.n[{d}] = n{d};" for d in range(dim)]
    scalars: list[Any] = [grid.dims[a] for a in axes]
    arrays: list[Callable[[], Any]] = []
    if family in ("uniform", "rectilinear"):
        member = "w" if family == "uniform" else "e"
        for d, axis in enumerate(axes):
            p, line = _vector_params(member, d, cty, member)
            params += p
            setup.append(line)
            unit = np.eye(3)[axis]
            scalars += list(unit / grid.spacing[axis] if family == "uniform" else unit)
    if family == "rectilinear":
        for d, axis in enumerate(axes):
            params.append((f"const {cty}* __restrict__", f"x{d}"))
            setup.append(f"topo.x[{d}] = x{d};")
            arrays.append(lambda a=axis: to_device(grid.coordinates[a], grid, coord))
        for d, axis in enumerate(axes):
            params.append((f"const {cty}* __restrict__", f"inv{d}"))
            setup.append(f"topo.inv[{d}] = inv{d};")
            arrays.append(lambda a=axis: stencil_inverse(grid, a, coord))
    if family == "curvilinear":
        for d, axis in enumerate(a for a in range(3) if a not in axes):
            p, line = _vector_params("u", d, cty, "u")
            params += p
            setup.append(line)
            scalars += list(np.eye(3)[axis])
        params.append((f"const {cty}* __restrict__", "xyz"))
        setup.append("topo.xyz = xyz;")
        arrays.append(lambda: _points_or_null(grid, coord, with_coords))
    scalar_types = [np.int32 if index == "int" else np.int64] * dim
    scalar_types += [np.dtype(coord).type] * (len(scalars) - dim)

    def values():
        # Scalars come first in params, then pointers (same order as here).
        typed = [t(v) for t, v in zip(scalar_types, scalars)]
        return typed + [make() for make in arrays]

    return Topology(f"{family}{dim}d", f"dax::{kind}<{dim}, {index}, {cty}>",
                    params, setup, values)


def stencil_inverse(grid, axis: int, coord):
    """``1 / (x[hi] - x[lo])`` of the point gradient's stencil at each index of
    a rectilinear axis (central inside, one-sided at the ends), in the
    coordinate type, on the device, cached: the divisions a kernel would do.

    Examples
    --------
    >>> callable(stencil_inverse)
    True
    """
    def build():
        import cupy

        # Differences in float64, as the grid checked them: coordinates
        # distinct in float64 may collapse in float32 (1 / 0).
        x = to_device(grid.coordinates[axis], grid, np.float64)
        i = cupy.arange(x.size)
        inverse = 1 / (x[cupy.minimum(i + 1, x.size - 1)] - x[cupy.maximum(i - 1, 0)])
        return inverse.astype(coord)

    return cached(grid, f"stencil_inverse:{axis}:{np.dtype(coord).str}", build)


def _points_or_null(grid, coord, with_coords: bool):
    # Kernels that never read coordinates get a null pointer, not an upload.
    return coordinates(grid, coord) if with_coords else np.uint64(0)


def cell_block(grid, shape_name: str, index: str, coord, with_coords: bool = True) -> Topology:
    """Topology of the cells of one shape of an unstructured grid.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import TETRA
    >>> g = daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [TETRA])
    >>> t = cell_block(g, "tet", "int", "float32")
    >>> t.name, t.ctype
    ('unstructured_tet_only', 'dax::CellBlock<dax::Tet, int, float, true>')
    """
    cty = ctype(coord)
    idt = index_dtype(index)
    shape_type = shape_name.capitalize()
    # A grid of one shape lists its cells in order: no cell ids to load.
    sole = len(grid.cell_blocks()) == 1

    def values():
        block = grid.cell_blocks()[shape_name]
        corners = corner_ids(grid, shape_name, index)
        ids = np.uint64(0) if sole else cached(
            grid, f"cell_ids:{shape_name}:{index}",
            lambda: to_device(block.cell_ids.astype(idt, copy=False)))
        return [corners, ids, _points_or_null(grid, coord, with_coords),
                idt(block.cell_ids.size)]

    params = [(f"const {index}* __restrict__", "corners"),
              (f"const {index}* __restrict__", "cell_ids"),
              (f"const {cty}* __restrict__", "xyz"), (f"const {index}", "n")]
    setup = ["topo.corners = corners;", "topo.cell_ids = cell_ids;", "topo.xyz = xyz;",
             "topo.n = n;"]
    return Topology(f"unstructured_{shape_name}" + ("_only" if sole else ""),
                    f"dax::CellBlock<dax::{shape_type}, {index}, {cty}, {str(sole).lower()}>",
                    params, setup, values)


def links(grid, index: str) -> Topology:
    """Topology of an unstructured grid seen from its points (cell-to-point).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import TETRA
    >>> g = daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [TETRA])
    >>> links(g, "int").ctype
    'dax::PointCellLinks<int>'
    """
    idt = index_dtype(index)

    def values():
        offsets, cells = point_cell_links(grid, index)
        return [offsets, cells, idt(grid.n_points)]

    params = [(f"const {index}* __restrict__", "offsets"),
              (f"const {index}* __restrict__", "cells"), (f"const {index}", "n")]
    setup = ["topo.offsets = offsets;", "topo.cells = cells;", "topo.n = n;"]
    return Topology("unstructured", f"dax::PointCellLinks<{index}>", params, setup, values)


def shape_links(grid, shape_name: str, index: str, coord, first: bool, last: bool) -> Topology:
    """Topology of one shape's cells seen from the points (point gradient).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import TETRA
    >>> g = daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [TETRA])
    >>> shape_links(g, "tet", "int", "float32", True, True).ctype
    'dax::ShapeLinks<dax::Tet, int, float, true, true>'
    """
    idt = index_dtype(index)
    cty = ctype(coord)

    def values():
        offsets, slots = corner_links(grid, shape_name, index)
        xyz4 = padded_coordinates(grid, coord)
        return [corner_ids(grid, shape_name, index), xyz4, offsets, slots,
                cells_per_point(grid, index), idt(grid.n_points),
                np.int32(all_points_finite(grid, xyz4))]

    names = ("corners", "xyz4", "offsets", "slots", "counts")
    types = (index, cty, index, index, index)
    params = [(f"const {t}* __restrict__", n) for t, n in zip(types, names)]
    params += [(f"const {index}", "n"), ("const int", "finite_points")]
    setup = [f"topo.{n} = {n};" for n in names + ("n", "finite_points")]
    flags = "" if first and last else ("_first" if first else "_last" if last else "_more")
    return Topology(f"unstructured_{shape_name}{flags}",
                    f"dax::ShapeLinks<dax::{shape_name.capitalize()}, {index}, {cty}, "
                    f"{str(first).lower()}, {str(last).lower()}>", params, setup, values,
                    first_hexahedra=first and shape_name == "hex")
