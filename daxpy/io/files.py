"""Read and write datasets in VTK's file formats, through VTK.

XML formats: ``.vti`` (uniform), ``.vtr`` (rectilinear), ``.vts``
(curvilinear), ``.vtu`` (unstructured), ``.vtp`` (polydata); legacy ``.vtk``
holds any of them. ``.ply`` and ``.stl`` hold polydata surfaces (points and
polygons; triangles), without fields (:mod:`daxpy.io.surface_formats`).
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
from typing import Callable

from ..data.dataset import DataSet
from ..data.extras import require
from ..errors import ArgumentError, DataFileError
from .field_names import check_field_names, xml_names
from .safe_write import atomic_write, check_output_target
from .surface_formats import check_surface_format
from .vtk_messages import vtk_messages

__all__ = ["check_format", "check_output_target", "read", "write"]

# extension -> (daxpy family it holds, VTK reader class, VTK writer class);
# None as family: any family (legacy format).
_FORMATS = {
    ".vti": ("uniform", "vtkXMLImageDataReader", "vtkXMLImageDataWriter"),
    ".vtr": ("rectilinear", "vtkXMLRectilinearGridReader", "vtkXMLRectilinearGridWriter"),
    ".vts": ("curvilinear", "vtkXMLStructuredGridReader", "vtkXMLStructuredGridWriter"),
    ".vtu": ("unstructured", "vtkXMLUnstructuredGridReader", "vtkXMLUnstructuredGridWriter"),
    ".vtp": ("polydata", "vtkXMLPolyDataReader", "vtkXMLPolyDataWriter"),
    ".vtk": (None, "vtkDataSetReader", "vtkDataSetWriter"),
    ".ply": ("polydata", "vtkPLYReader", "vtkPLYWriter"),
    ".stl": ("polydata", "vtkSTLReader", "vtkSTLWriter"),
}
_MODULES = {"vtkDataSet": "vtkIOLegacy", "vtkPLY": "vtkIOPLY", "vtkSTL": "vtkIOGeometry"}


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
    module = next((m for prefix, m in _MODULES.items() if name.startswith(prefix)), "vtkIOXML")
    return getattr(require(f"vtkmodules.{module}", "vtk", "reading and writing VTK files"),
                   name)()


def _observe_progress(algorithm, progress: Callable[[float], None] | None) -> None:
    """Have VTK's ``algorithm`` call ``progress(fraction)`` as it goes (None: nothing)."""
    if progress is not None:
        algorithm.AddObserver("ProgressEvent",
                              lambda caller, _event: progress(caller.GetProgress()))


def _scan(path: str, family: str | None):
    """Check what the file declares before VTK sees it (see :mod:`daxpy.io.file_checks`)."""
    from .legacy_scan import scan_legacy
    from .ply_scan import scan_ply
    from .stl_scan import scan_stl
    from .xml_scan import scan_xml

    scanners = {".vtk": scan_legacy, ".ply": scan_ply, ".stl": scan_stl}
    try:
        scan = scanners.get(Path(path).suffix.lower())
        if scan is not None:
            return scan(path)
        if family is None:
            raise DataFileError(f"{path!r}: no reader for the suffix {Path(path).suffix!r}")
        return scan_xml(path, family)
    except DataFileError:
        raise
    except OSError as err:  # the file vanished or cannot be opened
        raise DataFileError(f"{path!r} cannot be read: {err.strerror or err}") from err


def read(path: str | os.PathLike, progress: Callable[[float], None] | None = None) -> DataSet:
    """Read a ``.vti``, ``.vtr``, ``.vts``, ``.vtu``, ``.vtp``, legacy ``.vtk``, ``.ply``
    or ``.stl`` file.

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
    progress : callable, optional
        Called with the fraction read (0 to 1) as VTK reads
        (:func:`daxpy.io.progress.progress` yields one that drives a bar).

    Returns
    -------
    DataSet
        The grid with every numeric point and cell array of the file, wrapping
        the reader's arrays (see :func:`daxpy.io.interop.from_vtk`).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ArgumentError
        If the extension is not one of the eight formats.
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
    daxpy.errors.ArgumentError: path 'grid.png' has extension '.png'; daxpy reads and writes .vti, .vtr, .vts, .vtu, .vtp, .vtk, .ply, .stl
    """
    family, reader_name, _writer = _format(path)
    name = os.fspath(path)
    if not os.path.exists(name):
        raise FileNotFoundError(errno.ENOENT, "no such dataset file", name)
    if not Path(name).is_file():
        # A FIFO or device would block or never end; a folder is no dataset.
        raise DataFileError(f"{name!r} is not a regular file")
    reader = _vtk_class(reader_name)  # first: without VTK, say which extra to install
    declared = _scan(name, family)
    if reader_name == "vtkDataSetReader":
        # The legacy reader keeps only the first scalars/vectors/... array unless told.
        for kind in ("Scalars", "Vectors", "Normals", "Tensors", "ColorScalars",
                     "TCoords", "Fields"):
            getattr(reader, f"ReadAll{kind}On")()
    reader.SetFileName(name)
    _observe_progress(reader, progress)
    with vtk_messages(reader, reader.GetExecutive()) as messages:
        reader.Update()
    if messages:
        # VTK often reports one failure several times, from the parser up.
        detail = "; ".join(list(dict.fromkeys(messages))[:3])
        raise DataFileError(f"VTK could not read {name!r}: {detail}")
    from ..errors import FieldError, InvalidDataSetError
    from .file_checks import cross_check
    from .interop import from_vtk

    vtk_object = reader.GetOutputDataObject(0)
    if vtk_object is None:
        raise DataFileError(f"VTK could not read {name!r}: the reader returned no dataset")
    cross_check(declared, vtk_object)
    try:
        return from_vtk(vtk_object)
    except (InvalidDataSetError, FieldError) as err:
        raise DataFileError(f"{name!r} holds a grid daxpy cannot use: {err}") from err


def check_format(dataset: DataSet, path: str | os.PathLike) -> str:
    """Refuse ``path`` unless its extension names a format that holds ``dataset``'s
    grid family (``daxpy run`` checks this before computing); return the VTK
    writer's class name.

    Raises
    ------
    ArgumentError
        If the extension is unknown or does not suit the grid family.

    Examples
    --------
    >>> import daxpy
    >>> from daxpy.io import check_format
    >>> check_format(daxpy.UniformGrid(dims=(2, 2)), "grid.vti")
    'vtkXMLImageDataWriter'
    """
    return check_family_format(dataset.family, path)


def check_family_format(family: str, path: str | os.PathLike) -> str:
    """:func:`check_format` for a dataset of grid family ``family`` not yet made
    (the output of a geometry filter).

    Examples
    --------
    >>> check_family_format("polydata", "surface.vtp")
    'vtkXMLPolyDataWriter'
    """
    holds, _reader, writer_name = _format(path)
    if holds is not None and family != holds:
        suitable = [ext for ext, (fam, _, _) in _FORMATS.items() if fam in (family, None)]
        raise ArgumentError(
            f"{os.fspath(path)!r} holds {holds} grids, but the dataset is a "
            f"{family} grid; use {' or '.join(suitable)}"
        )
    return writer_name


def write(dataset: DataSet, path: str | os.PathLike,
          progress: Callable[[float], None] | None = None) -> None:
    """Write a dataset to a ``.vti``, ``.vtr``, ``.vts``, ``.vtu``, ``.vtp``, legacy
    ``.vtk``, ``.ply`` or ``.stl`` file.

    XML files are binary, appended and compressed; legacy files are binary.
    Arrays are exported as :func:`daxpy.io.interop.to_vtk` does (native byte
    order; float16 widened to float32, so it reads back as float32).

    Nothing is written unless everything can be: the target, the grid's dims
    and every field's name and dtype are checked first. The file is written
    beside the target under a hidden temporary name and renamed over it in one
    step (:func:`daxpy.io.safe_write.atomic_write`): a write that fails (a full
    disk, an error in VTK's writer) leaves the old file as it was. Writing a
    dataset over the file it was read from is safe, since :func:`read` holds
    the whole dataset in memory.

    Parameters
    ----------
    dataset : DataSet
        The grid and its fields.
    path : str or path-like
        The file to create or replace; its extension picks the writer and must
        suit the grid (``.vti`` for uniform, ``.vtr`` rectilinear, ``.vts``
        curvilinear, ``.vtu`` unstructured, ``.vtp``, ``.ply`` or ``.stl`` polydata;
        ``.vtk`` for any). A symbolic link
        is written through (the file it points to is replaced).
    progress : callable, optional
        Called with the fraction written (0 to 1) as VTK writes.

    Raises
    ------
    ArgumentError
        If the extension is unknown or does not suit the grid family, or (``.ply``,
        ``.stl``) the format cannot hold the dataset's fields or kinds of cells.
    DataFileError
        If the target is not a regular file or a new path in a writable folder
        (see :func:`check_output_target`), or VTK's writer fails; the old file
        is unchanged.
    FieldError
        If a field's name cannot be stored exactly in this format (see
        :mod:`daxpy.io.field_names`) or its dtype has no VTK equivalent.
    InvalidDataSetError
        If the grid has more points along an axis than VTK can count.

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
    from .interop import require_dataset, to_vtk

    require_dataset(dataset, "write")
    check_output_target(path)
    writer_name = check_format(dataset, path)
    extension = Path(path).suffix.lower()
    check_field_names(dataset, extension)
    check_surface_format(dataset, extension)
    vtk_object = to_vtk(dataset)
    if extension != ".vtk":
        xml_names(vtk_object)
    atomic_write(path, lambda temporary: _vtk_write(vtk_object, writer_name,
                                                    temporary, os.fspath(path), progress))


def _vtk_write(vtk_object, writer_name: str, temporary: str, shown: str,
               progress: Callable[[float], None] | None) -> None:
    """Have VTK write ``vtk_object`` to ``temporary``; raise if it says it failed.

    VTK's writers report a failure through the return value of ``Write``, their
    error code, or only an error message (some of their internal writers): each
    counts, so a failed write is never renamed over the target.
    """
    from vtkmodules.vtkCommonMisc import vtkErrorCode

    writer = _vtk_class(writer_name)
    if writer_name == "vtkDataSetWriter":
        writer.SetFileTypeToBinary()
    writer.SetInputData(vtk_object)
    writer.SetFileName(temporary)
    _observe_progress(writer, progress)
    with vtk_messages(writer) as messages:
        status = writer.Write()
    code = writer.GetErrorCode()
    if status != 1 or code or messages:
        detail = (messages[0] if messages else
                  vtkErrorCode.GetStringFromErrorCode(code) if code else "the writer failed")
        raise DataFileError(f"VTK could not write {shown!r}: {detail}; nothing was replaced")
