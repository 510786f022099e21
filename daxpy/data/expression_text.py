"""Checks on the text of a FieldMap expression before Python's parser sees it.

Examples
--------
>>> check_text("sqrt(u**2 + v**2)")
>>> shorten("x" * 100)[:12]
"'xxxxxxxxxxx"
"""

from __future__ import annotations

import itertools
import unicodedata

from ..errors import ExpressionError

__all__ = ["MAX_LENGTH", "check_text", "shorten"]

MAX_LENGTH = 1000
"""Longest expression accepted, in characters."""


def shorten(text: str, limit: int = 60) -> str:
    """``repr`` of ``text``, cut to ``limit`` characters for error messages.

    Examples
    --------
    >>> shorten("abcdef", limit=5)
    "'ab...'"
    """
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")


def check_text(source: str) -> None:
    """Refuse an expression that is too long, empty, or holds a name that
    Python's parser would read as another name.

    Python applies NFKC to identifiers, so a fullwidth ``ｆ`` (or ``e`` and a
    combining accent) would silently read another field (``f``, ``é``): names
    are bound exactly as written, or refused.

    Raises
    ------
    ExpressionError
        Naming the length, or the name, its column and what it would become.

    Examples
    --------
    >>> check_text("ｆ * 2")
    Traceback (most recent call last):
    ...
    daxpy.errors.ExpressionError: name 'ｆ' in expression 'ｆ * 2' (column 1) would be read as 'f' (Python's parser normalises names with NFKC); write 'f' if you mean it, or rename the field to a name that NFKC leaves as it is
    """
    if len(source) > MAX_LENGTH:
        raise ExpressionError(
            f"expression is {len(source)} characters long; at most {MAX_LENGTH} are allowed"
        )
    if not source.strip():
        raise ExpressionError("expression is empty; expected a formula over field names, "
                              "such as 'sqrt(u**2 + v**2)'")
    if unicodedata.is_normalized("NFKC", source):
        return
    column = 0
    # Runs of letters, marks, digits and underscores: the names as written (the
    # parser normalises nothing else, and refuses other non-ASCII text itself).
    for is_word, run in itertools.groupby(
            source, key=lambda ch: ch == "_" or unicodedata.category(ch)[0] in "LMN"):
        text = "".join(run)
        normal = unicodedata.normalize("NFKC", text)
        if is_word and normal != text:
            raise ExpressionError(
                f"name {text!r} in expression {source!r} (column {column + 1}) would be "
                f"read as {normal!r} (Python's parser normalises names with NFKC); "
                f"write {normal!r} if you mean it, or rename the field to a name that "
                "NFKC leaves as it is"
            )
        column += len(text)
