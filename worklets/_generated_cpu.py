"""Loading generated CPU kernels: a module written from generated source into
the daxpy cache directory, imported once per process.

The module's file (``~/.cache/daxpy/cpu``, or ``$DAXPY_CACHE_DIR/cpu``) is named
after a hash of its source, so Numba's disk cache (``cache=True``) beside it
serves the next process; the file is rewritten only when missing or different,
as a new file time would void those cache entries.

Examples
--------
>>> f = load_generated("def twice(x):\\n    return 2 * x\\n", "doc", "twice")
>>> f(21)
42
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import threading
from pathlib import Path
from typing import Any

from daxpy.cuda.compile import cache_dir, write_atomically

_LOADED: dict[str, Any] = {}
_LOCK = threading.Lock()


def generated_path(source: str, kind: str) -> Path:
    """The file the module made from ``source`` is written to (whether or not it is yet).

    Examples
    --------
    >>> generated_path("X = 1\\n", "doc").name.startswith("daxpy_doc_")
    True
    """
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    return cache_dir().parent / "cpu" / f"daxpy_{kind}_{digest}.py"


def load_generated(source: str, kind: str, function: str) -> Any:
    """Function ``function`` of the module made from ``source``; ``kind`` (an
    identifier) begins the module's name, ``daxpy_<kind>_<hash>``.

    Examples
    --------
    >>> load_generated("X = 1\\ndef one():\\n    return X\\n", "doc", "one")()
    1
    """
    path = generated_path(source, kind)
    name = path.stem
    with _LOCK:
        if name not in _LOADED:
            if not path.exists() or path.read_text() != source:
                write_atomically(path, source.encode())
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            _LOADED[name] = module
        return getattr(_LOADED[name], function)
