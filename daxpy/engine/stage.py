"""A node of the pipeline graph: one configured filter, the fields it reads and the one it writes."""

from __future__ import annotations

import copy
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


def configured(stage: Stage, backend: str) -> Any:
    """A copy of the stage's filter set to run on ``backend`` (the pipeline owns
    its filters; running a copy keeps the graph's settings).

    Examples
    --------
    >>> from daxpy.filters import Magnitude
    >>> stage = Stage(1, "magnitude", Magnitude("v"), ("v",), "v_magnitude")
    >>> configured(stage, "cpu").backend, stage.filter.backend
    ('cpu', 'auto')
    """
    made = copy.copy(stage.filter)
    made.backend = backend
    return made
