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

from daxpy.data.arrays import array_module, joined
from daxpy.data.dataset import DataSet
from daxpy.data.host_pool import host_empty
from daxpy.data.polydata import PolyData
from daxpy.errors import FieldError
from daxpy.stream.placement import placed, results_to_device
from daxpy.worklets._edge_cut import EdgeCut, interpolate
from daxpy.worklets._numba import compiled

from ._geometry import axis_values, dataset_array, grid_axes
from ._offsets import host_offsets

_KINDS = {1: "verts", 2: "lines", 3: "polys"}


def _module(cuts: list[EdgeCut]) -> Any:
    """NumPy or CuPy: where the cuts live (NumPy for none)."""
    return cuts[0].module if cuts else np


def coordinates(dataset: Any, cut: EdgeCut) -> Any:
    """The cut's points: each edge's end points interpolated in float64, stored in the
    dtype of the grid's points (float32 for image and rectilinear grids, as VTK's),
    computed where the cut lives.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.RectilinearGrid([0.0, 2.0, 3.0])
    >>> cut = EdgeCut(np.array([1]), np.array([2]), np.array([0.5]), {}, {})
    >>> coordinates(g, cut).tolist()
    [[2.5, 0.0, 0.0]]
    """
    if cut.points is not None:   # made with the edges, by the compiled march
        return cut.points
    xp = cut.module
    if xp is np:
        return _EDGE_COORDINATES(dataset, cut)
    return _array_coordinates(dataset, cut)


def _array_coordinates(dataset: Any, cut: EdgeCut) -> Any:
    """:func:`coordinates` as an array program (CuPy on the device; NumPy where the
    compiled kernel does not serve)."""
    xp = array_module(cut.lo)
    if dataset.family in ("uniform", "rectilinear"):
        if xp is not np:  # one kernel, the same bits (daxpy.cuda.edge_points)
            from daxpy.cuda.edge_points import axis_points

            made = axis_points(cut.lo, cut.hi, cut.t, tuple(int(d) for d in dataset.dims),
                               grid_axes(dataset, xp))
            if made is not None:
                return made

        low, high = axis_values(dataset, cut.lo), axis_values(dataset, cut.hi)
        dtype: Any = np.float32
    else:
        points = dataset_array(dataset, dataset.points(), xp)
        if xp is not np:  # one kernel, the same bits (daxpy.cuda.edge_values)
            from daxpy.cuda.edge_values import edge_values

            made = edge_values(points, cut.lo, cut.hi, cut.t, widened=True)
            if made is not None:
                return made
        low, high = points[cut.lo].astype(xp.float64), points[cut.hi].astype(xp.float64)
        dtype = points.dtype
    return (low + cut.t[:, None] * (high - low)).astype(dtype)


def field_names(dataset: DataSet, fields: bool | Sequence[str]) -> tuple[list, list]:
    """The point and cell fields that ``fields`` (``interpolate``) carries onto the
    surface: ``(point_names, cell_names)``.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"t": np.zeros(2)})
    >>> field_names(g, True)
    (['t'], [])
    """
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


def point_arrays(dataset: DataSet, cut: EdgeCut, value: float, point_names: Sequence[str], *,
                 scalar_name: str | None = None, scalar_dtype: Any = np.float64,
                 gradient: Any = None) -> tuple[Any, dict]:
    """One cut's points and point fields, where the cut lives: ``(xyz, fields)``, the
    fields being ``point_names`` interpolated, the scalar (``scalar_name``, equal
    to ``value``) and ``Normals`` from ``gradient``. Each output point's values
    depend on its own edge only, so a cut made in slabs gives the whole cut's.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2,), point_data={"t": np.array([0.0, 4.0])})
    >>> cut = EdgeCut(np.array([0]), np.array([1]), np.array([0.25]), {}, {})
    >>> xyz, fields = point_arrays(g, cut, 1.0, ["t"])
    >>> xyz.tolist(), fields["t"].tolist()
    ([[0.25, 0.0, 0.0]], [1.0])
    """
    xp = cut.module
    scalar = None
    if scalar_name is not None:
        scalar = (host_empty if xp is np else xp.empty)(cut.n_points, scalar_dtype)
        scalar.fill(value)
    # The cut field itself is the value everywhere: not interpolated (a pass over
    # the field's lines at every point, a tenth of a 256³ contour on the CPU), but
    # kept in its place among the fields.
    made = {name: scalar if name == scalar_name else
            interpolate(dataset_array(dataset, dataset.point_data[name], xp), cut)
            for name in point_names}
    if scalar_name is not None:
        made[scalar_name] = scalar
    if gradient is not None:
        made["Normals"] = _normals(interpolate(dataset_array(None, gradient, xp), cut))
    return coordinates(dataset, cut), made


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
    # Assembled where the cuts are (on the device for a GPU cut): only the surface's
    # own arrays come to the host, once, at the end.
    xp = _module(cuts)
    point_names, cell_names = field_names(dataset, fields)
    points: list = []
    point_data: dict[str, list] = {}
    cells: dict[int, list] = {k: [] for k in _KINDS}
    cell_data: dict[str, list] = {}
    for k in _KINDS:  # VTK's cell order: verts, lines, polys
        for name in cell_names:
            values_of = dataset_array(dataset, dataset.cell_data[name], xp)
            cell_data.setdefault(name, []).extend(
                values_of[cut.source[k]] for cut in cuts if k in cut.source)
    offset = 0
    for cut, value in zip(cuts, values):
        expand = None if merge_points else {k: c.ravel() for k, c in cut.cells.items()}
        xyz, made = point_arrays(dataset, cut, value, point_names, scalar_name=scalar_name,
                                 scalar_dtype=scalar_dtype, gradient=gradient)
        if expand is None:
            points.append(xyz)
            for name, array in made.items():
                point_data.setdefault(name, []).append(array)
            for k, c in cut.cells.items():
                cells[k].append((c, offset))
            offset += cut.n_points
            continue
        for k, ids in expand.items():
            points.append(xyz[ids])
            for name, array in made.items():
                point_data.setdefault(name, []).append(array[ids])
            cells[k].append((xp.arange(ids.shape[0]).reshape(-1, k), offset))
            offset += ids.shape[0]
    # Where the run puts the new dataset (daxpy.stream.placement): a device surface
    # stays there for a device run, else comes back into pinned memory, at the
    # bus's rate.
    xyz = placed(_joined(points) if points else np.zeros((0, 3), np.float32))
    arrays = {_KINDS[k]: _cell_array(parts, k, xp) for k, parts in cells.items() if parts}
    return PolyData.from_checked(
        xyz, arrays, point_data={n: placed(_joined(a)) for n, a in point_data.items()},
        cell_data={n: placed(_joined(a)) for n, a in cell_data.items()},
        name=f"contour of {dataset.name}")


def _normals(gradient: Any) -> Any:
    """Unit normals (float32) against a point gradient, zero where it vanishes; the
    norm summed term by term, so that NumPy and CuPy give the same bits."""
    xp = array_module(gradient)
    g = gradient.astype(xp.float64)
    norm = xp.sqrt(g[:, 0] * g[:, 0] + g[:, 1] * g[:, 1] + g[:, 2] * g[:, 2])[:, None]
    safe = xp.where(norm > 0, norm, 1.0)
    return xp.where(norm > 0, -g / safe, 0.0).astype(xp.float32)


def _cell_array(parts: list, k: int, xp: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, connectivity)`` of cells of ``k`` points each, where the new
    dataset goes, from ``(cells, first point id)`` pairs: each part's ids shifted as
    it is written into the whole, one pass over the ids (the one part at 0 not
    copied at all). A result left on the device gets its offsets made there; a host
    result, from the GPU too, views the shared host offsets
    (:func:`~daxpy.filters._offsets.host_offsets`): neither written nor brought
    down."""
    if len(parts) == 1 and parts[0][1] == 0:
        connectivity = parts[0][0].reshape(-1).astype(xp.int64, copy=False)
    else:
        ids, shifts = [c.reshape(-1) for c, _ in parts], [offset for _, offset in parts]
        # The compiled join keeps its parts' dtype: int64 ids only.
        on_cores = xp is np and all(c.dtype == np.int64 for c in ids)
        connectivity = (_JOINED_SHIFTED if on_cores else _shifted_join)(ids, shifts)
    n_cells = connectivity.shape[0] // k
    offsets = xp.arange(0, n_cells * k + 1, k, dtype=xp.int64) if results_to_device() \
        else host_offsets(n_cells, k)
    return placed(offsets), placed(connectivity)


def _shifted_join(parts: list, shifts: list) -> Any:
    """``parts`` (NumPy or CuPy ids) end to end as int64, each plus its shift.

    Examples
    --------
    >>> _shifted_join([np.arange(2), np.arange(2)], [0, 5]).tolist()
    [0, 1, 5, 6]
    """
    xp = array_module(parts[0])
    out = xp.empty(sum(p.shape[0] for p in parts), xp.int64)
    start = 0
    for part, shift in zip(parts, shifts):
        xp.add(part, shift, out=out[start:start + part.shape[0]])
        start += part.shape[0]
    return out


def _numpy_joined(parts: list, shifts: list) -> Any:
    """:func:`~daxpy.worklets._join_cpu.joined_shifted` by NumPy: the parts end to end,
    each plus its shift (integer parts; others only with shifts of 0).

    Examples
    --------
    >>> _numpy_joined([np.ones(2), np.zeros(1)], [0, 0]).tolist()
    [1.0, 1.0, 0.0]
    """
    if any(int(s) != 0 for s in shifts):
        return _shifted_join(parts, shifts)
    return joined(parts)


_JOINED_SHIFTED = compiled("_join_cpu", "joined_shifted", _numpy_joined)


def _joined(parts: list) -> Any:
    """The surface's ``parts`` end to end (one part: itself), on every core for host
    arrays (:mod:`daxpy.worklets._join_cpu`)."""
    if len(parts) == 1 or array_module(parts[0]) is not np:
        return joined(parts)
    return _JOINED_SHIFTED(parts, [0] * len(parts))


_EDGE_COORDINATES = compiled("_edge_points_cpu", "edge_coordinates", _array_coordinates)
