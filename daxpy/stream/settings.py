"""Streaming settings: how pipelines cut host data into chunks for the GPU, how much
device memory a run may use, and how geometry filters cut structured grids into
slabs. Read with :func:`current_settings`, changed in a block with :func:`configure`;
:mod:`daxpy.stream.streaming` describes each field.

Examples
--------
>>> with configure(geometry_cells=4096):
...     current_settings().geometry_cells
4096
"""

from __future__ import annotations

import dataclasses
import math
import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ArgumentError
from .transfer import STAGING_POLICIES


def _env_bytes() -> int | None:
    value = os.environ.get("DAXPY_MAX_DEVICE_BYTES", "").strip()
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number >= 1 and number == int(number)):
        raise ArgumentError(f"DAXPY_MAX_DEVICE_BYTES must be a positive whole number of "
                            f"bytes, got {value!r}")
    return int(number)


def _require_count(name: str, value, optional: bool = False) -> None:
    """Refuse a setting that is not a positive int (bool and float included)."""
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ArgumentError(f"{name} must be a positive integer{' or None' if optional else ''}"
                            f", got {value!r}")


@dataclass(frozen=True)
class Settings:
    """How pipelines stream; see the module docstring for each field."""

    chunk_bytes: int | None = None
    max_device_bytes: int | None = field(default_factory=_env_bytes)
    streams: int = 3
    staging: str = "auto"
    storage: Any = None
    mapped: bool = False
    enabled: bool = True
    geometry_cells: int | None = None
    graphs: bool = True

    def __post_init__(self):
        _require_count("chunk_bytes", self.chunk_bytes, optional=True)
        _require_count("max_device_bytes", self.max_device_bytes, optional=True)
        _require_count("geometry_cells", self.geometry_cells, optional=True)
        _require_count("streams", self.streams)
        if self.staging not in STAGING_POLICIES:
            raise ArgumentError(f"staging must be one of {STAGING_POLICIES}, "
                                f"got {self.staging!r}")
        for name in ("mapped", "enabled", "graphs"):
            if not isinstance(getattr(self, name), bool):
                raise ArgumentError(f"{name} must be True or False, "
                                    f"got {getattr(self, name)!r}")


_SETTINGS: ContextVar[Settings | None] = ContextVar("daxpy_stream_settings", default=None)
_DEFAULTS: dict[str | None, Settings] = {}


def current_settings() -> Settings:
    """The settings in effect (defaults, or those of the innermost :func:`configure`).

    Examples
    --------
    >>> current_settings().streams
    3
    """
    settings = _SETTINGS.get()
    if settings is None:
        # The defaults, made once for each value of the environment's budget: a run
        # asks for its settings several times, and each Settings() checks every field.
        env = os.environ.get("DAXPY_MAX_DEVICE_BYTES")
        settings = _DEFAULTS.get(env)
        if settings is None:
            settings = _DEFAULTS[env] = Settings()
    return settings


def replaced_settings(settings: Settings, changes: dict) -> Settings:
    """``settings`` with ``changes`` (names checked).

    Raises
    ------
    ArgumentError
        On a name that is not a setting, or a value a setting refuses.

    Examples
    --------
    >>> replaced_settings(Settings(), {"streams": 2}).streams
    2
    """
    if not changes:
        return settings  # frozen: nothing to copy
    unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(Settings)})
    if unknown:
        raise ArgumentError(f"unknown streaming setting(s) {unknown}; the settings are "
                            f"{[f.name for f in dataclasses.fields(Settings)]}")
    return dataclasses.replace(settings, **changes)


@contextmanager
def configure(**changes):
    """Change streaming settings inside a ``with`` block.

    Examples
    --------
    >>> with configure(max_device_bytes=1 << 20):
    ...     current_settings().max_device_bytes
    1048576
    """
    token = _SETTINGS.set(replaced_settings(current_settings(), changes))
    try:
        yield
    finally:
        _SETTINGS.reset(token)
