"""The ``daxpy`` command line: subcommands, their arguments and error reports (entry point :func:`main`)."""

from .commands import main

__all__ = ["main"]
