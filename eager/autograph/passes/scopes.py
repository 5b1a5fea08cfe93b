"""Which parts of a function's tree the passes rewrite (`Survey`, filled by
`expression_walk`), and walks over one function's scope.

Every `def` inside the converted function is converted with it, innermost first, each as its
own scope (TensorFlow converts nested functions in place too), except generators and `async`
functions, which TensorFlow's AutoGraph leaves as they are, and whatever a class body holds.
The survey also records which kinds of nodes each function's own scope holds, so that a pass
with nothing to do (no `break`, no `return` before the end, no `if`) costs nothing: conversion
is paid on a function's first trace, and most functions need few of the passes.
"""

from __future__ import annotations

import ast

__all__ = ["Survey", "LoopElse", "statements_of", "contains", "COMPOUND"]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_CASE = getattr(ast, "match_case", None)

#: Statement classes that hold blocks of statements (or define a scope). The walks over
#: statements test this first: most statements are simple, with no block to recurse into.
COMPOUND = frozenset({ast.If, ast.For, ast.While, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try,
                      ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                      *(getattr(ast, k) for k in ("TryStar", "Match") if hasattr(ast, k))})


class LoopElse:
    """Stands, in a survey's `kinds`, for a loop with an `else:` block (which the `break` pass
    moves out of the loop even when there is no `break`)."""


class Survey:
    """`functions`: the `def`s to convert, innermost first (the converted function last, when
    it is a `def`); `kinds[id(def)]`: the node classes in that function's own scope;
    `left_alone`: ids of the nodes whose insides are not converted (generators, `async def`,
    classes)."""

    __slots__ = ("functions", "kinds", "left_alone")

    def __init__(self):
        self.functions, self.kinds, self.left_alone = [], {}, set()


def statements_of(stmts, kinds):
    """The statements of `kinds` in these blocks, recursing into compound statements but not
    into nested scopes."""
    stack = list(stmts)
    while stack:
        s = stack.pop()
        if isinstance(s, kinds):
            yield s
        cls = s.__class__
        if cls not in COMPOUND and cls is not ast.ExceptHandler and cls is not _CASE:
            continue  # a simple statement
        if isinstance(s, _DEFS):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(s, field, None)
            if block:
                stack.extend(block)


def contains(node, kinds) -> bool:
    """Whether a statement has a statement of `kinds` in its own scope (itself included; loops
    nested in it count, scopes nested in it do not)."""
    return next(statements_of([node], kinds), None) is not None
