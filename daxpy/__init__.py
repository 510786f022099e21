"""daxpy: data-parallel visualization filters on compiled CPU kernels and generated CUDA.

Examples
--------
>>> import numpy as np, daxpy
>>> grid = daxpy.UniformGrid(dims=(4, 4, 4))
>>> grid.point_data["t"] = np.arange(64, dtype=np.float32)
>>> grid.n_cells
27
"""

from . import errors
from .data.dataset import DataSet
from .pipeline import Pipeline, pipeline
from .data.structured import CurvilinearGrid, RectilinearGrid, StructuredGrid, UniformGrid
from .data.unstructured import CellBlock, UnstructuredGrid
from .data.polydata import PolyData
from .engine.backend import configure_cpu
from .io import interop as _interop  # noqa: F401  (adds DataSet.to_vtk and to_pyvista)

__version__ = "0.1.0"

__all__ = [
    "CellBlock", "configure_cpu", "CurvilinearGrid", "DataSet", "Pipeline", "pipeline", "PolyData", "RectilinearGrid", "StructuredGrid",
    "UniformGrid", "UnstructuredGrid", "errors", "__version__",
]
