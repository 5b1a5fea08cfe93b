"""`return` anywhere but at the end, as a flag and a variable (TensorFlow's AutoGraph's way).

Two steps, within one function:

1. Where an `if` branch always returns, the statements after the `if` move into its other
   branch (`if c: return a` / `return b` becomes `if c: return a` / `else: return b`), so both
   branches of a staged `if` set the return value and no branch leaves it undefined.
2. `return value` becomes `retval_ = value; do_return = True`; every statement after it (in
   its block and the enclosing ones) runs under `if not do_return:`; loops go on only while
   `not do_return`; the function ends with `return ag__.retval(retval_)` (None when no
   `return` ran). `retval_` starts as `ag__.UndefinedReturnValue()`, so a staged branch that
   does not return where the other does gets TensorFlow's error.

A function whose only `return` is its last statement is left as it is.
"""

from __future__ import annotations

import ast

from ..nodes import ag, assign, call, const, name, position
from .jumps import combine_extra_tests, conjunction, guard, negation
from .scopes import contains, statements_of

__all__ = ["transform"]

_LOOPS = (ast.While, ast.For)


def _always_returns(stmts) -> bool:
    for s in stmts:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and _always_returns(s.body) and _always_returns(s.orelse):
            return True
        if isinstance(s, (ast.With, ast.AsyncWith)) and _always_returns(s.body):
            return True
    return False


def _move_tails(stmts):
    """Step 1 on a block (and the blocks inside it)."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(s)
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if block:
                setattr(s, field, _move_tails(block))
        for handler in getattr(s, "handlers", ()):
            handler.body = _move_tails(handler.body)
        out.append(s)
        rest = stmts[i + 1:]
        if isinstance(s, ast.If) and rest:
            if _always_returns(s.body):
                s.orelse = _move_tails(s.orelse + rest)
                return out
            if s.orelse and _always_returns(s.orelse):
                s.body = _move_tails(s.body + rest)
                return out
    return out


class _Lowering:
    def __init__(self, do_return, retval):
        self.do_return = do_return
        self.retval = retval

    def block(self, stmts):
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, ast.Return):
                at = position(s)
                value = s.value if s.value is not None else const(None, at)
                out.append(assign(self.retval, value, at))
                out.append(assign(self.do_return, const(True, at), at))
                return out
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or \
                    not contains(s, ast.Return):
                out.append(s)
                continue
            for field in ("body", "orelse", "finalbody"):
                block = getattr(s, field, None)
                if block:
                    setattr(s, field, self.block(block))
            for handler in getattr(s, "handlers", ()):
                handler.body = self.block(handler.body)
            if isinstance(s, ast.While):
                s.test = conjunction(negation(self.do_return, position(s)), s.test,
                                     position(s.test))
            elif isinstance(s, ast.For):
                combine_extra_tests(s, negation(self.do_return, position(s)))
            out.append(s)
            rest = stmts[i + 1:]
            if rest:
                out.append(guard(self.do_return, self.block(rest)))
            return out
        return out


def _only_at_end(body) -> bool:
    return isinstance(body[-1], ast.Return) and not any(contains(s, ast.Return)
                                                        for s in body[:-1])


def transform(function, ctx):
    found = list(statements_of(function.body, ast.Return))
    if not found or (len(found) == 1 and found[0] is function.body[-1]):
        return  # no `return`, or only the last statement
    body = _move_tails(function.body)
    if _only_at_end(body):
        function.body = body
        return
    do_return = ctx.namer.new("do_return")
    retval = ctx.namer.new("retval_")
    lowering = _Lowering(do_return, retval)
    first, last = position(body[0]), position(body[-1])
    function.body = [assign(do_return, const(False, first), first),
                     assign(retval, call(ag("UndefinedReturnValue", first), (), first), first),
                     *lowering.block(body),
                     ast.Return(value=call(ag("retval", last), [name(retval, last)], last),
                                **last)]
