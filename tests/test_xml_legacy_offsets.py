"""Cell offsets of VTK XML files before version 2 (``daxpy.io.xml_offsets``).

VTK's readers size such a file's connectivity from the last cell's offset, so
a corrupt one (found by the file fuzz) aborted the process with
``std::bad_alloc``. The files here are written by a small writer of that format
in every encoding VTK reads: ascii, inline base64, appended raw or base64;
uncompressed or in blocks of zlib, LZ4 or LZMA (blocks small enough that the
last offset straddles two); 32- or 64-bit headers; ``.vtu`` and ``.vtp``. Each is read in a child
process: the valid file must read, the corrupt one must be refused naming the
offset it read.
"""

import base64
import struct

import numpy as np
import pytest

pytest.importorskip("vtk")

from read_in_child import read_all  # noqa: E402

COMPRESSORS = [None, "vtkZLibDataCompressor", "vtkLZ4DataCompressor",
               "vtkLZMADataCompressor"]
FORMATS = ["ascii", "binary", "raw", "base64"]
HUGE = 69524319247532112
BLOCK = 12  # bytes: an Int64 offset straddles two blocks


def _compress(compressor: str, data: bytes) -> bytes:
    from vtkmodules import vtkIOCore

    return bytes(memoryview(getattr(vtkIOCore, compressor)().Compress(data, len(data))))


def _stored(data: bytes, compressor, header: str) -> list[bytes]:
    """The header and body of one payload, before any base64."""
    word = "<Q" if header == "UInt64" else "<I"
    if compressor is None:
        return [struct.pack(word, len(data)) + data]
    blocks = [_compress(compressor, data[at:at + BLOCK]) for at in range(0, len(data), BLOCK)]
    last = len(data) - BLOCK * (len(blocks) - 1)
    head = struct.pack(word[0] + word[1] * (3 + len(blocks)), len(blocks), BLOCK,
                       last % BLOCK, *map(len, blocks))
    # VTK encodes a compressed payload's header apart from its blocks.
    return [head, b"".join(blocks)]


def legacy_file(offsets: list[int], fmt: str, compressor, header: str, root: str) -> bytes:
    """A version-1.0 ``.vtu`` of two tetrahedra, or ``.vtp`` of two quads, whose
    offsets array is ``offsets``."""
    arrays = {"connectivity": np.array([0, 1, 2, 3, 1, 2, 3, 4], np.int64),
              "offsets": np.array(offsets, np.int64)}
    if root == "UnstructuredGrid":
        arrays["types"] = np.array([10, 10], np.uint8)
    kinds = {"connectivity": "Int64", "offsets": "Int64", "types": "UInt8"}
    appended, elements = b"", []
    for name, values in arrays.items():
        attrs = f'type="{kinds[name]}" Name="{name}"'
        if fmt == "ascii":
            text = " ".join(map(str, values.tolist()))
            elements.append(f'<DataArray {attrs} format="ascii">{text}</DataArray>')
            continue
        parts = _stored(values.tobytes(), compressor, header)
        body = b"".join(parts) if fmt == "raw" else b"".join(map(base64.b64encode, parts))
        if fmt == "binary":
            elements.append(f'<DataArray {attrs} format="binary">{body.decode()}</DataArray>')
        else:
            elements.append(f'<DataArray {attrs} format="appended" offset="{len(appended)}"/>')
            appended += body
    points = " ".join(map(str, [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1]))
    compressed = f' compressor="{compressor}"' if compressor else ""
    cells, count = ("Cells", "NumberOfCells") if root == "UnstructuredGrid" else \
        ("Polys", "NumberOfPolys")
    text = (f'<VTKFile type="{root}" version="1.0" byte_order="LittleEndian" '
            f'header_type="{header}"{compressed}><{root}>'
            f'<Piece NumberOfPoints="5" {count}="2"><Points>'
            '<DataArray type="Float64" NumberOfComponents="3" format="ascii">'
            f'{points}</DataArray></Points><{cells}>{"".join(elements)}</{cells}></Piece>'
            f'</{root}>')
    if fmt in ("raw", "base64"):
        return (text + f'<AppendedData encoding="{fmt}">_').encode() + appended + \
            b"</AppendedData></VTKFile>"
    return (text + "</VTKFile>").encode()


def _cases():
    for fmt in FORMATS:
        for compressor in [None] if fmt == "ascii" else COMPRESSORS:
            for header in ["UInt32"] if fmt == "ascii" else ["UInt32", "UInt64"]:
                for root, suffix in (("UnstructuredGrid", ".vtu"), ("PolyData", ".vtp")):
                    yield fmt, compressor, header, root, suffix


def test_legacy_offsets_are_read_before_vtk_sizes_the_connectivity(tmp_path):
    """Every encoding: [4, 8] reads; [4, HUGE] and [4, 9] are refused, naming the
    offset; [4, HUGE, 8] (a third value past the cells) reads, as VTK reads
    only one offset per cell."""
    expected = {}
    for fmt, compressor, header, root, suffix in _cases():
        label = f"{fmt}-{(compressor or 'none')[3:7]}-{header}"
        for offsets, outcome in (([4, 8], "ok "), ([4, HUGE], f"ends at {HUGE},"),
                                 ([4, 9], "ends at 9,"), ([4, 8, HUGE], "ok ")):
            path = tmp_path / f"{label}-{len(offsets)}-{offsets[1]}{suffix}"
            path.write_bytes(legacy_file(offsets, fmt, compressor, header, root))
            expected[str(path)] = outcome
    outcomes = read_all(list(expected), tmp_path)
    wrong = {path: outcomes[path] for path, want in expected.items()
             if not (outcomes[path].startswith(want) if want == "ok " else
                     outcomes[path].startswith("refused ") and want in outcomes[path])}
    assert wrong == {}


def test_files_vtk_writes_give_the_scan_their_true_last_offset(tmp_path, monkeypatch):
    """VTK 9's writer still writes version 0.1 and 1.0 files (one offset a cell) in
    every mode: the scan reads each one's last offset as the connectivity's size."""
    import itertools

    import vtk

    from daxpy.io import xml_offsets
    from daxpy.io.xml_scan import scan_xml

    grid, points = vtk.vtkUnstructuredGrid(), vtk.vtkPoints()
    rng = np.random.default_rng(1)
    for point in rng.random((300, 3)):
        points.InsertNextPoint(*point)
    grid.SetPoints(points)
    for _ in range(200):
        ids = vtk.vtkIdList()
        for i in rng.choice(300, 4, replace=False):
            ids.InsertNextId(int(i))
        grid.InsertNextCell(vtk.VTK_TETRA, ids)
    read = {}

    def recorded(self, declared):
        read[declared.path] = ([end for _, end in self.last], list(self.connectivity.values()))

    monkeypatch.setattr(xml_offsets.LegacyCells, "check", recorded)
    modes = itertools.product(["Binary", "Appended"], ["None", "ZLib", "LZ4", "LZMA"],
                              ["32", "64"], [True, False])
    for mode, compressor, header, encoded in modes:
        if mode == "Binary" and not encoded:
            continue  # inline data is always base64
        writer = vtk.vtkXMLUnstructuredGridWriter()
        writer.SetInputData(grid)
        getattr(writer, f"SetDataModeTo{mode}")()
        getattr(writer, f"SetCompressorTypeTo{compressor}")()
        getattr(writer, f"SetHeaderTypeToUInt{header}")()
        writer.SetEncodeAppendedData(encoded)
        writer.SetBlockSize(100)  # several blocks; the last offset in the last
        path = str(tmp_path / f"{mode}-{compressor}-{header}-{encoded}.vtu")
        writer.SetFileName(path)
        writer.Write()
        with open(path, "rb") as f:
            head = f.read(200)
        assert b'version="0.1"' in head or b'version="1.0"' in head, path
        scan_xml(path, "unstructured")
        assert read[path] == ([800], [800]), path
