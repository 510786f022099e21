"""daxpy: data-parallel visualization filters on NumPy and generated CUDA.

Examples
--------
>>> import numpy as np, daxpy
>>> grid = daxpy.UniformGrid(dims=(4, 4, 4))
>>> grid.point_data["t"] = np.arange(64, dtype=np.float32)
>>> grid.n_cells
27
"""

from . import errors
from .dataset import DataSet
from .pipeline import Pipeline, pipeline
from .structured import CurvilinearGrid, RectilinearGrid, StructuredGrid, UniformGrid
from .unstructured import CellBlock, UnstructuredGrid

__version__ = "0.1.0"

__all__ = [
    "CellBlock", "CurvilinearGrid", "DataSet", "Pipeline", "pipeline", "RectilinearGrid", "StructuredGrid",
    "UniformGrid", "UnstructuredGrid", "errors", "__version__",
]
