"""Filters: the user's verbs. Each takes a dataset and returns a new one.

Every public module here exports its filters through ``__all__``; this package
re-exports them all, so ``from daxpy.filters import Gradient`` works.

Examples
--------
>>> from daxpy.filters import PassThrough
>>> PassThrough("t").result
't_copy'
"""

import importlib
import pkgutil

from ._base import FieldFilter, Filter

__all__ = ["FieldFilter", "Filter"]

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        _module = importlib.import_module(f"{__name__}.{_info.name}")
        for _name in getattr(_module, "__all__", ()):
            globals()[_name] = getattr(_module, _name)
            __all__.append(_name)
