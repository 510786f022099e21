"""The ASCII values VTK's legacy reader can read, checked before it tries.

A word the reader cannot parse (``1.5`` where an integer belongs, ``0x10``, a
flipped byte, ``1e500``) makes it report an error, and in field data it then
crashes the process. A value outside its type's range would be stored
wrapped or as infinity without a word. Both are refused here, a chunk of
words at a time (one regular expression over the chunk, one NumPy
conversion), so a large ASCII file costs little.

Examples
--------
>>> from daxpy.io.legacy_values import value_check
>>> check = value_check("a.vtk", "POINTS", "float")
>>> check([b"1.5", b"-2e3", b"nan"])
>>> check([b"1.5", b"1,5"])
Traceback (most recent call last):
...
daxpy.errors.DataFileError: 'a.vtk' has a value b'1,5' in POINTS that VTK cannot read as float
"""

from __future__ import annotations

import re

import numpy as np

from .file_checks import file_error

__all__ = ["value_check"]

_FLOAT = (rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
          rb"|[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)")
_INT = rb"[+-]?\d+"
_DTYPES = {
    "bit": np.uint8, "char": np.int8, "signed_char": np.int8, "unsigned_char": np.uint8,
    "short": np.int16, "unsigned_short": np.uint16, "int": np.int32,
    "unsigned_int": np.uint32, "long": np.int_, "unsigned_long": np.uint,
    "long_long": np.int64, "unsigned_long_long": np.uint64, "vtkidtype": np.int64,
    "float": np.float32, "double": np.float64,
    **{f"vtktype{sign}int{bits}": np.dtype(f"{sign}int{bits}")
       for sign in ("", "u") for bits in (8, 16, 32, 64)},
    "vtktypefloat32": np.float32, "vtktypefloat64": np.float64,
}


def _run(token: bytes) -> re.Pattern:
    return re.compile(rb"(?:%s )*%s" % (token, token))


_INT_RUN = _run(_INT)
_FLOAT_CHARS = b"0123456789+-.eEnNaAiIfFtTyY"
_FLOAT_WORD, _INT_WORD = re.compile(_FLOAT), re.compile(_INT)


def value_check(path: str, what: str, kind: str):
    """A function that refuses a list of ASCII words VTK cannot read as
    ``kind`` values of ``what`` in the file ``path``.

    Parameters
    ----------
    path : str
        The file, for messages.
    what : str
        The block the words belong to, for messages.
    kind : str
        The legacy type name, lower case (``"float"``, ``"vtktypeint64"``...).

    Returns
    -------
    callable
        ``check(words)``, raising :class:`~daxpy.errors.DataFileError`.

    Examples
    --------
    >>> from daxpy.io.legacy_values import value_check
    >>> value_check("a.vtk", "CELL_TYPES", "unsigned_char")([b"12", b"300"])
    Traceback (most recent call last):
    ...
    daxpy.errors.DataFileError: 'a.vtk' has a value b'300' in CELL_TYPES outside ...
    """
    dtype = np.dtype(_DTYPES[kind])
    is_float = dtype.kind == "f"
    run, word_pattern = _INT_RUN, _FLOAT_WORD if is_float else _INT_WORD

    def refuse(word: bytes, problem: str):
        raise file_error(path, f"has a value {word[:40]!r} in {what} {problem}")

    def bad_word(words: list):
        bad = next((w for w in words if not word_pattern.fullmatch(w)), words[0])
        refuse(bad, f"that VTK cannot read as {kind}")

    def check(words: list) -> None:
        if not words:
            return
        if is_float:
            # Python's float() reads what VTK does, and also "1_0": refusing
            # words with other characters than VTK's leaves no difference.
            try:
                values = np.array(words, dtype=np.float64)
            except ValueError:
                bad_word(words)
            if b"".join(words).translate(None, _FLOAT_CHARS):
                bad_word(words)
            limit = np.finfo(dtype).max
            wrong = np.isinf(values) | (np.abs(values) > limit)
            for index in np.flatnonzero(wrong):
                if b"inf" not in words[index].lower():
                    refuse(words[index], f"outside the range of {kind}")
            return
        if not run.fullmatch(b" ".join(words)):
            bad_word(words)
        info = np.iinfo(dtype)
        values = [int(w) for w in words]
        for value in (min(values), max(values)):
            if not info.min <= value <= info.max:
                refuse(words[values.index(value)], f"outside the range of {kind}")

    return check
