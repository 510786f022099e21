"""VTK's errors and warnings, collected as text instead of printed.

VTK reports a problem by invoking ``ErrorEvent``/``WarningEvent`` on the object
at fault when it has an observer, and otherwise through the process-wide
output window and logger, which print to the terminal. A reader's internal
parser and its executive are objects the caller never sees, so their reports
are collected from the output window. The window and the logger are global:
one lock serializes the blocks that redirect them, and each block restores
what it found.

Examples
--------
>>> from vtkmodules.vtkIOXML import vtkXMLImageDataReader
>>> from daxpy.io.vtk_messages import vtk_messages
>>> reader = vtkXMLImageDataReader()
>>> with vtk_messages(reader) as messages:
...     reader.SetFileName("no-such-file.vti")
...     _ = reader.Update()
>>> messages[0]
'Error opening file no-such-file.vti'
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager

__all__ = ["vtk_messages"]

_LOCK = threading.Lock()
_EVENTS = ("ErrorEvent", "WarningEvent")
# "vtkXMLDataParser (0x55d0c1a0): what went wrong" -> "what went wrong"
_SOURCE = re.compile(r"^\s*vtk\w+ \(0x[0-9a-fA-F]+\): ")


def _message_text(raw) -> str:
    """The line of a VTK report that says what failed, without its location."""
    lines = [line for line in str(raw).strip().splitlines() if line.strip()]
    # Reports start "ERROR: In <file>, line <n>" (or "Warning: ..."); the next
    # line names the object and the problem, later lines are detail.
    text = lines[1] if len(lines) > 1 and lines[0].split(":")[0] in ("ERROR", "Warning") \
        else (lines[0] if lines else "")
    return _SOURCE.sub("", text).strip()


@contextmanager
def vtk_messages(*objects):
    """Collect every VTK error and warning reported while the block runs.

    Parameters
    ----------
    *objects : vtkObject
        Objects to observe directly (a reader and its executive); reports of
        any other VTK object come through the global output window, which
        prints nothing while the block runs.

    Yields
    ------
    list of str
        The reports, in order, each reduced to the sentence saying what failed.

    Examples
    --------
    >>> from vtkmodules.vtkCommonDataModel import vtkImageData
    >>> from daxpy.io.vtk_messages import vtk_messages
    >>> with vtk_messages(vtkImageData()) as messages:
    ...     pass
    >>> messages
    []
    """
    from vtkmodules.util.misc import calldata_type
    from vtkmodules.vtkCommonCore import VTK_STRING, vtkLogger, vtkOutputWindow

    messages: list[str] = []

    @calldata_type(VTK_STRING)
    def collect(_obj, _event, text):
        messages.append(_message_text(text))

    with _LOCK:
        window = vtkOutputWindow.GetInstance()
        observed = [(obj, obj.AddObserver(event, collect))
                    for obj in (window, *objects) for event in _EVENTS]
        mode, cutoff = window.GetDisplayMode(), vtkLogger.GetCurrentVerbosityCutoff()
        window.SetDisplayModeToNever()
        # The logger prints reports of unobserved objects to stderr on its own.
        vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_OFF)
        try:
            yield messages
        finally:
            vtkLogger.SetStderrVerbosity(cutoff)
            window.SetDisplayMode(mode)
            for obj, tag in observed:
                obj.RemoveObserver(tag)
