"""Exceptions raised by daxpy.

Every error names the dataset, field or argument at fault and what was expected,
so that a user can fix the input without reading daxpy's source.

Examples
--------
>>> import daxpy
>>> try:
...     daxpy.UniformGrid(dims=(0, 2, 2))
... except daxpy.errors.InvalidDataSetError as err:
...     print(type(err).__name__)
InvalidDataSetError
"""

from __future__ import annotations


class DaxpyError(Exception):
    """Base class of every exception daxpy raises on purpose."""


class InvalidDataSetError(DaxpyError, ValueError):
    """A grid's geometry or topology is malformed (dims, coordinates, connectivity)."""


class FieldError(DaxpyError, ValueError):
    """A field is missing, has the wrong size, shape, dtype or association."""


class UnknownFieldError(FieldError, KeyError):
    """A filter asked for a field the dataset does not hold."""

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return str(self.args[0]) if self.args else ""


class ArgumentError(DaxpyError, ValueError):
    """A filter or function argument is out of its allowed range or type."""


class ExpressionError(DaxpyError, ValueError):
    """A FieldMap expression uses syntax or names outside the allowed set."""


class NaNPolicyError(DaxpyError, ValueError):
    """Input holds NaN or Inf and the caller asked for ``nan_policy="raise"``."""


class DataFileError(DaxpyError, OSError):
    """A dataset file cannot be read or written safely: corrupt, truncated, declaring
    sizes it cannot hold, not a regular file, or a write that failed (the old file is
    kept). The message names the file and the problem."""


class ResourceError(MemoryError, DaxpyError):
    """A request needs more memory than the machine has; the message gives the bytes
    needed and available. Raised before anything is allocated."""


class MissingExtraError(DaxpyError, ImportError):
    """An optional dependency is not installed; the message names the package, the
    extra that brings it (``vtk``, ``cuda``, ``dask``...) and the command that
    installs it (:func:`daxpy.data.extras.require`)."""


class BackendError(DaxpyError, RuntimeError):
    """The requested backend (for example CUDA) is not available here."""


class CompileError(DaxpyError, RuntimeError):
    """Generated CUDA source failed to compile; the message holds the kernel name."""


class DeviceMemoryError(MemoryError, DaxpyError):
    """The GPU has too little free memory for a call; the message gives both sizes."""

    # MemoryError first: its C-level __new__ must see this class's layout as its
    # own, or unpickling with cls.__new__ (tblib, as Dask's workers do) fails.
