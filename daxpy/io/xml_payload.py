"""Check each array payload of a VTK XML file against what its header declares.

A binary payload starts with a header of ``header_type`` words: its byte count
when uncompressed; its block count, block size, last block size and each
block's compressed size when compressed. VTK allocates what those words say,
so they are checked before VTK reads them: against the array's declared size,
against the bytes the file still holds, against the memory available, and
against the largest ratio the compressor can reach.

Examples
--------
>>> from daxpy.io.xml_payload import ArrayPayload
>>> payload = ArrayPayload("<DataArray Name=\\"t\\">", "Float64", 8, 3, "ascii", None)
>>> payload.add_text("1 2")
>>> payload.add_text("3")
>>> payload.tokens
2
"""

from __future__ import annotations

import base64
import binascii
import struct
from dataclasses import dataclass, field

from ..data.memory_budget import available_bytes
from .file_checks import Declared, check_bytes, file_error
from .xml_offsets import LegacyCells

__all__ = ["ArrayPayload", "check_payloads"]

_HEAD_CHARS = 1 << 16
# Most bytes one compressed byte can stand for (zlib's deflate tops out near
# 1032:1, LZ4 near 255:1), with room for stream framing; LZMA has no useful bound.
_MAX_RATIO = {"vtkZLibDataCompressor": 1100, "vtkLZ4DataCompressor": 300}


@dataclass
class ArrayPayload:
    """One ``<DataArray>``: what it declares and, when inline, its text."""

    what: str
    kind: str
    item_bytes: int
    values: int | None  # tuples * components, when the header fixes it
    format: str
    offset: int | None
    exact: bool = True  # False: ``values`` is an upper bound (vtu offsets)
    chars: int = 0  # non-whitespace characters of inline text
    tokens: int = 0  # whitespace-separated words of inline text
    head: str = ""  # first characters of inline text, whitespace removed
    # (piece, section, name) of a connectivity or offsets array in a file
    # before version 2 (see :mod:`daxpy.io.xml_offsets`). An offsets array also
    # keeps the word that ends the last cell (the one at ``values - 2``) and,
    # when binary, all of its text (a connectivity's size is its header's).
    cells: tuple | None = None
    cell_end: str = ""
    pieces: list = field(default_factory=list)
    _in_word: bool = False
    _last_word: str = ""

    def add_text(self, data: str) -> None:
        """Account for a piece of the element's text (expat splits it anywhere).

        Examples
        --------
        >>> from daxpy.io.xml_payload import ArrayPayload
        >>> payload = ArrayPayload("a", "UInt8", 1, None, "binary", None)
        >>> payload.add_text(" AQA ")
        >>> payload.chars, payload.head
        (3, 'AQA')
        """
        words = data.split()
        joined = "".join(words)
        self.chars += len(joined)
        joins = self._in_word and bool(data) and not data[0].isspace()
        if self.cells is not None and self.cells[-1] == "offsets" and words:
            self._keep(words, joins, joined)
        self.tokens += len(words) - joins
        if data:
            self._in_word = not data[-1].isspace()
        if len(self.head) < _HEAD_CHARS:
            self.head += joined[:_HEAD_CHARS - len(self.head)]

    def _keep(self, words: list, joins: bool, joined: str) -> None:
        """Note the word ending the last cell and, when binary, the text."""
        if joins:  # the first word goes on with the last one
            words[0] = (self._last_word + words[0])[:64]  # longer is no number
        self._last_word = words[-1][:64]
        at = (self.values or 0) - 2 - (self.tokens - joins)
        if 0 <= at < len(words):
            self.cell_end = words[at]
        if self.format == "binary":
            self.pieces.append(joined)


class _Source:
    """A payload as stored, from its start: ``stored(a, b)`` gives its bytes
    (``raw``) or base64 characters ``a`` to ``b``; ``capacity`` bounds how many
    decoded bytes the file can supply. :func:`_payload_bytes` adds the header's
    layout: its bytes (``header``) and, when compressed, ``block_size``,
    each block's stored ``sizes`` and the uncompressed ``nbytes``."""

    def __init__(self, stored, raw: bool, capacity: int):
        self.stored, self.raw, self.capacity = stored, raw, capacity
        self.header = self.block_size = self.nbytes = 0
        self.sizes: list[int] = []

    def read(self, nbytes: int, offset: int = 0, header: int = 0) -> bytes:
        """Up to ``nbytes`` decoded bytes from ``offset`` of the stream that
        follows a separately encoded header of ``header`` bytes (VTK encodes a
        compressed payload's header on its own)."""
        if self.raw:
            return self.stored(header + offset, header + offset + nbytes)
        # Base64 turns each 3 bytes into 4 characters, so a span decodes alone.
        base, first = 4 * -(-header // 3), offset - offset % 3
        text = self.stored(base + first // 3 * 4, base + 4 * -(-(offset + nbytes) // 3))
        text = text[:len(text) - len(text) % 4]
        try:
            decoded = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            return b""
        return decoded[offset - first:offset - first + nbytes]


def _appended_source(stream, start: int, size: int, raw: bool) -> _Source:
    def stored(first: int, stop: int) -> bytes:
        stream.seek(start + first)
        return stream.read(max(stop - first, 0))

    return _Source(stored, raw, (size - start) if raw else (size - start) * 3 // 4)


def _inline_source(payload: ArrayPayload) -> _Source:
    text = "".join(payload.pieces) if payload.pieces else payload.head
    return _Source(lambda first, stop: text[first:stop], False, payload.chars * 3 // 4)


def _words(path: str, payload: ArrayPayload, source: _Source, fmt: str, count: int) -> list:
    size = struct.calcsize(fmt[0] + fmt[1] * count)
    data = source.read(size)[:size]
    if len(data) < size:
        raise file_error(path, f"has {payload.what} whose binary header is cut short")
    return list(struct.unpack(fmt[0] + fmt[1] * count, data))


def _payload_bytes(declared: Declared, payload: ArrayPayload, source: _Source,
                   fmt: str, compressor: str | None) -> int:
    """Uncompressed bytes the header announces, after checking it against the
    file and the memory available."""
    path, word = declared.path, struct.calcsize(fmt)
    if compressor is None:
        nbytes = _words(path, payload, source, fmt, 1)[0]
        source.header = word
        stored = word + nbytes
    else:
        blocks, block_size, last_size = _words(path, payload, source, fmt, 3)
        if (3 + blocks) * word > source.capacity:
            raise file_error(path, f"has {payload.what} declaring {blocks} compressed "
                             "blocks: more than the file holds")
        if block_size > available_bytes()[0] or last_size > block_size:
            raise file_error(path, f"has {payload.what} declaring compressed blocks of "
                             f"{block_size} bytes (last {last_size})")
        nbytes = 0 if blocks == 0 else (blocks - 1) * block_size + (last_size or block_size)
        if payload.format == "binary" and not payload.pieces and \
                4 * (3 + blocks) * word > 3 * len(payload.head):
            # An inline header longer than the text kept while parsing: the
            # block sizes are not at hand, so only the header itself is checked.
            sizes = [source.capacity - (3 + blocks) * word]
        else:
            sizes = source.sizes = _words(path, payload, source, fmt, 3 + blocks)[3:]
        source.header, source.block_size, source.nbytes = (3 + blocks) * word, block_size, nbytes
        stored = source.header + sum(sizes)
        ratio = _MAX_RATIO.get(compressor)
        if ratio is not None and nbytes > ratio * sum(sizes) + 64 * blocks:
            raise file_error(path, f"has {payload.what} declaring {nbytes} bytes "
                             f"compressed into {sum(sizes)}: more than {compressor} "
                             "can compress")
    if stored > source.capacity:
        raise file_error(path, f"has {payload.what} declaring {stored} bytes of "
                         f"payload, but the file holds only {source.capacity} from its "
                         "start: it is truncated or corrupt")
    return nbytes


def _data_start(path: str, stream, appended_at: int) -> int:
    """Offset of the first payload byte: just after the ``_`` that follows the
    ``<AppendedData ...>`` tag."""
    stream.seek(appended_at)
    head = stream.read(4096)
    close = head.find(b">")
    marker = head.find(b"_", close)
    if close < 0 or marker < 0 or head[close + 1:marker].strip():
        raise file_error(path, "has <AppendedData> without the '_' that starts its data")
    return appended_at + marker + 1


def check_payloads(declared: Declared, payloads: list, file_attrs: dict, stream,
                   appended_at: int | None, encoding: str) -> None:
    """Check every payload of a scanned XML file (see the module docstring).

    Raises
    ------
    DataFileError
        Naming the file, the array and the size that does not fit.

    Examples
    --------
    >>> import io
    >>> from daxpy.io.file_checks import Declared
    >>> from daxpy.io.xml_payload import ArrayPayload, check_payloads
    >>> payload = ArrayPayload("<DataArray Name=\\"t\\">", "UInt8", 1, 4, "ascii", None)
    >>> payload.add_text("1 2 3")
    >>> check_payloads(Declared("g.vti"), [payload], {}, io.BytesIO(), None, "base64")
    Traceback (most recent call last):
    ...
    daxpy.errors.DataFileError: 'g.vti' has <DataArray Name="t"> declaring 4 values, ...
    """
    path = declared.path
    order = ">" if file_attrs.get("byte_order") == "BigEndian" else "<"
    fmt = order + ("Q" if file_attrs.get("header_type") == "UInt64" else "I")
    compressor = file_attrs.get("compressor") or None
    stream.seek(0, 2)
    size = stream.tell()
    start = None
    legacy = LegacyCells()
    for payload in payloads:
        if payload.kind == "String":
            continue  # strings have no fixed size: VTK reads what is there
        if payload.format == "ascii":
            least = None if payload.values is None else payload.values - (not payload.exact)
            if least is not None and payload.tokens < least:
                raise file_error(path, f"has {payload.what} declaring {least} "
                                 f"values, but its text holds {payload.tokens}")
            if payload.cells is not None:
                legacy.note_text(payload)
            continue
        if payload.format == "binary":
            source = _inline_source(payload)
        else:
            if appended_at is None:
                raise file_error(path, f"has {payload.what} in appended format, but no "
                                 "<AppendedData>")
            start = start or _data_start(path, stream, appended_at)
            if start + payload.offset >= size:
                raise file_error(path, f"has {payload.what} at offset {payload.offset}, "
                                 f"past the end of the file ({size} bytes)")
            source = _appended_source(stream, start + payload.offset, size, encoding == "raw")
        nbytes = _payload_bytes(declared, payload, source, fmt, compressor)
        if payload.values is None:
            check_bytes(declared, payload.what, nbytes)
        elif nbytes != payload.values * payload.item_bytes and (
                payload.exact or nbytes > payload.values * payload.item_bytes):
            raise file_error(path, f"has {payload.what} holding {nbytes} bytes, but its "
                             f"header declares {payload.values} values of "
                             f"{payload.item_bytes} bytes")
        if payload.cells is not None:
            legacy.note_binary(payload, source, fmt, compressor, nbytes)
    legacy.check(declared)
