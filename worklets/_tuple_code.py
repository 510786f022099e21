"""The per-tuple code of an elementwise map, for fused CPU kernels.

A map that fuses on the CPU declares a *tuple template* (``cpu_tuple`` in its
declaration): ``template(kind, params, slots)`` returns the :class:`TupleCode`
that computes one tuple of its output from one tuple of its input, or None
where it cannot (the chain then runs unfused). The template writes the
arithmetic of the map's compiled CPU kernel in the same dtype and order, so a
fused kernel (:mod:`daxpy.worklets._fused_cpu`) gives that kernel's bits. It
writes Python (Numba) source from fixed text, the names in ``slots`` and
numbers; never text a user gave.

Examples
--------
>>> import numpy as np
>>> kind = TupleType(np.dtype("float32"), (3,), 10)
>>> kind.components, Slots(kind, 2).x
(3, ['v2_0', 'v2_1', 'v2_2'])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class TupleType:
    """The tuples of a field as a map sees them.

    Attributes
    ----------
    dtype : numpy.dtype
        Their dtype.
    tail : tuple
        The field's shape past its first axis: ``()`` or ``(c,)``.
    n : int
        How many tuples.

    Examples
    --------
    >>> TupleType(np.dtype("float64"), (), 4).components
    1
    """

    dtype: np.dtype
    tail: tuple
    n: int

    @property
    def components(self) -> int:
        """Values per tuple."""
        return math.prod(self.tail) or 1


def suffix(dtype) -> str:
    """What ends the names of ``dtype``'s scalar type, one and zero in generated
    source: ``T_float32``, ``ONE_float32``, ``ZERO_float32``.

    Examples
    --------
    >>> suffix(np.dtype("float32"))
    '_float32'
    """
    return f"_{np.dtype(dtype).name}"


def scalar(dtype) -> str:
    """Name of the scalar type ``dtype`` in generated source.

    Examples
    --------
    >>> scalar(np.dtype("float64"))
    'T_float64'
    """
    return f"T{suffix(dtype)}"


class Slots:
    """The names one step of a fused kernel writes its code with.

    Parameters
    ----------
    kind : TupleType
        Its input.
    index : int
        Its position in the chain (names of different steps never meet).

    Attributes
    ----------
    x : list of str
        The input tuple's values, one variable per component, in ``kind.dtype``.
    i : str
        The tuple's index.

    Examples
    --------
    >>> s = Slots(TupleType(np.dtype("float32"), (), 5), 1)
    >>> s.x, s.arg(0), s.tmp("norm")
    (['v1_0'], 's1_a0', 's1_norm')
    """

    i = "i"

    def __init__(self, kind: TupleType, index: int):
        self.index = index
        self.x = [f"v{index}_{k}" for k in range(kind.components)]

    def arg(self, j: int) -> str:
        """The kernel argument that holds the step's ``j``-th array."""
        return f"s{self.index}_a{j}"

    def tmp(self, name: str) -> str:
        """A variable of the step's own."""
        return f"s{self.index}_{name}"


@dataclass
class TupleCode:
    """One map's code for one tuple.

    Attributes
    ----------
    out : TupleType
        Its output.
    results : list of str
        One expression per output component, over the statements' variables;
        the fused kernel rounds each to ``out.dtype`` as a stored field is.
    lines : list of str
        Statements run before ``results`` are evaluated.
    arrays : list of numpy.ndarray
        Arrays the code reads, as kernel arguments ``slots.arg(0)``, ...
    tag : str
        What the step is, for the kernel's name (an identifier).

    Examples
    --------
    >>> code = TupleCode(TupleType(np.dtype("float32"), (), 3), ["abs(v0_0)"], tag="abs")
    >>> code.lines, code.arrays
    ([], [])
    """

    out: TupleType
    results: list
    lines: list = field(default_factory=list)
    arrays: list = field(default_factory=list)
    tag: str = ""
