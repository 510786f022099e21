"""Numba's disk cache for daxpy's kernels, kept fresh when any of their sources change.

Numba stamps a cached function with its own file only (that file's content hash;
its time and size before Numba 0.68). A daxpy kernel compiles in the helpers and
tables it calls from other modules of its package: the contour's march inlines
the column helpers of ``_contour_rows_cpu`` and the tables of ``_contour_slots``.
After a change to one of those alone (an upgrade of daxpy that touched only a
helper, or a developer's edit), Numba would load the kernel compiled from the old
helper: a silent wrong answer. So the kernels of a guarded package directory are
stamped with their file's stamp and a fingerprint of every Python source in that
directory, and any change there compiles them again.

Where this Numba's cache classes are not the ones known here, or the user chose
locators of their own (``NUMBA_CACHE_LOCATOR_CLASSES``), :func:`guard` says so and
the kernels are compiled without the disk cache: slower to start, never stale.

Examples
--------
>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     _ = open(os.path.join(folder, "a.py"), "w").write("x = 1")
...     before = package_fingerprint.__wrapped__(folder)
...     _ = open(os.path.join(folder, "b.py"), "w").write("y = 2")
...     before != package_fingerprint.__wrapped__(folder)
True
"""

from __future__ import annotations

import functools
import hashlib
import os

_GUARDED: set[str] = set()
"""Package directories whose kernels carry the fingerprint."""

_LOCATORS = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
"""Numba's file-backed cache locators, in its order of preference (a leading ``_``
before Numba 0.68): each gets a fingerprinted twin, tried before it."""


@functools.lru_cache(maxsize=None)
def package_fingerprint(directory: str) -> str:
    """A SHA-256 of the names and contents of the ``.py`` files in ``directory``,
    read once a process (about a megabyte for daxpy's kernels, which are a hundred
    and more, each asking for its stamp): a module is not imported again either.

    Examples
    --------
    >>> len(package_fingerprint(os.path.dirname(__file__)))
    64
    """
    digest = hashlib.sha256()
    for name in sorted(os.listdir(directory)):
        if name.endswith(".py"):
            with open(os.path.join(directory, name), "rb") as source:
                digest.update(name.encode() + b"\0" + source.read() + b"\0")
    return digest.hexdigest()


def _fingerprinted(locator: type) -> type:
    """``locator`` for the kernels of guarded directories only, with their
    directory's fingerprint beside its own source stamp."""

    class Fingerprinted(locator):
        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.dirname(os.path.abspath(py_file)) not in _GUARDED:
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            directory = os.path.dirname(os.path.abspath(self._py_file))
            return super().get_source_stamp(), package_fingerprint(directory)

    Fingerprinted.__name__ = Fingerprinted.__qualname__ = "Fingerprinted" + locator.__name__
    return Fingerprinted


def guard(directory: str) -> bool:
    """Stamp the cached kernels of ``directory`` with its fingerprint; False where
    this Numba's cache cannot be told to (then compile them without the cache).

    Examples
    --------
    >>> guard(os.path.dirname(__file__))
    True
    """
    from numba.core import caching, config

    if getattr(config, "CACHE_LOCATOR_CLASSES", ""):
        return False   # the user's own locators: no stamp of ours would be asked for
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    found = [getattr(caching, name, None) or getattr(caching, "_" + name, None)
             for name in _LOCATORS]
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list) or None in found:
        return False
    if not any(getattr(kind, "daxpy_guard", False) for kind in classes):
        twins = [_fingerprinted(locator) for locator in found]
        for twin in twins:
            twin.daxpy_guard = True
        classes[:0] = twins
    _GUARDED.add(os.path.abspath(directory))
    return True
