"""How much memory this process may still take, and a check to call before allocating.

A request that cannot fit is refused with :class:`daxpy.errors.ResourceError`,
which gives the bytes needed and available, instead of running until the
allocator raises a bare ``MemoryError`` (or the kernel's OOM killer ends the
process). The available memory is the smallest of:

- ``MemAvailable`` in ``/proc/meminfo`` (what the kernel can hand out without
  swapping), or the free physical pages from ``os.sysconf`` where there is no
  ``/proc``;
- the room left under the container's cgroup memory limit, when one is set;
- the room left under ``RLIMIT_AS`` (``ulimit -v``), when one is set: the limit
  less the address space the process already maps.

Examples
--------
>>> from daxpy.data.memory_budget import available_bytes, require_bytes
>>> available_bytes()[0] > 0
True
>>> require_bytes(1024, "a small array")
"""

from __future__ import annotations

import os
import resource

from ..errors import ResourceError

__all__ = ["available_bytes", "format_bytes", "require_bytes"]

# (limit file, usage file) of cgroup v2, then v1.
_CGROUP_FILES = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                 ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                  "/sys/fs/cgroup/memory/memory.usage_in_bytes"))


SMALL_BYTES = 16 << 20
"""A request this small needs no check where it is made at every call: reading the
limits opens five files (about 0.15 ms), and a contour call reads an image's three
axes (0.45 ms); a request this small that cannot fit fails anywhere anyway."""


def _read_kib(path: str, key: str) -> int | None:
    """The value of ``key`` (a ``Name: N kB`` line) in ``path``, in bytes."""
    try:
        with open(path) as lines:
            for line in lines:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _read_int(path: str) -> int | None:
    try:
        with open(path) as text:
            return int(text.read().strip())
    except (OSError, ValueError):  # absent, or "max" (no limit)
        return None


def _candidates() -> list[tuple[int, str]]:
    found = []
    physical = _read_kib("/proc/meminfo", "MemAvailable")
    if physical is None:
        try:
            physical = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            physical = None
    if physical is not None:
        found.append((physical, "available physical memory"))
    for limit_file, usage_file in _CGROUP_FILES:
        limit, usage = _read_int(limit_file), _read_int(usage_file)
        # v1 reports "no limit" as a huge number, which min() then ignores.
        if limit is not None and usage is not None:
            found.append((max(limit - usage, 0), "room under the cgroup memory limit"))
            break
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        mapped = _read_kib("/proc/self/status", "VmSize") or 0
        found.append((max(soft - mapped, 0), "room under RLIMIT_AS (ulimit -v)"))
    return found


def available_bytes() -> tuple[int, str]:
    """The bytes this process can still allocate, and which limit says so.

    Returns
    -------
    (int, str)
        The smallest of the limits listed in the module's docstring, and its
        name. When none can be read, a huge number (nothing is refused).

    Examples
    --------
    >>> from daxpy.data.memory_budget import available_bytes
    >>> n, limit = available_bytes()
    >>> n > 0 and isinstance(limit, str)
    True
    """
    return min(_candidates(), default=(2 ** 63 - 1, "no known limit"))


def format_bytes(n: int) -> str:
    """``n`` bytes in binary units, for messages.

    Examples
    --------
    >>> from daxpy.data.memory_budget import format_bytes
    >>> format_bytes(512), format_bytes(3 * 2**30), format_bytes(8 * 10**15)
    ('512 B', '3.0 GiB', '7.1 PiB')
    """
    value, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024 or unit == "EiB":
            break
        value /= 1024
    return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"


def require_bytes(n: int, what: str) -> None:
    """Refuse, before allocating, a request of ``n`` bytes that cannot fit.

    Parameters
    ----------
    n : int
        Bytes the request needs (an estimate that errs on the high side).
    what : str
        What needs them, for the message (``"wavelet:100000"``).

    Raises
    ------
    ResourceError
        When ``n`` exceeds :func:`available_bytes`; the message gives both.

    Examples
    --------
    >>> from daxpy.data.memory_budget import require_bytes
    >>> require_bytes(8 * 10**18, "a 10^18-point grid")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    daxpy.errors.ResourceError: a 10^18-point grid needs 8,000,000,000,000,000,000 bytes (6.9 EiB) but only ... are available (...)
    """
    available, limit = available_bytes()
    if n > available:
        raise ResourceError(f"{what} needs {n:,} bytes ({format_bytes(n)}) but only "
                            f"{available:,} bytes ({format_bytes(available)}) are "
                            f"available ({limit})")
