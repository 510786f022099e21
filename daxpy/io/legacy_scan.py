"""Scan a legacy ``.vtk`` file before VTK reads it.

VTK's legacy reader allocates every count it meets (``POINTS 1e12`` aborts
the process) and turns most parse failures into an empty or partial dataset
without an error. The scan walks the file the way the reader does: every
keyword, every count, every block of data (skipped by size in binary files,
by counting words in ASCII ones), so a count the file cannot hold, a
truncated block, a negative or non-numeric count, or an unknown keyword is
refused before VTK allocates anything. What it finds is returned for
:func:`daxpy.io.file_checks.cross_check`.

Examples
--------
>>> import os, tempfile, numpy as np, daxpy
>>> from daxpy.io import write
>>> from daxpy.io.legacy_scan import scan_legacy
>>> path = os.path.join(tempfile.mkdtemp(), "g.vtk")
>>> write(daxpy.UniformGrid(dims=(3, 3), point_data={"t": np.zeros(9)}), path)
>>> declared = scan_legacy(path)
>>> declared.n_points, declared.n_cells, declared.arrays
(9, 4, {('point', 't'): (9, 1)})
"""

from __future__ import annotations

import math
import re
from urllib.parse import unquote_to_bytes

import numpy as np

from .file_checks import Declared, check_bytes, file_error
from .legacy_cursor import Cursor
from .legacy_values import value_check

__all__ = ["scan_legacy"]

# Legacy type names -> bytes per value (0: bits).
_ITEM_BYTES = {
    "bit": 0, "char": 1, "signed_char": 1, "unsigned_char": 1, "short": 2,
    "unsigned_short": 2, "int": 4, "unsigned_int": 4,
    "long": np.dtype(np.int_).itemsize, "unsigned_long": np.dtype(np.uint).itemsize,
    "long_long": 8, "unsigned_long_long": 8, "vtkidtype": 8, "float": 4, "double": 8,
    **{f"vtktype{sign}int{bits}": bits // 8 for sign in ("", "u") for bits in (8, 16, 32, 64)},
    "vtktypefloat32": 4, "vtktypefloat64": 8,
}
_DATASETS = {"STRUCTURED_POINTS", "STRUCTURED_GRID", "RECTILINEAR_GRID",
             "UNSTRUCTURED_GRID", "POLYDATA"}
# Datasets that list their points and cells (none: no cells).
_EXPLICIT = ("UNSTRUCTURED_GRID", "POLYDATA")
_POLY_CELLS = ("VERTICES", "LINES", "POLYGONS", "TRIANGLE_STRIPS")
# Attribute keyword -> components (None: read from the header line).
_ATTRIBUTES = {"SCALARS": None, "VECTORS": 3, "NORMALS": 3, "TENSORS": 9, "TENSORS6": 6,
               "TEXTURE_COORDINATES": None, "GLOBAL_IDS": 1, "PEDIGREE_IDS": 1,
               "EDGE_FLAGS": 1}
_ASSOCIATIONS = {"POINT_DATA": "point", "CELL_DATA": "cell"}
_VERSION = re.compile(rb"# vtk DataFile Version (\d+)\.(\d+)")


def _name(raw: bytes) -> str:
    """An array name as VTK decodes it (``%20`` stands for a space)."""
    return unquote_to_bytes(raw).decode("utf-8", "replace")


class _Scanner:
    def __init__(self, cursor: Cursor):
        self.cursor, self.path = cursor, cursor.path
        self.declared = Declared(cursor.path)
        self.binary, self.version, self.dims, self.spacing = False, (0, 0), None, None
        self.association, self.count = None, 0  # the current POINT_DATA / CELL_DATA

    def refuse(self, problem: str):
        raise file_error(self.path, problem)

    def word(self, what: str) -> bytes:
        text = self.cursor.word()
        if text is None:
            self.refuse(f"ends where {what} should be: the file is truncated")
        return text

    def count_word(self, what: str) -> int:
        text = self.word(what)
        if not re.fullmatch(rb"\+?\d{1,19}", text):
            self.refuse(f"declares {what} as {text[:40].decode('ascii', 'replace')!r}: "
                        "expected a non-negative integer")
        return int(text)

    def numbers(self, what: str, count: int) -> list[float]:
        values = []
        for _ in range(count):
            text = self.word(what)
            try:
                values.append(float(text))
            except ValueError:
                values.append(math.nan)
            if not math.isfinite(values[-1]):
                self.refuse(f"declares {what} with "
                            f"{text[:40].decode('ascii', 'replace')!r}: expected finite numbers")
        return values

    def data(self, what: str, values: int, type_word: bytes | None = None) -> None:
        """Skip a block of ``values`` values of the type named next (or given)."""
        kind = (type_word or self.word(f"the type of {what}")).decode("ascii", "replace").lower()
        if kind not in _ITEM_BYTES:
            self.refuse(f"declares {what} of type {kind[:40]!r}; daxpy reads the numeric "
                        f"types {', '.join(sorted(_ITEM_BYTES))}")
        item = _ITEM_BYTES[kind]
        nbytes = -(-values // 8) if item == 0 else values * item
        if self.binary:
            self.cursor.line()  # VTK skips the rest of the line before binary data
            self.cursor.skip_bytes(nbytes, what)
        else:
            self.cursor.room_for_words(values, what)
        check_bytes(self.declared, what, nbytes)
        if not self.binary:
            self.cursor.skip_words(values, value_check(self.path, what, kind))
        self.metadata()

    def metadata(self) -> None:
        """Skip an optional METADATA block: lines up to an empty one."""
        if (self.cursor.word(peek=True) or b"").upper() != b"METADATA":
            return
        self.word("METADATA")
        self.cursor.line()
        while self.cursor.pos < self.cursor.size and self.cursor.line().strip():
            pass

    # -- sections ---------------------------------------------------------------
    def header(self) -> None:
        cursor = self.cursor
        found = _VERSION.match(cursor.line())
        if not found:
            self.refuse("does not start with '# vtk DataFile Version'; it is not a "
                        "legacy VTK file")
        self.version = (int(found[1]), int(found[2]))
        cursor.line()  # title
        mode = self.word("ASCII or BINARY").upper()
        if mode not in (b"ASCII", b"BINARY"):
            self.refuse(f"has {mode[:40].decode('ascii', 'replace')!r} where ASCII or BINARY "
                        "should be")
        self.binary = mode == b"BINARY"
        if self.word("DATASET").upper() != b"DATASET":
            self.refuse("has no DATASET line; daxpy reads grids, not bare field data")
        kind = self.word("the dataset type").upper().decode("ascii", "replace")
        if kind not in _DATASETS:
            self.refuse(f"has DATASET {kind[:40]!r}; daxpy reads {', '.join(sorted(_DATASETS))}")
        self.kind = kind

    def field(self, association: str, tuples: int | None) -> None:
        """FIELD name n, then n arrays: name components tuples type, data."""
        self.word("the field data name")
        for _ in range(self.count_word("the FIELD array count")):
            name = self.word("a FIELD array name")
            if name == b"NULL_ARRAY":
                continue
            what = f"{association} array {_name(name)!r}"
            components = self.count_word(f"the components of {what}")
            count = self.count_word(f"the tuples of {what}")
            if tuples is not None and count != tuples:
                self.refuse(f"declares {what} with {count} tuples in a section of {tuples}")
            self.declare(association, name, count, components)
            self.data(what, count * components)

    def declare(self, association: str, name: bytes, tuples: int, components: int) -> None:
        if components < 1:
            self.refuse(f"declares {association} array {_name(name)!r} with 0 components")
        self.declared.arrays[(association, _name(name))] = (tuples, components)

    def attribute(self, keyword: str) -> None:
        name = self.word(f"the {keyword} name")
        what = f"{self.association} array {_name(name)!r} ({keyword})"
        components = _ATTRIBUTES[keyword]
        if keyword == "TEXTURE_COORDINATES":
            components = self.count_word(f"the dimension of {what}")
        type_word = self.word(f"the type of {what}")
        if keyword == "SCALARS":
            components, type_word = self.scalars_header(what, type_word)
        self.declare(self.association, name, self.count, components)
        self.data(what, self.count * components, type_word)

    def scalars_header(self, what: str, type_word: bytes) -> tuple[int, bytes]:
        """SCALARS name type [components] LOOKUP_TABLE table."""
        following = self.word(f"LOOKUP_TABLE after {what}")
        components = 1
        if following.upper() != b"LOOKUP_TABLE":
            components = int(following) if following.isdigit() else 0
            if not 1 <= components <= 4:
                self.refuse(f"declares {what} with {following[:40]!r} components; "
                            "expected 1 to 4")
            following = self.word(f"LOOKUP_TABLE after {what}")
        if following.upper() != b"LOOKUP_TABLE":
            self.refuse(f"has no LOOKUP_TABLE after {what}")
        self.word(f"the lookup table of {what}")
        return components, type_word

    def geometry(self, keyword: str) -> None:
        kind, declared = self.kind, self.declared
        if keyword == "DIMENSIONS":
            self.dims = [self.count_word("DIMENSIONS") for _ in range(3)]
            if min(self.dims) < 1:
                self.refuse(f"declares DIMENSIONS {self.dims}: each must be at least 1")
            declared.n_points = math.prod(self.dims)
            declared.n_cells = math.prod(d - 1 for d in self.dims if d > 1) \
                if declared.n_points > 1 else declared.n_points
        elif keyword in ("SPACING", "ASPECT_RATIO"):
            self.spacing = self.numbers(keyword, 3)
        elif keyword == "ORIGIN":
            self.numbers(keyword, 3)
        elif keyword == "POINTS" and kind in ("STRUCTURED_GRID",) + _EXPLICIT:
            count = self.count_word("POINTS")
            if kind == "STRUCTURED_GRID" and count != declared.n_points:
                self.refuse(f"declares POINTS {count} for DIMENSIONS {self.dims}")
            declared.n_points = count
            self.data("POINTS", 3 * count)
        elif keyword in ("X_COORDINATES", "Y_COORDINATES", "Z_COORDINATES") \
                and kind == "RECTILINEAR_GRID":
            count = self.count_word(keyword)
            axis = "XYZ".index(keyword[0])
            if self.dims is None or count != self.dims[axis]:
                self.refuse(f"declares {keyword} {count} for DIMENSIONS {self.dims}")
            self.data(keyword, count)
        elif keyword in ("CELLS", "CELL_TYPES") and kind == "UNSTRUCTURED_GRID":
            self.cells(keyword)
        elif keyword in _POLY_CELLS and kind == "POLYDATA":
            before = self.declared.n_cells or 0
            self.cells(keyword)  # each of the four cell arrays adds its cells
            self.declared.n_cells += before
        else:
            self.refuse(f"has {keyword[:40]!r} where a {kind} keyword should be")

    def cells(self, keyword: str) -> None:
        count = self.count_word(keyword)
        if keyword == "CELL_TYPES":
            if self.declared.n_cells is not None and count != self.declared.n_cells:
                self.refuse(f"declares CELL_TYPES {count} for {self.declared.n_cells} cells")
            self.declared.n_cells = count
            self.data("CELL_TYPES", count, b"int")
            return
        size = self.count_word(f"the {keyword} size")
        if self.version < (5, 0):
            self.declared.n_cells = count
            self.data(keyword, size, b"int")
            return
        self.declared.n_cells = max(count - 1, 0)
        for part, values in ((b"OFFSETS", count), (b"CONNECTIVITY", size)):
            if self.word(part.decode()).upper() != part:
                self.refuse(f"has no {part.decode()} in its {keyword}")
            self.data(part.decode(), values)

    def body(self) -> None:
        while not self.cursor.at_end():
            keyword = self.word("a keyword").upper().decode("ascii", "replace")
            if keyword in _ASSOCIATIONS:
                self.association = _ASSOCIATIONS[keyword]
                self.count = self.count_word(keyword)
                expected = self.declared.n_points if self.association == "point" \
                    else self.declared.n_cells
                if self.count != expected:
                    self.refuse(f"declares {keyword} {self.count} for a grid of "
                                f"{expected} {self.association}s")
            elif keyword == "FIELD":
                association = self.association or "field"
                self.field(association, self.count if self.association else None)
            elif keyword in _ATTRIBUTES and self.association:
                self.attribute(keyword)
            elif keyword in ("LOOKUP_TABLE", "COLOR_SCALARS") and self.association:
                self.word(f"the {keyword} name")
                per = self.count_word(f"the {keyword} size")
                binary_bytes = b"unsigned_char" if self.binary else b"float"
                values = 4 * per if keyword == "LOOKUP_TABLE" else per * self.count
                self.data(keyword, values, binary_bytes)
            else:
                self.geometry(keyword)


def scan_legacy(path: str) -> Declared:
    """Walk a legacy ``.vtk`` file and check every count it declares.

    Parameters
    ----------
    path : str
        The file.

    Returns
    -------
    Declared
        Counts and arrays the file declares, to cross-check after reading.

    Raises
    ------
    DataFileError
        If the file is truncated, declares a count that is negative, not a
        number, or larger than the file or the memory available can hold, or
        has a keyword or type the reader does not know.

    Examples
    --------
    >>> import os, tempfile
    >>> from daxpy.io.legacy_scan import scan_legacy
    >>> path = os.path.join(tempfile.mkdtemp(), "bad.vtk")
    >>> with open(path, "w") as f:
    ...     _ = f.write("# vtk DataFile Version 5.1\\nt\\nASCII\\n"
    ...                 "DATASET UNSTRUCTURED_GRID\\nPOINTS -64 float\\n")
    >>> scan_legacy(path)
    Traceback (most recent call last):
    ...
    daxpy.errors.DataFileError: '...bad.vtk' declares POINTS as '-64': ...
    """
    with open(path, "rb") as stream:
        stream.seek(0, 2)
        scanner = _Scanner(Cursor(path, stream, stream.tell()))
        scanner.header()
        scanner.body()
    declared = scanner.declared
    if declared.n_points is None or declared.n_cells is None and scanner.kind not in \
            _EXPLICIT:
        raise file_error(path, f"declares no DIMENSIONS or POINTS for its {scanner.kind}")
    if scanner.spacing is not None and any(
            s <= 0 and d > 1 for s, d in zip(scanner.spacing, scanner.dims or (2, 2, 2))):
        raise file_error(path, f"declares SPACING {scanner.spacing}: spacing must be "
                         "positive along every axis with more than one point")
    if declared.n_cells is None:
        declared.n_cells = 0  # an unstructured grid or polydata without cells has none
    return declared
