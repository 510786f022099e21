"""The unstructured grid of whole input cells that a threshold (or a crinkle clip)
keeps, its fields gathered where the kept cells are.

Examples
--------
>>> callable(whole_cells)
True
"""

from __future__ import annotations

from typing import Any

from ._geometry import dataset_array, grid_axes, point_coordinates, taken


def whole_cells(dataset: Any, made: Any, name: str, original_ids: bool = False) -> Any:
    """The grid of whole input cells a threshold kept (``made``: its cells, the points
    they use and their renumbered topology), gathered where ``made`` lives.

    The cells are the input's own (validated, or made by a structured grid), so the
    grid is built without checking them again.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.engine.dispatch import execute
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.array([0.0, 1, 2])})
    >>> made = execute("threshold", g, g.point_data["t"], "points", backend="cpu",
    ...                at="points", lower=1.5, upper=3.0, all_points=False)
    >>> whole_cells(g, made, "kept").points().tolist()
    [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
    """
    from daxpy.data.arrays import array_module
    from daxpy.data.unstructured import UnstructuredGrid
    from daxpy.stream.placement import placed

    if original_ids:
        made = made.with_ids()
    cells, used = made.cell_ids, made.point_ids
    # The GPU's words of used points and kept cells, where they stand for these ids
    # (or for none made): gathers that read no ids.
    by_points, by_cells = made.point_words, made.cell_words
    if by_points is None or by_points.ids is not used:
        by_points = None
    if by_cells is None or by_cells.ids is not cells:
        by_cells = None
    point_data = {n: placed(by_points.take(v)) if by_points else taken(v, used)
                  for n, v in dataset.point_data.items()}
    cell_data = {n: placed(by_cells.take(v)) if by_cells else taken(v, cells)
                 for n, v in dataset.cell_data.items()}
    if original_ids:
        point_data["vtkOriginalPointIds"] = placed(used)
        cell_data["vtkOriginalCellIds"] = placed(cells)
    if by_points is None:
        coordinates = point_coordinates(dataset, used)
    else:
        xp = array_module(made.offsets)
        coordinates = None
        if dataset.family in ("uniform", "rectilinear"):
            coordinates = by_points.axis_points(grid_axes(dataset, xp), int(dataset.dims[1]))
        if coordinates is None:  # other grids, or axes of other dtypes
            coordinates = by_points.take(dataset_array(dataset, dataset.points(), xp))
    return UnstructuredGrid.from_checked(
        placed(coordinates), placed(made.connectivity),
        placed(made.offsets), placed(made.cell_types), point_data=point_data,
        cell_data=cell_data, name=name)
