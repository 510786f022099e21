"""Case tables on the device: the geometry kernels' tables (VTK's cases and what the
kernels derive from them), uploaded once per device and kept for the process.

Examples
--------
>>> callable(on_device)
True
"""

from __future__ import annotations

from typing import Any, Callable

_KEPT: dict[tuple, tuple] = {}
"""Per (device, key): the host objects the key names by id (kept, so that their ids
stay theirs), then the device arrays."""


def on_device(key: tuple, owners: tuple, upload: Callable[[], Any]) -> Any:
    """What ``upload()`` makes on the current device, made once per device and
    ``key``; ``owners``: the host objects whose ids ``key`` holds.

    Examples
    --------
    >>> callable(on_device)   # needs a GPU: on_device(("name", id(t)), (t,), make)
    True
    """
    import cupy

    full = (cupy.cuda.runtime.getDevice(), *key)
    kept = _KEPT.get(full)
    if kept is None:
        kept = _KEPT[full] = (owners, upload())
    return kept[1]
