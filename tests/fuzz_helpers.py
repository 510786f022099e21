"""Shared pieces of the fuzz tests (CPU and GPU): every filter, a digest of a
whole dataset, the same values in unusual memory layouts, and which outputs
depend on one input value.

Nothing here imports VTK or CuPy at module level: the GPU machine has no VTK,
the CI machine no CuPy.
"""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from daxpy.data.arrays import is_device_array, to_host
from daxpy.data.celltypes import CELL_SHAPES
from daxpy.filters import (BiasAdd, CellToPoint, FieldMap, Gradient, Magnitude,
                           PassThrough, PointToCell)

# name -> (association of the field "f" it reads, components it needs or None,
#          factory(backend) -> filter)
FILTERS = {
    "gradient": ("points", None, lambda b: Gradient("f", backend=b)),
    "cell_gradient": ("points", None, lambda b: Gradient("f", kind="cell", backend=b)),
    "vector_analysis": ("points", 3, lambda b: Gradient(
        "f", divergence=True, vorticity=True, qcriterion=True, backend=b)),
    "point_to_cell": ("points", None, lambda b: PointToCell("f", result="out", backend=b)),
    "cell_to_point": ("cells", None, lambda b: CellToPoint("f", result="out", backend=b)),
    "pass_through": ("any", None, lambda b: PassThrough("f", dtype="float64", backend=b)),
    "bias_add": ("any", None, lambda b: BiasAdd("f", [0.5], backend=b)),
    "magnitude": ("any", None, lambda b: Magnitude("f", backend=b)),
    "field_map": ("any", None, lambda b: FieldMap("sin(f) * 2 + f", backend=b)),
}
"""Every filter, configured to read a field named ``f``."""


def filter_for(name: str, association: str, backend: str):
    """The filter ``name`` reading ``f`` at ``association`` (maps need to be told)."""
    wanted, _, make = FILTERS[name]
    flt = make(backend)
    if wanted == "any" and isinstance(flt, FieldMap):
        flt = FieldMap("sin(f) * 2 + f", association=association, backend=backend)
    return flt


def associations(name: str) -> list[str]:
    """Associations the filter ``name`` can read ``f`` at."""
    wanted = FILTERS[name][0]
    return ["points", "cells"] if wanted == "any" else [wanted]


def _host_bytes(array) -> bytes:
    host = to_host(array)
    header = host.dtype.str + str(host.shape)
    return header.encode() + np.ascontiguousarray(host).tobytes()


def topology_arrays(dataset) -> dict:
    """The arrays that define a grid's geometry and topology, by name."""
    arrays = {}
    for name in ("points_array", "coordinates_array", "connectivity", "offsets", "cell_types"):
        value = getattr(dataset, name, None)
        if value is not None:
            arrays[name] = value
    for axis, value in enumerate(getattr(dataset, "coordinates", ()) or ()):
        arrays[f"axis{axis}"] = value
    return arrays


def digest(dataset) -> str:
    """SHA-256 over every field (names, dtypes, shapes, bytes) and every topology
    array of ``dataset``, and its scalar geometry (dims, origin, spacing)."""
    h = hashlib.sha256()
    for data in (dataset.point_data, dataset.cell_data):
        for name in sorted(data):
            h.update(name.encode())
            h.update(_host_bytes(data[name]))
    for name, array in sorted(topology_arrays(dataset).items()):
        h.update(name.encode())
        h.update(_host_bytes(array))
    for name in ("dims", "origin", "spacing", "n_points", "n_cells", "name"):
        h.update(repr(getattr(dataset, name, None)).encode())
    return h.hexdigest()


def new_fields(before, after) -> dict:
    """Fields of ``after`` that ``before`` does not have, as host arrays."""
    return {name: to_host(after.field(name)[0]) for data in (after.point_data, after.cell_data)
            for name in data if name not in before.point_data and name not in before.cell_data}


def host_layouts(values: np.ndarray) -> dict:
    """The same values as strided, Fortran-ordered, reversed-stride, read-only,
    big-endian and misaligned NumPy arrays."""
    wide = np.empty((values.shape[0], 2) + values.shape[1:], values.dtype)
    wide[:, 0] = values
    reversed_ = values[::-1].copy()[::-1]
    readonly = values.copy()
    readonly.flags.writeable = False
    swapped = values.astype(values.dtype.newbyteorder())
    raw = bytearray(values.nbytes + 1)
    misaligned = np.frombuffer(memoryview(raw)[1:], dtype=values.dtype).reshape(values.shape)
    misaligned[...] = values
    return {"strided": wide[:, 0], "fortran": np.asfortranarray(values),
            "negative_stride": reversed_, "readonly": readonly, "big_endian": swapped,
            "misaligned": misaligned}


def device_layouts(values):
    """The same values as strided, Fortran-ordered and reversed-stride CuPy arrays."""
    import cupy

    values = cupy.asarray(values)
    wide = cupy.empty((values.shape[0], 2) + values.shape[1:], values.dtype)
    wide[:, 0] = values
    return {"strided": wide[:, 0], "fortran": cupy.asfortranarray(values),
            "negative_stride": values[::-1].copy()[::-1]}


def run_new_fields(flt, dataset) -> dict:
    """Run ``flt`` on ``dataset``; its new fields as host arrays."""
    return new_fields(dataset, flt(dataset))


def dependents(flt, dataset, name: str, association: str, index: int, rng) -> dict:
    """For each output of ``flt``: which entries change when input ``index`` of
    field ``name`` takes two other finite values (the entries that read it)."""
    values = to_host(dataset.field(name, association)[0])
    runs = []
    for _ in range(2):
        probe = values.astype(np.float64, copy=True)
        probe[index] = rng.uniform(-50, 50, probe[index].shape)
        probe = probe.astype(values.dtype)
        runs.append(run_new_fields(flt, _replace(dataset, name, association, probe)))
    base = run_new_fields(flt, dataset)
    return {out: (runs[0][out] != base[out]) | (runs[1][out] != base[out]) for out in base}


def _replace(dataset, name, association, values):
    xp_values = values
    if is_device_array(dataset.field(name, association)[0]):
        import cupy

        xp_values = cupy.asarray(values)
    key = "point_data" if association == "points" else "cell_data"
    return dataset.with_fields(**{key: {name: xp_values}})


def with_value(dataset, name: str, association: str, index: int, value: float):
    """``dataset`` with entry ``index`` of field ``name`` set to ``value`` (a copy)."""
    values = to_host(dataset.field(name, association)[0]).copy()
    values[index] = value
    return _replace(dataset, name, association, values)


def check_propagation(flt, dataset, association, index, special, rng):
    """Outputs that read input ``index`` become non-finite (NaN for NaN); others keep
    their value. Returns how many outputs read the special value."""
    reads = dependents(flt, dataset, "f", association, index, rng)
    base = run_new_fields(flt, dataset)
    poisoned = run_new_fields(flt, with_value(dataset, "f", association, index, special))
    reached = 0
    for out, mask in reads.items():
        got = poisoned[out]
        bad = np.isnan(got) if np.isnan(special) else ~np.isfinite(got)
        hidden = mask & ~bad
        assert not hidden.any(), (
            f"{out}: {int(hidden.sum())} values read input {index} = {special} and are "
            f"{got[hidden][:3]}")
        untouched = ~mask & np.isfinite(base[out])
        # An output that does not read the input keeps its value; one that multiplies
        # it by an exact zero weight may still turn NaN (0 * NaN), as IEEE 754 says.
        same = (got[untouched] == base[out][untouched]) | np.isnan(got[untouched])
        assert same.all(), f"{out}: outputs that do not read input {index} changed"
        reached += int(mask.sum())
    return reached


@st.composite
def random_topologies(draw):
    """Arbitrary (possibly invalid) unstructured grid arrays of small size."""
    n_points = draw(st.integers(0, 8))
    types = draw(st.lists(st.sampled_from(sorted(CELL_SHAPES) + [0, 2, 4, 7, 42, 255, -1]),
                          max_size=6))
    sizes = [CELL_SHAPES[t].n_corners if t in CELL_SHAPES and draw(st.booleans())
             else draw(st.integers(0, 9)) for t in types]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    if draw(st.integers(0, 4)) == 0 and offsets.size:
        offsets[draw(st.integers(0, offsets.size - 1))] += draw(st.integers(-3, 3))
    conn = draw(hnp.arrays(np.int64, max(int(offsets[-1]), 0),
                           elements=st.integers(-2, n_points + 1)))
    points = np.random.default_rng(draw(st.integers(0, 99))).random((n_points, 3))
    return points, conn, offsets, np.array(types, dtype=np.int64)
