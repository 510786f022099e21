"""Benchmark grids of a given size: uniform, rectilinear, curvilinear, unstructured hexahedra,
and a mix of hexahedra, tetrahedra and wedges.

Every builder is vectorized and deterministic (fixed seeds), so the CPU and GPU
benchmarks and reruns see the same geometry. Fields are random, never zeros.

Examples
--------
>>> g = hex_grid(cube_dims(1000))
>>> (g.topology_name, g.n_points, g.n_cells)
('unstructured_hex', 1000, 729)
"""

from __future__ import annotations

import numpy as np

import daxpy
from daxpy.data.celltypes import HEX_TO_TETS, HEX_TO_WEDGES, HEXAHEDRON, TETRA, WEDGE

from .common import rng

# Corner offsets (di, dj, dk) of a hexahedron in VTK's corner order.
HEX_CORNERS = np.array([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0),
                        (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)])

SPACING = (0.5, 0.75, 1.25)
"""Unequal spacing, so that a mixed-up axis shows in the results."""


def cube_dims(n_points: int) -> tuple[int, int, int]:
    """Point dims of the cube closest to ``n_points`` points.

    Examples
    --------
    >>> cube_dims(10_000_000)
    (215, 215, 215)
    """
    side = max(round(n_points ** (1 / 3)), 2)
    return (side, side, side)


def uniform_grid(dims) -> daxpy.UniformGrid:
    """A uniform grid with unequal spacing and a non-zero origin.

    Examples
    --------
    >>> uniform_grid((3, 4, 5)).spacing
    (0.5, 0.75, 1.25)
    """
    return daxpy.UniformGrid(dims, origin=(-1.0, 0.5, 2.0), spacing=SPACING)


def rectilinear_grid(dims, seed: int = 1) -> daxpy.RectilinearGrid:
    """A rectilinear grid whose steps vary randomly between 0.5 and 1.5 of ``SPACING``.

    Examples
    --------
    >>> rectilinear_grid((3, 4, 5)).dims
    (3, 4, 5)
    """
    gen = rng(seed)
    axes = [np.concatenate([[0.0], np.cumsum(h * gen.uniform(0.5, 1.5, d - 1))])
            for h, d in zip(SPACING, dims)]
    return daxpy.RectilinearGrid(*axes)


def lattice_points(dims, dtype=np.float32) -> np.ndarray:
    """Points ``(n, 3)`` of the uniform lattice of :func:`uniform_grid`, i fastest."""
    return uniform_grid(dims).points().astype(dtype)


def curvilinear_grid(dims, dtype=np.float32) -> daxpy.CurvilinearGrid:
    """A curvilinear grid: the lattice bent by smooth sine waves (cells stay convex).

    Examples
    --------
    >>> curvilinear_grid((3, 4, 5)).topology_name
    'curvilinear3d'
    """
    pts = lattice_points(dims, np.float64)
    extent = pts.max(axis=0) - pts.min(axis=0) + 1.0
    wave = [np.sin(2 * np.pi * pts[:, (a + 1) % 3] / extent[(a + 1) % 3]) for a in range(3)]
    for a in range(3):
        pts[:, a] += 0.2 * SPACING[a] * wave[a]
    return daxpy.CurvilinearGrid(dims, pts.astype(dtype))


def hex_connectivity(dims) -> np.ndarray:
    """Corner point ids ``(n_cells, 8)`` (int64) of the hexahedra of a structured lattice.

    Examples
    --------
    >>> hex_connectivity((2, 2, 2)).tolist()
    [[0, 1, 3, 2, 4, 5, 7, 6]]
    """
    nx, ny, nz = dims
    k, j, i = np.meshgrid(np.arange(nz - 1), np.arange(ny - 1), np.arange(nx - 1),
                          indexing="ij")
    base = (i + nx * (j + ny * k)).ravel().astype(np.int64)
    offsets = HEX_CORNERS[:, 0] + nx * (HEX_CORNERS[:, 1] + ny * HEX_CORNERS[:, 2])
    return base[:, None] + offsets[None, :]


def hex_grid(dims, jitter: float = 0.15, seed: int = 2) -> daxpy.UnstructuredGrid:
    """Unstructured hexahedra over a lattice whose points move by up to ``jitter`` spacings.

    The jitter makes the cells general hexahedra (not voxels), so the gradient
    goes through each cell's Jacobian, as on a real unstructured mesh.

    Examples
    --------
    >>> hex_grid((2, 2, 3)).n_cells
    2
    """
    pts = lattice_points(dims, np.float64)
    pts += jitter * np.asarray(SPACING) * rng(seed).uniform(-1, 1, pts.shape)
    corners = hex_connectivity(dims)
    n_cells = corners.shape[0]
    return daxpy.UnstructuredGrid(
        pts.astype(np.float32), corners.ravel(),
        np.arange(0, 8 * n_cells + 1, 8, dtype=np.int64),
        np.full(n_cells, HEXAHEDRON, dtype=np.uint8))


def mixed_grid(dims, jitter: float = 0.15, seed: int = 2) -> daxpy.UnstructuredGrid:
    """The points of :func:`hex_grid` under a third of its hexahedra each kept, cut
    into five tetrahedra, or cut into two wedges (by cell id modulo 3), so that the
    cells of each shape are spread over the whole grid.

    Examples
    --------
    >>> sorted((k, len(b.cell_ids)) for k, b in mixed_grid((3, 3, 2)).cell_blocks().items())
    [('hex', 2), ('tet', 5), ('wedge', 2)]
    """
    pts = lattice_points(dims, np.float64)
    pts += jitter * np.asarray(SPACING) * rng(seed).uniform(-1, 1, pts.shape)
    corners = hex_connectivity(dims)
    which = np.arange(corners.shape[0]) % 3
    blocks = {HEXAHEDRON: corners[which == 0],
              TETRA: np.concatenate([corners[which == 1][:, list(p)] for p in HEX_TO_TETS]),
              WEDGE: np.concatenate([corners[which == 2][:, list(p)] for p in HEX_TO_WEDGES])}
    return daxpy.UnstructuredGrid.from_blocks(pts.astype(np.float32), blocks)


def random_field(n: int, components: int = 1, seed: int = 3,
                 dtype=np.float32) -> np.ndarray:
    """Uniform random values in [0.5, 1.5) of shape ``(n,)`` or ``(n, components)``.

    Examples
    --------
    >>> random_field(4, 3).shape
    (4, 3)
    """
    shape = (n,) if components == 1 else (n, components)
    return (rng(seed).random(shape, dtype=np.float32) + 0.5).astype(dtype, copy=False)
