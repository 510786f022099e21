"""How the ``daxpy`` command line reports a failure: one line, and an exit status.

Every exception that reaches :func:`daxpy.cli.main` goes through
:func:`report`. It prints ``daxpy COMMAND: error: WHAT`` on one line of
stderr and returns the exit status:

- 2, a usage error: a bad argument, step, expression or field name;
- 1, a runtime error: a file, memory, the GPU, the network, or a bug in daxpy
  (that line says so, and how to get the trace);
- 130, interrupted (Ctrl-C);
- 141, stdout was closed early (``daxpy source ... | head``): nothing printed.

``--traceback`` or ``DAXPY_TRACEBACK=1`` prints the full trace before that line.

Examples
--------
>>> import sys
>>> from daxpy.cli.report import report
>>> from daxpy.errors import ArgumentError
>>> sys.stderr = sys.stdout  # (doctest shows stdout only)
>>> report("run", ArgumentError("--pieces must be >= 0"))
daxpy run: error: --pieces must be >= 0
2
>>> sys.stderr = sys.__stderr__
"""

from __future__ import annotations

import os
import select
import sys
import traceback

from ..errors import (ArgumentError, DaxpyError, DeviceMemoryError, ExpressionError,
                     FieldError, ResourceError)

__all__ = ["EXIT_BROKEN_PIPE", "EXIT_INTERRUPTED", "EXIT_RUNTIME", "EXIT_USAGE",
           "describe", "report", "traceback_wanted"]

EXIT_USAGE, EXIT_RUNTIME, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 2, 1, 130, 141

# Errors in what the user typed; every other failure is a runtime error.
_USAGE_ERRORS = (ArgumentError, ExpressionError, FieldError)
_MEMORY_HINT = "use a smaller grid or a machine with more memory"
_MAX_CHARS = 2000


def traceback_wanted(argv) -> bool:
    """Whether ``--traceback`` is among ``argv`` or ``DAXPY_TRACEBACK`` is set (not 0).

    Read from the raw arguments, so that it also holds when parsing them fails.

    Examples
    --------
    >>> from daxpy.cli.report import traceback_wanted
    >>> traceback_wanted(["--traceback", "run", "x.vti"]), traceback_wanted(["run"])
    (True, False)
    """
    flag = os.environ.get("DAXPY_TRACEBACK", "").strip()
    return "--traceback" in argv or flag not in ("", "0")


def _one_line(text: str) -> str:
    # VTK and compilers write multi-line logs; the report stays one line.
    flat = " ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return flat if len(flat) <= _MAX_CHARS else flat[:_MAX_CHARS] + " [...]"


def _os_error(err: OSError) -> str:
    if err.strerror is None:
        # OSError(message) with .filename set afterwards prints "[Errno None] None: ..."
        return str(err.args[0]) if len(err.args) == 1 else str(err)
    if err.filename is None:
        return err.strerror
    target = repr(os.fspath(err.filename))
    if err.filename2 is not None:
        target += f" -> {os.fspath(err.filename2)!r}"
    return f"{target}: {err.strerror}"


def describe(err: BaseException) -> tuple[int, str]:
    """The exit status and the message (without the ``daxpy COMMAND:`` prefix) for ``err``.

    Examples
    --------
    >>> from daxpy.cli.report import describe
    >>> describe(FileNotFoundError(2, "No such file or directory", "in.vti"))
    (1, "error: 'in.vti': No such file or directory")
    >>> describe(BrokenPipeError(32, "Broken pipe"))
    (1, 'error: Broken pipe')
    >>> describe(KeyError("x"))[1]  # doctest: +ELLIPSIS
    "error: internal error (a bug in daxpy): KeyError: 'x'; run again with --traceback ..."
    """
    if isinstance(err, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "interrupted"
    if isinstance(err, _USAGE_ERRORS):
        return EXIT_USAGE, f"error: {err}"
    if isinstance(err, (ResourceError, DeviceMemoryError)):
        return EXIT_RUNTIME, f"error: {err}; {_MEMORY_HINT}"
    if isinstance(err, OSError):  # daxpy's DataFileError included
        return EXIT_RUNTIME, f"error: {_os_error(err)}"
    if isinstance(err, DaxpyError):
        return EXIT_RUNTIME, f"error: {err}"
    if isinstance(err, MemoryError):
        return EXIT_RUNTIME, f"error: out of memory ({str(err) or 'no details'}); {_MEMORY_HINT}"
    return EXIT_RUNTIME, (f"error: internal error (a bug in daxpy): {type(err).__name__}: "
                          f"{err}; run again with --traceback (or DAXPY_TRACEBACK=1) and "
                          "report the trace")


def stdout_closed() -> bool:
    """Whether stdout is a pipe whose reader has gone (``| head`` that finished).

    Examples
    --------
    >>> from daxpy.cli.report import stdout_closed
    >>> stdout_closed()
    False
    """
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        # Linux flags the write end of a pipe with no reader as POLLERR.
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no real file descriptor
        return False


def _silence_stdout() -> None:
    # Python flushes stdout at exit; into a closed pipe that prints
    # "Exception ignored ... BrokenPipeError". Point it at /dev/null instead.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def report(command: str | None, err: BaseException, show_trace: bool = False) -> int:
    """Print the one-line report of ``err`` on stderr; return the exit status.

    Parameters
    ----------
    command : str or None
        The subcommand that failed (None before one was parsed).
    err : BaseException
        What reached the command line's top level.
    show_trace : bool
        Print the full traceback first (``--traceback``).

    Returns
    -------
    int
        2 (usage), 1 (runtime), 130 (interrupted) or 141 (stdout closed).

    Examples
    --------
    >>> import sys
    >>> from daxpy.cli.report import report
    >>> sys.stderr = sys.stdout  # (doctest shows stdout only)
    >>> report(None, MemoryError())
    daxpy: error: out of memory (no details); use a smaller grid or a machine with more memory
    1
    >>> sys.stderr = sys.__stderr__
    """
    if isinstance(err, BrokenPipeError) and stdout_closed():
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    status, message = describe(err)
    if show_trace:
        traceback.print_exception(err)
    prefix = f"daxpy {command}" if command else "daxpy"
    try:
        print(f"{prefix}: {_one_line(message)}", file=sys.stderr, flush=True)
    except OSError:  # stderr is gone too: the status is all that is left
        pass
    return status
