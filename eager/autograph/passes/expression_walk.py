"""One walk over the whole tree: it surveys what the statement passes need, and applies the
expression rewrites, children first: `calls` and `expressions` (`and`, `or`, `not`,
conditional expressions).

One walk instead of one per job, since walking the tree is most of what converting costs
(conversion is paid on a function's first trace). The survey (`scopes.Survey`) lists the `def`s
to convert, innermost first, and the node classes in each one's own scope, so that a statement
pass with nothing to do is not run. The walk enters nested `def`s and lambdas, but not classes,
`async def`s or generator functions (found from the code objects, `Context.generators`), which
are left as written, as TensorFlow's AutoGraph leaves them. It also reaches what the directives
pass keeps beside the tree: a loop's `set_loop_options` arguments.
"""

from __future__ import annotations

import ast

from ..nodes import child_fields
from .calls import rewrite_call
from .expressions import if_exp_text, rewrite_boolop, rewrite_ifexp, rewrite_not
from .scopes import LoopElse, Survey

__all__ = ["transform"]

_AST = ast.AST
_CHILD_FIELDS = {}  # AST class -> `child_fields(cls)`, filled as classes are met
_SPECIAL = frozenset({ast.IfExp, ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef, ast.ClassDef})
_LEAVES = frozenset({ast.Name, ast.Constant})  # nothing to rewrite in them, nothing under them


class _Walk:
    # Hot for conversion: every node of the function passes through `visit` once, so it reads
    # only the fields that can hold nodes (`nodes.child_fields`), writes a field back only when
    # its node was replaced, and tests the node's class by identity.
    def __init__(self, ctx, found):
        self.ctx = ctx
        self.found = found
        self.first_parameters = [None]

    def visit(self, node, kinds):
        t = node.__class__
        kinds.add(t)
        if t in _SPECIAL:
            if t is ast.IfExp:
                return rewrite_ifexp(self.children(node, kinds), if_exp_text(node))
            if t is ast.FunctionDef:
                return self.function(node)
            if t is ast.Lambda:
                self.children(node, set())
                return node
            self.found.left_alone.add(id(node))  # an `async def` or a class
            return node
        self.children(node, kinds)
        if t is ast.Call:
            return rewrite_call(node, self.ctx, self.first_parameters[-1])
        if t is ast.BoolOp:
            return rewrite_boolop(node)
        if t is ast.UnaryOp:
            return rewrite_not(node)
        if t is ast.For or t is ast.While:
            if node.orelse:
                kinds.add(LoopElse)
            if hasattr(node, "loop_options"):
                for keyword in node.loop_options:
                    keyword.value = self.visit(keyword.value, set())
        return node

    def function(self, node):
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        if (node.name, first) in self.ctx.generators:
            self.found.left_alone.add(id(node))
            return node
        params = [*node.args.posonlyargs, *node.args.args]
        self.first_parameters.append(params[0].arg if params else None)
        inner = set()
        self.children(node, inner)
        self.first_parameters.pop()
        self.found.kinds[id(node)] = inner
        self.found.functions.append(node)
        return node

    def children(self, node, kinds):
        visit = self.visit
        fields = _CHILD_FIELDS.get(node.__class__)
        if fields is None:
            fields = _CHILD_FIELDS[node.__class__] = child_fields(node.__class__)
        for field in fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                for i, item in enumerate(value):
                    if isinstance(item, _AST):
                        cls = item.__class__
                        if cls in _LEAVES:
                            kinds.add(cls)
                        else:
                            new = visit(item, kinds)
                            if new is not item:
                                value[i] = new
            elif isinstance(value, _AST):
                cls = value.__class__
                if cls in _LEAVES:
                    kinds.add(cls)
                else:
                    new = visit(value, kinds)
                    if new is not value:
                        setattr(node, field, new)
        return node


def transform(tree, ctx) -> Survey:
    """Rewrites the expressions of `tree` (a `FunctionDef` or `Lambda`) in place; returns the
    survey."""
    found = Survey()
    walk = _Walk(ctx, found)
    if isinstance(tree, ast.FunctionDef):
        walk.function(tree)
    else:
        walk.visit(tree, set())
    return found
