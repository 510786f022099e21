"""Pass-through: copy a field, optionally converting its dtype (seed 004's test).

Examples
--------
>>> import numpy as np
>>> pass_through(None, np.arange(3, dtype=np.float32), dtype="float64").dtype
dtype('float64')
"""

from __future__ import annotations

import numpy as np

from daxpy.data.worklet import ANY_FAMILY, Worklet, register

from ._cuda_specs import CUDA


def pass_through(grid, values: np.ndarray, dtype=None, out: np.ndarray | None = None):
    """Return a copy of ``values``, converted to ``dtype`` if given.

    Parameters
    ----------
    grid : DataSet or None
        Unused: the copy does not depend on the topology.
    values : numpy.ndarray
        Field values, any numeric dtype.
    dtype : dtype-like, optional
        Output dtype (default: the input's).
    out : numpy.ndarray, optional
        Preallocated output of the right shape and dtype.

    Returns
    -------
    numpy.ndarray

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


PASS_THROUGH = register(Worklet(
    name="pass_through",
    input_association="any",
    output_association=None,
    halo=0,
    numpy={ANY_FAMILY: pass_through},
    cuda=CUDA["pass_through"],
))
