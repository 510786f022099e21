"""Names and inputs every filter resolves the same way: the dataset it is
given, and the names of its outputs.

Examples
--------
>>> result_name(None, "t_copy")
't_copy'
"""

from __future__ import annotations

from typing import Any

from daxpy.data.dataset import DataSet
from daxpy.errors import ArgumentError


def as_dataset(data: Any) -> DataSet:
    """Accept a daxpy dataset, or a VTK/PyVista dataset wrapped without copying.

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.UniformGrid(dims=(2,))
    >>> as_dataset(g) is g
    True
    """
    if isinstance(data, DataSet):
        return data
    from daxpy.io.interop import from_vtk

    return from_vtk(data)


def output_name(option: bool | str, default: str, argument: str) -> str | None:
    """Resolve a PyVista-style ``bool | str`` option into an output field name.

    Examples
    --------
    >>> output_name(True, "Vorticity", "vorticity")
    'Vorticity'
    >>> output_name("w", "Vorticity", "vorticity")
    'w'
    >>> output_name(False, "Vorticity", "vorticity") is None
    True
    """
    if option is True:
        return default
    if option is False or option is None:
        return None
    if isinstance(option, str) and option:
        return option
    raise ArgumentError(f"{argument} must be a bool or a non-empty field name, got {option!r}")


def result_name(result: str | None, default: str) -> str:
    """Return the output field name: ``result``, or ``default`` when it is None.

    Raises
    ------
    ArgumentError
        If ``result`` is neither None nor a non-empty string.

    Examples
    --------
    >>> result_name(None, "t_copy")
    't_copy'
    >>> result_name("u", "t_copy")
    'u'
    """
    if result is None:
        return default
    if isinstance(result, str) and result:
        return result
    raise ArgumentError(f"result must be a non-empty field name, got {result!r}")


def result_only_verb(verb: str, make, summary: str, where: str | None = None):
    """The ``Node`` method of ``verb``, whose filter reads the node's field and
    takes only ``result``: ``make(field, result=name)`` builds it; ``where`` is
    the association of its output (None: the input's).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> from daxpy.filters import Magnitude
    >>> method = result_only_verb("magnitude", Magnitude, "Euclidean norm.")
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={"v": np.ones((3, 3))})
    >>> method(daxpy.pipeline(g).field("v"), "m").name
    'm'
    """
    def method(node: Any, result: str | None = None) -> Any:
        return node._then(verb, lambda src, out: make(src, result=out), result, where)

    method.__name__ = method.__qualname__ = verb
    method.__doc__ = f"""{summary}

    Parameters
    ----------
    result : str, optional
        Name of the output (default ``"{verb}_<stage number>"``).

    Examples
    --------
    >>> import numpy as np, daxpy
    >>> g = daxpy.UniformGrid(dims=(3,), point_data={{"p": np.ones((3, 3))}},
    ...                       cell_data={{"c": np.ones(2)}})
    >>> daxpy.pipeline(g).field({"'c'" if where == "points" else "'p'"}).{verb}().name
    '{verb}_1'
    """
    return method
