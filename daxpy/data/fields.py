"""Named field arrays attached to the points or the cells of a dataset.

Examples
--------
>>> import numpy as np
>>> from daxpy.data.fields import FieldData
>>> fd = FieldData("points", 4, owner="grid")
>>> fd["t"] = np.zeros(4)
>>> list(fd)
['t']
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

import numpy as np

from .arrays import checked_array
from ..errors import FieldError

ASSOCIATIONS = ("points", "cells")


def check_association(association: str, argument: str = "association") -> str:
    """Return ``association`` if it is ``"points"`` or ``"cells"``, else raise.

    Examples
    --------
    >>> check_association("points")
    'points'
    """
    if association not in ASSOCIATIONS:
        raise FieldError(
            f"{argument} must be 'points' or 'cells', got {association!r}"
        )
    return association


class FieldData(MutableMapping):
    """A dict of field arrays whose first axis matches the points or the cells.

    Arrays are stored as given (NumPy or CuPy, never copied). Each has shape
    ``(n,)`` for one component or ``(n, c)`` for ``c`` components, and a real
    numeric dtype.

    Parameters
    ----------
    association : {"points", "cells"}
        What the first axis counts.
    size : int
        Number of points or cells.
    owner : str
        Name of the dataset, used in error messages.

    Examples
    --------
    >>> import numpy as np
    >>> fd = FieldData("cells", 2, owner="mesh")
    >>> fd["v"] = np.ones((2, 3), dtype=np.float32)
    >>> fd["v"].shape
    (2, 3)
    """

    def __init__(self, association: str, size: int, owner: str = "dataset"):
        self.association = check_association(association)
        self.size = int(size)
        self.owner = owner
        self._arrays: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        return self._arrays[name]

    def __setitem__(self, name: str, values: Any) -> None:
        if not isinstance(name, str) or not name:
            raise FieldError(f"field names must be non-empty strings, got {name!r}")
        self._arrays[name] = self.validate(name, values)

    def __delitem__(self, name: str) -> None:
        del self._arrays[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}: {v.dtype}{tuple(v.shape)}" for k, v in self.items())
        return f"FieldData({self.association}, {{{shapes}}})"

    def validate(self, name: str, values: Any) -> Any:
        """Check one array against this mapping's size; return it as an array.

        Raises
        ------
        FieldError
            If the array has the wrong number of tuples, dimensions or dtype.
        """
        where = f"{self.association[:-1]} field {name!r} of {self.owner}"
        array = checked_array(values, where, FieldError)
        if array.ndim not in (1, 2):
            raise FieldError(
                f"{where} must have shape (n,) or (n, components), got {array.shape}"
            )
        if array.shape[0] != self.size:
            raise FieldError(
                f"{where} has {array.shape[0]} tuples, expected {self.size} "
                f"(one per {self.association[:-1]})"
            )
        if array.ndim == 2 and array.shape[1] < 1:
            raise FieldError(f"{where} has zero components")
        kind = np.dtype(array.dtype).kind
        # bfloat16 (ml_dtypes) is a float NumPy sees as void: lower-precision outputs.
        if kind not in "fiu" and np.dtype(array.dtype).name != "bfloat16":
            raise FieldError(
                f"{where} has dtype {array.dtype}; expected a real integer or "
                f"floating-point dtype"
            )
        return array

    def copy(self) -> "FieldData":
        """Return a new mapping holding the same arrays (not copies of them).

        Examples
        --------
        >>> fd = FieldData("points", 0)
        >>> fd.copy() is fd
        False
        """
        other = FieldData(self.association, self.size, self.owner)
        other._arrays = dict(self._arrays)
        return other


def n_components(array: Any) -> int:
    """Number of components of a field array: 1 for shape ``(n,)``.

    Examples
    --------
    >>> import numpy as np
    >>> n_components(np.zeros((5, 3)))
    3
    """
    return 1 if array.ndim == 1 else int(array.shape[1])
