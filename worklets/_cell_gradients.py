"""Gradients from cells: at their parametric centres, or averaged over their corners.

Cells arrive in chunks of one shape (``CellChunk``): unstructured grids give
their shape partitions, curvilinear grids their hexahedra/quads/lines built
from index arithmetic. Each chunk gathers its corner coordinates and values
once, laid out ``(component, corner, cell)``, so every step below is a whole-
array operation; chunks bound the temporaries (about 100 bytes per cell).

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.data.celltypes import TETRA
>>> g = daxpy.UnstructuredGrid(np.eye(4, 3), [0, 1, 2, 3], [0, 4], [TETRA])
>>> centre_gradients(g.points(), np.arange(4.0)[:, None], unstructured_chunks(g), 1)[0].tolist()
[-3.0, -2.0, -1.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import numpy as np

from ._jacobian import (cell_derivatives, compute_dtype, first_corners_normal, gradient_output,
                        nonfinite_cells, poison)
from ._shape_functions import PARAMETRIC_CENTERS, corner_derivatives, parametric_derivatives

CHUNK_CELLS = 1 << 14
"""Cells per chunk: large enough to amortize NumPy's call overhead, small
enough that a chunk's temporaries stay in the last-level cache."""

_DIMENSION = {"vertex": 0, "line": 1, "tri": 2, "quad": 2,
              "tet": 3, "hex": 3, "wedge": 3, "pyramid": 3}


@dataclass(frozen=True)
class CellChunk:
    """Consecutive cells of one shape.

    Attributes
    ----------
    shape : str
        Shape name (``hex``, ``quad``...).
    cell_ids : numpy.ndarray or slice
        Where the chunk's cells sit in the grid's cell order.
    corners : numpy.ndarray
        Corner point ids, shape ``(n, k)``.
    """

    shape: str
    cell_ids: object
    corners: np.ndarray


def unstructured_chunks(grid, size: int = CHUNK_CELLS) -> Iterator[CellChunk]:
    """Chunks of an unstructured grid's shape partitions.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[0, 1], [1, 2]]})
    >>> [c.shape for c in unstructured_chunks(g, size=1)]
    ['line', 'line']
    """
    for block in grid.cell_blocks().values():
        for start in range(0, len(block.cell_ids), size):
            stop = start + size
            yield CellChunk(block.shape.name, block.cell_ids[start:stop],
                            block.corners[start:stop])


@lru_cache(maxsize=None)
def _centre_table(shape: str) -> np.ndarray:
    if _DIMENSION[shape] == 0:
        return np.zeros((0, 1))
    return parametric_derivatives(shape, PARAMETRIC_CENTERS[shape])


@lru_cache(maxsize=None)
def _corner_tables(shape: str) -> tuple[np.ndarray, ...]:
    if _DIMENSION[shape] == 0:
        return (np.zeros((0, 1)),)
    n_corners = len(parametric_derivatives(shape, (0, 0, 0))[0])
    return tuple(corner_derivatives(shape, c) for c in range(n_corners))


class _Gatherer:
    """Corner coordinates and values of a chunk, in the compute dtype."""

    def __init__(self, points, values, dtype):
        # Component-major copies (one pass each) make every chunk's gather a
        # single np.take per array, contiguous along the cells.
        self.points = np.ascontiguousarray(np.asarray(points).T, dtype=dtype)
        self.values = np.ascontiguousarray(values.T, dtype=dtype)

    def gather(self, chunk: CellChunk):
        ids = np.ascontiguousarray(chunk.corners.T)
        xyz = np.take(self.points, ids, axis=1)
        normal = first_corners_normal(xyz) if _DIMENSION[chunk.shape] == 2 else None
        return ids, xyz, np.take(self.values, ids, axis=1), normal


def centre_gradients(points, values: np.ndarray, chunks, n_cells: int,
                     out: np.ndarray | None = None) -> np.ndarray:
    """Derivatives of a point field at each cell's parametric centre.

    Parameters
    ----------
    points : numpy.ndarray, shape (n_points, 3)
    values : numpy.ndarray, shape (n_points, c), floating
    chunks : iterable of CellChunk
    n_cells : int
    out : numpy.ndarray, shape (n_cells, 3 * c), optional

    Returns
    -------
    numpy.ndarray, shape (n_cells, 3 * c), values' dtype
        VTK's layout: ``[dc0/dx, dc0/dy, dc0/dz, dc1/dx, ...]``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid(np.eye(2, 3), [0, 1], [0, 2], [LINE])
    >>> centre_gradients(g.points(), np.array([[0.0], [2.0]]), unstructured_chunks(g), 1).tolist()
    [[-2.0, 2.0, 0.0]]
    """
    c = values.shape[1]
    out = gradient_output(out, n_cells, c, values.dtype)
    by_cell = out.reshape(n_cells, c, 3)
    gatherer = _Gatherer(points, values, compute_dtype(np.asarray(points).dtype, values.dtype))
    for chunk in chunks:
        _, xyz, corner_values, normal = gatherer.gather(chunk)
        gradient = cell_derivatives(_centre_table(chunk.shape), xyz, corner_values, normal)
        if _DIMENSION[chunk.shape] > 0:  # a vertex's derivative is 0, as vtkVertex's
            poison(gradient, nonfinite_cells(corner_values))
        by_cell[chunk.cell_ids] = gradient.transpose(2, 0, 1)
    return out


def corner_average_gradients(points, values: np.ndarray, chunks, counts: np.ndarray,
                             out: np.ndarray | None = None) -> np.ndarray:
    """Per point, the mean over its cells of the cell's derivative at that point.

    This is vtkGradientFilter's point gradient on unstructured grids (every
    cell using the point counts, vertices with a zero derivative).

    Parameters
    ----------
    points : numpy.ndarray, shape (n_points, 3)
    values : numpy.ndarray, shape (n_points, c), floating
    chunks : iterable of CellChunk
    counts : numpy.ndarray, shape (n_points,)
        Number of cells using each point.
    out : numpy.ndarray, shape (n_points, 3 * c), optional

    Returns
    -------
    numpy.ndarray, shape (n_points, 3 * c), values' dtype
        Zero at points that no cell uses.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.data.celltypes import LINE
    >>> g = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {LINE: [[0, 1], [1, 2]]})
    >>> corner_average_gradients(g.points(), np.array([[0.0], [1.0], [3.0]]),
    ...                          unstructured_chunks(g), np.array([1, 2, 1]))[1].tolist()
    [-0.5, -0.5, 1.0]
    """
    n_points, c = values.shape
    out = gradient_output(out, n_points, c, values.dtype)
    out[...] = 0
    gatherer = _Gatherer(points, values, compute_dtype(np.asarray(points).dtype, values.dtype))
    for chunk in chunks:
        if _DIMENSION[chunk.shape] == 0:
            continue
        ids, xyz, corner_values, normal = gatherer.gather(chunk)
        memo: dict = {}
        nonfinite = nonfinite_cells(corner_values)
        for corner, table in enumerate(_corner_tables(chunk.shape)):
            gradient = poison(cell_derivatives(table, xyz, corner_values, normal, memo), nonfinite)
            # One 1-D scatter per output column: NumPy's fast path for ufunc.at
            # needs a contiguous right-hand side.
            for column, derivative in enumerate(gradient.reshape(3 * c, -1)):
                np.add.at(out[:, column], ids[corner], derivative)
    # Points without cells keep their zero sum, as VTK leaves them.
    out *= (1.0 / np.maximum(counts, 1)).astype(out.dtype)[:, None]
    return out
