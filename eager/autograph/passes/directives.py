"""`eager.autograph.experimental.set_loop_options(...)` inside a loop: the loop's options.

The call is a directive, not code: the pass removes it from the loop body and keeps its keyword
arguments on the loop node (`loop_options`), where the control-flow pass turns them into the
`opts` of `while_stmt` / `for_stmt`. They are evaluated where the loop starts, so
`shape_invariants=[(x, shape)]` names `x`'s value before the loop, as TensorFlow pairs them.
Called outside a converted loop, the function does nothing.
"""

from __future__ import annotations

import ast

from ..errors import ConversionError
from ..nodes import position

__all__ = ["transform", "OPTIONS"]

#: The keyword arguments `set_loop_options` takes.
OPTIONS = ("parallel_iterations", "swap_memory", "maximum_iterations", "shape_invariants")


def _is_directive(s) -> bool:
    if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
        return False
    func = s.value.func
    return ((isinstance(func, ast.Attribute) and func.attr == "set_loop_options")
            or (isinstance(func, ast.Name) and func.id == "set_loop_options"))


def transform(tree, ctx):
    """Runs over the whole tree (before the expression rewrites, which would wrap the call)."""
    for loop in (n for n in ast.walk(tree) if isinstance(n, (ast.While, ast.For))):
        kept, options = [], []
        for s in loop.body:
            if not _is_directive(s):
                kept.append(s)
                continue
            call = s.value
            if call.args or any(k.arg not in OPTIONS for k in call.keywords):
                raise ConversionError(f"line {s.lineno}: set_loop_options takes only the "
                                      f"keyword arguments {', '.join(OPTIONS)}")
            options.extend(call.keywords)
        if options:
            loop.body = kept or [ast.Pass(**position(loop))]
            loop.loop_options = options
