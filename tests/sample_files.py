"""Small valid dataset files in every format and encoding daxpy reads, for the
reader's crash, wrong-answer and corruption tests.

``daxpy.io.write`` makes the files daxpy writes itself (XML appended, base64,
zlib; legacy binary); VTK's writers make the other encodings a user's file may
have (XML ascii, inline binary, raw appended, uncompressed; legacy ASCII).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import daxpy
from daxpy.io import write
from strategies import mixed_grid_all_shapes

XML_EXTENSION = {"uniform": ".vti", "rectilinear": ".vtr", "curvilinear": ".vts",
                 "unstructured": ".vtu"}
_XML_WRITERS = {"uniform": "vtkXMLImageDataWriter", "rectilinear": "vtkXMLRectilinearGridWriter",
                "curvilinear": "vtkXMLStructuredGridWriter",
                "unstructured": "vtkXMLUnstructuredGridWriter"}
# label -> settings of a VTK XML writer
_XML_VARIANTS = {
    "ascii": lambda w: w.SetDataModeToAscii(),
    "inline": lambda w: w.SetDataModeToBinary(),
    "raw": lambda w: (w.SetCompressorTypeToNone(), w.EncodeAppendedDataOff()),
    "raw64": lambda w: (w.SetHeaderTypeToUInt64(), w.EncodeAppendedDataOff()),
}


def grids() -> dict[str, daxpy.DataSet]:
    """One small grid of each family, with point and cell fields of several
    dtypes and component counts."""
    rng = np.random.default_rng(1)
    found = {
        "uniform": daxpy.UniformGrid(dims=(4, 3, 2), origin=(0.5, 0, -1),
                                     spacing=(0.25, 1, 2)),
        "rectilinear": daxpy.RectilinearGrid([0.0, 1, 3], [0.0, 2], [1.0, 2, 4, 8]),
        "curvilinear": daxpy.CurvilinearGrid((3, 2, 2), rng.uniform(0, 1, (12, 3))),
        "unstructured": mixed_grid_all_shapes(),
    }
    for grid in found.values():
        grid.point_data["f32"] = rng.uniform(-1, 1, grid.n_points).astype(np.float32)
        grid.point_data["v64"] = rng.uniform(-1, 1, (grid.n_points, 3))
        grid.cell_data["i32"] = rng.integers(-9, 9, grid.n_cells, dtype=np.int32)
    return found


def _vtk_write(writer_name: str, grid, path: Path, setup) -> None:
    import vtkmodules.vtkIOLegacy as legacy
    import vtkmodules.vtkIOXML as xml

    from daxpy.io.interop import to_vtk

    writer = getattr(legacy if writer_name == "vtkDataSetWriter" else xml, writer_name)()
    setup(writer)
    writer.SetInputData(to_vtk(grid))
    writer.SetFileName(str(path))
    assert writer.Write() == 1


def write_samples(folder: Path) -> dict[str, Path]:
    """Write every sample file into ``folder``: label -> path."""
    samples = {}
    for family, grid in grids().items():
        xml_path = folder / f"{family}{XML_EXTENSION[family]}"
        write(grid, xml_path)
        samples[f"{family}-xml"] = xml_path
        legacy_path = folder / f"{family}-binary.vtk"
        write(grid, legacy_path)
        samples[f"{family}-legacy-binary"] = legacy_path
        ascii_path = folder / f"{family}-ascii.vtk"
        _vtk_write("vtkDataSetWriter", grid, ascii_path, lambda w: w.SetFileTypeToASCII())
        samples[f"{family}-legacy-ascii"] = ascii_path
        for variant, setup in _XML_VARIANTS.items():
            path = folder / f"{family}-{variant}{XML_EXTENSION[family]}"
            _vtk_write(_XML_WRITERS[family], grid, path, setup)
            samples[f"{family}-xml-{variant}"] = path
    return samples
