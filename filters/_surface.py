"""From edge cuts to a surface: the PolyData of contour and slice, with its fields.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.worklets._edge_cut import EdgeCut
>>> g = daxpy.UniformGrid(dims=(2,), point_data={"t": np.array([0.0, 4.0])})
>>> cut = EdgeCut(np.array([0]), np.array([1]), np.array([0.25]),
...               {1: np.array([[0]])}, {1: np.array([0])})
>>> s = cut_to_polydata(g, [cut], [1.0], scalar_name="t", scalar_dtype=np.float64)
>>> s.points().tolist(), s.point_data["t"].tolist()
([[0.25, 0.0, 0.0]], [1.0])
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from daxpy.data.arrays import is_device_array, to_host
from daxpy.data.dataset import DataSet
from daxpy.data.polydata import PolyData
from daxpy.errors import FieldError
from daxpy.worklets._edge_cut import EdgeCut, interpolate

_KINDS = {1: "verts", 2: "lines", 3: "polys"}


def _on_host(cut: EdgeCut) -> EdgeCut:
    return EdgeCut(to_host(cut.lo), to_host(cut.hi), to_host(cut.t),
                   {k: to_host(v) for k, v in cut.cells.items()},
                   {k: to_host(v) for k, v in cut.source.items()})


def _gathered(values: Any, cut: EdgeCut) -> np.ndarray:
    """A point field on the cut's points, computed where the field lives, on the host."""
    if is_device_array(values):
        import cupy

        on_device = EdgeCut(cupy.asarray(cut.lo), cupy.asarray(cut.hi), cupy.asarray(cut.t),
                            {}, {})
        return to_host(interpolate(values, on_device))
    return interpolate(np.asarray(values), cut)


def coordinates(dataset: Any, cut: EdgeCut) -> np.ndarray:
    """The cut's points: each edge's end points interpolated in float64, stored in the
    dtype of the grid's points (float32 for image and rectilinear grids, as VTK's).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.RectilinearGrid([0.0, 2.0, 3.0])
    >>> cut = EdgeCut(np.array([1]), np.array([2]), np.array([0.5]), {}, {})
    >>> coordinates(g, cut).tolist()
    [[2.5, 0.0, 0.0]]
    """
    if dataset.family in ("uniform", "rectilinear"):
        dims = tuple(int(d) for d in dataset.dims)
        axes = [dataset.axis_coordinates(a) for a in range(3)]

        def at(ids):
            i, j, k = ids % dims[0], ids // dims[0] % dims[1], ids // (dims[0] * dims[1])
            return np.stack([axes[0][i], axes[1][j], axes[2][k]], axis=1)

        low, high = at(cut.lo), at(cut.hi)
        dtype: Any = np.float32
    else:
        points = to_host(dataset.points())
        low, high = points[cut.lo].astype(np.float64), points[cut.hi].astype(np.float64)
        dtype = points.dtype
    return (low + cut.t[:, None] * (high - low)).astype(dtype)


def _field_names(dataset: DataSet, fields: bool | Sequence[str]) -> tuple[list, list]:
    """The point and cell fields carried onto the surface."""
    if fields is True:
        return list(dataset.point_data), list(dataset.cell_data)
    if fields is False:
        return [], []
    names = [fields] if isinstance(fields, str) else list(fields)
    for name in names:
        if name not in dataset.point_data and name not in dataset.cell_data:
            raise FieldError(f"interpolate names {name!r}, which {dataset.name} does not "
                             f"have; fields: {sorted(dataset.point_data) + sorted(dataset.cell_data)}")
    return ([n for n in names if n in dataset.point_data],
            [n for n in names if n in dataset.cell_data and n not in dataset.point_data])


def cut_to_polydata(dataset: DataSet, cuts: list[EdgeCut], values: Sequence[float], *,
                    scalar_name: str | None = None, scalar_dtype: Any = np.float64,
                    fields: bool | Sequence[str] = True, gradient: Any = None,
                    merge_points: bool = True) -> PolyData:
    """The PolyData of one cut per value, in value order.

    Parameters
    ----------
    dataset : DataSet
        The cut grid.
    cuts : list of EdgeCut
        One per value (host or device).
    values : sequence of float
        The values cut at (written as the scalar field).
    scalar_name : str, optional
        Name of the scalar field written with each point's value.
    scalar_dtype : dtype
        Its dtype (the cut field's).
    fields : bool or sequence of str
        Point fields interpolated and cell fields carried (True: all).
    gradient : array, optional
        A point gradient of the cut field: ``Normals`` (float32) from it.
    merge_points : bool
        False gives every output cell its own points.

    Returns
    -------
    PolyData
        Points, then verts, lines and polys, each kind in value order.
    """
    cuts = [_on_host(cut) for cut in cuts]
    point_names, cell_names = _field_names(dataset, fields)
    points: list = []
    point_data: dict[str, list] = {}
    cells: dict[int, list] = {k: [] for k in _KINDS}
    cell_data: dict[str, list] = {}
    for k in _KINDS:  # VTK's cell order: verts, lines, polys
        for name in cell_names:
            values_of = dataset.cell_data[name]
            cell_data.setdefault(name, []).extend(
                _taken(values_of, cut.source[k]) for cut in cuts if k in cut.source)
    offset = 0
    for cut, value in zip(cuts, values):
        expand = None if merge_points else {k: c.ravel() for k, c in cut.cells.items()}
        made = {name: _gathered(dataset.point_data[name], cut) for name in point_names}
        if scalar_name is not None:
            made[scalar_name] = np.full(cut.n_points, value, dtype=scalar_dtype)
        if gradient is not None:
            g = _gathered(gradient, cut).astype(np.float64)
            norm = np.linalg.norm(g, axis=1, keepdims=True)
            made["Normals"] = np.divide(-g, norm, out=np.zeros_like(g),
                                        where=norm > 0).astype(np.float32)
        xyz = coordinates(dataset, cut)
        if expand is None:
            points.append(xyz)
            for name, array in made.items():
                point_data.setdefault(name, []).append(array)
            for k, c in cut.cells.items():
                cells[k].append(c + offset)
            offset += cut.n_points
            continue
        for k, ids in expand.items():
            points.append(xyz[ids])
            for name, array in made.items():
                point_data.setdefault(name, []).append(array[ids])
            cells[k].append(offset + np.arange(ids.shape[0]).reshape(-1, k))
            offset += ids.shape[0]
    xyz = np.concatenate(points) if points else np.zeros((0, 3), np.float32)
    arrays = {_KINDS[k]: _cell_array(parts, k) for k, parts in cells.items() if parts}
    return PolyData(xyz, **arrays,
                    point_data={n: np.concatenate(a) for n, a in point_data.items()},
                    cell_data={n: np.concatenate(a) for n, a in cell_data.items()},
                    name=f"contour of {dataset.name}")


def _taken(values: Any, source: np.ndarray) -> np.ndarray:
    if is_device_array(values):
        import cupy

        return to_host(values[cupy.asarray(source)])
    return np.asarray(values)[source]


def _cell_array(parts: list[np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
    connectivity = np.concatenate(parts).reshape(-1).astype(np.int64)
    return np.arange(0, connectivity.shape[0] + 1, k, dtype=np.int64), connectivity
