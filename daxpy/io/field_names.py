"""Which field names each VTK file format carries exactly, checked before writing.

What was found (VTK 9.3 to 9.7):

- In memory, VTK keeps a name as a NUL-terminated UTF-8 string: a NUL ends it
  early and a lone surrogate cannot be encoded at all.
- XML formats (``.vti .vtr .vts .vtu``) write the name into an attribute
  without escaping it: ``"``, ``<`` and ``&`` make the file unreadable, and a
  tab, newline or carriage return comes back as a space. daxpy escapes those
  itself (:func:`xml_names`), so every name of XML 1.0 characters round-trips;
  the rest of the C0 controls, U+FFFE and U+FFFF cannot appear in XML at all.
- Legacy ``.vtk`` writes the name as one token, %-escaping bytes outside
  ``!``..``~`` and ``"`` and ``%``. Its reader keeps 255 bytes of the escaped
  token, skips an array named ``NULL_ARRAY``, and takes a name starting with
  ``metadata`` (any case) for a metadata block. Its writer passes the name to a
  format function: ``{`` or ``}`` aborts the process.

Examples
--------
>>> from daxpy.io.field_names import name_problem
>>> name_problem("x\\ny", ".vti") is None
True
>>> name_problem("NULL_ARRAY", ".vtk")
'VTK skips an array of that name when it reads a legacy file'
"""

from __future__ import annotations

import functools
import re

from ..data.dataset import DataSet
from ..errors import FieldError

__all__ = ["check_field_names", "name_problem", "xml_names"]

XML_EXTENSIONS = (".vti", ".vtr", ".vts", ".vtu")
LEGACY_NAME_BYTES = 255
# Characters XML 1.0 forbids even as character references.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# What an attribute value must escape to read back unchanged (tab, newline and
# carriage return would be normalized to spaces).
_XML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                "\t": "&#9;", "\n": "&#10;", "\r": "&#13;"}


def _memory_problem(name: str) -> str | None:
    if "\x00" in name:
        return "VTK ends a name at its first NUL character"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not valid Unicode text (a lone surrogate), which VTK cannot store"
    return None


def _legacy_problem(name: str) -> str | None:
    if "{" in name or "}" in name:
        return "VTK's legacy writer treats '{' and '}' as format codes and aborts the process"
    if name == "NULL_ARRAY":
        return "VTK skips an array of that name when it reads a legacy file"
    if name[:8].lower() == "metadata":
        return "VTK's legacy reader takes a name starting with 'metadata' for a metadata block"
    size = sum(1 if 33 <= byte <= 126 and byte not in b'"%' else 3
               for byte in name.encode("utf-8"))
    if size > LEGACY_NAME_BYTES:
        return (f"it takes {size} bytes once escaped, and VTK's legacy reader keeps "
                f"{LEGACY_NAME_BYTES}")
    return None


def name_problem(name: str, extension: str | None = None) -> str | None:
    """Why ``name`` cannot round-trip through VTK, or None if it can.

    Parameters
    ----------
    name : str
        A field name.
    extension : str, optional
        The file format (``".vti"``, ..., ``".vtk"``); None for an in-memory
        VTK dataset (:func:`daxpy.io.interop.to_vtk`).

    Returns
    -------
    str or None
        The reason, as a clause for an error message.

    Examples
    --------
    >>> from daxpy.io.field_names import name_problem
    >>> name_problem('a"b', ".vtu") is None, name_problem("x" * 300, ".vtk")[:13]
    (True, 'it takes 300 ')
    """
    problem = _memory_problem(name)
    if problem is None and extension in XML_EXTENSIONS and _NOT_XML.search(name):
        char = _NOT_XML.search(name).group()
        problem = f"it holds the character {char!r}, which XML files cannot contain"
    if problem is None and extension == ".vtk":
        problem = _legacy_problem(name)
    return problem


def check_field_names(dataset: DataSet, extension: str | None = None) -> None:
    """Refuse, before anything is written, a field name the target cannot carry.

    Parameters
    ----------
    dataset : DataSet
        The dataset about to be exported.
    extension : str, optional
        The file format; None for an in-memory VTK dataset.

    Raises
    ------
    FieldError
        Naming the field, the format and why (see the module's docstring).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.io.field_names import check_field_names
    >>> grid = daxpy.UniformGrid(dims=(2,), point_data={"a{b}": np.zeros(2)})
    >>> check_field_names(grid, ".vti")
    >>> check_field_names(grid, ".vtk")
    Traceback (most recent call last):
    ...
    daxpy.errors.FieldError: point field 'a{b}' cannot be written to a legacy .vtk file: VTK's legacy writer treats '{' and '}' as format codes and aborts the process; rename the field or write an XML format
    """
    target = ("a legacy .vtk file" if extension == ".vtk" else
              f"a {extension} file" if extension else "VTK")
    other = "or write an XML format" if extension == ".vtk" else ""
    for association in ("points", "cells"):
        for name in dataset.fields(association):
            problem = name_problem(name, extension)
            if problem is not None:
                raise FieldError(
                    f"{association[:-1]} field {name!r} cannot be written to {target}: "
                    f"{problem}; rename the field {other}".rstrip())


@functools.lru_cache(maxsize=1)
def _xml_writer_escapes() -> bool:
    """Whether this VTK's XML writer escapes attribute values itself (9.7 does
    not); probed once, so that a VTK that starts to escape is not escaped twice."""
    from vtkmodules.vtkCommonCore import vtkDoubleArray
    from vtkmodules.vtkCommonDataModel import vtkImageData
    from vtkmodules.vtkIOXML import vtkXMLImageDataWriter

    image, array = vtkImageData(), vtkDoubleArray()
    image.SetDimensions(1, 1, 1)
    array.SetName("a&b")
    array.SetNumberOfTuples(1)
    image.GetPointData().AddArray(array)
    writer = vtkXMLImageDataWriter()
    writer.SetInputData(image)
    writer.WriteToOutputStringOn()
    writer.Write()
    return "a&amp;b" in writer.GetOutputString()


def xml_names(vtk_object) -> None:
    """Rename ``vtk_object``'s point and cell arrays so that VTK's XML writer
    stores their names exactly (escaped, where VTK does not escape them).

    Call it on a dataset made for writing only: the in-memory names change.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.io.field_names import xml_names
    >>> image = daxpy.UniformGrid(dims=(2,), point_data={'a"b': np.zeros(2)}).to_vtk()
    >>> xml_names(image)
    >>> image.GetPointData().GetArrayName(0)
    'a&quot;b'
    """
    if _xml_writer_escapes():
        return
    for fields in (vtk_object.GetPointData(), vtk_object.GetCellData()):
        for index in range(fields.GetNumberOfArrays()):
            array = fields.GetAbstractArray(index)
            array.SetName("".join(_XML_ESCAPES.get(c, c) for c in array.GetName()))
