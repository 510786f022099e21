"""Read and write datasets in VTK's file formats, through VTK.

XML formats: ``.vti`` (uniform), ``.vtr`` (rectilinear), ``.vts``
(curvilinear), ``.vtu`` (unstructured); legacy ``.vtk`` holds any of them.
A dataset read from a file wraps the reader's arrays without copying.

Examples
--------
>>> import os, tempfile, numpy as np, daxpy
>>> from daxpy.io import read, write
>>> grid = daxpy.UniformGrid(dims=(3, 3, 3), point_data={"t": np.arange(27.0)})
>>> path = os.path.join(tempfile.mkdtemp(), "grid.vti")
>>> write(grid, path)
>>> read(path).point_data["t"][:3].tolist()
[0.0, 1.0, 2.0]
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .dataset import DataSet
from .errors import ArgumentError, DataFileError
from .vtk_messages import vtk_messages

__all__ = ["read", "write"]

# extension -> (daxpy family it holds, VTK reader class, VTK writer class);
# None as family: any family (legacy format).
_FORMATS = {
    ".vti": ("uniform", "vtkXMLImageDataReader", "vtkXMLImageDataWriter"),
    ".vtr": ("rectilinear", "vtkXMLRectilinearGridReader", "vtkXMLRectilinearGridWriter"),
    ".vts": ("curvilinear", "vtkXMLStructuredGridReader", "vtkXMLStructuredGridWriter"),
    ".vtu": ("unstructured", "vtkXMLUnstructuredGridReader", "vtkXMLUnstructuredGridWriter"),
    ".vtk": (None, "vtkDataSetReader", "vtkDataSetWriter"),
}


def _format(path: str | os.PathLike) -> tuple:
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        raise ArgumentError(
            f"path {os.fspath(path)!r} has extension {suffix or '(none)'!r}; "
            f"daxpy reads and writes {', '.join(_FORMATS)}"
        )
    return _FORMATS[suffix]


def _vtk_class(name: str):
    """Instantiate a VTK IO class by name (imported here so daxpy works without VTK)."""
    import vtkmodules.vtkIOLegacy as legacy
    import vtkmodules.vtkIOXML as xml

    module = legacy if name.startswith("vtkDataSet") else xml
    return getattr(module, name)()


def _error_log(vtk_object) -> list[str]:
    """Collect a VTK object's error messages, so they become Python exceptions."""
    from vtkmodules.util.misc import calldata_type
    from vtkmodules.vtkCommonCore import VTK_STRING

    messages: list[str] = []

    @calldata_type(VTK_STRING)
    def on_error(_obj, _event, message):
        # VTK prefixes "ERROR: In <file>, line <n>"; the last line says what failed.
        messages.append(str(message).strip().splitlines()[-1])

    vtk_object.AddObserver("ErrorEvent", on_error)
    return messages


def _scan(path: str, family: str | None):
    """Check what the file declares before VTK sees it (see :mod:`daxpy.file_checks`)."""
    from .legacy_scan import scan_legacy
    from .xml_scan import scan_xml

    try:
        return scan_legacy(path) if family is None else scan_xml(path, family)
    except DataFileError:
        raise
    except OSError as err:  # the file vanished or cannot be opened
        raise DataFileError(f"{path!r} cannot be read: {err.strerror or err}") from err


def read(path: str | os.PathLike) -> DataSet:
    """Read a ``.vti``, ``.vtr``, ``.vts``, ``.vtu`` or legacy ``.vtk`` file.

    The file is checked before VTK reads it: its structure, its attributes
    (origin, spacing, extents as finite numbers) and every size it declares,
    against its own length and the memory available, so a corrupt or hostile
    file is refused instead of crashing the process. Every error or warning
    VTK reports while reading is an error, and what VTK read is compared with
    what the file declares (counts, array names, tuples, components).

    Parameters
    ----------
    path : str or path-like
        The file; its extension picks the reader.

    Returns
    -------
    DataSet
        The grid with every numeric point and cell array of the file, wrapping
        the reader's arrays (see :func:`daxpy.interop.from_vtk`).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ArgumentError
        If the extension is not one of the five formats, or a legacy file
        holds a dataset type daxpy does not support (such as polydata).
    DataFileError
        If the file is not a regular file, cannot be opened, is corrupt or
        truncated, declares sizes it cannot hold or the machine's memory
        cannot, or VTK reports an error or a warning while reading it. The
        message names the file and the problem. (A subclass of ``OSError``.)

    See Also
    --------
    write

    Examples
    --------
    >>> from daxpy.io import read
    >>> read("grid.png")
    Traceback (most recent call last):
    ...
    daxpy.errors.ArgumentError: path 'grid.png' has extension '.png'; daxpy reads and writes .vti, .vtr, .vts, .vtu, .vtk
    """
    family, reader_name, _writer = _format(path)
    name = os.fspath(path)
    if not os.path.exists(name):
        raise FileNotFoundError(errno.ENOENT, "no such dataset file", name)
    if not Path(name).is_file():
        # A FIFO or device would block or never end; a folder is no dataset.
        raise DataFileError(f"{name!r} is not a regular file")
    declared = _scan(name, family)
    reader = _vtk_class(reader_name)
    if reader_name == "vtkDataSetReader":
        # The legacy reader keeps only the first scalars/vectors/... array unless told.
        for kind in ("Scalars", "Vectors", "Normals", "Tensors", "ColorScalars",
                     "TCoords", "Fields"):
            getattr(reader, f"ReadAll{kind}On")()
    reader.SetFileName(name)
    with vtk_messages(reader, reader.GetExecutive()) as messages:
        reader.Update()
    if messages:
        raise DataFileError(f"VTK could not read {name!r}: {messages[0]}")
    from .file_checks import cross_check
    from .interop import from_vtk

    vtk_object = reader.GetOutputDataObject(0)
    if vtk_object is None:
        raise DataFileError(f"VTK could not read {name!r}: the reader returned no dataset")
    cross_check(declared, vtk_object)
    return from_vtk(vtk_object)


def write(dataset: DataSet, path: str | os.PathLike) -> None:
    """Write a dataset to a ``.vti``, ``.vtr``, ``.vts``, ``.vtu`` or legacy ``.vtk`` file.

    XML files are binary, appended and compressed; legacy files are binary.

    Parameters
    ----------
    dataset : DataSet
        The grid and its fields.
    path : str or path-like
        The file to create or replace; its extension picks the writer and must
        suit the grid (``.vti`` for uniform, ``.vtr`` rectilinear, ``.vts``
        curvilinear, ``.vtu`` unstructured; ``.vtk`` for any).

    Raises
    ------
    ArgumentError
        If the extension is unknown or does not suit the grid family.
    OSError
        If VTK cannot write the file (missing folder, no permission...).

    See Also
    --------
    read

    Examples
    --------
    >>> import daxpy
    >>> from daxpy.io import write
    >>> write(daxpy.UniformGrid(dims=(2, 2)), "grid.vtu")
    Traceback (most recent call last):
    ...
    daxpy.errors.ArgumentError: 'grid.vtu' holds unstructured grids, but the dataset is a uniform grid; use .vti or .vtk
    """
    family, _reader, writer_name = _format(path)
    from .interop import to_vtk

    vtk_object = to_vtk(dataset)
    if family is not None and dataset.family != family:
        suitable = [ext for ext, (fam, _, _) in _FORMATS.items()
                    if fam in (dataset.family, None)]
        raise ArgumentError(
            f"{os.fspath(path)!r} holds {family} grids, but the dataset is a "
            f"{dataset.family} grid; use {' or '.join(suitable)}"
        )
    writer = _vtk_class(writer_name)
    if writer_name == "vtkDataSetWriter":
        writer.SetFileTypeToBinary()
    errors = _error_log(writer)
    writer.SetInputData(vtk_object)
    writer.SetFileName(os.fspath(path))
    if writer.Write() != 1 or errors:
        detail = errors[0] if errors else "the writer failed"
        raise OSError(f"VTK could not write {os.fspath(path)!r}: {detail}")
