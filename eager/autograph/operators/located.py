"""The user's statement a runtime operator is running, and errors that name it.

Converted code is compiled under the user's file name with the user's line numbers (see
`eager.autograph.conversion`), so the frame that calls an operator (`ag__.if_stmt(...)`) is at
the line of the user's `if`. Operators take that (code, line) when they start, for nothing more
than two attribute reads, and format it only when they raise: TensorFlow's errors about loop
and branch variables then end with the user's line, as a traceback entry would show it.
"""

from __future__ import annotations

import linecache
import sys

__all__ = ["Where", "caller", "error"]


class Where:
    """A line of the user's converted code: `File "...", line N, in f` and its text."""

    __slots__ = ("code", "line")

    def __init__(self, code, line):
        self.code = code
        self.line = line

    def __str__(self):
        if self.code is None:
            return ""
        text = linecache.getline(self.code.co_filename, self.line).strip()
        entry = f'File "{self.code.co_filename}", line {self.line}, in {self.code.co_name}'
        return f"{entry}\n    {text}" if text else entry


def caller(depth=1) -> Where:
    """The line of the frame `depth` levels above the caller of this function (1: the code that
    called the operator that calls this)."""
    frame = sys._getframe(depth + 1)
    return Where(frame.f_code, frame.f_lineno)


def error(cls, message, where):
    """`cls(message)`, the message followed by the user's line (when known)."""
    place = str(where) if where is not None else ""
    if place:
        message = f"{message}\n  {place}"
    return cls(message)
