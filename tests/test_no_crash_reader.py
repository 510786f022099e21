"""Issue 11, items 1.2 and 1.3: no file can make the reader take the process down.

Files declaring sizes they cannot hold (image extents, point and cell counts,
array offsets, component and tuple counts, compressed block headers, legacy
counts) and files nesting XML elements deep are refused with a
``DataFileError`` naming the file and the quantity, before VTK allocates or
parses anything. Every case is read in a child process under a memory limit
(``read_in_child``), so a crash fails the test instead of killing pytest.
"""

import base64
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("vtk")

from read_in_child import batch_settings, read_all  # noqa: E402
from sample_files import write_samples  # noqa: E402

HUGE = st.one_of(st.integers(10**9, 10**13), st.sampled_from([2**31, 2**32 - 1, 2**63 - 1]))
# Attributes of VTK XML files that set how much the reader allocates.
SIZE_ATTRIBUTES = ["WholeExtent", "Extent", "NumberOfPoints", "NumberOfCells",
                   "NumberOfComponents", "offset"]
LEGACY_COUNTS = ["POINTS", "CELLS", "CELL_TYPES", "POINT_DATA", "CELL_DATA", "DIMENSIONS",
                 "X_COORDINATES", "FIELD FieldData"]



@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return write_samples(tmp_path_factory.mktemp("samples"))


def outcomes_of(files: dict[str, bytes], folder: Path) -> dict[str, str]:
    """Write ``files`` (name -> bytes) into ``folder``, read them in a child:
    name -> outcome (see ``read_in_child``)."""
    for name, data in files.items():
        (folder / name).write_bytes(data)
    outcomes = read_all([str(folder / name) for name in files], folder)
    return {Path(path).name: outcome for path, outcome in outcomes.items()}


def refusals(files: dict[str, bytes], folder: Path) -> dict[str, str]:
    """The outcomes of ``files`` that are not a DataFileError naming the file."""
    return {name: outcome for name, outcome in outcomes_of(files, folder).items()
            if not (outcome.startswith("refused DataFileError") and name in outcome)}


def set_attribute(data: bytes, name: str, value: str, which: int = 0) -> bytes:
    """``data`` with the ``which``-th ``name="..."`` attribute set to ``value``."""
    found = list(re.finditer(rb'\b%s="[^"]*"' % name.encode(), data))
    match = found[which % len(found)]
    return data[:match.start()] + f'{name}="{value}"'.encode() + data[match.end():]


def test_listed_examples(samples, tmp_path):
    vti, vtu = samples["uniform-xml"].read_bytes(), samples["unstructured-xml"].read_bytes()
    offsets = [int(v) for v in re.findall(rb'offset="(\d+)', vtu)]
    last = offsets.index(max(offsets))
    files = {
        "extent.vti": set_attribute(set_attribute(vti, "WholeExtent", "0 4999 0 3999 0 2999"),
                                    "Extent", "0 4999 0 3999 0 2999"),
        "cells.vtu": set_attribute(vtu, "NumberOfCells", str(10**12)),
        "offset.vtu": set_attribute(vtu, "offset", str(10**11), last),
        "nested.vti": b'<?xml version="1.0"?><VTKFile type="ImageData">'
                      + b"<a>" * 200_000 + b"</a>" * 200_000 + b"</VTKFile>",
        "points.vtk": samples["unstructured-legacy-binary"].read_bytes().replace(
            b"POINTS 28", b"POINTS 1000000000000"),
    }
    by_name = outcomes_of(files, tmp_path)
    assert all(o.startswith("refused DataFileError") for o in by_name.values()), by_name
    assert "<DataArray Name=\"f32\"> in <PointData> of 240000000000 bytes" \
        in by_name["extent.vti"]
    assert "<CellData>" in by_name["cells.vtu"]
    assert "offset 100000000000, past the end of the file" in by_name["offset.vtu"]
    assert "nests XML elements more than 64 deep" in by_name["nested.vti"]
    assert "declares POINTS of 24000000000000 bytes" in by_name["points.vtk"]


@batch_settings(3)
@given(st.lists(st.tuples(st.sampled_from(["uniform", "rectilinear", "curvilinear",
                                           "unstructured"]),
                          st.sampled_from(SIZE_ATTRIBUTES), HUGE, st.integers(0, 20)),
                min_size=20, max_size=20))
def test_xml_declared_sizes_are_checked(samples, tmp_path_factory, cases):
    files = {}
    for index, (family, attribute, value, which) in enumerate(cases):
        data = samples[f"{family}-xml"].read_bytes()
        if f'{attribute}="'.encode() not in data:
            attribute = "offset"
        text = f"0 {value} 0 1 0 1" if "Extent" in attribute else str(value)
        files[f"{index}-{family}-{attribute}-{value}.xml{samples[f'{family}-xml'].suffix}"] = \
            set_attribute(data, attribute, text, which)
    assert refusals(files, tmp_path_factory.mktemp("xml")) == {}


def _with_block_header(data: bytes, header_type: str, words: tuple) -> bytes:
    """An appended base64 XML file whose first array's compression header says
    ``words`` (block count, block size, last block size)."""
    start = data.index(b"_", data.index(b"<AppendedData")) + 1
    fmt = "<" + ("I" if header_type == "UInt32" else "Q") * 3
    encoded = base64.b64encode(struct.pack(fmt, *words))  # 3 words: no padding
    return data[:start] + encoded + data[start + len(encoded):]


@batch_settings(2)
@given(st.lists(st.tuples(st.sampled_from(["uniform", "unstructured"]),
                          st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1),
                          st.integers(0, 2**32 - 1)), min_size=15, max_size=15))
def test_compression_headers_are_checked(samples, tmp_path_factory, cases):
    files = {}
    for index, (family, blocks, block_size, last) in enumerate(cases):
        if (blocks, block_size) < (2, 2**20):
            blocks, block_size = blocks + 2, block_size + 2**20  # always more than held
        data = _with_block_header(samples[f"{family}-xml"].read_bytes(), "UInt32",
                                  (blocks, block_size, last))
        extension = ".vti" if family == "uniform" else ".vtu"
        files[f"{index}-{family}-{blocks}-{block_size}-{last}{extension}"] = data
    assert refusals(files, tmp_path_factory.mktemp("blocks")) == {}


@batch_settings(3)
@given(st.lists(st.tuples(st.sampled_from(["uniform", "rectilinear", "curvilinear",
                                           "unstructured"]),
                          st.sampled_from(["binary", "ascii"]),
                          st.sampled_from(LEGACY_COUNTS),
                          st.one_of(HUGE, st.integers(-2**40, -1).map(str),
                                    st.sampled_from(["1e12", "nan", "-0x40", "12abc"]))),
                min_size=20, max_size=20))
def test_legacy_declared_counts_are_checked(samples, tmp_path_factory, cases):
    files = {}
    for index, (family, mode, keyword, value) in enumerate(cases):
        data = samples[f"{family}-legacy-{mode}"].read_bytes()
        found = re.search(rb"\n(%s) \S+" % keyword.encode(), data) or \
            re.search(rb"\n(POINT_DATA) \S+", data)
        edited = data[:found.start()] + b"\n" + found[1] + f" {value}".encode() + \
            data[found.end():]
        files[f"{index}-{family}-{mode}-{found[1].decode().split()[0]}.vtk"] = edited
    assert refusals(files, tmp_path_factory.mktemp("legacy")) == {}


@batch_settings(2)
@given(st.lists(st.tuples(st.integers(65, 300_000), st.sampled_from(["a", "Piece", "DataArray"]),
                          st.booleans()), min_size=6, max_size=6))
def test_deep_nesting_is_refused(tmp_path_factory, cases):
    files = {}
    for index, (depth, tag, closed) in enumerate(cases):
        body = f"<{tag}>".encode() * depth + (f"</{tag}>".encode() * depth if closed else b"")
        files[f"{index}-{tag}-{depth}.vti"] = (b'<?xml version="1.0"?>\n'
                                                b'<VTKFile type="ImageData">' + body)
    assert refusals(files, tmp_path_factory.mktemp("deep")) == {}


def test_cli_reaches_the_checks(samples, tmp_path):
    """``daxpy run`` on a hostile file prints one line naming it and exits 1."""
    bad = tmp_path / "bad.vti"
    bad.write_bytes(b'<?xml version="1.0"?><VTKFile type="ImageData">'
                    + b"<a>" * 200_000 + b"</a>" * 200_000 + b"</VTKFile>")
    done = subprocess.run([sys.executable, "-m", "daxpy.cli", "run", str(bad), "--field",
                           "f32"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "bad.vti" in done.stderr and "nests XML elements" in done.stderr
    assert "Traceback" not in done.stderr


def test_reads_from_threads(samples, tmp_path):
    """Valid and corrupt files read from 8 threads at once, in a child: each
    gives its own dataset or its own error (VTK's message redirection is
    process-wide, so reads take a lock around it)."""
    bad = tmp_path / "bad.vtk"
    bad.write_bytes(samples["uniform-legacy-binary"].read_bytes()[:300])
    paths = [str(path) for path in samples.values()] + [str(bad)] * 8
    script = f"""
import sys
from concurrent.futures import ThreadPoolExecutor
import daxpy.io
from daxpy.errors import DataFileError

def outcome(path):
    try:
        grid = daxpy.io.read(path)
        return (grid.n_points, sorted(grid.point_data))
    except DataFileError as err:
        return str(err)

paths = {paths!r} * 3
alone = [outcome(p) for p in paths]
with ThreadPoolExecutor(8) as pool:
    together = list(pool.map(outcome, paths))
assert together == alone, [(p, a, b) for p, a, b in zip(paths, alone, together) if a != b]
assert all("bad.vtk" in o for p, o in zip(paths, alone) if p.endswith("bad.vtk"))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
