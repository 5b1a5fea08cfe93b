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
import sys

__all__ = ["EAGER_DIR", "user_point", "line_of", "source_line"]

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
