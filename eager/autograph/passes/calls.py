"""Calls as `ag__.converted_call(f, args, kwargs)`, so callees are converted when they run.

`f(a, *b, k=c, **d)` becomes `ag__.converted_call(f, (a, *b), {'k': c, **d})` (kwargs left out
when there are none); `eager.autograph.operators.calls` decides what each call does. Left as
written: calls of the runtime operators (`ag__.*`); `eval`, `exec`, `locals`, `globals`,
`vars`, `dir` and `breakpoint`, which look at their caller's frame; and `print`, unless
`Feature.BUILTIN_FUNCTIONS` is on (TensorFlow's default: a Python `print` in a traced function
prints while tracing). A zero-argument `super()` becomes `super(__class__, <first parameter>)`:
in a generated branch function the implicit form would find no arguments.
"""

from __future__ import annotations

import ast

from ..nodes import LOAD, OPERATORS, ag, call, const, located, name, position

__all__ = ["rewrite_call"]

_FRAME_SENSITIVE = {"eval", "exec", "locals", "globals", "vars", "dir", "breakpoint"}


def rewrite_call(node, ctx, first_parameter):
    """The converted form of call `node` (its arguments already converted); `first_parameter`:
    the enclosing `def`'s first parameter's name, or None."""
    func = node.func
    if func.__class__ is ast.Attribute and func.value.__class__ is ast.Name and \
            func.value.id == OPERATORS:
        return node
    if func.__class__ is ast.Name:
        if func.id in _FRAME_SENSITIVE or (func.id == "print" and not ctx.builtin_functions):
            return node
        if func.id == "super":
            if not node.args and not node.keywords and first_parameter is not None:
                at = position(node)
                node.args = [name("__class__", at), name(first_parameter, at)]
            return node
    at = position(node)
    arguments = [func, located(ast.Tuple(node.args, LOAD), at)]
    if node.keywords:
        arguments.append(located(ast.Dict(
            [None if k.arg is None else const(k.arg, at) for k in node.keywords],
            [k.value for k in node.keywords]), at))
    return call(ag("converted_call", at), arguments, at)
