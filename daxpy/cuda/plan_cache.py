"""Kernel plans made once and reused: a plan (the kernels' source and cache key, the
launch sizes and arguments) costs about 0.2-0.3 ms to make, once per chunk of a
streamed run if nothing keeps it.

- On a uniform grid the kernels read the point counts and spacing only (never the
  origin or an array of the grid), so every grid of one shape, every chunk of a
  streamed run among them, shares one plan, kept in a small table of the latest.
- On other grids the kernels read the grid's own arrays (coordinates, topology on
  the device): the grid keeps its plan in its cache beside those arrays, and
  :func:`~daxpy.cuda.device.forget` drops it with them. A streamed run's chunk
  grids persist between runs, so their plans do too.

A call's description (``what``) names worklets by ``id``: the plan keeps them alive,
so that an id in a key is never another worklet's (a worklet declared again under
its name gets plans of its own).

Examples
--------
>>> import daxpy
>>> a, b = daxpy.UniformGrid(dims=(4, 4)), daxpy.UniformGrid(dims=(4, 4), origin=(5, 5))
>>> made = []
>>> def build():
...     made.append(1)
...     return "a plan"
>>> reused_plan(a, ("doc", 1), (), build), reused_plan(b, ("doc", 1), (), build), len(made)
('a plan', 'a plan', 1)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

from .device import cached

SHARED_PLANS_KEPT = 256
"""Uniform grids' plans kept, the least recently used dropped first."""

_SHARED: OrderedDict = OrderedDict()
_SHARED_LOCK = threading.Lock()


def frozen_params(params: dict) -> tuple:
    """A worklet's static parameters as a sorted tuple (hashable where they are plain
    values; an array among them leaves it unhashable, and its plan is not kept).

    Examples
    --------
    >>> frozen_params({"b": 2, "a": 1})
    (('a', 1), ('b', 2))
    """
    return tuple(sorted(params.items()))


def reused_plan(dataset, what: tuple, keep: tuple, build: Callable[[], Any]) -> Any:
    """The plan ``build()`` makes for the call ``what`` on ``dataset``, made once per
    grid shape (uniform) or grid (others), and each time where ``what`` is not
    hashable. ``keep``: the objects whose ids ``what`` holds, kept with the plan.

    Examples
    --------
    >>> import daxpy
    >>> g = daxpy.RectilinearGrid([0.0, 1.0, 3.0])
    >>> reused_plan(g, ("doc", [1]), (), lambda: "made again"), \\
    ...     reused_plan(g, ("doc", 2), (), lambda: "kept")
    ('made again', 'kept')
    """
    try:
        hash(what)
    except TypeError:  # an array or a list among the parameters
        return build()
    if dataset.family != "uniform":
        return cached(dataset, f"plan:{what!r}", lambda: (keep, build()))[1]
    key = (what, tuple(dataset.dims), tuple(dataset.spacing))
    with _SHARED_LOCK:
        found = _SHARED.get(key)
        if found is not None:
            _SHARED.move_to_end(key)
            return found[1]
    plan = build()
    with _SHARED_LOCK:
        _SHARED[key] = (keep, plan)
        while len(_SHARED) > SHARED_PLANS_KEPT:
            _SHARED.popitem(last=False)
    return plan
