"""Scan a ``.ply`` file before VTK reads it.

VTK's PLY reader (the classic ``ply.c``) trusts the header's element counts
and each list's length: it allocates what they say, and reads an ASCII list
past the end of its line. The scan parses the header, refuses counts the file
or the memory available cannot hold, then walks every element that has a
list property: in binary files each list's length must fit in the file, in
ASCII files each line must hold the words its properties and lists need.

Examples
--------
>>> import pathlib, tempfile
>>> from daxpy.io.ply_scan import scan_ply
>>> path = pathlib.Path(tempfile.mkdtemp()) / "bad.ply"
>>> _ = path.write_text("ply\\nformat ascii 1.0\\nelement vertex 1\\nproperty float x\\n"
...                     "element face 1\\nproperty list uchar int vertex_indices\\n"
...                     "end_header\\n0\\n200 0 0 0\\n")
>>> scan_ply(str(path))
Traceback (most recent call last):
...
daxpy.errors.DataFileError: '...bad.ply' has face 0 with a list of 200 entries but only 4 words on its line
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .file_checks import Declared, check_bytes, file_error

__all__ = ["scan_ply"]

MAX_HEADER = 1 << 20
"""Longest header accepted (its ``end_header`` must come before)."""

_TYPES = {name: np.dtype(code) for names, code in (
    (("char", "int8"), "i1"), (("uchar", "uint8"), "u1"), (("short", "int16"), "i2"),
    (("ushort", "uint16"), "u2"), (("int", "int32"), "i4"), (("uint", "uint32"), "u4"),
    (("float", "float32"), "f4"), (("double", "float64"), "f8")) for name in names}
_FORMATS = {"ascii": None, "binary_little_endian": "<", "binary_big_endian": ">"}


@dataclass
class _Element:
    name: str
    count: int
    # (count dtype or None for a scalar, value dtype) per property, in order.
    properties: list = field(default_factory=list)

    def min_bytes(self, binary: bool) -> int:
        """Fewest bytes one element takes: lists empty; 2 per ASCII word."""
        if not binary:
            return 2 * len(self.properties)
        return sum((count or value).itemsize for count, value in self.properties)


def _header(path: str, stream) -> tuple[str | None, list[_Element], int]:
    """Byte order (None: ASCII), elements, and where the body starts."""
    head = stream.read(MAX_HEADER)
    end = head.find(b"end_header")
    if not head.startswith(b"ply") or end < 0:
        raise file_error(path, "is not a PLY file (no 'ply' ... 'end_header' header in its "
                         f"first {MAX_HEADER} bytes)")
    body = head.index(b"\n", end) + 1 if b"\n" in head[end:] else len(head)
    order, elements = "", []
    for number, raw in enumerate(head[:end].splitlines()[1:], start=2):
        words = raw.decode("ascii", "replace").split()
        if not words or words[0] in ("comment", "obj_info"):
            continue
        problem = _header_line(words, elements)
        if words[0] == "format" and problem is None:
            order = _FORMATS[words[1]]
        if problem:
            raise file_error(path, f"has header line {number} {raw[:80]!r}: {problem}")
    if order == "":
        raise file_error(path, "has no 'format' line in its header")
    return order, elements, body


def _header_line(words: list[str], elements: list[_Element]) -> str | None:
    """What is wrong with one header line (None: nothing); elements are added."""
    keyword = words[0]
    if keyword == "format":
        return None if len(words) == 3 and words[1] in _FORMATS else \
            f"the format must be one of {', '.join(_FORMATS)}"
    if keyword == "element":
        if len(words) != 3 or not words[2].isdigit():
            return "an element needs a name and a count >= 0"
        elements.append(_Element(words[1], int(words[2])))
        return None
    if keyword == "property":
        if not elements:
            return "a property before any element"
        kinds = words[2:4] if words[1:2] == ["list"] else [None, words[1]]
        if len(words) != (5 if words[1:2] == ["list"] else 3) or \
                any(k not in _TYPES for k in kinds if k is not None):
            return f"a property needs a type of {sorted(set(_TYPES))} and a name"
        count = _TYPES[kinds[0]] if kinds[0] else None
        if count is not None and count.kind == "f":
            return "a list's length must have an integer type"
        elements[-1].properties.append((count, _TYPES[kinds[1]]))
        return None
    return f"unknown keyword {keyword[:40]!r}"


def _walk_binary(path: str, element: _Element, order: str, data: bytes, at: int) -> int:
    """Check each list of ``element`` fits in ``data``; return where it ends."""
    lists = [count for count, _ in element.properties if count is not None]
    if not lists:
        return at + element.count * element.min_bytes(True)
    if len(element.properties) == 1 and element.count:
        end = _same_lengths(element, order, data, at)
        if end is not None:
            return end
    for index in range(element.count):
        for count, value in element.properties:
            if count is None:
                at += value.itemsize
                continue
            if at + count.itemsize > len(data):
                raise file_error(path, f"ends inside {element.name} {index}: it is truncated")
            length = int(np.frombuffer(data, count.newbyteorder(order), 1, at)[0])
            if length < 0:
                raise file_error(path, f"has {element.name} {index} with a list of "
                                 f"{length} entries")
            at += count.itemsize + length * value.itemsize
        if at > len(data):
            raise file_error(path, f"ends inside {element.name} {index}: it is truncated")
    return at


def _same_lengths(element: _Element, order: str, data: bytes, at: int) -> int | None:
    """Where a one-list element ends if every list has the first one's length
    (a triangle mesh's faces), checked at once; None otherwise."""
    count, value = element.properties[0]
    dtype = count.newbyteorder(order)
    if at + count.itemsize > len(data):
        return None
    first = int(np.frombuffer(data, dtype, 1, at)[0])
    stride = count.itemsize + first * value.itemsize
    end = at + stride * element.count
    if first < 0 or end > len(data):
        return None
    lengths = np.ndarray((element.count,), dtype, data, at, (stride,))
    return end if bool(np.all(lengths == first)) else None


def _walk_ascii(path: str, element: _Element, lines: list[bytes], first: int) -> None:
    """Check each line of ``element`` holds the words its properties need."""
    if first + element.count > len(lines):
        raise file_error(path, f"ends before its {element.count} {element.name} elements: "
                         "it is truncated")
    for index in range(element.count):
        words, need = lines[first + index].split(), 0
        for count, _value in element.properties:
            if count is not None and need < len(words):
                length = words[need]
                if not length.lstrip(b"-").isdigit() or int(length) < 0:
                    raise file_error(path, f"has {element.name} {index} with a list "
                                     f"length of {length[:40]!r}")
                need += int(length)
                if need >= len(words):
                    raise file_error(path, f"has {element.name} {index} with a list of "
                                     f"{int(length)} entries but only {len(words)} words "
                                     "on its line")
            need += 1
        if need > len(words):
            raise file_error(path, f"has {element.name} {index} with {len(words)} words; "
                             f"its properties need {need}")


def scan_ply(path: str) -> Declared:
    """Check a PLY file's header, its counts and every list it holds.

    Parameters
    ----------
    path : str
        The ``.ply`` file, read once from its start (its body only if it has lists).

    Returns
    -------
    Declared
        The point count (its ``vertex`` elements), which
        :func:`daxpy.io.file_checks.cross_check` compares with what VTK read.

    Raises
    ------
    DataFileError
        If the header is not a PLY header, declares more elements than the
        file or the memory available can hold, or a list runs past its line
        (ASCII) or the file (binary).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "one.ply")
    >>> with open(path, "w") as f:
    ...     _ = f.write("ply\\nformat ascii 1.0\\nelement vertex 1\\nproperty float x\\n"
    ...                 "property float y\\nproperty float z\\nend_header\\n0 0 0\\n")
    >>> scan_ply(path).n_points
    1
    """
    declared = Declared(path)
    size = os.path.getsize(path)
    with open(path, "rb") as stream:
        order, elements, body = _header(path, stream)
        room = size - body
        for element in elements:
            least = element.count * element.min_bytes(order is not None)
            if least > room:
                raise file_error(path, f"declares {element.count} {element.name} elements "
                                 f"(at least {least} bytes) in a body of {room} bytes: it "
                                 "is truncated or corrupt")
            # The reader holds each property as a double, and a pointer per list.
            check_bytes(declared, f"{element.count} {element.name} elements",
                        element.count * 16 * len(element.properties))
        if any(count is not None for e in elements for count, _ in e.properties):
            stream.seek(body)
            data = stream.read()
            lines, at = (data.splitlines(), 0) if order is None else (None, 0)
            for element in elements:
                if order is None:
                    _walk_ascii(path, element, lines, at)
                    at += element.count
                else:
                    at = _walk_binary(path, element, order, data, at)
    counts = {e.name: e.count for e in elements}
    declared.n_points = counts.get("vertex")
    return declared
