"""The converter's passes, each a rewrite of the function's syntax tree with one job, in order:

1. `directives` (only when the function names `set_loop_options`): those calls become their
   loop's options;
2. one walk over the whole tree (`expression_walk`): the survey of what the statement passes
   need (`scopes.Survey`: the `def`s to convert, innermost first, and what each holds), and the
   expression rewrites, `expressions` (`and`, `or`, `not`, `x if c else y`) and `calls` (every
   call through `converted_call`);
3. per function, `jumps`: `break`, then `continue`, become flags and guards;
4. per function, `returns`: `return` becomes a flag and a variable, one `return` at the end;
5. per function, `control_flow`: `if` / `while` / `for` become runtime-operator calls over
   generated functions.

A statement pass is run only where the survey found what it rewrites. Steps 3 and 4 write the
`not` and `and` of their guards as runtime-operator calls themselves (the expression rewrites
are done by then), and step 5 comes last so that no walk goes over the code it generates.
"""

from __future__ import annotations

import ast
import inspect

from . import control_flow, directives, expression_walk, jumps, returns
from .scopes import LoopElse

__all__ = ["Context", "run"]


class Context:
    """What the passes share: fresh names (`nodes.Namer`), the names the function's code uses
    (`names`), the `def`s in it that are generators or coroutines (`generators`: (name, first
    line) pairs, from its code objects), and the options that change the generated code."""

    __slots__ = ("namer", "names", "builtin_functions", "generators")

    def __init__(self, namer, code, builtin_functions=False):
        self.namer = namer
        self.names = frozenset(namer.taken)
        self.builtin_functions = builtin_functions
        self.generators = _generator_functions(code)


_NOT_CONVERTED = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR |
                  inspect.CO_ITERABLE_COROUTINE)
_CONTROL_FLOW = {ast.If, ast.While, ast.For, ast.Break, ast.Continue, ast.Return}


def _generator_functions(code) -> frozenset:
    found = set()
    stack = [k for k in code.co_consts if k.__class__ is type(code)]
    while stack:
        c = stack.pop()
        if c.co_flags & _NOT_CONVERTED:
            found.add((c.co_name, c.co_firstlineno))
        stack.extend(k for k in c.co_consts if k.__class__ is type(code))
    return frozenset(found)


def run(tree, ctx):
    """Converts `tree` (a `FunctionDef` or a `Lambda`) in place."""
    if "set_loop_options" in ctx.names:
        directives.transform(tree, ctx)
    found = expression_walk.transform(tree, ctx)
    for function in found.functions:
        kinds = found.kinds[id(function)]
        if ast.Break in kinds or LoopElse in kinds:
            jumps.lower_breaks(function, ctx)  # (also moves loops' `else:` blocks out)
        if ast.Continue in kinds:
            jumps.lower_continues(function, ctx)
        if ast.Return in kinds:
            returns.transform(function, ctx)
    for function in found.functions:
        kinds = found.kinds[id(function)]
        if not _CONTROL_FLOW.isdisjoint(kinds):
            control_flow.transform(function, ctx, kinds)
    return tree
