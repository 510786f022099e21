"""Pass-through: copy a field, optionally converting its dtype (seed 004's test).

Examples
--------
>>> import numpy as np
>>> pass_through(None, np.arange(3, dtype=np.float32), dtype="float64").dtype
dtype('float64')
"""

from __future__ import annotations

import numpy as np

from ._cuda_specs import CUDA
from ._maps import register_map


def pass_through(grid, values: np.ndarray, dtype=None, out: np.ndarray | None = None):
    """Return a copy of ``values``, converted to ``dtype`` if given.

    Parameters
    ----------
    grid, values, out
        As for every map (:func:`~daxpy.worklets._maps.register_map`); ``values``
        of any numeric dtype.
    dtype : dtype-like, optional
        Output dtype (default: the input's).

    Returns
    -------
    numpy.ndarray
        Of ``values``' shape, in ``dtype``.

    Examples
    --------
    >>> import numpy as np
    >>> pass_through(None, np.array([1.5, 2.5])).tolist()
    [1.5, 2.5]
    """
    target = np.dtype(dtype) if dtype is not None else values.dtype
    if out is None:
        out = np.empty(values.shape, dtype=target)
    np.copyto(out, values, casting="unsafe")
    return out


PASS_THROUGH = register_map(pass_through, CUDA["pass_through"], cpu_tuple=True)
