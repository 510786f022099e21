"""A forward-only reader of legacy ``.vtk`` files that never holds more than a
chunk in memory: words and lines of the text parts, binary blocks skipped by
size, ASCII blocks skipped by counting words.

Examples
--------
>>> import io
>>> from daxpy.io.legacy_cursor import Cursor
>>> cursor = Cursor("a.vtk", io.BytesIO(b"POINTS 2 float\\n1 2 3 4 5 6\\nEND"), 30)
>>> cursor.word(), cursor.word(), cursor.word()
(b'POINTS', b'2', b'float')
>>> cursor.skip_words(6, check=lambda words: None)
>>> cursor.word()
b'END'
"""

from __future__ import annotations

import re

from .file_checks import file_error

__all__ = ["Cursor"]

_CHUNK = 1 << 16
MAX_WORD = 256
"""Longest word VTK's legacy reader accepts (its line buffer)."""

_NON_SPACE = re.compile(rb"\S")
_SPACE = re.compile(rb"\s")


class Cursor:
    """Position in a legacy file, with the reads the scanner needs.

    Parameters
    ----------
    path : str
        The file, for messages.
    stream : binary file
        Open on the file.
    size : int
        The file's size in bytes.
    """

    def __init__(self, path: str, stream, size: int):
        self.path, self.stream, self.size = path, stream, size
        self.pos, self.buf, self.buf_start = 0, b"", 0

    def _window(self, need: int) -> int:
        """Make at least ``need`` bytes from ``pos`` buffered (fewer at the end
        of the file); return ``pos``'s index in the buffer."""
        offset = self.pos - self.buf_start
        if len(self.buf) - offset < need:
            self.stream.seek(self.pos)
            self.buf, self.buf_start, offset = self.stream.read(max(need, _CHUNK)), self.pos, 0
        return offset

    def at_end(self) -> bool:
        """Whether only whitespace is left."""
        return self.word(peek=True) is None

    def word(self, peek: bool = False) -> bytes | None:
        """The next whitespace-separated word, or None at the end of the file."""
        while True:
            offset = self._window(1)
            if offset >= len(self.buf):
                return None
            found = _NON_SPACE.search(self.buf, offset)
            if found:
                self.pos = self.buf_start + found.start()
                break
            self.pos = self.buf_start + len(self.buf)
        offset = self._window(MAX_WORD + 1)
        end = _SPACE.search(self.buf, offset, offset + MAX_WORD + 1)
        text = self.buf[offset:end.start() if end else offset + MAX_WORD + 1]
        if len(text) > MAX_WORD:
            raise file_error(self.path, f"has a word longer than {MAX_WORD} bytes at byte "
                             f"{self.pos}; it is not a legacy VTK file")
        if not peek:
            self.pos += len(text)
        return text

    def line(self) -> bytes:
        """The rest of the current line, without its end (VTK's limit applies)."""
        offset = self._window(MAX_WORD + 2)
        end = self.buf.find(b"\n", offset, offset + MAX_WORD + 2)
        if end < 0:
            if self.buf_start + len(self.buf) >= self.size and \
                    len(self.buf) - offset <= MAX_WORD:
                end = len(self.buf)  # last line, without a newline
            else:
                raise file_error(self.path, f"has a line longer than {MAX_WORD} bytes "
                                 f"at byte {self.pos}")
        text = self.buf[offset:end]
        self.pos = self.buf_start + min(end + 1, len(self.buf))
        return text.rstrip(b"\r")

    def skip_bytes(self, nbytes: int, what: str) -> None:
        """Skip a binary block of ``nbytes`` bytes, which the file must hold."""
        if self.pos + nbytes > self.size:
            raise file_error(self.path, f"declares {what} of {nbytes} bytes, but only "
                             f"{self.size - self.pos} bytes follow: the file is truncated")
        self.pos += nbytes

    def room_for_words(self, count: int, what: str) -> None:
        """Refuse ``count`` ASCII words where the file has not the bytes for them."""
        if count > (self.size - self.pos + 1) // 2:
            raise file_error(self.path, f"declares {what} of {count} values, but only "
                             f"{self.size - self.pos} bytes follow: the file is truncated")

    def skip_words(self, count: int, check) -> None:
        """Skip ``count`` ASCII words (a chunk at a time), passing each chunk's
        list of words to ``check``, which raises for a word VTK cannot read."""
        self.room_for_words(count, f"{count} values")
        left = count
        while left:
            offset = self._window(_CHUNK)
            chunk = self.buf[offset:]
            if not chunk:
                raise file_error(self.path, f"ends {left} values early: the file is "
                                 "truncated")
            if self.buf_start + len(self.buf) < self.size and not chunk[-1:].isspace():
                # The chunk may end inside a word: leave that word for the next one.
                cut = max(chunk.rfind(c) for c in (b" ", b"\n", b"\r", b"\t", b"\v", b"\f"))
                if cut < 0:
                    raise file_error(self.path, f"has a word longer than {_CHUNK} bytes "
                                     f"at byte {self.pos}")
                chunk = chunk[:cut + 1]
            words = chunk.split()
            if len(words) <= left:
                check(words)
                left -= len(words)
                self.pos += len(chunk)
                continue
            check(words[:left])
            ends = [found.end() for _, found in zip(range(left), re.finditer(rb"\S+", chunk))]
            self.pos += ends[-1]
            left = 0
        # VTK's writers end every block with a newline; a file that ends inside
        # a value was cut short, and its last value may have lost digits.
        if count and self.pos >= self.size:
            self.stream.seek(self.size - 1)
            if not self.stream.read(1).isspace():
                raise file_error(self.path,
                                 "ends inside its last value: the file is truncated")
