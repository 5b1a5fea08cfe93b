"""`and`, `or`, `not` and conditional expressions as calls of the runtime operators.

`a and b` becomes `ag__.and_(lambda: a, lambda: b)` (more operands nest to the right), so that
`b` is still evaluated only when needed, and on a traced tensor both are staged into an
`eager.cond`; `not a` becomes `ag__.not_(a)`; `a if c else b` becomes
`ag__.if_exp(c, lambda: a, lambda: b, 'a if c else b')`. An operand holding `:=`, `yield` or
`await` is left as written: inside a lambda it would mean something else.
"""

from __future__ import annotations

import ast

from ..nodes import ag, call, const, lambda_, position

__all__ = ["rewrite_boolop", "rewrite_not", "rewrite_ifexp", "if_exp_text"]

_NOT_IN_LAMBDAS = (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)


def _thunk(expression):
    return lambda_(expression, position(expression))


def _movable(nodes) -> bool:
    return not any(isinstance(n, _NOT_IN_LAMBDAS) for node in nodes for n in ast.walk(node))


def rewrite_boolop(node):
    """`a and b and c` (operands already converted) as nested `ag__.and_` calls."""
    if not _movable(node.values):
        return node
    operator = "and_" if node.op.__class__ is ast.And else "or_"
    at = position(node)
    result = node.values[-1]
    for value in reversed(node.values[:-1]):
        result = call(ag(operator, at), [_thunk(value), _thunk(result)], at)
    return result


def rewrite_not(node):
    """`not a` (operand already converted) as `ag__.not_(a)`; other unary operators as they
    are."""
    if node.op.__class__ is ast.Not:
        at = position(node)
        return call(ag("not_", at), [node.operand], at)
    return node


def if_exp_text(node) -> str:
    """The source of a conditional expression, for errors (taken before it is converted)."""
    return ast.unparse(node)


def rewrite_ifexp(node, text):
    """`a if c else b` (parts already converted) as `ag__.if_exp(...)`."""
    if not _movable([node.body, node.orelse]):
        return node
    at = position(node)
    return call(ag("if_exp", at), [node.test, _thunk(node.body), _thunk(node.orelse),
                                   const(text, at)], at)
