"""A node of the pipeline graph: one configured filter, the fields it reads and the one it writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stage:
    """One filter in a pipeline: what it reads and the field it writes.

    Attributes
    ----------
    index : int
        Position in build order (also a topological order).
    verb : str
        The verb that made it (``gradient``, ``magnitude``...).
    filter : daxpy.filters.Filter
        The configured filter; it reads ``inputs`` and writes ``output``.
    inputs : tuple of str
        Field names read: dataset fields or outputs of earlier stages.
    output : str
        Name of the field the stage writes.
    """

    index: int
    verb: str
    filter: Any
    inputs: tuple[str, ...]
    output: str
    depends_on: tuple[int, ...] = field(default=())
