"""What a dataset file declares, checked before and after VTK reads it.

VTK's readers trust a file's header: they allocate what it declares (and abort
the process with ``std::bad_alloc`` when that is too much), and they repair or
drop what they cannot parse without saying so. The scanners
(:mod:`daxpy.io.xml_scan`, :mod:`daxpy.io.legacy_scan`) fill a :class:`Declared`
from the file's own words; :func:`check_bytes` refuses sizes the machine cannot
hold before VTK sees the file, and :func:`cross_check` compares what VTK
returned with what the file declared.

Examples
--------
>>> from daxpy.io.file_checks import Declared, check_bytes
>>> declared = Declared("big.vti")
>>> try:
...     check_bytes(declared, "point array 't'", 10**15)
... except OSError as err:
...     print(str(err).split(":")[0])
'big.vti' declares point array 't' of 1000000000000000 bytes
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import DataFileError
from ..data.memory_budget import available_bytes

__all__ = ["Declared", "check_bytes", "cross_check", "file_error"]

# Association of an array -> the VTK accessor of its attribute data.
_ATTRIBUTE_DATA = {"point": "GetPointData", "cell": "GetCellData", "field": "GetFieldData"}


def file_error(path: str, problem: str) -> DataFileError:
    """A :class:`~daxpy.errors.DataFileError` saying ``problem`` about ``path``.

    Examples
    --------
    >>> from daxpy.io.file_checks import file_error
    >>> str(file_error("a.vtk", "is truncated"))
    "'a.vtk' is truncated"
    """
    return DataFileError(f"{path!r} {problem}")


@dataclass
class Declared:
    """What a file's header declares, filled in by a scanner.

    Attributes
    ----------
    path : str
        The file, as the user named it (used in every message).
    n_points, n_cells : int or None
        Counts of the dataset; None where the format does not state them.
    arrays : dict
        ``(association, name) -> (n_tuples, n_components)`` for every
        attribute array the file declares (association ``"point"``,
        ``"cell"`` or ``"field"``).
    nbytes : int
        Bytes the reader will allocate for everything declared so far.

    Examples
    --------
    >>> from daxpy.io.file_checks import Declared
    >>> Declared("g.vti", n_points=8).arrays
    {}
    """

    path: str
    n_points: int | None = None
    n_cells: int | None = None
    arrays: dict = field(default_factory=dict)
    nbytes: int = 0


def check_bytes(declared: Declared, what: str, nbytes: int) -> None:
    """Add ``nbytes`` (the size of ``what``) to what reading ``declared.path``
    allocates; refuse when that exceeds the memory this process can allocate.

    Raises
    ------
    DataFileError
        Naming the file, the declared quantity and both sizes.

    Examples
    --------
    >>> from daxpy.io.file_checks import Declared, check_bytes
    >>> declared = Declared("g.vti")
    >>> check_bytes(declared, "points", 96)
    >>> declared.nbytes
    96
    """
    if nbytes < 0:
        raise file_error(declared.path, f"declares a negative size for {what}")
    declared.nbytes += nbytes
    available, limit = available_bytes()
    if declared.nbytes > available:
        total = "" if declared.nbytes == nbytes else f" ({declared.nbytes} bytes in all)"
        raise file_error(
            declared.path,
            f"declares {what} of {nbytes} bytes{total}: more than the {available} "
            f"bytes available ({limit}); the file is corrupt or too large for this machine",
        )


def _count_mismatch(declared: Declared, what: str, expected: int, got: int) -> DataFileError:
    return file_error(declared.path,
                      f"declares {what} of {expected}, but VTK read {got}: "
                      "the file is truncated or corrupt")


def cross_check(declared: Declared, vtk_object) -> None:
    """Compare the dataset VTK read with what the file declared.

    Raises
    ------
    DataFileError
        If a count, an array, its tuple count or its component count differs.

    Examples
    --------
    >>> from vtkmodules.vtkCommonDataModel import vtkImageData
    >>> from daxpy.io.file_checks import Declared, cross_check
    >>> image = vtkImageData()
    >>> image.SetDimensions(2, 2, 2)
    >>> cross_check(Declared("g.vti", n_points=8, n_cells=1), image)
    >>> try:
    ...     cross_check(Declared("g.vti", n_points=27), image)
    ... except OSError as err:
    ...     print(err)
    'g.vti' declares a point count of 27, but VTK read 8: the file is truncated or corrupt
    """
    for what, expected, got in (("a point count", declared.n_points,
                                 vtk_object.GetNumberOfPoints()),
                                ("a cell count", declared.n_cells,
                                 vtk_object.GetNumberOfCells())):
        if expected is not None and expected != got:
            raise _count_mismatch(declared, what, expected, got)
    for (association, name), (tuples, components) in declared.arrays.items():
        what = f"{association} array {name!r}"
        data = getattr(vtk_object, _ATTRIBUTE_DATA[association])()
        array = data.GetAbstractArray(name)
        if array is None:
            raise file_error(declared.path, f"declares {what}, but VTK did not read it: "
                             "the file is truncated or corrupt")
        if array.GetNumberOfTuples() != tuples:
            raise _count_mismatch(declared, f"{what} with a tuple count", tuples,
                                  array.GetNumberOfTuples())
        if array.GetNumberOfComponents() != components:
            raise _count_mismatch(declared, f"{what} with a component count", components,
                                  array.GetNumberOfComponents())
