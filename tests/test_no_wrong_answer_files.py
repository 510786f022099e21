"""Issue 11, items 3.1 and 3.2: a file never reads as a silently wrong dataset.

What VTK's readers repair or drop without an error (``POINTS 1e12`` read as an
empty grid, half a binary file read as 64 points, truncated files losing
fields, ``Spacing="nan 0.25 1"`` read as 1 1 1) is refused with a
``DataFileError`` naming the file and the problem; every error or warning VTK
reports while reading is one too; and what VTK read is cross-checked with
what the file declares. Corrupted files are read in a child process
(``read_in_child``).
"""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("vtk")

from read_in_child import batch_settings, read_all  # noqa: E402
from sample_files import XML_EXTENSION, write_samples  # noqa: E402
from test_no_crash_reader import outcomes_of, set_attribute  # noqa: E402

from daxpy.errors import DataFileError  # noqa: E402
from daxpy.io.file_checks import Declared, cross_check  # noqa: E402
from daxpy.io.vtk_messages import vtk_messages  # noqa: E402

BAD_NUMBERS = ["nan", "inf", "-inf", "NaN", "abc", "", "1e999", "0x10", "1,5"]
FAMILIES = list(XML_EXTENSION)


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return write_samples(tmp_path_factory.mktemp("samples"))


@pytest.fixture(scope="module")
def digests(samples, tmp_path_factory):
    """label -> the outcome ("ok <digest>") of reading the intact sample."""
    folder = tmp_path_factory.mktemp("intact")
    outcomes = read_all([str(path) for path in samples.values()], folder)
    return {label: outcomes[str(path)] for label, path in samples.items()}


def test_listed_examples(samples, tmp_path):
    binary = samples["unstructured-legacy-binary"].read_bytes()
    ascii_ = samples["unstructured-legacy-ascii"].read_bytes()
    legacy_image = samples["uniform-legacy-binary"].read_bytes()
    files = {
        "points-1e12.vtk": binary.replace(b"POINTS 28", b"POINTS 1e12"),
        "points-neg.vtk": binary.replace(b"POINTS 28", b"POINTS -64"),
        "points-neg-ascii.vtk": ascii_.replace(b"POINTS 28", b"POINTS -64"),
        "half.vtk": binary[:len(binary) // 2],
        # cut just before the last array of the file: VTK would drop it
        "dropped.vtk": legacy_image[:legacy_image.rindex(b"\nv64 ") + 1],
        "nan.vti": set_attribute(samples["uniform-xml"].read_bytes(), "Spacing",
                                 "nan 0.25 1"),
    }
    by_name = outcomes_of(files, tmp_path)
    expected = {
        "points-1e12.vtk": "declares POINTS as '1e12': expected a non-negative integer",
        "points-neg.vtk": "declares POINTS as '-64': expected a non-negative integer",
        "points-neg-ascii.vtk": "declares POINTS as '-64'",
        "half.vtk": "the file is truncated",
        "dropped.vtk": "the file is truncated",
        "nan.vti": 'has <ImageData Spacing="nan 0.25 1">: expected 3 finite numbers',
    }
    for name, message in expected.items():
        assert by_name[name].startswith("refused DataFileError"), (name, by_name[name])
        assert name in by_name[name] and message in by_name[name], (name, by_name[name])


@batch_settings(3)
@given(cuts=st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 999)),
                     min_size=30, max_size=30))
def test_truncated_files_are_refused_or_whole(samples, digests, tmp_path_factory, cuts):
    """A file cut anywhere is refused, or reads as the intact file (a cut in
    trailing whitespace), or as the intact grid with fewer of its fields
    (a legacy file cut between sections)."""
    labels = sorted(samples)
    files, origin = {}, {}
    for index, (which, permille) in enumerate(cuts):
        label = labels[which % len(labels)]
        data = samples[label].read_bytes()
        name = f"{index}-{label}-{permille}{samples[label].suffix}"
        files[name], origin[name] = data[:len(data) * permille // 1000], label
    for name, outcome in outcomes_of(files, tmp_path_factory.mktemp("cut")).items():
        if outcome.startswith("refused DataFileError") or outcome == digests[origin[name]]:
            continue
        # A legacy file cut between two sections is a valid file with fewer
        # fields: it must read as the same grid with some of the same fields.
        intact, read_back = digests[origin[name]].split(), outcome.split()
        assert name.endswith(".vtk") and read_back[:2] == intact[:2], (name, outcome)
        assert set(read_back[2:]) <= set(intact[2:]), (name, outcome)


@batch_settings(3)
@given(st.lists(st.tuples(st.sampled_from(FAMILIES),
                          st.sampled_from(["Origin", "Spacing", "Direction", "WholeExtent",
                                           "Extent"]),
                          st.sampled_from(BAD_NUMBERS + ["1 2", "0 0 0", "-1 1 1"]),
                          st.integers(0, 8)), min_size=20, max_size=20))
def test_xml_geometry_attributes_are_validated(samples, tmp_path_factory, cases):
    files = {}
    for index, (family, attribute, bad, position) in enumerate(cases):
        data = samples[f"{family}-xml"].read_bytes()
        found = re.search(rb'\b%s="([^"]*)"' % attribute.encode(), data)
        if found is None:  # only images have an origin, spacing and direction
            attribute = "WholeExtent" if family != "unstructured" else "NumberOfPoints"
            found = re.search(rb'\b%s="([^"]*)"' % attribute.encode(), data)
        words = found[1].decode().split()
        if bad in BAD_NUMBERS:
            words[position % len(words)] = bad
        else:
            words = bad.split()
        if attribute == "Origin" and bad in ("0 0 0", "-1 1 1"):
            continue  # any finite origin is valid
        text = " ".join(words)
        if attribute in ("WholeExtent", "Extent", "NumberOfPoints") and \
                bad not in BAD_NUMBERS and bad != "1 2":
            text = "0 -1 0 0 0 0" if attribute != "NumberOfPoints" else "-1"
        files[f"{index}-{family}-{attribute}{XML_EXTENSION[family]}"] = \
            set_attribute(data, attribute, text)
    for name, outcome in outcomes_of(files, tmp_path_factory.mktemp("attrs")).items():
        assert outcome.startswith("refused DataFileError") and name in outcome, outcome
        attribute = name.split("-")[2].split(".")[0]
        assert attribute in outcome, outcome


@batch_settings(2)
@given(st.lists(st.tuples(st.sampled_from(["SPACING", "ORIGIN"]),
                          st.sampled_from(BAD_NUMBERS + ["0", "-1"]), st.integers(0, 2),
                          st.sampled_from(["binary", "ascii"])),
                min_size=12, max_size=12))
def test_legacy_geometry_is_validated(samples, tmp_path_factory, cases):
    files = {}
    for index, (keyword, bad, axis, mode) in enumerate(cases):
        data = samples[f"uniform-legacy-{mode}"].read_bytes()
        found = re.search(rb"\n%s ([^\n]*)\n" % keyword.encode(), data)
        words = found[1].split()
        words[axis] = bad.encode()
        edited = data[:found.start(1)] + b" ".join(words) + data[found.end(1):]
        if bad in ("0", "-1") and keyword == "ORIGIN":
            continue  # any finite origin is valid
        files[f"{index}-{keyword}-{mode}.vtk"] = edited
    for name, outcome in outcomes_of(files, tmp_path_factory.mktemp("legacy")).items():
        assert outcome.startswith("refused DataFileError") and name in outcome, outcome
        assert name.split("-")[1] in outcome, outcome


def test_vtk_errors_become_exceptions(samples, tmp_path):
    """A value VTK cannot parse in an XML ASCII array: VTK's own error is raised."""
    data = samples["uniform-xml-ascii"].read_bytes()
    start = data.index(b">", data.index(b'<DataArray type="Float32"')) + 1
    files = {"value.vti": data[:start] + b" 1 x" + data[start:]}
    outcome = outcomes_of(files, tmp_path)["value.vti"]
    assert outcome.startswith("refused DataFileError: VTK could not read '"), outcome
    assert "value.vti': Error" in outcome


def test_vtk_messages_collects_warnings_silently(capfd):
    from vtkmodules.vtkCommonCore import vtkOutputWindow
    from vtkmodules.vtkCommonDataModel import vtkImageData

    window = vtkOutputWindow.GetInstance()
    mode = window.GetDisplayMode()
    with vtk_messages(vtkImageData()) as messages:
        window.DisplayWarningText("Warning: In x.cxx, line 1\nvtkThing (0x1): it went odd\n")
        window.DisplayErrorText("ERROR: In y.cxx, line 2\nvtkOther (0x2): it broke\n")
    assert messages == ["it went odd", "it broke"]
    assert capfd.readouterr().err == ""
    assert window.GetDisplayMode() == mode


def test_cross_check_names_every_mismatch():
    from vtkmodules.util.numpy_support import numpy_to_vtk
    from vtkmodules.vtkCommonDataModel import vtkImageData

    image = vtkImageData()
    image.SetDimensions(2, 2, 1)
    values = numpy_to_vtk(np.zeros((4, 2)), deep=1)
    values.SetName("t")
    image.GetPointData().AddArray(values)
    cross_check(Declared("g.vti", 4, 1, {("point", "t"): (4, 2)}), image)
    for arrays, message in (({("point", "t"): (4, 3)}, "component count of 3, but VTK read 2"),
                            ({("point", "t"): (5, 2)}, "tuple count of 5, but VTK read 4"),
                            ({("cell", "t"): (1, 2)}, "cell array 't', but VTK did not")):
        with pytest.raises(DataFileError, match=f"'g.vti' declares .*{message}"):
            cross_check(Declared("g.vti", 4, 1, arrays), image)
    with pytest.raises(DataFileError, match="cell count of 2, but VTK read 1"):
        cross_check(Declared("g.vti", 4, 2), image)
