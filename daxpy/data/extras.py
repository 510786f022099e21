"""Optional dependencies: import one, or say which extra installs it.

daxpy's core needs only NumPy; VTK and PyVista (extra ``vtk``), CuPy
(``cuda``, ``cuda13``) and Dask (``dask``) come with extras of the
distribution :data:`DISTRIBUTION`. A missing one is refused with
:class:`~daxpy.errors.MissingExtraError`, whose message holds the command that
installs it, instead of a bare ``ModuleNotFoundError``.

Examples
--------
>>> install_command("vtk")
"pip install 'daxpy-viz[vtk]'"
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import MissingExtraError

__all__ = ["DISTRIBUTION", "install_command", "require"]

DISTRIBUTION = "daxpy-viz"
"""daxpy's name on PyPI (the import name is ``daxpy``; PyPI's ``daxpy`` is another project)."""


def install_command(extra: str) -> str:
    """The shell command that installs daxpy with ``extra``.

    Examples
    --------
    >>> install_command("cuda")
    "pip install 'daxpy-viz[cuda]'"
    """
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module``, or refuse naming the extra that installs it.

    Parameters
    ----------
    module : str
        The module to import (``"vtkmodules.util.numpy_support"``).
    extra : str
        daxpy's extra that installs it (``"vtk"``).
    purpose : str
        What needs it, for the message (``"daxpy.io.read"``).

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingExtraError
        If ``module`` (or a module it needs) cannot be imported.

    Examples
    --------
    >>> require("json", "vtk", "reading").__name__
    'json'
    >>> require("no_such_module_here", "vtk", "daxpy.io.read")
    Traceback (most recent call last):
    ...
    daxpy.errors.MissingExtraError: daxpy.io.read needs no_such_module_here, which is not installed (No module named 'no_such_module_here'); install daxpy's vtk extra: pip install 'daxpy-viz[vtk]'
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise MissingExtraError(
            f"{purpose} needs {module.partition('.')[0]}, which is not installed ({err}); "
            f"install daxpy's {extra} extra: {install_command(extra)}"
        ) from err
