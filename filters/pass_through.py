"""PassThrough: copy a field under a new name, optionally changing its dtype.

Examples
--------
>>> import numpy as np, daxpy
>>> from daxpy.filters import PassThrough
>>> g = daxpy.UniformGrid(dims=(3,), point_data={"t": np.arange(3, dtype=np.float32)})
>>> PassThrough("t", dtype="float64", backend="cpu")(g).point_data["t_copy"].dtype
dtype('float64')
"""

from __future__ import annotations

from daxpy.dispatch import execute

__all__ = ["PassThrough"]

from ._base import FieldFilter


class PassThrough(FieldFilter):
    """Copy a field, optionally converting it (seed 004's float32 to float64 test).

    Parameters
    ----------
    field : str
        Input field.
    result : str, optional
        Output field name (default ``"<field>_copy"``).
    dtype : dtype-like, optional
        Output dtype (default: the input's).
    association : {"points", "cells"}, optional
        Where to find the field.
    backend : {"auto", "cpu", "cuda"}
        Where to run.

    See Also
    --------
    daxpy.filters.FieldMap : elementwise expressions over fields.

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(2, 2), cell_data={"c": np.array([7], np.int32)})
    >>> PassThrough("c", result="c2", backend="cpu")(g).cell_data["c2"].tolist()
    [7]
    """

    def __init__(self, field: str, result: str | None = None, dtype=None, *,
                 association: str | None = None, backend: str = "auto"):
        super().__init__(field, association=association, backend=backend)
        self.result = result or f"{field}_copy"
        self.dtype = dtype

    def compute(self, dataset):
        values, association = self.input_field(dataset)
        copied = execute("pass_through", dataset, values, association,
                         backend=self.backend, dtype=self.dtype)
        return {association: {self.result: copied}}
