"""A contour of a host grid on the GPU, host to host, slab by slab: the field goes up,
the surface is cut and comes back, the three overlapped.

Cut whole, the surface comes back only after the last byte of the field went up
and the last triangle was made: at 256³ the field's upload (1.2 ms on an H100) and
the surface's download (0.8 ms) add up. Here the grid is cut in slabs of whole cell
layers along z. The field goes up on one stream; each slab's classify pass
(:func:`daxpy.cuda.contour_rows.classify_rows`) is queued on a second before the
host waits for the slab before it, so that it runs as soon as its planes are up,
not when the host gets to it; the host then emits each slab
(:func:`~daxpy.cuda.contour_rows.emit_rows`, shifted to the whole grid's ids) on a
third, and its points and triangles go down on a fourth while the next slabs go up.

The output is the whole cut's, bit for bit: points by lower point id then axis, so
a slab's points follow the previous slab's; triangles by cell. A slab classifies
two point planes past its own cells, so that the ids of its last cells' far
corners (the next slab's first points, numbered with their z edges) are the
whole grid's.

The surface's size is known only when the last slab is cut, but its arrays must be
allocated before the first slab comes down: they are pinned buffers sized by the
first slab with a surface, its surface scaled to the whole grid with a margin
(:data:`MARGIN`), and the PolyData's arrays are their first rows. A slab that
does not fit them sizes new ones from the surface so far, and every slab cut comes
down again into those: on a bus that carries the field up, the way down is free
until the last slab (sized half way instead, the surface's 0.8 ms came down after
the field's last byte went up at 256³). Buffers more than twice the surface (a first
slab that held most of it) are trimmed once it is down. Fields with a value that is not finite, and
grids that do not qualify (:func:`contour_in_slabs` says which), are cut whole.

Examples
--------
>>> import numpy as np
>>> slabs_for((4, 4, 4), 4 * 64)
[]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from daxpy.data.polydata import PolyData
from daxpy.stream.transfer import copy_to_device, copy_to_host, page_lock, pinned_empty
from daxpy.worklets._edge_cut import EdgeCut
from daxpy.worklets._marching import TABLES, at_least_bound

from ._offsets import host_offsets
from ._surface import field_names, point_arrays

SLAB_BYTES = 16 << 20
"""Field bytes a slab holds at least. Each slab costs the host about 0.2 ms of
launches and its sync, about two thirds of what 16 MB take to go up on PCIe 5: with
smaller slabs the host, not the bus, sets the pace (256³ on an H100: 8 MB slabs 2.60
ms, 12 MB 2.37, 16 MB 1.99, 24 MB 2.27; cut whole 2.96; 512³ 10.75 ms for every size,
whole 14.95; ``benchmarks/results/contour-slabs-seventh-nvidia-h100.log``)."""

MAX_SLABS = 16
"""Slabs a grid is cut in at most."""

FIRST_SHARE = 0.5
"""The first slab's thickness, as a share of the others': the surface starts down
once it is cut."""

LAST_SHARE = 0.5
"""The last slab's: after the field's last byte is up, its cut and its surface's
download are all that is left to wait for."""

MARGIN = 1.25
"""The surface's buffers hold this much more than the surface so far, scaled to the
whole grid, promises."""


def slabs_for(dims: Sequence[int], field_bytes: int) -> list[tuple[int, int, int]]:
    """``(first, end, last_plane)`` per slab: its cell layers ``first..end - 1`` along
    z and the last point plane it reads (two past its cells, one for the last slab);
    none where the field is too small to pay for slabs.

    Examples
    --------
    >>> slabs_for((256, 256, 256), 256 ** 3 * 4)
    [(0, 42, 43), (42, 128, 129), (128, 212, 213), (212, 255, 255)]
    """
    layers = int(dims[2]) - 1
    count = min(MAX_SLABS, int(field_bytes) // SLAB_BYTES, layers)
    if count < 2:
        return []
    shares = np.ones(count)
    shares[0], shares[-1] = FIRST_SHARE, LAST_SHARE
    ends = np.concatenate([[0.0], np.cumsum(shares)])
    bounds = [round(float(e) * layers / float(ends[-1])) for e in ends]
    return [(bounds[i], bounds[i + 1], min(bounds[i + 1] + 1, layers))
            for i in range(count)]


def contour_in_slabs(contour: Any, dataset: Any) -> PolyData | None:
    """``contour`` (a :class:`~daxpy.filters.Contour` on the GPU) of the host grid
    ``dataset`` made slab by slab, into pinned host memory; None where it does not
    qualify: a 3-D uniform or rectilinear grid of at least two slabs
    (:func:`slabs_for`), one contour value, a float32 or float64 point field, point
    fields only carried, no normals, points merged, NaN propagated, fields that
    can be page-locked in place.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.filters import Contour
    >>> g = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0)})
    >>> contour_in_slabs(Contour("t", values=[13.5]), g) is None
    True
    """
    plan = _plan(contour, dataset)
    if plan is None:
        return None
    names, slabs = plan
    hosts = {name: dataset.point_data[name] for name in names}
    if not all(page_lock(host) for host in hosts.values()):
        return None
    from daxpy.cuda.memory import guarded

    # A device that runs out of memory gives DeviceMemoryError, as a whole cut does.
    return guarded(_surface, dataset, "contour", contour, dataset, hosts, slabs)


def _surface(contour: Any, dataset: Any, hosts: dict, slabs: list) -> PolyData:
    """The run; on an error, its streams are waited for first: the copies and kernels
    already queued must not write into memory freed as the error unwinds."""
    streams = _streams()
    try:
        return _Run(contour, dataset, hosts, slabs, streams).surface()
    except BaseException:
        for stream in streams:
            stream.synchronize()
        raise


def _plan(contour: Any, dataset: Any) -> tuple[list, list] | None:
    """The fields to upload and the slabs, or None where the run does not qualify."""
    if dataset.family not in ("uniform", "rectilinear") or len(dataset.dims) != 3 or \
            min(dataset.dims) < 2 or 3 * dataset.n_points >= 2**31:
        return None
    if contour.values is None or len(contour.values) != 1 or contour.compute_normals or \
            not contour.merge_points or contour.nan_policy != "propagate" or \
            contour.association not in (None, "points") or \
            contour.field not in dataset.point_data:
        return None
    point_names, cell_names = field_names(dataset, contour.interpolate)
    names = list(dict.fromkeys([contour.field, *point_names]))
    fields = [dataset.point_data[name] for name in names]
    if cell_names or not all(isinstance(f, np.ndarray) and f.flags.c_contiguous and
                             f.dtype.isnative for f in fields):
        return None
    scalars = fields[0]
    if scalars.dtype not in (np.float32, np.float64) or scalars.size != dataset.n_points:
        return None
    slabs = slabs_for(dataset.dims, sum(f.nbytes for f in fields))
    return (names, slabs) if slabs else None


_STREAMS: dict[int, tuple] = {}
"""Per device: the upload, classify, compute and download streams, made once. CuPy's memory
pool keeps freed blocks per stream: new streams each run would find none to reuse
and allocate afresh."""


def _streams() -> tuple:
    """The current device's four streams (non-blocking: the default stream's work
    does not wait for them, nor they for it)."""
    import cupy

    device = cupy.cuda.Device().id
    if device not in _STREAMS:
        _STREAMS[device] = tuple(cupy.cuda.Stream(non_blocking=True) for _ in range(4))
    return _STREAMS[device]


class _Run:
    """One slab-by-slab contour: the streams, the device fields, the slabs' outputs
    and the host buffers they come down into."""

    def __init__(self, contour: Any, dataset: Any, hosts: dict, slabs: list, streams: tuple):
        import cupy

        self.contour, self.slabs, self.hosts = contour, slabs, hosts
        self.up, self.classify, self.compute, self.down = streams
        self.device = {name: cupy.empty(host.shape, host.dtype) for name, host in hosts.items()}
        # First, so that the bus starts while the host makes the rest ready.
        self.uploaded = self._upload(dataset.dims)
        # The device fields with the grid: the slabs' points and fields read them.
        self.working = dataset.with_fields(self.device)
        self.value = float(contour.values[0])
        self.point_names = field_names(self.working, contour.interpolate)[0]
        self.outputs: list[tuple[int, int, dict, Any]] = []
        self.buffers: _Buffers | None = None
        # Buffers outgrown, kept until the downloads into them are done.
        self.outgrown: list[_Buffers] = []

    def surface(self) -> PolyData:
        """The PolyData, the whole cut's."""
        uploaded = self.uploaded
        nx, ny, nz = (int(d) for d in self.working.dims)
        plane, layers = nx * ny, nz - 1
        scalars = self.device[self.contour.field]
        bound = at_least_bound(scalars.dtype, self.value)
        points = triangles = 0
        from daxpy.cuda.contour_rows import RowsScratch, classify_rows, emit_rows

        tallest = max(last - first + 1 for first, _, last in self.slabs)
        # Two sets of classify buffers: a slab's classify is queued while the one
        # before it is still to be emitted from the other set.
        scratches = (RowsScratch(nx, tallest * ny), RowsScratch(nx, tallest * ny))

        def classify(index: int) -> Any:
            """Queue slab ``index``'s classify, on its own stream, while the host waits
            for the slab before it: it runs as soon as its planes are up."""
            first, end, last = self.slabs[index]
            self.classify.wait_event(uploaded[index])
            if index >= 2:  # its buffers are free once slab index - 2 is emitted (queued)
                self.classify.wait_event(self.outputs[index - 2][3])
            own = (end - first) * ny if end < layers else (last - first + 1) * ny
            with self.classify:
                return classify_rows(scalars[first * plane:(last + 1) * plane],
                                     (nx, ny, last - first + 1), self.value, bound,
                                     TABLES["voxel"], own_rows=own, plane_below=first > 0,
                                     scratch=scratches[index % 2])

        queued = [classify(0)]
        for index, (first, end, last) in enumerate(self.slabs):
            if index + 1 < len(self.slabs):  # before the wait: it must not wait for the host
                queued.append(classify(index + 1))
            classified = queued[index]
            n_points, n_tris, odd = classified.sizes()
            if odd:  # a value that is not finite: the array program's rules, whole
                for stream in (self.up, self.classify, self.down):
                    stream.synchronize()  # before the buffers they write are freed
                return self.contour.make(self.working)
            self.compute.wait_event(classified.ready)
            with self.compute:
                lo, hi, t, tris, source = emit_rows(
                    classified, n_points, n_tris, point_base=first * plane, id_base=points,
                    cell_base=first * (nx - 1) * (ny - 1))
                self._keep(EdgeCut(lo, hi, t, {3: tris}, {3: source}), points, triangles)
            points, triangles = points + n_points, triangles + n_tris
            self._send(points, triangles, end / layers, index == len(self.slabs) - 1)
        return self._finish(points, triangles)

    def _upload(self, dims: Sequence[int]) -> list:
        """Enqueue every slab's new planes of every field; an event per slab."""
        plane = int(dims[0]) * int(dims[1])
        events, start = [], 0
        for _, _, last in self.slabs:
            for name, host in self.hosts.items():
                part = slice(start * plane, (last + 1) * plane)
                copy_to_device(host[part], self.device[name][part], self.up)
            start = last + 1
            events.append(self.up.record())
        return events

    def _keep(self, cut: EdgeCut, points: int, triangles: int) -> None:
        """A slab's surface arrays on the device, at the whole surface's row
        ``points`` (point arrays) and ``triangles`` (cell arrays)."""
        contour = self.contour
        xyz, made = point_arrays(
            self.working, cut, self.value, self.point_names,
            scalar_name=contour.field if contour.compute_scalars else None,
            scalar_dtype=self.device[contour.field].dtype)
        # The offsets do not come down: the surface views the shared host ones.
        arrays: dict[Any, Any] = {"points": xyz, **{("field", n): a for n, a in made.items()},
                                  "connectivity": cut.cells[3].reshape(-1)}
        self.outputs.append((points, triangles, arrays, self.compute.record()))

    def _send(self, points: int, triangles: int, done: float, last: bool) -> None:
        """Bring down every slab cut so far that is not down yet, into buffers sized
        (again, where the surface outgrew them) from the surface so far, scaled to
        the whole grid; ``done``: the share of the grid's cell layers cut."""
        buffers = self.buffers
        if buffers is None or not buffers.fits(points, triangles):
            if not (points + triangles or last):
                return  # nothing to size them from yet, nor to bring down
            if buffers is not None:
                self.outgrown.append(buffers)
            scale = 1.0 if last else MARGIN / done
            buffers = self.buffers = _Buffers(self.outputs[-1][2], int(points * scale) + 1024,
                                              int(triangles * scale) + 1024)
        while buffers.sent < len(self.outputs):
            buffers.send(self.outputs[buffers.sent], self.down)

    def _finish(self, points: int, triangles: int) -> PolyData:
        """The PolyData, once the downloads are done (it is made first, over views of
        the buffers, and its arrays' fingerprint taken again after the wait)."""
        buffers = self.buffers
        assert buffers is not None  # the last slab sizes them
        if buffers.points > 2 * points + 1024 or buffers.triangles > 2 * triangles + 1024:
            # Sized from a first slab that held most of the surface, the buffers hold
            # far more than it: copied once down into buffers of its size, so that the
            # PolyData does not keep pinned memory for the whole grid's worth.
            self.down.synchronize()
            buffers = buffers.trimmed(points, triangles)
        fields = {key[1]: array[:points] for key, array in buffers.host.items()
                  if isinstance(key, tuple)}
        polys = (host_offsets(triangles, 3), buffers.host["connectivity"][:3 * triangles])
        surface = PolyData.from_checked(buffers.host["points"][:points], {"polys": polys},
                                        point_data=fields,
                                        name=f"contour of {self.working.name}")
        self.down.synchronize()
        # Its arrays' fingerprint was taken as the last slabs were still coming down.
        surface._stamp_written()
        return surface


class _Buffers:
    """Pinned host arrays of room for ``points`` points and ``triangles`` triangles,
    shaped as a slab's arrays (``like``), and how many slabs came down into them."""

    def __init__(self, like: dict, points: int, triangles: int):
        rows = {"connectivity": 3 * triangles}
        self.points, self.triangles, self.sent = points, triangles, 0
        self.host = {key: pinned_empty((rows.get(key, points),) + array.shape[1:],
                                       array.dtype)
                     for key, array in like.items()}

    def fits(self, points: int, triangles: int) -> bool:
        """Whether a surface of this size fits."""
        return points <= self.points and triangles <= self.triangles

    def trimmed(self, points: int, triangles: int) -> _Buffers:
        """Buffers of room for exactly this surface, holding its rows of these."""
        rows = {"connectivity": 3 * triangles}
        exact = _Buffers(self.host, points, triangles)
        for key, array in self.host.items():
            count = rows.get(key, points)
            np.copyto(exact.host[key][:count], array[:count])
        return exact

    def send(self, output: tuple, stream: Any) -> None:
        """Enqueue one slab's arrays into their rows, after the slab is made."""
        points, triangles, arrays, made = output
        stream.wait_event(made)
        for key, array in arrays.items():
            start = 3 * triangles if key == "connectivity" else points
            copy_to_host(array, self.host[key][start:start + array.shape[0]], stream)
        self.sent += 1
