"""Corruption fuzz of every file format daxpy reads.

Valid files of each format and encoding (``sample_files``) are truncated,
have bytes flipped, or have a declared number, attribute, keyword, type or
name replaced (hypothesis picks the sample, the place and the value). Each
batch of corrupted files is read in one child process under a memory limit
(``read_in_child``): every file must give a dataset whose fields fit its
counts, or a daxpy error. A crash, a hang or any other exception fails the
test and names the file.
"""

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("vtk")

from read_in_child import batch_settings, failures, read_all  # noqa: E402
from sample_files import write_samples  # noqa: E402

NUMBERS = ["-1", "-64", "0", "1", "7", "1000000000000", "100000000000",
           "99999999999999999999", "2147483648", "4294967295", "18446744073709551615",
           "1e12", "nan", "inf", "-inf", "-0", "3.5", "", "abc", "0x10", "1 2", "1 2 3 4 5 6 7"]
WORDS = ["POINTS", "CELLS", "CELL_TYPES", "POINT_DATA", "CELL_DATA", "FIELD", "SCALARS",
         "VECTORS", "LOOKUP_TABLE", "METADATA", "OFFSETS", "CONNECTIVITY", "DIMENSIONS",
         "double", "float", "int", "bit", "string", "vtkIdType", "unsigned_char",
         "DataArray", "Piece", "AppendedData", "PointData", "CellData", "Points", "Cells",
         "ImageData", "UnstructuredGrid", "format", "appended", "ascii", "binary", "raw",
         "Float64", "Int8", "UInt64", "String", "NumberOfComponents", "NumberOfTuples",
         "offset", "Extent", "Spacing", "%20", "a b", '"', "<", "&amp;", "&#0;", "",
         "x" * 300, "NULL_ARRAY", "BINARY", "ASCII"]
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORD = re.compile(rb"[A-Za-z_%][A-Za-z_0-9]*")


def _replace_match(data: bytes, pattern, where: int, value: str) -> bytes:
    found = list(pattern.finditer(data))
    if not found:
        return data
    match = found[where % len(found)]
    return data[:match.start()] + value.encode() + data[match.end():]


def corrupt(data: bytes, kind: str, where: int, choice: int, byte: int) -> bytes:
    """``data`` after one corruption of ``kind``, placed by ``where``."""
    if kind == "truncate":
        return data[:where % max(len(data), 1)]
    if kind == "flip":
        out = bytearray(data)
        for step in range(1 + choice % 4):
            index = (where + step * 7919 * choice) % len(out)
            out[index] ^= byte
        return bytes(out)
    if kind == "number":
        return _replace_match(data, _NUMBER, where, NUMBERS[choice % len(NUMBERS)])
    return _replace_match(data, _WORD, where, WORDS[choice % len(WORDS)])



@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    folder = tmp_path_factory.mktemp("samples")
    return {label: (path.suffix, path.read_bytes())
            for label, path in write_samples(folder).items()}


def test_samples_read_back(samples, tmp_path):
    """Every uncorrupted sample reads back as a dataset."""
    paths = []
    for label, (suffix, data) in samples.items():
        paths.append(str(tmp_path / f"{label}{suffix}"))
        Path(paths[-1]).write_bytes(data)
    outcomes = read_all(paths, tmp_path)
    assert {p: o for p, o in outcomes.items() if not o.startswith("ok ")} == {}


@pytest.mark.parametrize("kind", ["truncate", "flip", "number", "word"])
def test_corrupted_files_never_crash(kind, samples):
    labels = sorted(samples)
    case = st.tuples(st.sampled_from(labels), st.integers(0, 10**6), st.integers(0, 1000),
                     st.integers(1, 255))

    @batch_settings(2)
    @given(st.lists(case, min_size=30, max_size=30))
    def check(cases):
        with tempfile.TemporaryDirectory() as folder:
            paths = []
            for index, (label, where, choice, byte) in enumerate(cases):
                suffix, data = samples[label]
                path = Path(folder) / f"{index:02d}-{label}-{kind}-{where}-{choice}{suffix}"
                path.write_bytes(corrupt(data, kind, where, choice, byte))
                paths.append(str(path))
            assert failures(read_all(paths, Path(folder))) == {}

    check()
