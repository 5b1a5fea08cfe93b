"""`if`, `while` and `for` statements as calls of the runtime operators.

Each statement becomes functions and one call (the shape of TensorFlow's AutoGraph's):

    def if_body():
        nonlocal y
        y = x
    def else_body():
        nonlocal y
        y = -x
    y = ag__.Undefined('y')     # only where y is unbound on every path
    ag__.if_stmt(x > 0, if_body, else_body, ('y',), 1)

The state variables are the names the statement's blocks assign that matter outside them
(`analysis`): for an `if`, those live after it (its outputs, counted by the last argument) and
those a branch reads before assigning (passed back unchanged); for a loop, those live after it
or at its head; `global` and `nonlocal` names always. They are declared `nonlocal` (or
`global`) in the generated functions, whose closure cells are then how a staged statement
reads and writes them (`operators.state`); the other names the blocks assign stay local to the
generated functions, as temporaries. A state variable unbound on every path to the statement
is first bound to `ag__.Undefined(name)` (the `nonlocal` declaration needs a binding), and
every read of such a name in the function goes through `ag__.ld`, which raises Python's
UnboundLocalError for an `Undefined`. `global`/`nonlocal` statements move to the top of the
function, so that they still cover the code that moves into the generated functions.

`for` loops bind their target from the body function's argument (the argument is the target
itself when the target is a name that is not a loop variable), and a call as their iterable
goes through `ag__.converted_iterable` (`converted_call`, but `range` of a traced bound gives
the loop its bounds instead of building a Range op); a loop's options
(`directives`) and, for a `for`, its target's name (`iterate_names`) and extra test (`jumps`,
`returns`) are passed along.
"""

from __future__ import annotations

import ast

from ..analysis import analyze, declared, walrus_names
from ..nodes import (LOAD, OPERATORS, ag, assign, call, const, function_def, header, located,
                     name, position)
from .scopes import COMPOUND, statements_of

__all__ = ["transform"]

_CONVERTED = (ast.If, ast.While, ast.For)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _hoist_declarations(function):
    """Moves `global` / `nonlocal` statements (of this scope) to the top of the function."""
    found = list(statements_of(function.body, (ast.Global, ast.Nonlocal)))
    if not found:
        return
    ids = {id(s) for s in found}

    def strip(stmts):
        kept = []
        for s in stmts:
            if id(s) in ids:
                continue
            if not isinstance(s, _NESTED):
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(s, field, None)
                    if block:
                        setattr(s, field, strip(block) or [ast.Pass(**position(s))])
                for handler in getattr(s, "handlers", ()):
                    handler.body = strip(handler.body) or [ast.Pass(**position(handler))]
            kept.append(s)
        return kept

    function.body = found + (strip(function.body) or [ast.Pass(**position(function))])


class _Converter:
    def __init__(self, function, ctx, kinds):
        self.ctx = ctx
        self.kinds = kinds
        self._states = {}  # id(statement) -> its state variables (asked three times each)
        if ast.Global in kinds or ast.Nonlocal in kinds:
            self.globals, self.nonlocals = declared(function)
        else:
            self.globals, self.nonlocals = frozenset(), frozenset()
        self.facts = analyze(function, self.state_of, kinds)

    # -- analysis ------------------------------------------------------------------------------
    def state_of(self, facts, node):
        key = id(node)
        found = self._states.get(key)
        if found is None:
            live = facts.live_in[key] | facts.live_out[key] | self.globals | self.nonlocals
            found = self._states[key] = frozenset(v for v in facts.modified[key] if v in live)
        return found

    def ordered_state(self, node):
        """(state variables, outputs first; number of outputs)."""
        state = self.state_of(self.facts, node)
        key = id(node)
        out = self.facts.live_out[key] | self.globals | self.nonlocals
        outputs = sorted(v for v in state if v in out)
        return outputs + sorted(v for v in state if v not in out), len(outputs)

    def possibly_unbound(self):
        """{id(statement): [names to bind to Undefined first]} (state variables bound on no
        path to the statement), and every such name."""
        inits, names = {}, set()
        for key, node in self.facts.nodes.items():
            if key not in self.facts.maybe_defined:  # unreachable code: never converted
                continue
            maybe = self.facts.maybe_defined[key]
            missing = [v for v in sorted(self.state_of(self.facts, node))
                       if v not in maybe and v not in self.globals and v not in self.nonlocals]
            inits[key] = missing
            names.update(missing)
        return inits, names

    # -- rewriting -----------------------------------------------------------------------------
    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        if s.__class__ not in COMPOUND or isinstance(s, _NESTED):
            return [s]
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if block:
                setattr(s, field, self.block(block))
        for handler in getattr(s, "handlers", ()):
            handler.body = self.block(handler.body)
        for case in getattr(s, "cases", ()):
            case.body = self.block(case.body)
        if isinstance(s, ast.If):
            return self.convert_if(s)
        if isinstance(s, ast.While):
            return self.convert_while(s)
        if isinstance(s, ast.For):
            return self.convert_for(s)
        return [s]

    def declarations(self, names, at):
        out = []
        globals_ = [v for v in names if v in self.globals]
        others = [v for v in names if v not in self.globals]
        if globals_:
            out.append(located(ast.Global(globals_), at))
        if others:
            out.append(located(ast.Nonlocal(others), at))
        return out

    def undefined_inits(self, node, at):
        """`v = ag__.Undefined('v')` for each state variable unbound here on every path (the
        `nonlocal` declarations need a binding in this scope; one bound on some paths has)."""
        return [assign(v, call(ag("Undefined", at), [const(v, at)], at), at)
                for v in self.inits.get(id(node), ())]

    def names_tuple(self, names, at):
        return located(ast.Tuple([const(v, at) for v in names], LOAD), at)

    def options(self, node, at, extra=()):
        """The loop's options as a dict display: its `set_loop_options` keywords, then `extra`
        ((name, value node) pairs)."""
        keys, values = [], []
        for keyword in getattr(node, "loop_options", ()):
            keys.append(const(keyword.arg, at))
            values.append(keyword.value)
        for key, value in extra:
            keys.append(const(key, at))
            values.append(value)
        return located(ast.Dict(keys, values), at)

    def statement_call(self, operator, arguments, at):
        return located(ast.Expr(call(ag(operator, at), arguments, at)), at)

    def convert_if(self, node):
        at = header(node)
        names, nouts = self.ordered_state(node)
        decls = self.declarations(names, at)
        body = self.ctx.namer.new("if_body")
        out = [function_def(body, (), [*decls, *node.body], at)]
        if node.orelse:
            orelse = self.ctx.namer.new("else_body")
            out.append(function_def(orelse, (), [*decls, *node.orelse], at))
            orelse = name(orelse, at)
        else:  # nothing to run; a staged `if` restores the state in that branch itself
            orelse = ag("nothing", at)
        return [*out, *self.undefined_inits(node, at),
                self.statement_call("if_stmt", [
                    node.test, name(body, at), orelse, self.names_tuple(names, at),
                    const(nouts, at)], at)]

    def convert_while(self, node):
        at = header(node)
        names, _ = self.ordered_state(node)
        test = self.ctx.namer.new("loop_test")
        body = self.ctx.namer.new("loop_body")
        assigned_in_test = sorted(v for v in names if v in self.walrus_names(node.test))
        return [function_def(test, (), [*self.declarations(assigned_in_test, at),
                                        ast.Return(value=node.test, **at)], at),
                function_def(body, (), [*self.declarations(names, at), *node.body], at),
                *self.undefined_inits(node, at),
                self.statement_call("while_stmt", [
                    name(test, at), name(body, at), self.names_tuple(names, at),
                    self.options(node, at)], at)]

    def walrus_names(self, expression):
        if ast.NamedExpr not in self.kinds:
            return set()
        found = set()
        walrus_names(expression, found)
        return found

    def convert_for(self, node):
        at = header(node)
        names, _ = self.ordered_state(node)
        body = self.ctx.namer.new("loop_body")
        target = node.target
        if target.__class__ is ast.Name and target.id not in names:
            # A target that is not a loop variable is a local of the body: its parameter.
            params, binding = (target.id,), []
        else:
            iterate = self.ctx.namer.new("itr")
            target_at = position(target)
            params = (iterate,)
            binding = [located(ast.Assign([target], name(iterate, target_at)), target_at)]
        out = [function_def(body, params, [*self.declarations(names, at), *binding,
                                           *node.body], at)]
        extra = getattr(node, "extra_test", None)
        if extra is not None:
            extra_name = self.ctx.namer.new("extra_test")
            out.append(function_def(extra_name, (), [ast.Return(value=extra, **at)], at))
            extra = name(extra_name, at)
        else:
            extra = const(None, at)
        iterate_names = []
        if isinstance(node.target, ast.Name):
            iterate_names.append(("iterate_names", const(node.target.id, at)))
        out.extend(self.undefined_inits(node, at))
        iterable = node.iter
        if _is_operator_call(iterable, "converted_call"):
            iterable.func.attr = "converted_iterable"
        out.append(self.statement_call("for_stmt", [
            iterable, extra, name(body, at), self.names_tuple(names, at),
            self.options(node, at, iterate_names)], at))
        return out


def _is_operator_call(node, operator) -> bool:
    """Whether `node` is a call of `ag__.<operator>`."""
    if node.__class__ is not ast.Call:
        return False
    func = node.func
    return func.__class__ is ast.Attribute and func.attr == operator and \
        func.value.__class__ is ast.Name and func.value.id == OPERATORS


class _ReadsThroughLd(ast.NodeTransformer):
    """Reads of the names that may hold `Undefined` go through `ag__.ld`."""

    def __init__(self, names):
        self.names = names

    def visit_Name(self, node):
        if node.id in self.names and node.ctx.__class__ is ast.Load:
            at = position(node)
            return call(ag("ld", at), [node], at)
        return node


def transform(function, ctx, kinds):
    if ast.Global in kinds or ast.Nonlocal in kinds:
        _hoist_declarations(function)
    if next(statements_of(function.body, _CONVERTED), None) is None:
        return
    converter = _Converter(function, ctx, kinds)
    converter.inits, names = converter.possibly_unbound()
    if names:
        reads = _ReadsThroughLd(names)
        function.body = [reads.visit(s) for s in function.body]
    function.body = converter.block(function.body)
