"""Where streamed chunks move and run: the CUDA mover and its NumPy stand-in.

A mover gives the chunk loop of :mod:`daxpy.stream.streaming` its slots (one per
chunk in flight), copies chunk inputs in and owned results out, runs a chunk's
stages and times them. :class:`CudaMover` gives every slot its own CUDA
stream, so the host-to-device copy of one chunk, the kernels of another and
the device-to-host copy of a third overlap; a slot is reused only after its
last copy out has finished. :class:`NumpyMover` runs the same loop with NumPy
copies, so the chunking logic is tested without a GPU.

Examples
--------
>>> import numpy as np
>>> mover = NumpyMover(streams=2, staging="auto")
>>> slot = mover.slot(0)
>>> mover.upload(mover.prepare(np.arange(6.0)), "f", slice(2, 4), slot).tolist()
[2.0, 3.0]
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Collection

import numpy as np

from . import transfer
from ..data.arrays import native_order
from ..cuda.device import forget


@dataclass
class Source:
    """A host input as the mover will read it.

    Attributes
    ----------
    array : numpy.ndarray
        The user's array (never copied as a whole).
    mode : {"registered", "staged", "pageable", "host"}
        How chunks of it reach the device.
    """

    array: np.ndarray
    mode: str


@dataclass
class Slot:
    """One chunk in flight: its stream, staging buffers, and what it keeps alive."""

    index: int
    stream: Any = None
    done: Any = None
    staging: dict = field(default_factory=dict)
    keep: list = field(default_factory=list)
    grids: list = field(default_factory=list)
    device_bytes: int = 0
    chunk: int = -1


class NumpyMover:
    """The chunk loop's moves and runs, on the CPU (NumPy backend).

    Parameters
    ----------
    streams : int
        Chunks in flight (only bounds the estimated peak here).
    staging : str
        Ignored on the CPU; kept for the same signature.
    resident : collection of int, optional
        Chunks whose device topology stays for the next run (default: all);
        the others' is freed after them (out of core).
    """

    backend = "cpu"
    xp = np

    def __init__(self, streams: int, staging: str, resident: Collection[int] | None = None):
        self.slots = [Slot(i) for i in range(max(int(streams), 1))]
        self.staging = staging
        self.resident = resident
        self.peak_bytes = 0

    def prepare(self, array: np.ndarray) -> Source:
        """Wrap a host input (nothing to pin on the CPU)."""
        return Source(array, "host")

    def host_empty(self, shape, dtype) -> np.ndarray:
        """An output array."""
        return np.empty(shape, dtype=dtype)

    def slot(self, chunk_index: int) -> Slot:
        """The slot for chunk ``chunk_index``, free again (its last chunk finished)."""
        slot = self.slots[chunk_index % len(self.slots)]
        self._release(slot)
        slot.chunk = chunk_index
        return slot

    def _release(self, slot: Slot) -> None:
        slot.keep.clear()
        slot.grids.clear()
        slot.device_bytes = 0

    def upload(self, source: Source, name: str, selection, slot: Slot, into=None):
        """The chunk's part of an input ("device" memory is a NumPy copy here;
        ``into`` is for the CUDA mover)."""
        values = source.array[selection].copy()
        slot.device_bytes += values.nbytes
        return values

    def compute(self, slot: Slot, run: Callable[[], dict]) -> dict:
        """Run a chunk's stages; return its results."""
        # Points at a chunk's edge that none of its cells use average over no
        # cells (0 / 0); they are not owned and never kept, so NumPy's warning
        # about them would only mislead.
        with np.errstate(invalid="ignore", divide="ignore"):
            results = run()
        slot.device_bytes += sum(int(v.nbytes) for v in results.values())
        return results

    def mark(self, slot: Slot) -> float:
        """A time mark on the slot's timeline (host clock on the CPU)."""
        return time.perf_counter()

    def elapsed_ms(self, begin, end) -> float:
        """Milliseconds between two marks (after :meth:`finish`)."""
        return (end - begin) * 1e3

    def download(self, values, host: np.ndarray, slot: Slot) -> None:
        """Copy a chunk's owned results into their place in the output."""
        np.copyto(host, values)

    def retire(self, slot: Slot, keep: list, grids: list) -> None:
        """Keep the chunk's arrays until the slot is reused; note the peak."""
        slot.keep.extend(keep)
        slot.grids.extend(grids)
        self.peak_bytes = max(self.peak_bytes, sum(s.device_bytes for s in self.slots))

    def finish(self) -> None:
        """Wait for every chunk (nothing to wait for on the CPU)."""
        for slot in self.slots:
            self._release(slot)


class CudaMover(NumpyMover):
    """The chunk loop on a GPU: one CUDA stream per slot, pinned copies.

    Parameters
    ----------
    streams : int
        Chunks in flight, each on its own stream.
    staging : {"auto", "register", "pool", "pageable"}
        How host inputs reach the device (:data:`daxpy.stream.transfer.STAGING_POLICIES`).
    resident : collection of int, optional
        Chunks whose device topology (unstructured links, curvilinear points)
        stays cached on their sub-grid for the next run, as the whole-grid
        runner keeps the grid's (default: all); the others' is freed after
        each of them (out of core).
    """

    backend = "cuda"

    def __init__(self, streams: int, staging: str, resident: Collection[int] | None = None):
        import cupy

        super().__init__(streams, staging, resident)
        self.xp = cupy
        self.pool = cupy.get_default_memory_pool()
        self.base_bytes = self.pool.used_bytes()
        for slot, stream in zip(self.slots, slot_streams(len(self.slots))):
            slot.stream = stream

    def prepare(self, array: np.ndarray) -> Source:
        """Page-lock ``array`` in place where the policy allows, else stage it.

        A big-endian array is swapped to native order first (one host copy):
        CuPy reads device memory in native order only.
        """
        array = native_order(np.asarray(array))
        if self.staging == "pageable":
            return Source(array, "pageable")
        if self.staging in ("auto", "register") and transfer.page_lock(array):
            return Source(array, "registered")
        return Source(array, "staged")

    def host_empty(self, shape, dtype) -> np.ndarray:
        """An output array in pinned memory from the pool."""
        return transfer.pinned_empty(shape, dtype)

    def _release(self, slot: Slot) -> None:
        if slot.done is not None:
            # The host waits here for the slot's previous chunk (its last copy
            # out), so its buffers can be refilled.
            slot.done.synchronize()
            slot.done = None
        if self.resident is not None and slot.chunk not in self.resident:
            for grid in slot.grids:
                forget(grid)
        super()._release(slot)

    def upload(self, source: Source, name: str, selection, slot: Slot, into=None):
        """Enqueue the copy of the chunk's part of an input on the slot's stream,
        into a new device array or into ``into`` (a chunk's captured buffer)."""
        array = source.array
        if isinstance(selection, slice) and source.mode in ("registered", "pageable"):
            host = array[selection]
        else:
            buffer = slot.staging.setdefault(name, transfer.StagingBuffer())
            if isinstance(selection, slice):
                host = buffer.fill(array[selection])
            else:
                host = buffer.fill(array, selection)
        device = into
        if device is None:
            with slot.stream:
                device = self.xp.empty(host.shape, dtype=host.dtype)
        transfer.copy_to_device(host, device, slot.stream)
        return device

    def compute(self, slot: Slot, run: Callable[[], dict]) -> dict:
        """Run a chunk's stages on the slot's stream."""
        with slot.stream:
            return run()

    def mark(self, slot: Slot):
        """A CUDA event recorded on the slot's stream."""
        return slot.stream.record()

    def elapsed_ms(self, begin, end) -> float:
        """Milliseconds between two events (after :meth:`finish`)."""
        return self.xp.cuda.get_elapsed_time(begin, end)

    def download(self, values, host: np.ndarray, slot: Slot) -> None:
        """Enqueue the copy of a chunk's owned results into the pinned output."""
        if not values.flags.c_contiguous:
            with slot.stream:
                values = self.xp.ascontiguousarray(values)
        transfer.copy_to_host(values, host, slot.stream)

    def retire(self, slot: Slot, keep: list, grids: list) -> None:
        """Record the slot's end; keep its arrays until then; note the pool's peak."""
        slot.keep.extend(keep)
        slot.grids.extend(grids)
        slot.done = slot.stream.record()
        self.peak_bytes = max(self.peak_bytes, self.pool.used_bytes() - self.base_bytes)

    def finish(self) -> None:
        """Wait for every slot's last chunk; drop what they kept."""
        for slot in self.slots:
            self._release(slot)


_THREAD = threading.local()
"""Each thread's streams for the slots, by device (:func:`slot_streams`)."""


def slot_streams(count: int) -> list:
    """``count`` non-blocking CUDA streams for a run's slots: the same ones for every
    run of this thread on this device. CuPy's memory pool reuses a freed block only
    on the stream that freed it, so new streams for each run made every chunk's
    arrays fresh device allocations (about 0.2 ms each at 10M points, most of a run's
    fixed cost); a thread of its own keeps its runs concurrent with other threads'.

    Examples
    --------
    >>> callable(slot_streams)
    True
    """
    import cupy

    by_device = getattr(_THREAD, "streams", None)
    if by_device is None:
        by_device = _THREAD.streams = {}
    streams = by_device.setdefault(cupy.cuda.Device().id, [])
    while len(streams) < count:
        streams.append(cupy.cuda.Stream(non_blocking=True))
    return streams[:count]


def make_mover(backend: str, streams: int, staging: str,
               resident: Collection[int] | None = None):
    """The mover for a resolved backend (``"cpu"`` or ``"cuda"``).

    Examples
    --------
    >>> make_mover("cpu", 3, "auto").backend
    'cpu'
    """
    if staging not in transfer.STAGING_POLICIES:
        from ..errors import ArgumentError

        raise ArgumentError(
            f"staging must be one of {transfer.STAGING_POLICIES}, got {staging!r}")
    return (CudaMover if backend == "cuda" else NumpyMover)(streams, staging, resident)
