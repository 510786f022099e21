"""Divergence, vorticity and Q-criterion of a vector field, from its gradient.

Each reads the 9-component gradient of a 3-component field in VTK's layout
(``[du/dx, du/dy, du/dz, dv/dx, ..., dw/dz]``, as ``point_gradient`` and
``cell_gradient`` write it) and is elementwise, so it works at points or at
cells alike. The formulas are vtkGradientFilter's.

Examples
--------
>>> import numpy as np
>>> g = np.array([[1.0, 2, 3, 4, 5, 6, 7, 8, 9]])
>>> divergence(None, g).tolist(), vorticity(None, g).tolist()
([15.0], [[2.0, -4.0, 2.0]])
"""

from __future__ import annotations

import numpy as np

from daxpy.errors import FieldError

from ._cuda_specs import CUDA
from ._maps import register_map


def _velocity_gradient(gradient: np.ndarray, name: str, out: np.ndarray | None,
                       tail: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The checked ``(n, 9)`` gradient, and ``out`` or a new ``(n,) + tail`` array of its dtype."""
    array = np.asarray(gradient)
    if array.ndim != 2 or array.shape[1] != 9:
        raise FieldError(
            f"{name} must be the gradient of a 3-component field, shape (n, 9); "
            f"got shape {array.shape}"
        )
    if array.dtype.kind != "f":
        raise FieldError(f"{name} must be float32 or float64, got {array.dtype}")
    if out is None:
        out = np.empty((array.shape[0],) + tail, dtype=array.dtype)
    return array, out


def divergence(grid, gradient: np.ndarray, field_name: str = "gradient",
               out: np.ndarray | None = None) -> np.ndarray:
    """Divergence ``du/dx + dv/dy + dw/dz``.

    Parameters
    ----------
    grid, out
        As for every map (:func:`~daxpy.worklets._maps.register_map`).
    gradient : numpy.ndarray, shape (n, 9)
        Gradient of a 3-component field, VTK's layout.
    field_name : str
        What to call the input in error messages.

    Returns
    -------
    numpy.ndarray, shape (n,), the gradient's dtype

    Raises
    ------
    FieldError
        If ``gradient`` is not an ``(n, 9)`` float array.

    Examples
    --------
    >>> import numpy as np
    >>> divergence(None, np.eye(3).reshape(1, 9)).tolist()
    [3.0]
    """
    g, out = _velocity_gradient(gradient, field_name, out, ())
    np.add(g[:, 0], g[:, 4], out=out)
    out += g[:, 8]
    return out


def vorticity(grid, gradient: np.ndarray, field_name: str = "gradient",
              out: np.ndarray | None = None) -> np.ndarray:
    """Vorticity (curl) ``(dw/dy - dv/dz, du/dz - dw/dx, dv/dx - du/dy)``; parameters
    and errors as :func:`divergence`'s.

    Returns
    -------
    numpy.ndarray, shape (n, 3), the gradient's dtype

    Examples
    --------
    >>> import numpy as np
    >>> rotation = np.array([[0.0, -1, 0, 1, 0, 0, 0, 0, 0]])  # u = -y, v = x
    >>> vorticity(None, rotation).tolist()
    [[0.0, 0.0, 2.0]]
    """
    g, out = _velocity_gradient(gradient, field_name, out, (3,))
    for axis, (plus, minus) in enumerate(((7, 5), (2, 6), (3, 1))):
        np.subtract(g[:, plus], g[:, minus], out=out[:, axis])
    return out


def qcriterion(grid, gradient: np.ndarray, field_name: str = "gradient",
               out: np.ndarray | None = None) -> np.ndarray:
    """Q-criterion, as vtkGradientFilter computes it.

    ``Q = -(du/dx^2 + dv/dy^2 + dw/dz^2) / 2
    - (du/dy dv/dx + du/dz dw/dx + dv/dz dw/dy)``, i.e. half the squared
    norm of the rotation tensor minus that of the strain rate. Parameters, result
    and errors as :func:`divergence`'s.

    Examples
    --------
    >>> import numpy as np
    >>> rotation = np.array([[0.0, -1, 0, 1, 0, 0, 0, 0, 0]])  # solid-body rotation
    >>> qcriterion(None, rotation).tolist()
    [1.0]
    """
    g, out = _velocity_gradient(gradient, field_name, out, ())
    np.multiply(g[:, 0], g[:, 0], out=out)
    out += g[:, 4] * g[:, 4]
    out += g[:, 8] * g[:, 8]
    out *= -0.5
    for a, b in ((1, 3), (2, 6), (5, 7)):
        out -= g[:, a] * g[:, b]
    return out


for _function in (divergence, vorticity, qcriterion):
    register_map(_function, CUDA[_function.__name__])
