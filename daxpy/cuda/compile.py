"""Compile generated kernels with NVRTC and cache them in memory and on disk.

A cache entry is keyed by the kernel's specialization name plus a hash of its
source, the CUDA (NVRTC) version and the device architecture, so a changed
template, toolkit or GPU never reuses a stale binary. The disk cache lives in
the user's cache directory (``~/.cache/daxpy/kernels``), or in
``$DAXPY_CACHE_DIR``. Each entry carries a checksum of its binary, so a
truncated or corrupted entry is detected before the driver sees it, and is
rebuilt with a warning. Entries are written to a temporary file and renamed
into place, so processes compiling the same kernel at once never leave a
half-written entry.

Examples
--------
>>> cache_key("k__f32", "source", (13, 0), "90").startswith("k__f32-")
True
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from ..errors import CompileError

NVRTC_OPTIONS = ("-std=c++17",)

_ENTRY_MAGIC = b"DAXPYK1\0"
_DIGEST_SIZE = 32

_MEMORY: dict[str, object] = {}
_DEVICES: dict[int, tuple] = {}
_LOCK = threading.Lock()
STATS = {"compiled": 0, "disk_hits": 0, "memory_hits": 0, "compile_seconds": []}
"""Counters for tests and benchmarks: what the last calls had to do."""


def cache_dir() -> Path:
    """Directory of the on-disk kernel cache (``$DAXPY_CACHE_DIR`` wins).

    Examples
    --------
    >>> cache_dir().name
    'kernels'
    """
    root = os.environ.get("DAXPY_CACHE_DIR")
    if root:
        return Path(root).expanduser() / "kernels"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "daxpy" / "kernels"


def cache_key(name: str, source: str, cuda_version: tuple, arch: str) -> str:
    """File stem of a cached kernel: readable name plus a content hash.

    Examples
    --------
    >>> len(cache_key("k", "s", (13, 0), "90").split("-")[1])
    16
    """
    digest = hashlib.sha256(
        f"{source}\0{cuda_version}\0{arch}\0{NVRTC_OPTIONS}".encode()
    ).hexdigest()[:16]
    return f"{name}-{digest}"


def nvrtc_compile(source: str, name: str, arch: str) -> tuple[bytes, str]:
    """Compile ``source`` for ``sm_<arch>``; return (binary, kind) with kind
    ``"cubin"``, or ``"ptx"`` where this NVRTC cannot emit a cubin.

    Raises
    ------
    CompileError
        With NVRTC's log, naming the kernel.
    """
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(source, f"{name}.cu", [], [])
    try:
        get_cubin = getattr(nvrtc, "getCUBIN", None)
        target = f"sm_{arch}" if get_cubin else f"compute_{arch}"
        try:
            nvrtc.compileProgram(prog, [f"--gpu-architecture={target}", *NVRTC_OPTIONS])
        except nvrtc.NVRTCError as exc:
            raise CompileError(
                f"NVRTC failed to compile kernel {name}:\n{nvrtc.getProgramLog(prog)}"
            ) from exc
        if get_cubin:
            return bytes(get_cubin(prog)), "cubin"
        return nvrtc.getPTX(prog).encode(), "ptx"
    finally:
        nvrtc.destroyProgram(prog)


def _device_info() -> tuple[tuple, str]:
    import cupy

    device = cupy.cuda.runtime.getDevice()
    if device not in _DEVICES:
        from cupy_backends.cuda.libs import nvrtc

        _DEVICES[device] = (tuple(nvrtc.getVersion()), cupy.cuda.Device(device).compute_capability)
    return _DEVICES[device]


def pack_entry(binary: bytes) -> bytes:
    """A cache entry: a magic tag, the SHA-256 of ``binary``, then ``binary``.

    Examples
    --------
    >>> unpack_entry(pack_entry(b"cubin")) == b"cubin"
    True
    """
    return _ENTRY_MAGIC + hashlib.sha256(binary).digest() + binary


def unpack_entry(data: bytes) -> bytes:
    """The binary of a cache entry; ValueError if it is truncated or corrupted.

    Examples
    --------
    >>> unpack_entry(pack_entry(b"cubin")[:-1])
    Traceback (most recent call last):
    ...
    ValueError: checksum mismatch (truncated or corrupted entry)
    """
    head = len(_ENTRY_MAGIC) + _DIGEST_SIZE
    if len(data) < head or not data.startswith(_ENTRY_MAGIC):
        raise ValueError("not a daxpy kernel cache entry")
    binary = data[head:]
    if hashlib.sha256(binary).digest() != data[len(_ENTRY_MAGIC):head]:
        raise ValueError("checksum mismatch (truncated or corrupted entry)")
    return binary


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place.

    Readers see the old entry or the new one, never a part of one; a failed
    write leaves no temporary file behind.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "k.cubin"
    >>> write_atomically(target, b"x"); target.read_bytes()
    b'x'
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _load(path: Path, name: str):
    # A fresh driver module per load: CuPy's RawModule memoizes by path, which
    # would hide a file replaced on disk.
    from cupy.cuda.function import Module

    module = Module()
    module.load(unpack_entry(path.read_bytes()))
    return module.get_function(name)


_GENERATION = [0]
"""Bumped by :func:`clear_memory_cache`: kernels remembered on a
:class:`~daxpy.cuda.codegen.KernelSource` before then are looked up again."""


def kernel_of(spec):
    """:func:`get_kernel` for a :class:`~daxpy.cuda.codegen.KernelSource`,
    remembered on it: a plan that runs again (every chunk of a streamed run
    reuses its plan) skips building its source text and hashing it, tens of
    microseconds per launch.

    Examples
    --------
    >>> callable(kernel_of)
    True
    """
    remembered = spec.__dict__.get("_compiled")
    if remembered is not None and remembered[0] == _GENERATION[0]:
        STATS["memory_hits"] += 1
        return remembered[1]
    kernel = get_kernel(spec.name, spec.source())
    spec.__dict__["_compiled"] = (_GENERATION[0], kernel)
    return kernel


def get_kernel(name: str, source: str):
    """Return the compiled ``cupy.RawKernel``-like function ``name`` of ``source``.

    Looks in memory, then on disk, then compiles (and stores on disk).

    Examples
    --------
    >>> callable(get_kernel)
    True
    """
    cuda_version, arch = _device_info()
    key = cache_key(name, source, cuda_version, arch)
    with _LOCK:
        if key in _MEMORY:
            STATS["memory_hits"] += 1
            return _MEMORY[key]
        directory = cache_dir()
        for kind in ("cubin", "ptx"):
            path = directory / f"{key}.{kind}"
            if path.is_file():
                try:
                    kernel = _load(path, name)
                except Exception as exc:  # truncated or foreign file: rebuild it
                    warnings.warn(
                        f"daxpy kernel cache entry {path} is unreadable ({exc}); "
                        "recompiling it", RuntimeWarning, stacklevel=2,
                    )
                    path.unlink(missing_ok=True)
                    break
                STATS["disk_hits"] += 1
                _MEMORY[key] = kernel
                return kernel
        start = time.perf_counter()
        binary, kind = nvrtc_compile(source, name, arch)
        STATS["compile_seconds"].append(time.perf_counter() - start)
        STATS["compiled"] += 1
        path = directory / f"{key}.{kind}"
        try:
            write_atomically(path, pack_entry(binary))
            kernel = _load(path, name)
        except OSError:  # read-only cache dir: still run, from a temporary file
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / f"{key}.{kind}"
                path.write_bytes(pack_entry(binary))
                kernel = _load(path, name)
        _MEMORY[key] = kernel
        return kernel


_BY_SOURCE: dict[tuple, tuple] = {}
"""Kernels by (source function, its arguments): see :func:`kernel_from`."""


def _remembered(key: tuple, make: Any) -> Any:
    """What :data:`_BY_SOURCE` holds for ``key`` since the last
    :func:`clear_memory_cache`, else ``make()``, remembered there."""
    remembered = _BY_SOURCE.get(key)
    if remembered is not None and remembered[0] == _GENERATION[0]:
        return remembered[1]
    made = make()
    _BY_SOURCE[key] = (_GENERATION[0], made)
    return made


def kernel_from(source: Any, *args: Any):
    """:func:`get_kernel` of ``source(*args)`` (a function giving ``(name, source)``),
    remembered per function and arguments: building a source and hashing it on
    every call costs the host tens of microseconds, more than a small kernel's time.
    The arguments must be hashable (a dtype, a name, a tuple; not a list).

    Examples
    --------
    >>> callable(kernel_from)
    True
    """
    return _remembered((source, *args), lambda: get_kernel(*source(*args)))


def kernels_from(source: Any, *args: Any) -> tuple:
    """:func:`kernel_from` for a ``source`` function giving ``(names, source)``: the
    kernels of the names, in their order, compiled from the one source text.

    Examples
    --------
    >>> callable(kernels_from)
    True
    """
    def compile_all() -> tuple:
        names, text = source(*args)
        return tuple(get_kernel(name, text) for name in names)

    return _remembered((source, *args), compile_all)


def clear_memory_cache() -> None:
    """Forget kernels loaded in this process (the disk cache stays).

    Examples
    --------
    >>> clear_memory_cache()
    """
    with _LOCK:
        _MEMORY.clear()
        _GENERATION[0] += 1
