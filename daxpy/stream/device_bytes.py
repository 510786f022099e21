"""Estimated device bytes of a streamed run's chunks: their fields, and the
coordinates and topology they keep on the device between runs, and which chunks
may keep theirs under a device budget (:mod:`daxpy.stream.sizing` plans with
these).

Examples
--------
>>> estimated_bytes("uniform", (10, 8, 0), 4, 4, True)
72
"""

from __future__ import annotations

UNSTRUCTURED_BYTES_PER_CORNER = 80
"""Estimated peak device bytes of topology per cell corner of an unstructured
grid whose links the device builds (a whole-grid run): its corner ids, the
64-bit keys, order and temporaries of sorting the links from points to
corners, and the links kept. Benchmarks count it in a case's working set."""

CHUNK_BYTES_PER_CORNER = 16
"""Device bytes of topology per cell corner of an out-of-core unstructured
chunk, whose links come from the host: 32-bit corner ids, corner slots and
cell links (the most any worklet asks for), and room for the 32-bit cell ids
of each shape of a mixed grid (at most one per corner)."""

CHUNK_BYTES_PER_POINT = 12
"""Device bytes of topology per point of such a chunk: 32-bit link offsets
(to corners and to cells) and cell counts."""

COORDINATE_BYTES = 32
"""Device bytes per point of explicit coordinates: three float64 at most, or the
rows of four that the point gradient of unstructured grids gathers."""


def estimated_bytes(family: str, sizes, per_point: int, per_cell: int,
                    resident: bool) -> int:
    """Estimated device bytes of a chunk of ``sizes`` = (points, cells, corners):
    its fields, and with ``resident`` its coordinates and topology too (they
    stay on the device between runs unless a budget is set, so only then do
    they count against a chunk's share).

    Examples
    --------
    >>> estimated_bytes("unstructured", (10, 8, 64), 4, 0, False)
    40
    >>> estimated_bytes("unstructured", (10, 8, 64), 4, 0, True)
    1504
    """
    points, cells, corners = sizes
    total = points * per_point + cells * per_cell
    if resident and family in ("curvilinear", "unstructured"):
        total += points * COORDINATE_BYTES
    if resident and family == "unstructured":
        total += points * CHUNK_BYTES_PER_POINT + corners * CHUNK_BYTES_PER_CORNER
    return int(total)


def resident_chunks(family: str, sizes: list, per_point: int, per_cell: int,
                    max_device_bytes: int, streams: int) -> frozenset:
    """Indices of the chunks of ``sizes`` (:func:`~daxpy.stream.sizing.chunk_sizes`)
    whose device topology may stay between runs: the longest run of first chunks
    whose topology, with ``streams`` chunks in flight (their fields, and the
    topology of those that do not stay), fits ``max_device_bytes``.

    Examples
    --------
    >>> sizes = [(10, 8, 64)] * 4                 # 1504 bytes each, 1464 of topology
    >>> sorted(resident_chunks("unstructured", sizes, 4, 0, 5000, 2))
    [0]
    >>> sorted(resident_chunks("unstructured", sizes, 4, 0, 6000, 2))
    [0, 1, 2, 3]
    """
    fields = [estimated_bytes(family, s, per_point, per_cell, False) for s in sizes]
    topology = [estimated_bytes(family, s, per_point, per_cell, True) - f
                for s, f in zip(sizes, fields)]
    in_flight = int(streams) * max(fields, default=0)
    kept = 0
    for count in range(len(sizes), 0, -1):
        # A chunk in flight whose topology does not stay uploads it with its fields.
        passing = min(int(streams), len(sizes) - count) * max(topology[count:], default=0)
        if sum(topology[:count]) + in_flight + passing <= int(max_device_bytes):
            kept = count
            break
    return frozenset(range(kept))
