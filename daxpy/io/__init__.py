"""Files and interop: VTK file formats (read, write, checks) and VTK/PyVista conversion.

The public entry points are :func:`read`, :func:`write`, :func:`check_format`
and :func:`check_output_target` (:mod:`daxpy.io.files`), and :func:`from_vtk`,
:func:`to_vtk` and :func:`to_pyvista` (:mod:`daxpy.io.interop`).
"""

from .files import check_format, check_output_target, read, write
from .interop import from_pyvista, from_vtk, to_pyvista, to_vtk

__all__ = ["check_format", "check_output_target", "from_pyvista", "from_vtk", "read", "to_pyvista",
           "to_vtk", "write"]
