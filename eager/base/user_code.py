"""Where user code called into eager: the first stack frame outside the `eager` package.

Errors name the user's line, not ours: an asynchronous op's error says where the op was issued,
and a traced operation remembers the line that created it so a failure while running the graph
can point back to it. Both need "the first frame that is not eager's own".

Cheap by construction: whether a code object belongs to eager is decided once per code object,
and the line number is worked out only when someone needs it (`line_of`): reading `f_lineno`
for every op would cost every op, while the (code, instruction offset) pair is free to keep.

Stdlib only; any layer may import it.
"""

from __future__ import annotations

import linecache
import os
import re
import sys

__all__ = ["EAGER_DIR", "user_point", "line_of", "source_line", "describe_line", "describe"]

#: The directory of the eager package (this module is in its `base` subpackage).
EAGER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: id(code object) -> (the code object, whether it belongs to eager), asked once per code
#: object. Keyed by identity: a code object hashes its whole contents on every look-up (about
#: 0.3 us for one of dispatch's), and one equal to another (the same source compiled twice: exec'd
#: code, AutoGraph's converted code) would be compared field by field. The entry keeps its code
#: object alive, so no other object can take its id while it is there.
_IN_EAGER = {}


def user_point(depth):
    """(code, instruction offset) of the first frame outside eager, starting `depth` frames
    above the caller of this function; (None, 0) if there is none."""
    # Hot: called for every traced op and every asynchronous op, once per frame walked.
    frame = sys._getframe(depth + 1)
    inside = _IN_EAGER
    while frame is not None:
        code = frame.f_code
        known = inside.get(id(code))
        if known is None:
            if len(inside) > 10000:  # code made on the fly (exec, lambdas in eval): stay bounded
                inside.clear()
            known = inside[id(code)] = (code, code.co_filename.startswith(EAGER_DIR))
        if not known[1]:
            return code, frame.f_lasti
        frame = frame.f_back
    return None, 0


def line_of(point):
    """(file, line) for a `user_point` result; ("<unknown>", 0) for none."""
    code, offset = point
    if code is None:
        return "<unknown>", 0
    line = code.co_firstlineno
    for start, end, number in code.co_lines():
        if start <= offset < end and number is not None:
            line = number
            break
    return code.co_filename, line


def source_line(point) -> str:
    """The text of the user's line for a `user_point` result ("" when unknown)."""
    file, line = line_of(point)
    if not line:
        return ""
    return linecache.getline(file, line).strip()


#: IPython's older cell file names: `<ipython-input-3-0f1e...>` is the cell run as In [3].
_OLD_CELL_NAME = re.compile(r"<ipython-input-(\d+)-[0-9a-f]+>")


def _cell_number(file):
    """The execution count of the notebook (IPython) cell compiled under `file`, or None.

    IPython compiles each cell under a file name of its own (`/tmp/ipykernel_<pid>/<hash>.py`
    in a Jupyter kernel) and keeps which execution count each name had; asked only while
    IPython is running (it is imported by then), never imported here."""
    match = _OLD_CELL_NAME.fullmatch(file)
    if match:
        return int(match.group(1))
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    try:
        shell = ipython.get_ipython()
        label = shell.compile.format_code_name(file) if shell is not None else None
    except Exception:  # noqa: BLE001 - another shell, another IPython: a plain file name then
        return None
    if not label:
        return None
    digits = re.search(r"\d+", label[1])
    return int(digits.group()) if digits else None


def describe_line(file, line) -> str:
    """How eager's messages name the user's line: `In [3], line 2` for a notebook cell (as the
    notebook shows the cell), else `file:line`."""
    number = _cell_number(file)
    if number is not None:
        return f"In [{number}], line {line}"
    return f"{file}:{line}"


def describe(point) -> str:
    """`describe_line` for a `user_point` result."""
    return describe_line(*line_of(point))
