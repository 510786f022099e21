"""Launchers of the generic, switch-based kernels (``generic.cu``) for any daxpy grid.

Examples
--------
>>> int(_dtype_code(np.zeros(1, np.float64)))
1
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from ._launch import HERE, Launch, _blocks, _cupy, _poisoned

_GRID_TYPES = {"uniform": 0, "rectilinear": 1, "curvilinear": 2, "unstructured": 3}
_DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1,
           np.dtype(np.int32): 2, np.dtype(np.int64): 3}


def _dtype_code(array) -> np.int64:
    return np.int64(_DTYPES[np.dtype(array.dtype)])


class Generic:
    """The switch-based kernels of ``generic.cu``, for any daxpy grid.

    The grid descriptor (and, for unstructured grids, device copies of the
    topology and the point-to-cell links) is built once per grid and cached.
    """

    def __init__(self):
        cp = _cupy()
        self.module = cp.RawModule(code=(HERE / "generic.cu").read_text(),
                                   options=(f"--include-path={HERE}",))
        sm_count = cp.cuda.Device().attributes["MultiProcessorCount"]
        self.max_blocks = 32 * sm_count
        self._descs: dict[int, tuple[Any, list]] = {}

    def _launch(self, name: str, n: int, args: tuple, keep=()) -> Launch:
        blocks = min(_blocks(n, 256), self.max_blocks)
        return Launch(self.module.get_function(name), (blocks,), (256,), args, keep=list(keep))

    def descriptor(self, grid):
        """Device copy of the ``GridDesc`` of a daxpy grid (cached per grid object)."""
        key = id(grid)
        if key not in self._descs:
            self._descs[key] = (grid, *_pack_descriptor(grid))
        return self._descs[key][1]

    def pass_through(self, x, dtype):
        out = _poisoned(x.shape, dtype)
        return self._launch("pass_through_generic", x.size,
                            (x, _dtype_code(x), out, _dtype_code(out), np.int64(x.size))), out

    def bias_add(self, x, bias):
        out = _poisoned(x.shape, x.dtype)
        return self._launch("bias_add_generic", x.size,
                            (x, _dtype_code(x), bias, _dtype_code(bias), np.int64(bias.size),
                             out, np.int64(x.size))), out

    def magnitude(self, vec):
        n = vec.shape[0]
        ncomp = 1 if vec.ndim == 1 else vec.shape[1]
        out = _poisoned((n,), vec.dtype)
        return self._launch("magnitude_generic", n,
                            (vec, _dtype_code(vec), np.int64(ncomp), out, np.int64(n))), out

    def _field_kernel(self, name: str, grid, values, n_out: int, out_shape):
        desc = self.descriptor(grid)
        ncomp = 1 if values.ndim == 1 else values.shape[1]
        out = _poisoned(out_shape, values.dtype)
        return self._launch(name, n_out, (desc, values, _dtype_code(values), np.int64(ncomp),
                                          out)), out

    def point_to_cell(self, grid, values):
        shape = (grid.n_cells,) + tuple(values.shape[1:])
        return self._field_kernel("point_to_cell_generic", grid, values, grid.n_cells, shape)

    def cell_to_point(self, grid, values):
        shape = (grid.n_points,) + tuple(values.shape[1:])
        return self._field_kernel("cell_to_point_generic", grid, values, grid.n_points, shape)

    def point_gradient(self, grid, values):
        """Structured grids only (the generic gradient is the structured stencil)."""
        if grid.family == "unstructured":
            raise ValueError("the generic point gradient covers structured grids only")
        desc = self.descriptor(grid)
        out = _poisoned((grid.n_points, 3), values.dtype)
        return self._launch("point_gradient_generic", grid.n_points,
                            (desc, values, _dtype_code(values), out)), out


def _pack_descriptor(grid):
    """Pack a daxpy grid into generic.cu's ``GridDesc`` (all 8-byte members)."""
    cp = _cupy()
    keep: list = []

    def ptr(array) -> int:
        if array is None:
            return 0
        keep.append(array)
        return array.data.ptr

    dims = getattr(grid, "dims", (grid.n_points, 1, 1))
    origin = getattr(grid, "origin", (0.0, 0.0, 0.0))
    spacing = getattr(grid, "spacing", (1.0, 1.0, 1.0))
    coords = [None, None, None]
    pts = conn = offsets = types = link_offsets = link_cells = None
    pts_dtype = 0
    if grid.family == "rectilinear":
        coords = [cp.asarray(grid.axis_coordinates(a), dtype=cp.float64) for a in range(3)]
    if grid.family in ("curvilinear", "unstructured"):
        pts = cp.asarray(grid.points())
        pts_dtype = int(_dtype_code(pts))
    if grid.family == "unstructured":
        conn = cp.asarray(grid.connectivity, dtype=cp.int64)
        offsets = cp.asarray(grid.offsets, dtype=cp.int64)
        types = cp.asarray(grid.cell_types, dtype=cp.uint8)
        link_offsets, link_cells = _point_cell_links(conn, offsets, grid.n_points)
    packed = struct.pack(
        "<6q6d9Q", _GRID_TYPES[grid.family], *dims, grid.n_cells, pts_dtype,
        *origin, *spacing, *(ptr(c) for c in coords), ptr(pts), ptr(conn), ptr(offsets),
        ptr(types), ptr(link_offsets), ptr(link_cells))
    desc = cp.asarray(np.frombuffer(packed, dtype=np.uint8))
    return desc, keep


def _point_cell_links(conn, offsets, n_points):
    """Point -> cell links as CSR ``(offsets, cell ids)``, built on the device."""
    cp = _cupy()
    entries = cp.arange(conn.size, dtype=cp.int64)
    cell_of_entry = cp.searchsorted(offsets, entries, side="right") - 1
    link_cells = cell_of_entry[cp.argsort(conn)]
    counts = cp.bincount(conn, minlength=n_points)
    link_offsets = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(counts)])
    return link_offsets.astype(cp.int64), link_cells
