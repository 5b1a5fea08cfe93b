"""`break` and `continue` as boolean flags, so that loop bodies have one way out.

A staged loop is a function called per iteration; it cannot jump. As TensorFlow's AutoGraph
does, `break` becomes `break_ = True` and every statement after it in the loop body runs under
`if not break_:`; the loop goes on while `not break_` (a `while` test is prefixed, a `for` gets
it as its extra test, `loop.extra_test`). A loop's `else:` block runs after it under
`if not break_:` (always, when the loop has no `break`). `continue` becomes `continue_ = True`
with the rest of the iteration guarded the same way, and the flag is reset at the start of each
iteration (so it is never a loop variable). Each loop gets its own flag; jumps belong to the
innermost loop, so inner loops are lowered first. These passes run after the expression
rewrites, so they write their `not` and `and` as runtime-operator calls (`ag__.not_`,
`ag__.and_`) themselves.
"""

from __future__ import annotations

import ast

from ..nodes import ag, assign, call, const, lambda_, name, position
from .scopes import COMPOUND, contains

__all__ = ["lower_breaks", "lower_continues", "combine_extra_tests", "negation", "guard",
           "conjunction"]

_LOOPS = (ast.While, ast.For)


def negation(flag, at):
    """`not flag` (converted: `ag__.not_(flag)`)."""
    return call(ag("not_", at), [name(flag, at)], at)


def conjunction(first, second, at):
    """`first and second` (converted: `ag__.and_(lambda: first, lambda: second)`)."""
    return call(ag("and_", at), [lambda_(first, at), lambda_(second, at)], at)


def guard(flag, body):
    """`if not flag: body` (at the first statement of `body`)."""
    at = position(body[0])
    return ast.If(test=negation(flag, at), body=body, orelse=[], **at)


def _guarded(stmts, kind, flag):
    """`stmts` with each `kind` statement (of this loop level) replaced by `flag = True` and
    the statements after it (in its block and the enclosing ones) under `if not flag:`."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, kind):
            at = position(s)
            out.append(assign(flag, const(True, at), at))
            return out  # what follows in this block cannot run
        if s.__class__ not in COMPOUND or isinstance(s, _LOOPS) or not contains(s, kind):
            out.append(s)
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if block:
                setattr(s, field, _guarded(block, kind, flag))
        for handler in getattr(s, "handlers", ()):
            handler.body = _guarded(handler.body, kind, flag)
        out.append(s)
        rest = stmts[i + 1:]
        if rest:
            out.append(guard(flag, _guarded(rest, kind, flag)))
        return out
    return out


def loops_innermost_first(stmts, visit):
    """Applies `visit(loop) -> [statements]` to every loop in these blocks (not in nested
    scopes), inner loops first; returns the new block."""
    out = []
    for s in stmts:
        if s.__class__ not in COMPOUND or isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                          ast.ClassDef)):
            out.append(s)
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if block:
                setattr(s, field, loops_innermost_first(block, visit))
        for handler in getattr(s, "handlers", ()):
            handler.body = loops_innermost_first(handler.body, visit)
        out.extend(visit(s) if isinstance(s, _LOOPS) else [s])
    return out


def combine_extra_tests(loop, test):
    """Adds `test` to a `for` loop's extra test (`loop.extra_test`: go on while it holds)."""
    existing = getattr(loop, "extra_test", None)
    loop.extra_test = test if existing is None else conjunction(test, existing, position(loop))


def lower_breaks(function, ctx):
    def visit(loop):
        if not any(contains(s, ast.Break) for s in loop.body):  # inner loops are done
            orelse, loop.orelse = loop.orelse, []
            return [loop, *orelse]
        flag = ctx.namer.new("break_")
        at = position(loop)
        loop.body = _guarded(loop.body, ast.Break, flag)
        if isinstance(loop, ast.While):
            loop.test = conjunction(negation(flag, at), loop.test, position(loop.test))
        else:
            combine_extra_tests(loop, negation(flag, at))
        out = [assign(flag, const(False, at), at), loop]
        if loop.orelse:
            out.append(guard(flag, loop.orelse))
            loop.orelse = []
        return out

    function.body = loops_innermost_first(function.body, visit)


def lower_continues(function, ctx):
    def visit(loop):
        if not any(contains(s, ast.Continue) for s in loop.body):
            return [loop]
        flag = ctx.namer.new("continue_")
        at = position(loop.body[0])
        loop.body = [assign(flag, const(False, at), at),
                     *_guarded(loop.body, ast.Continue, flag)]
        return [loop]

    function.body = loops_innermost_first(function.body, visit)
