"""Write a file so that a failure never loses the file it replaces.

:func:`check_output_target` refuses, before anything is computed, a target that
is not a regular file or a new path in a writable folder: a FIFO (opening it
would block until a reader comes), a directory, a device such as ``/dev/full``,
a socket, a read-only file, a missing or read-only folder. It only looks
(``os.stat``), never opens.

:func:`atomic_write` has the writer fill a hidden temporary file beside the
target (``.<name>.daxpy-<random><ext>``, same folder so the rename stays on one
file system), flushes it to disk, gives it the permission bits of the file it
replaces (a new file gets the umask's, as ``open`` would), and renames it over
the target in one step. A writer that fails or raises leaves the old file as it
was and no temporary file behind. A process killed mid-write cannot clean up:
the target is still intact, and the hidden temporary file may remain.

A symbolic link is written through: the file it points to is replaced and the
link kept. Other hard links to the old file keep the old contents, and the new
file belongs to the user who wrote it, as with any editor that saves by rename.

Examples
--------
>>> import os, tempfile
>>> from daxpy.io.safe_write import atomic_write
>>> path = os.path.join(tempfile.mkdtemp(), "notes.txt")
>>> def fill(temporary):
...     with open(temporary, "w") as out:
...         out.write("hello")
>>> atomic_write(path, fill)
>>> open(path).read(), os.listdir(os.path.dirname(path))
('hello', ['notes.txt'])
"""

from __future__ import annotations

import os
import secrets
import stat
from typing import Callable

from ..errors import ArgumentError, DataFileError

__all__ = ["atomic_write", "check_output_target"]

# Keep temporary names under NAME_MAX (255 bytes) whatever the target's name.
_STEM_CHARS = 100
_KINDS = ((stat.S_ISDIR, "is a directory"),
          (stat.S_ISFIFO, "is a FIFO (named pipe): writing to it would block until "
                          "another process reads it"),
          (stat.S_ISCHR, "is a character device, not a file"),
          (stat.S_ISBLK, "is a block device, not a file"),
          (stat.S_ISSOCK, "is a socket, not a file"))


def _refuse(path: str, problem: str) -> DataFileError:
    return DataFileError(f"cannot write {path!r}: {problem}")


def _path_text(path) -> str:
    try:
        text = os.fspath(path)
    except TypeError:
        raise ArgumentError(f"the output path must be a str or path-like object, "
                            f"got {type(path).__name__}") from None
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text or "\x00" in text:
        raise ArgumentError(f"the output path {text!r} is empty or holds a NUL character")
    return text


def _stat(path: str, shown: str) -> os.stat_result | None:
    """``os.stat`` of ``path`` (following links), None when nothing is there."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as err:  # a symlink loop, a name too long, a folder not searchable
        raise _refuse(shown, err.strerror or str(err)) from None


def _writable(path: str, found: os.stat_result, mode: int = os.W_OK) -> bool:
    # Root passes os.access on any mode; no write bit at all still means read-only.
    return os.access(path, mode) and bool(found.st_mode & 0o222)


def check_output_target(path: str | os.PathLike) -> str:
    """Refuse an output path that is not a regular file or a new path, before
    anything is computed or written.

    Parameters
    ----------
    path : str or path-like
        Where a dataset is about to be written.

    Returns
    -------
    str
        The path of the file to replace: ``path`` with symbolic links resolved
        (a link is written through, see the module's docstring).

    Raises
    ------
    DataFileError
        If ``path`` is a directory, a FIFO, a device, a socket, a read-only
        file, a symlink loop, or its folder is missing, not a folder or not
        writable. The message names the path and the problem.
    ArgumentError
        If ``path`` is not a path (a number, an empty string, a NUL byte).

    Examples
    --------
    >>> from daxpy.io.safe_write import check_output_target
    >>> check_output_target("/dev/full")
    Traceback (most recent call last):
    ...
    daxpy.errors.DataFileError: cannot write '/dev/full': is a character device, not a file
    >>> check_output_target("/no/such/folder/out.vti")
    Traceback (most recent call last):
    ...
    daxpy.errors.DataFileError: cannot write '/no/such/folder/out.vti': folder '/no/such/folder' does not exist
    """
    shown = _path_text(path)
    target = os.path.realpath(shown)
    found = _stat(target, shown)
    if found is not None:
        for is_kind, problem in _KINDS:
            if is_kind(found.st_mode):
                raise _refuse(shown, problem)
        if not stat.S_ISREG(found.st_mode):
            raise _refuse(shown, "is not a regular file")
        if not _writable(target, found):
            raise _refuse(shown, "the file is read-only")
    folder = os.path.dirname(target)
    folder_found = _stat(folder, shown)
    if folder_found is None:
        raise _refuse(shown, f"folder {os.path.dirname(os.path.abspath(shown))!r} does not exist")
    if not stat.S_ISDIR(folder_found.st_mode):
        raise _refuse(shown, f"{folder!r} is not a folder")
    if not _writable(folder, folder_found, os.W_OK | os.X_OK):
        raise _refuse(shown, f"folder {folder!r} is not writable")
    return target


def _create_temporary(target: str) -> str:
    """Create an empty hidden file beside ``target``, mode 0o666 less the umask."""
    folder, name = os.path.split(target)
    stem, ext = os.path.splitext(name)
    while True:
        temporary = os.path.join(
            folder, f".{stem[:_STEM_CHARS]}.daxpy-{secrets.token_hex(6)}{ext}")
        try:
            os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return temporary
        except FileExistsError:  # another writer drew the same name: draw again
            continue


def _flush_to_disk(path: str, flags: int = os.O_RDONLY) -> None:
    descriptor = os.open(path, flags)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def atomic_write(path, write_to: Callable[[str], None]) -> None:
    """Have ``write_to`` write a temporary file, then rename it over ``path``.

    Parameters
    ----------
    path : str or path-like
        The file to create or replace; checked by :func:`check_output_target`.
    write_to : callable
        Called with the temporary file's path (same folder and extension as the
        target); it must write the whole file there or raise.

    Raises
    ------
    DataFileError
        If the target is refused, or flushing or renaming the file fails (a
        full disk, say); the old file is unchanged. Whatever ``write_to``
        raises passes through, after the temporary file is removed.

    Examples
    --------
    >>> import os, tempfile
    >>> from daxpy.io.safe_write import atomic_write
    >>> path = os.path.join(tempfile.mkdtemp(), "kept.txt")
    >>> atomic_write(path, lambda temporary: open(temporary, "w").write("old"))
    >>> def fail(temporary):
    ...     open(temporary, "w").write("half")
    ...     raise OSError("disk full")
    >>> atomic_write(path, fail)
    Traceback (most recent call last):
    ...
    OSError: disk full
    >>> open(path).read(), len(os.listdir(os.path.dirname(path)))
    ('old', 1)
    """
    shown = _path_text(path)
    target = check_output_target(shown)
    existing = _stat(target, shown)
    temporary = _create_temporary(target)
    try:
        write_to(temporary)
        try:
            _flush_to_disk(temporary)
            if existing is not None:
                os.chmod(temporary, stat.S_IMODE(existing.st_mode))
            os.replace(temporary, target)
        except OSError as err:
            kept = "; the existing file is unchanged" if existing is not None else ""
            raise _refuse(shown, f"{err.strerror or err}{kept}") from err
        temporary = None
        try:
            # The rename itself is durable only once the folder is flushed too.
            _flush_to_disk(os.path.dirname(target), os.O_RDONLY | os.O_DIRECTORY)
        except OSError:  # some file systems cannot flush a folder; the file is in place
            pass
    finally:
        if temporary is not None:
            try:
                os.remove(temporary)
            except FileNotFoundError:  # the writer removed it itself on failure
                pass
