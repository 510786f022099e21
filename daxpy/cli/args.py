"""Checks of the command line's argument strings, as argparse ``type=`` functions.

Each check raises :class:`daxpy.errors.ArgumentError` naming what it expected;
:func:`argparse_type` turns it into an argparse type, so that a malformed
argument is a usage error (status 2) reported before anything is read or
computed.

Examples
--------
>>> from daxpy.cli.args import parse_step, wavelet_size
>>> parse_step("bias_add=1,2.5"), parse_step("gradient")
(('bias_add', {'bias': [1.0, 2.5]}), ('gradient', {'kind': 'point'}))
>>> wavelet_size("wavelet:16"), wavelet_size("in.vti")
(16, None)
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from .. import filters as _filters  # noqa: F401  (importing the filters declares their verbs)
from ..data.verbs import parse_step, registered_verbs
from ..errors import ArgumentError

__all__ = ["VERBS", "argparse_type", "dask_address", "dtype_name", "integer_at_least",
           "parse_step", "positive_seconds", "source_spec", "step_help", "step_spec",
           "wavelet_size"]

VERBS = tuple(registered_verbs())
"""Verbs of ``daxpy run --step``, in the order its help lists them (the declared verbs)."""

_WAVELET = "wavelet:"


def argparse_type(check):
    """An argparse ``type=`` function from ``check`` (a function that raises ArgumentError).

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="p")
    >>> _ = parser.add_argument("--n", type=argparse_type(integer_at_least(0)))
    >>> parser.parse_args(["--n", "3"]).n
    3
    """
    def convert(text: str):
        try:
            return check(text)
        except ArgumentError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    convert.__name__ = check.__name__
    return convert


def _refused(expected: str, text: str) -> ArgumentError:
    """The error for an argument that is not ``expected`` (its text cut to 80 characters)."""
    return ArgumentError(f"must be {expected}, got {text[:80]!r}")


def integer_at_least(low: int):
    """A check of integers of at least ``low``: ``daxpy demo --size`` takes 2,
    ``daxpy source --components`` 1, ``daxpy run --pieces`` 0 (meaning "planned").

    Examples
    --------
    >>> integer_at_least(2)("16")
    16
    >>> integer_at_least(0)("-1")
    Traceback (most recent call last):
    ...
    daxpy.errors.ArgumentError: must be an integer >= 0, got '-1'
    """
    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:  # not a number, or more digits than int() takes
            value = None
        if value is None or value < low:
            raise _refused(f"an integer >= {low}", text)
        return value

    check.__name__ = f"integer_at_least_{low}"
    return check


def positive_seconds(text: str) -> float:
    """A finite number of seconds above 0 (``daxpy run --dask-timeout``).

    Examples
    --------
    >>> positive_seconds("2.5")
    2.5
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf):
        raise _refused("a number of seconds > 0", text)
    return value


def dtype_name(text: str) -> str:
    """A name NumPy knows as a dtype (``daxpy source --dtype``), kept as written.

    Examples
    --------
    >>> dtype_name("float64"), dtype_name("f4")
    ('float64', 'f4')
    """
    try:
        np.dtype(text)
    except (TypeError, ValueError, SyntaxError):  # NumPy parses strings like "," with ast
        raise _refused("a NumPy dtype such as float32", text) from None
    return text


def dask_address(text: str) -> str:
    """A non-empty scheduler address without spaces (Dask checks the rest on connecting).

    Examples
    --------
    >>> dask_address("tcp://10.0.0.1:8786")
    'tcp://10.0.0.1:8786'
    """
    if not text or text != text.strip() or any(c.isspace() for c in text):
        raise _refused("a scheduler address such as tcp://HOST:8786", text)
    return text


def wavelet_size(text: str) -> int | None:
    """SIZE of an input written ``wavelet:SIZE``; None for any other input (a file).

    Raises
    ------
    ArgumentError
        If SIZE is not an integer >= 2.

    Examples
    --------
    >>> wavelet_size("wavelet:abc")
    Traceback (most recent call last):
    ...
    daxpy.errors.ArgumentError: wavelet:SIZE needs an integer SIZE >= 2, got 'abc'
    """
    if not text.startswith(_WAVELET):
        return None
    size = text[len(_WAVELET):]
    try:
        return integer_at_least(2)(size)
    except ArgumentError:
        raise ArgumentError(f"wavelet:SIZE needs an integer SIZE >= 2, got {size[:80]!r}"
                            ) from None


def source_spec(text: str) -> str:
    """A ``daxpy run`` input: a file name, or ``wavelet:SIZE`` with a valid SIZE.

    Examples
    --------
    >>> source_spec("wavelet:8"), source_spec("in.vti")
    ('wavelet:8', 'in.vti')
    """
    if not text:
        raise _refused("a dataset file or wavelet:SIZE", text)
    wavelet_size(text)
    return text


def step_help() -> str:
    """One line per declared verb, for ``daxpy run --help``.

    Examples
    --------
    >>> step_help().splitlines()[0]
    'gradient[=point|cell,...]: point gradient; cell: at the cell centres; with a 3-component field, any of divergence, vorticity, qcriterion (each =NAME to name it);'
    """
    verbs = registered_verbs().values()
    return "\n".join(f"{verb.usage}: {verb.help};" for verb in verbs)


def step_spec(text: str) -> str:
    """A ``--step`` that :func:`parse_step` accepts, kept as written.

    Examples
    --------
    >>> step_spec("map=sin(x)")
    'map=sin(x)'
    """
    parse_step(text)
    return text
