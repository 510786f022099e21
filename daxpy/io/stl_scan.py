"""Scan an ``.stl`` file before VTK reads it.

VTK's STL reader reads a binary file's triangle count from its header and
allocates for it; it tells binary from ASCII by the share of non-text bytes at
the start of the file. The scan accepts a file only where either reading is
safe: a binary file whose length is exactly the 84 + 50 bytes per triangle its
count declares, or an ASCII file (``solid`` then text: no counts, so nothing
to over-allocate).

Examples
--------
>>> import os, struct, tempfile
>>> from daxpy.io.stl_scan import scan_stl
>>> path = os.path.join(tempfile.mkdtemp(), "bad.stl")
>>> with open(path, "wb") as f:
...     _ = f.write(b"\\0" * 80 + struct.pack("<I", 10**9))
>>> scan_stl(path)
Traceback (most recent call last):
...
daxpy.errors.DataFileError: '...bad.stl' declares 1000000000 triangles (50000000084 bytes as binary STL) but holds 84 bytes and is not an ASCII STL (text starting with 'solid'); it is truncated or corrupt
"""

from __future__ import annotations

import os
import struct

from .file_checks import Declared, check_bytes, file_error

__all__ = ["scan_stl"]

HEADER_BYTES = 80
TRIANGLE_BYTES = 50
"""A binary triangle: normal and three corners (12 float32), and 2 attribute bytes."""

_SNIFF_BYTES = 256
"""Bytes at the start that VTK looks at to tell ASCII from binary."""

# Bytes VTK sees as binary; the printable ASCII range and whitespace are text.
_TEXT = set(range(32, 127)) | set(b"\t\n\r\f\v")

# Bytes the reader holds per triangle: three float32 corners, ids, a normal.
_BYTES_PER_TRIANGLE = 3 * 12 + 3 * 8 + 12


def scan_stl(path: str) -> Declared:
    """Check that an STL file is a whole binary STL or a text (ASCII) one.

    Parameters
    ----------
    path : str
        The ``.stl`` file; only its first 256 bytes and its length are read.

    Returns
    -------
    Declared
        With no counts: STL declares no point count, and a binary file's
        triangle count is checked here, against the file's length.

    Raises
    ------
    DataFileError
        If the file is neither, or declares more triangles than the memory
        available can hold.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "empty.stl")
    >>> with open(path, "w") as f:
    ...     _ = f.write("solid empty\\nendsolid empty\\n")
    >>> scan_stl(path).n_points is None
    True
    """
    declared = Declared(path)
    size = os.path.getsize(path)
    with open(path, "rb") as stream:
        start = stream.read(max(_SNIFF_BYTES, HEADER_BYTES + 4))
    if len(start) >= HEADER_BYTES + 4:
        (triangles,) = struct.unpack_from("<I", start, HEADER_BYTES)
        expected = HEADER_BYTES + 4 + TRIANGLE_BYTES * triangles
        if expected == size:
            check_bytes(declared, f"{triangles} triangles", triangles * _BYTES_PER_TRIANGLE)
            return declared
    else:
        triangles = expected = None
    text = start[:_SNIFF_BYTES]
    if text.lstrip()[:5].lower() == b"solid" and all(byte in _TEXT for byte in text):
        return declared
    counted = "" if triangles is None else (
        f"declares {triangles} triangles ({expected} bytes as binary STL) but ")
    raise file_error(path, f"{counted}holds {size} bytes and is not an ASCII STL (text "
                     "starting with 'solid'); it is truncated or corrupt")
