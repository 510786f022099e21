"""Cases shared by the numerics tests on the CPU (against VTK) and on CUDA
(against the CPU): grids scaled to extreme coordinate magnitudes, special
values placed at random, float32 values near float32's maximum. No VTK here.
"""

import numpy as np
from hypothesis import strategies as st

import daxpy
from daxpy.data.celltypes import HEXAHEDRON

from strategies import _lattice_hexes, _lattice_points, seeds

AVERAGES = {"point_to_cell": "points", "cell_to_point": "cells"}
"""The averaging worklets and the association of their input."""
FLOAT32_MAX = float(np.finfo(np.float32).max)


def size_of(grid, association):
    """Tuples of a field of ``grid`` at ``association``."""
    return grid.n_points if association == "points" else grid.n_cells


def with_specials(values, data, special):
    """``values`` with 1 to 3 entries (whole tuples or single components) set to ``special``."""
    flat = values.reshape(values.shape[0], -1).copy()
    for _ in range(data.draw(st.integers(1, 3))):
        row = data.draw(st.integers(0, flat.shape[0] - 1))
        column = data.draw(st.sampled_from([slice(None)] + list(range(flat.shape[1]))))
        flat[row, column] = special * data.draw(st.sampled_from([1, -1]))
    return flat.reshape(values.shape)


def scaled(grid, factor: float, dtype=np.float64):
    """``grid`` with every coordinate multiplied by ``factor``, stored as ``dtype``."""
    family = grid.family
    if family == "uniform":
        return daxpy.UniformGrid(dims=grid.dims, origin=np.asarray(grid.origin) * factor,
                                 spacing=np.asarray(grid.spacing) * factor)
    if family == "rectilinear":
        return daxpy.RectilinearGrid(*((np.asarray(c, np.float64) * factor).astype(dtype)
                                       for c in grid.coordinates))
    points = (np.asarray(grid.points(), np.float64) * factor).astype(dtype)
    if family == "curvilinear":
        return daxpy.CurvilinearGrid(grid.dims, points)
    return daxpy.UnstructuredGrid(points, grid.connectivity, grid.offsets, grid.cell_types)


def hexahedra(dims=(4, 4, 4), scale=1.0, dtype=np.float64, seed=0):
    """A jittered lattice of hexahedra, coordinates multiplied by ``scale``."""
    points = _lattice_points(np.random.default_rng(seed), dims, 0.04) * scale
    return daxpy.UnstructuredGrid.from_blocks(points.astype(dtype),
                                              {HEXAHEDRON: _lattice_hexes(dims)})


def near_float32_max(data, n_values):
    """float32 values of magnitude 10^30 .. 3.4e38, both signs, or all of one sign."""
    exponent = data.draw(st.floats(30.0, np.log10(FLOAT32_MAX)))
    rng = np.random.default_rng(data.draw(seeds))
    low = data.draw(st.sampled_from([-1.0, 0.5]))
    values = rng.uniform(low, 1.0, n_values) * 10.0 ** exponent
    return np.clip(values, -FLOAT32_MAX, FLOAT32_MAX).astype(np.float32)
