"""Check the cell offsets of a VTK XML file written before file version 2.

In those files each cell section's ``offsets`` array holds one entry per cell:
where each cell's ids end in ``connectivity``. VTK's reader sizes the
connectivity from the entry of the last cell before it reads it, so a corrupt
entry of 10^17 aborts the process with ``std::bad_alloc``. That entry is read
here first (from the text, the raw bytes, or the last compressed block,
decompressed with VTK's own compressor) and must not exceed the values the
section's connectivity holds.

Examples
--------
>>> from daxpy.io.file_checks import Declared
>>> from daxpy.io.xml_payload import ArrayPayload
>>> from daxpy.io.xml_offsets import LegacyCells
>>> conn = ArrayPayload("connectivity", "Int64", 8, None, "ascii", None,
...                     cells=(1, "Cells", "connectivity"))
>>> conn.add_text("0 1 2 3")
>>> offsets = ArrayPayload("<DataArray Name=\\"offsets\\">", "Int64", 8, 2, "ascii", None,
...                        exact=False, cells=(1, "Cells", "offsets"))
>>> offsets.add_text("69500000000000000")
>>> legacy = LegacyCells()
>>> legacy.note_text(conn), legacy.note_text(offsets)
(None, None)
>>> legacy.check(Declared("old.vtu"))
Traceback (most recent call last):
...
daxpy.errors.DataFileError: 'old.vtu' has <DataArray Name="offsets"> whose last cell ends at ...
"""

from __future__ import annotations

import numpy as np

from .file_checks import Declared, check_bytes, file_error
from .vtk_messages import vtk_messages

__all__ = ["LegacyCells"]

_DTYPES = {"Int8": "i1", "UInt8": "u1", "Int16": "i2", "UInt16": "u2", "Int32": "i4",
           "UInt32": "u4", "Int64": "i8", "UInt64": "u8", "Float32": "f4", "Float64": "f8"}


def _decompress(compressor: str, block: bytes, size: int) -> bytes:
    """``block`` decompressed to ``size`` bytes by VTK's ``compressor``, or b""."""
    from vtkmodules import vtkIOCore

    with vtk_messages():
        out = getattr(vtkIOCore, compressor)().Uncompress(block, len(block), size)
    return b"" if out is None else out  # a vtkUnsignedCharArray: a buffer, read as bytes


class LegacyCells:
    """The connectivity sizes and last offsets of one file's cell sections."""

    def __init__(self):
        self.connectivity: dict[tuple, int] = {}  # (piece, section) -> values
        self.last: list[tuple] = []  # (payload, the last cell's end)

    def note_text(self, payload) -> None:
        """Record an ascii ``connectivity`` or ``offsets`` payload."""
        if payload.cells[-1] == "connectivity":
            self.connectivity[payload.cells[:-1]] = payload.tokens
        elif payload.cell_end:
            try:
                self.last.append((payload, int(payload.cell_end)))
            except ValueError:
                pass  # VTK's reader stops at a value that is not a number

    def note_binary(self, payload, source, fmt: str, compressor, nbytes: int) -> None:
        """Record a binary ``connectivity`` or ``offsets`` payload of ``nbytes``."""
        if payload.cells[-1] == "connectivity":
            self.connectivity[payload.cells[:-1]] = nbytes // payload.item_bytes
            return
        item = payload.item_bytes
        end = (payload.values - 1) * item  # the last cell's entry ends here
        if end > nbytes or end == 0:
            return  # VTK's reader refuses a short array itself
        if compressor is None:
            data = source.read(item, offset=source.header + end - item)
        else:
            data = self._from_blocks(source, compressor, end, item)
        if len(data) == item:
            dtype = np.dtype(_DTYPES[payload.kind]).newbyteorder(fmt[0])
            self.last.append((payload, np.frombuffer(data, dtype)[0].item()))

    @staticmethod
    def _from_blocks(source, compressor: str, end: int, item: int) -> bytes:
        """Bytes ``end - item`` to ``end`` of a compressed payload, decompressing
        only the blocks that hold them."""
        block_size, header, sizes = source.block_size, source.header, source.sizes
        first, last = (end - item) // block_size, (end - 1) // block_size
        starts = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
        data = b""
        for block in range(first, last + 1):
            stored = source.read(int(sizes[block]), offset=int(starts[block]), header=header)
            size = min(block_size, source.nbytes - block * block_size)
            data += bytes(memoryview(_decompress(compressor, stored, size)))
        skip = end - item - first * block_size
        return data[skip:skip + item]

    def check(self, declared: Declared) -> None:
        """Refuse a last offset past its section's connectivity.

        Raises
        ------
        DataFileError
            Naming the array, the offset and the connectivity's size.
        """
        for payload, end in self.last:
            values = self.connectivity.get(payload.cells[:-1])
            if values is None:
                check_bytes(declared, payload.what, 8 * end)
            elif end > values:
                raise file_error(declared.path, f"has {payload.what} whose last cell ends "
                                 f"at {end}, past the {values} values of its connectivity")
