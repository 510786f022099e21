"""Scan a VTK XML file (``.vti`` ``.vtr`` ``.vts`` ``.vtu`` ``.vtp``) before VTK reads it.

The scan parses the XML with expat, which keeps its element stack on the heap
(VTK's reader crashes on deep nesting), and stops at ``<AppendedData>``, so a
large file is never loaded whole. It refuses a file that is not well-formed,
nests deeper than any VTK file, has a DTD, or whose attributes do not parse
(a ``Spacing`` of ``nan`` is dropped by VTK silently). It then checks each
array's declared size against the memory available and its payload against
the file (:mod:`daxpy.io.xml_payload`).

Examples
--------
>>> import os, tempfile, numpy as np, daxpy
>>> from daxpy.io.xml_scan import scan_xml
>>> path = os.path.join(tempfile.mkdtemp(), "g.vti")
>>> daxpy.io.write(daxpy.UniformGrid(dims=(3, 3), point_data={"t": np.zeros(9)}), path)
>>> declared = scan_xml(path, "uniform")
>>> declared.n_points, declared.arrays
(9, {('point', 't'): (9, 1)})
"""

from __future__ import annotations

import math
import xml.parsers.expat

from .file_checks import Declared, check_bytes, file_error
from .xml_payload import ArrayPayload, check_payloads

__all__ = ["scan_xml"]

MAX_DEPTH = 64
"""Deepest element nesting accepted; VTK's own files nest 6 deep."""

_CHUNK = 1 << 20
_ROOT_TYPES = {"uniform": "ImageData", "rectilinear": "RectilinearGrid",
               "curvilinear": "StructuredGrid", "unstructured": "UnstructuredGrid",
               "polydata": "PolyData"}
# Roots whose pieces list their points and cells (the others hold extents).
_EXPLICIT = ("UnstructuredGrid", "PolyData")
# PolyData's cell sections and the <Piece> attribute counting each.
_POLY_CELLS = {"Verts": "NumberOfVerts", "Lines": "NumberOfLines",
               "Strips": "NumberOfStrips", "Polys": "NumberOfPolys"}
_ITEM_BYTES = {"Int8": 1, "UInt8": 1, "Int16": 2, "UInt16": 2, "Int32": 4, "UInt32": 4,
               "Int64": 8, "UInt64": 8, "Float32": 4, "Float64": 8,
               "String": 32}  # a std::string per value: its size, not its text's
_SECTIONS = {"PointData": "point", "CellData": "cell", "FieldData": "field",
             "Points": "points", "Coordinates": "coordinates", "Cells": "cells",
             **dict.fromkeys(_POLY_CELLS, "cells")}
_MAX_COMPONENTS = 1 << 20


class _Stop(Exception):
    """Raised by a handler at <AppendedData>: the rest of the file is payload."""


def _numbers(path: str, element: str, attrs: dict, name: str, count: int, kind):
    """Attribute ``name`` of ``element`` as ``count`` numbers of ``kind`` (int or
    float, finite), or None when absent."""
    text = attrs.get(name)
    if text is None:
        return None
    words = text.split()
    try:
        values = [kind(word) for word in words]
    except ValueError:
        values = []
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise file_error(path, f"has <{element} {name}=\"{text[:80]}\">: expected "
                         f"{count} finite {'integers' if kind is int else 'numbers'}")
    return values


def _extent_counts(path: str, element: str, extent: list[int]) -> tuple[list[int], int, int]:
    dims = [extent[2 * a + 1] - extent[2 * a] + 1 for a in range(3)]
    if min(dims) < 1:
        raise file_error(path, f"has <{element}> with an empty or reversed extent {extent}")
    n_points = dims[0] * dims[1] * dims[2]
    n_cells = math.prod(d - 1 for d in dims if d > 1) if n_points > 1 else 1
    return dims, n_points, n_cells


class _Scanner:
    """Expat handlers that fill a :class:`Declared` and the list of payloads."""

    def __init__(self, path: str, family: str):
        self.path, self.root = path, _ROOT_TYPES[family]
        self.declared = Declared(path)
        self.depth, self.stack = 0, []
        self.file_attrs: dict = {}
        self.piece = None  # (n_points, n_cells, dims) of the current <Piece>
        self.payloads: list[ArrayPayload] = []
        self.inline: ArrayPayload | None = None
        self.appended_at: int | None = None
        self.appended_encoding = "base64"
        self.whole_extent = self.whole_dims = None  # structured files only
        self.coordinate_axis = 0
        self.piece_cells: dict[str, int] = {}  # PolyData: cells of each section
        self.pieces = 0
        self.legacy_offsets = False

    def refuse(self, problem: str):
        raise file_error(self.path, problem)

    # -- expat handlers -------------------------------------------------------
    def start(self, name: str, attrs: dict) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.refuse(f"nests XML elements more than {MAX_DEPTH} deep; "
                        "it is not a VTK file")
        parent = self.stack[-1] if self.stack else None
        self.stack.append(name)
        if parent is None:
            self.root_element(name, attrs)
        elif name == self.root and parent == "VTKFile":
            self.dataset_element(attrs)
        elif name == "Piece":
            self.piece_element(attrs)
        elif name == "DataArray":
            self.data_array(parent, attrs)
        elif name == "AppendedData":
            self.appended_encoding = attrs.get("encoding", "base64")
            if self.appended_encoding not in ("raw", "base64"):
                self.refuse(f"has <AppendedData encoding=\"{self.appended_encoding}\">; "
                            "VTK reads raw or base64")
            self.appended_at = self.parser.CurrentByteIndex
            raise _Stop

    def end(self, _name: str) -> None:
        self.depth -= 1
        self.stack.pop()
        self.inline = None

    def text(self, data: str) -> None:
        if self.inline is not None:
            self.inline.add_text(data)

    def doctype(self, *_args) -> None:
        # VTK files have no DTD; entity declarations could expand without bound.
        self.refuse("has a DOCTYPE declaration; VTK XML files have none")

    # -- elements -------------------------------------------------------------
    def root_element(self, name: str, attrs: dict) -> None:
        kind = attrs.get("type")
        if name != "VTKFile" or kind != self.root:
            found = f"<{name} type=\"{kind}\">" if kind else f"<{name}>"
            self.refuse(f"starts with {found}; expected <VTKFile type=\"{self.root}\">")
        for key, allowed in (("byte_order", ("LittleEndian", "BigEndian")),
                             ("header_type", ("UInt32", "UInt64")),
                             ("compressor", ("vtkZLibDataCompressor",
                                             "vtkLZ4DataCompressor",
                                             "vtkLZMADataCompressor"))):
            if key in attrs and attrs[key] not in allowed:
                self.refuse(f"has {key}=\"{attrs[key][:80]}\"; expected one of "
                            f"{', '.join(allowed)}")
        version = _numbers(self.path, name, {"version": attrs.get("version", "0.1")},
                           "version", 1, float)[0]
        self.legacy_offsets = version < 2  # one offset per cell, no leading 0
        self.file_attrs = attrs

    def dataset_element(self, attrs: dict) -> None:
        if self.root in _EXPLICIT:
            return
        extent = _numbers(self.path, self.root, attrs, "WholeExtent", 6, int)
        if extent is None:
            self.refuse(f"has <{self.root}> without a WholeExtent")
        self.whole_dims, self.declared.n_points, self.declared.n_cells = \
            _extent_counts(self.path, self.root, extent)
        self.whole_extent = extent
        if self.root == "ImageData":
            _numbers(self.path, self.root, attrs, "Origin", 3, float)
            _numbers(self.path, self.root, attrs, "Direction", 9, float)
            spacing = _numbers(self.path, self.root, attrs, "Spacing", 3, float)
            if spacing is not None and min(spacing) <= 0:
                self.refuse(f"has <ImageData Spacing=\"{attrs['Spacing']}\">: "
                            "spacing must be positive")

    def piece_element(self, attrs: dict) -> None:
        self.pieces += 1
        if self.root in _EXPLICIT:
            keys = ("NumberOfPoints",) + (tuple(_POLY_CELLS.values()) if self.root ==
                                          "PolyData" else ("NumberOfCells",))
            counts = [(_numbers(self.path, "Piece", attrs, key, 1, int) or [0])[0]
                      for key in keys]
            if min(counts) < 0:
                self.refuse("has <Piece " + " ".join(f'{k}="{c}"' for k, c in zip(
                    keys, counts)) + ">: counts must not be negative")
            n_points, n_cells = counts[0], sum(counts[1:])
            self.piece_cells = dict(zip(_POLY_CELLS, counts[1:]))
            self.piece = (n_points, n_cells, None)
            self.declared.n_points = (self.declared.n_points or 0) + n_points
            self.declared.n_cells = (self.declared.n_cells or 0) + n_cells
            return
        extent = _numbers(self.path, "Piece", attrs, "Extent", 6, int)
        if extent is None:
            self.refuse("has a <Piece> without an Extent")
        whole = self.whole_extent
        if whole is None or any(extent[2 * a] < whole[2 * a] or extent[2 * a + 1] >
                                whole[2 * a + 1] for a in range(3)):
            self.refuse(f"has <Piece Extent=\"{attrs['Extent']}\"> outside its "
                        f"WholeExtent {whole}")
        dims, n_points, n_cells = _extent_counts(self.path, "Piece", extent)
        self.piece = (n_points, n_cells, dims)
        self.coordinate_axis = 0

    def data_array(self, parent: str, attrs: dict) -> None:
        section = _SECTIONS.get(parent)
        if section is None:
            return  # VTK ignores arrays elsewhere
        name = attrs.get("Name", "")
        what = f"<DataArray Name=\"{name[:80]}\"> in <{parent}>"
        kind = attrs.get("type")
        if kind not in _ITEM_BYTES:
            self.refuse(f"has {what} of type \"{str(kind)[:40]}\"; VTK reads "
                        f"{', '.join(_ITEM_BYTES)}")
        components = (_numbers(self.path, "DataArray", attrs, "NumberOfComponents", 1, int)
                      or [1])[0]
        if not 1 <= components <= _MAX_COMPONENTS:
            self.refuse(f"has {what} with {components} components")
        stated = _numbers(self.path, "DataArray", attrs, "NumberOfTuples", 1, int)
        tuples, allocated = self.expected_tuples(section, name, what, stated and stated[0])
        if allocated is not None:
            check_bytes(self.declared, what, allocated * components * _ITEM_BYTES[kind])
        if section in ("point", "cell", "field"):
            self.declare_array(section, name, tuples, components)
        payload = ArrayPayload(what, kind, _ITEM_BYTES[kind],
                               None if tuples is None else tuples * components,
                               attrs.get("format", "ascii"), offset=None,
                               exact=not (section == "cells" and name == "offsets"))
        if section == "cells" and self.legacy_offsets and name in ("connectivity", "offsets"):
            payload.cells = (self.pieces, parent, name)
        if payload.format == "appended":
            offset = _numbers(self.path, "DataArray", attrs, "offset", 1, int)
            if offset is None or offset[0] < 0:
                self.refuse(f"has {what} in appended format without a valid offset")
            payload.offset = offset[0]
        elif payload.format in ("ascii", "binary"):
            self.inline = payload
        else:
            self.refuse(f"has {what} in format \"{payload.format[:40]}\"; "
                        "VTK reads ascii, binary or appended")
        self.payloads.append(payload)

    def declare_array(self, section: str, name: str, tuples: int, components: int) -> None:
        """Record an attribute array as the reader's output will hold it."""
        if section == "field":
            self.declared.arrays[(section, name)] = (tuples, components)
        elif self.root in _EXPLICIT:
            # Pieces of an unstructured or polydata file are appended one after the other.
            before = self.declared.arrays.get((section, name), (0, components))[0]
            self.declared.arrays[(section, name)] = (before + tuples, components)
        else:
            # Pieces of a structured file fill parts of the whole extent.
            whole = self.declared.n_points if section == "point" else self.declared.n_cells
            self.declared.arrays[(section, name)] = (whole, components)

    def expected_tuples(self, section: str, name: str, what: str, stated):
        """Tuples an array of ``section`` holds in its piece, and tuples the
        reader allocates for it (None where the payload says)."""
        if section == "field":
            if stated is None or stated < 0:
                self.refuse(f"has {what} without a valid NumberOfTuples")
            return stated, stated
        if self.piece is None:
            self.refuse(f"has {what} outside a <Piece>")
        n_points, n_cells, dims = self.piece
        if section == "coordinates":
            if self.coordinate_axis > 2:
                self.refuse(f"has more than 3 arrays in <Coordinates> ({what})")
            tuples = dims[self.coordinate_axis]
            allocated = self.whole_dims[self.coordinate_axis]
            self.coordinate_axis += 1
        elif section == "cells":
            # connectivity (and polyhedron faces) sizes come from the payload;
            # offsets hold n_cells (+1 from file version 2) entries.
            cells = self.piece_cells.get(self.stack[-2], n_cells)
            tuples = allocated = {"types": cells, "offsets": cells + 1}.get(name)
        else:
            tuples = n_points if section in ("point", "points") else n_cells
            # A structured reader allocates its arrays for the whole extent.
            allocated = tuples if dims is None else self.declared.n_points \
                if section in ("point", "points") else self.declared.n_cells
        allowed = (tuples, tuples - 1) if name == "offsets" else (tuples,)
        if stated is not None and tuples is not None and stated not in allowed:
            self.refuse(f"has {what} with NumberOfTuples=\"{stated}\", but its piece "
                        f"holds {tuples}")
        return tuples, allocated


def _parse(scanner: _Scanner, stream) -> None:
    parser = scanner.parser = xml.parsers.expat.ParserCreate()
    parser.StartElementHandler, parser.EndElementHandler = scanner.start, scanner.end
    parser.CharacterDataHandler = scanner.text
    parser.StartDoctypeDeclHandler = scanner.doctype
    try:
        while chunk := stream.read(_CHUNK):
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except _Stop:
        pass  # the handler noted where the payload starts
    except xml.parsers.expat.ExpatError as err:
        raise file_error(scanner.path, f"is not well-formed XML: {err}") from None


def scan_xml(path: str, family: str) -> Declared:
    """Check a VTK XML file's structure, attributes and declared sizes.

    Parameters
    ----------
    path : str
        The file.
    family : str
        The grid family its extension promises (``"uniform"``,
        ``"rectilinear"``, ``"curvilinear"``, ``"unstructured"`` or ``"polydata"``).

    Returns
    -------
    Declared
        What the file declares, for :func:`daxpy.io.file_checks.cross_check`.

    Raises
    ------
    DataFileError
        If the file is not well-formed, nests too deep, has attributes that do
        not parse, or declares sizes that its payload or the memory available
        cannot hold.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "deep.vti")
    >>> with open(path, "w") as f:
    ...     _ = f.write('<VTKFile type="ImageData">' + "<a>" * 99 + "</a>" * 99 + "</VTKFile>")
    >>> scan_xml(path, "uniform")
    Traceback (most recent call last):
    ...
    daxpy.errors.DataFileError: '...deep.vti' nests XML elements more than 64 deep; ...
    """
    scanner = _Scanner(path, family)
    with open(path, "rb") as stream:
        _parse(scanner, stream)
        if not scanner.file_attrs:
            raise file_error(path, "has no <VTKFile> element")
        if scanner.piece is None:
            raise file_error(path, f"has no <Piece> in <{scanner.root}>")
        check_payloads(scanner.declared, scanner.payloads, scanner.file_attrs, stream,
                       scanner.appended_at,
                       scanner.appended_encoding)
    return scanner.declared
