"""What the control-flow converter needs to know about one function's variables.

Three static facts, on Python's `ast`, within one function's scope (a nested function, lambda,
class or comprehension is another scope: only the names it reads from this one count):

* **bound names**: what a statement or block assigns (targets, `for` targets, `with ... as`,
  imports, `def`/`class` names, `except ... as`, walrus);
* **liveness**: which names may be read before being assigned again after a point. A converted
  `if` outputs the variables its branches assign that are live after it; a loop carries those
  live after it or at its head. The function's own exit reads its `global`/`nonlocal` names
  and every name a nested scope reads (a closure may run later). Computed backwards over the
  structured code (the converter has already turned `break`, `continue` and `return` into
  flags), loops to a fixed point.
* **definedness**: which names are possibly bound at a point, so that the converter binds a
  state variable to `Undefined` before a statement only where no path binds it (the generated
  functions' `nonlocal` declarations need a binding; a variable bound on some paths has one,
  and an empty cell reads as `Undefined`). A converted statement's body becomes a function of
  its own: inside it, the names it assigns that are not its state are that function's locals,
  unbound at its start.

`Facts` holds the results per converted statement (`If`, `While`, `For` node).
"""

from __future__ import annotations

import ast

from .nodes import child_fields, children

__all__ = ["bound_names", "walrus_names", "reads", "free_names", "declared", "Facts", "analyze"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.While, ast.For, ast.AsyncFor)
_CONVERTED = (ast.If, ast.While, ast.For)
#: What liveness treats apart from a simple statement (one that reads, then binds).
_COMPOUND_OR_EXIT = frozenset({ast.If, ast.While, ast.For, ast.AsyncFor, ast.With,
                               ast.AsyncWith, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef,
                               ast.ClassDef, ast.Return, ast.Raise,
                               *(getattr(ast, k) for k in ("TryStar", "Match") if hasattr(ast, k))})
_READ_SPECIALLY = frozenset({ast.AugAssign, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                             ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp})
_STORE = ast.Store
_AST = ast.AST
_CHILD_FIELDS = {}  # AST class -> `child_fields(cls)`, filled as classes are met


# -- bound names -------------------------------------------------------------------------------
def _target_names(target, out):
    if isinstance(target, ast.Name):
        out.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            _target_names(t, out)
    elif isinstance(target, ast.Starred):
        _target_names(target.value, out)


def walrus_names(node, out):
    """Names bound by `:=` in an expression (not inside lambdas, which are their own scope;
    inside comprehensions they bind in this scope)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.NamedExpr):
            out.add(n.target.id)
        if isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        stack.extend(children(n))


def bound_names(stmts, walrus=True) -> set:
    """Names the statements bind in their own scope (recursing into compound statements, not
    into nested scopes); `walrus=False` skips looking for `:=` (known absent)."""
    out = set()
    for s in stmts:
        _bound(s, out, walrus)
    return out


def _bound(s, out, walrus=True):
    t = s.__class__
    if t is ast.Expr or t is ast.Return:  # the most common statements first
        if walrus and s.value is not None:
            walrus_names(s.value, out)
        return
    if t is ast.Assign:
        for target in s.targets:
            _target_names(target, out)
        if walrus:
            walrus_names(s.value, out)
        return
    _walrus = walrus_names if walrus else _no_walrus
    if t in (ast.AugAssign, ast.AnnAssign):
        _target_names(s.target, out)
        if s.value is not None:
            _walrus(s.value, out)
    elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        out.add(s.name)
    elif t in (ast.Import, ast.ImportFrom):
        for alias in s.names:
            if alias.name != "*":
                out.add((alias.asname or alias.name).split(".")[0])
    elif t in (ast.For, ast.AsyncFor):
        _target_names(s.target, out)
        _walrus(s.iter, out)
        for b in (s.body, s.orelse):
            for x in b:
                _bound(x, out, walrus)
    elif t in (ast.While, ast.If):
        _walrus(s.test, out)
        for b in (s.body, s.orelse):
            for x in b:
                _bound(x, out, walrus)
    elif t in (ast.With, ast.AsyncWith):
        for item in s.items:
            if item.optional_vars is not None:
                _target_names(item.optional_vars, out)
            _walrus(item.context_expr, out)
        for x in s.body:
            _bound(x, out, walrus)
    elif t is ast.Try or t.__name__ == "TryStar":
        for x in (*s.body, *s.orelse, *s.finalbody):
            _bound(x, out, walrus)
        for h in s.handlers:
            if h.name:
                out.add(h.name)
            for x in h.body:
                _bound(x, out, walrus)
    elif t is ast.Delete:
        for target in s.targets:
            _target_names(target, out)
    elif t.__name__ == "Match":
        _walrus(s.subject, out)
        for case in s.cases:
            for n in ast.walk(case.pattern):
                name = getattr(n, "name", None) if not isinstance(n, ast.Name) else None
                if isinstance(name, str):
                    out.add(name)
            for x in case.body:
                _bound(x, out, walrus)
    elif t in (ast.Assert, ast.Raise):
        for child in children(s):
            _walrus(child, out)


def _no_walrus(node, out):
    pass


def declared(function_node) -> tuple:
    """(names declared `global`, names declared `nonlocal`) in the function's own scope."""
    globals_, nonlocals = set(), set()
    stack = list(function_node.body) if not isinstance(function_node, ast.Lambda) else []
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Global):
            globals_.update(n.names)
        elif isinstance(n, ast.Nonlocal):
            nonlocals.update(n.names)
        elif not isinstance(n, _SCOPES):
            stack.extend(children(n))
    return globals_, nonlocals


# -- reads -------------------------------------------------------------------------------------
def reads(node) -> set:
    """Names an expression or a simple statement reads in this scope, including those nested
    scopes in it read from this one; an augmented assignment reads its target."""
    out = set()
    _reads(node, out)
    return out


def _reads(node, out):
    # Hot for conversion (every simple statement and test is read once): fields are read by
    # `child_fields`, and the most common nodes are handled first.
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.__class__
        if t is ast.Name:
            if n.ctx.__class__ is not _STORE:
                out.add(n.id)
        elif t is ast.Constant:
            continue
        elif t is ast.Attribute:
            stack.append(n.value)
        elif t is ast.BinOp:
            stack.append(n.left)
            stack.append(n.right)
        elif t is ast.Call:
            stack.append(n.func)
            stack.extend(n.args)
            for k in n.keywords:
                stack.append(k.value)
        elif t not in _READ_SPECIALLY:
            fields = _CHILD_FIELDS.get(t)
            if fields is None:
                fields = _CHILD_FIELDS[t] = child_fields(t)
            for field in fields:
                value = getattr(n, field, None)
                if value.__class__ is list:
                    for v in value:
                        if isinstance(v, _AST):
                            stack.append(v)
                elif isinstance(value, _AST):
                    stack.append(value)
        elif t is ast.AugAssign:
            if isinstance(n.target, ast.Name):
                out.add(n.target.id)
            stack.append(n.target)
            stack.append(n.value)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            out.update(free_names(n))
        elif t is ast.ClassDef:
            stack.extend(n.decorator_list)
            stack.extend(n.bases)
            stack.extend(k.value for k in n.keywords)
            inner = set()
            for x in n.body:
                _reads(x, inner)
            out.update(inner - bound_names(n.body))
        else:  # a comprehension
            out.update(_comprehension_free(n))


def _parameters(args) -> set:
    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                            *((args.vararg,) if args.vararg else ()),
                            *((args.kwarg,) if args.kwarg else ()))}


def free_names(node) -> set:
    """Names a `def` or lambda reads from its enclosing scope when defined (decorators,
    defaults, annotations) or called (its body's reads of names it does not bind)."""
    out = set()
    args = node.args
    for d in (*args.defaults, *(d for d in args.kw_defaults if d is not None)):
        _reads(d, out)
    if isinstance(node, ast.Lambda):
        inner = reads(node.body)
        local = _parameters(args)
    else:
        for d in node.decorator_list:
            _reads(d, out)
        inner = set()
        for s in node.body:
            _reads(s, inner)
        globals_, nonlocals = declared(node)
        local = (_parameters(args) | bound_names(node.body)) - nonlocals
        local |= globals_
        inner |= nonlocals
    out.update(inner - local)
    return out


def _comprehension_free(node) -> set:
    generators = node.generators
    out = reads(generators[0].iter)
    inner = set()
    targets = set()
    for i, g in enumerate(generators):
        _target_names(g.target, targets)
        if i:
            _reads(g.iter, inner)
        for cond in g.ifs:
            _reads(cond, inner)
    if isinstance(node, ast.DictComp):
        _reads(node.key, inner)
        _reads(node.value, inner)
    else:
        _reads(node.elt, inner)
    out.update(inner - targets)
    return out


# -- liveness ----------------------------------------------------------------------------------
class Facts:
    """Per converted statement (keyed by `id(node)`): `live_in`, `live_out` (names live at its
    start and right after it), `modified` (names its blocks bind, `for` target included),
    `maybe_defined` (names possibly bound when it starts, in the scope its code will run in),
    `nodes` (the statement)."""

    def __init__(self):
        self.live_in, self.live_out, self.modified = {}, {}, {}
        self.maybe_defined, self.nodes = {}, {}


class _Liveness:
    def __init__(self, facts, walrus):
        self.facts = facts
        self.walrus = walrus
        self.memo = {}  # id(simple statement) -> (reads, kills): loop bodies are walked again

    def simple(self, s, live):
        found = self.memo.get(id(s))
        if found is None:
            killed = set()
            _bound(s, killed, self.walrus)
            found = self.memo[id(s)] = (reads(s), killed)
        return (live - found[1]) | found[0]

    def block(self, stmts, live):
        for s in reversed(stmts):
            live = self.stmt(s, live)
        return live

    def stmt(self, s, live):
        t = s.__class__
        if t not in _COMPOUND_OR_EXIT:
            return self.simple(s, live)
        if t is ast.If:
            into = reads(s.test) | self.block(s.body, live) | self.block(s.orelse, live)
            self._record(s, into, live,
                         bound_names(s.body, self.walrus) | bound_names(s.orelse, self.walrus))
            return into
        if t is ast.While:
            after = self.block(s.orelse, live) if s.orelse else live
            test = reads(s.test)
            head = after | test
            while True:
                new = after | test | self.block(s.body, head)
                if new == head:
                    break
                head = new
            modified = bound_names(s.body, self.walrus)
            if self.walrus:
                walrus_names(s.test, modified)  # `while (v := f()):` assigns v each time
            self._record(s, head, live, modified)
            return head
        if t in (ast.For, ast.AsyncFor):
            after = self.block(s.orelse, live) if s.orelse else live
            targets = set()
            _target_names(s.target, targets)
            target_reads = reads(s.target)
            head = set(after)
            while True:
                new = after | (self.block(s.body, head) - targets) | target_reads
                if new == head:
                    break
                head = new
            into = reads(s.iter) | head
            self._record(s, into, live, bound_names(s.body, self.walrus) | targets)
            return into
        if t in (ast.With, ast.AsyncWith):
            names = set()
            header = set()
            for item in s.items:
                _reads(item.context_expr, header)
                if item.optional_vars is not None:
                    _target_names(item.optional_vars, names)
                    _reads(item.optional_vars, header)
            return header | (self.block(s.body, live) - names)
        if t is ast.Try or t.__name__ == "TryStar":
            final = self.block(s.finalbody, live)
            handlers = set()
            for h in s.handlers:
                inner = self.block(h.body, final) - ({h.name} if h.name else set())
                if h.type is not None:
                    inner |= reads(h.type)
                handlers |= inner
            orelse = self.block(s.orelse, final)
            return self.block(s.body, orelse | handlers) | handlers
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            return (live - {s.name}) | reads(s)
        if t is ast.Return:
            return reads(s.value) if s.value is not None else set()
        if t is ast.Raise:
            return live | reads(s)
        if t.__name__ == "Match":
            out = reads(s.subject)
            for case in s.cases:
                out |= self.block(case.body, live) | reads(case.pattern)
                if case.guard is not None:
                    out |= reads(case.guard)
            return out | live
        return self.simple(s, live)

    def _record(self, s, into, out, modified):
        key = id(s)
        self.facts.nodes[key] = s
        self.facts.live_in[key] = frozenset(into)
        self.facts.live_out[key] = frozenset(out)
        self.facts.modified[key] = frozenset(modified)


def exit_live(function_node) -> set:
    """Names the function's exit reads: its `global` and `nonlocal` names, and every name a
    scope nested in it reads from it."""
    globals_, nonlocals = declared(function_node)
    out = globals_ | nonlocals
    stack = list(function_node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            out |= free_names(n)
        elif isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                            ast.ClassDef)):
            out |= reads(n)
        else:
            stack.extend(children(n))
    return out


# -- definedness -------------------------------------------------------------------------------
class _Bindings:
    """Forward: the names possibly bound before each converted statement, in the scope its code
    will run in. `state(facts, s)` gives a converted statement's state variables, which are
    bound (maybe to `Undefined`) from the statement on and inside its functions; the other names
    its blocks assign are locals of its generated functions, unbound when each call starts."""

    def __init__(self, facts, state, walrus, memo):
        self.facts = facts
        self.state = state
        self.walrus = walrus
        self.memo = memo  # liveness's: id(simple statement) -> (reads, binds)

    def block(self, stmts, bound):
        for s in stmts:
            bound = self.stmt(s, bound)
        return bound

    def stmt(self, s, bound):
        found = self.memo.get(id(s))
        if found is not None:
            return bound | found[1]
        t = s.__class__
        if t in _CONVERTED:
            key = id(s)
            self.facts.maybe_defined[key] = frozenset(bound)
            state = self.state(self.facts, s)
            inner = (bound - (self.facts.modified[key] - state)) | state
            if t is ast.For:
                _target_names(s.target, inner)
            for b in (s.body, s.orelse):
                self.block(b, set(inner))
            return bound | state
        if t in (ast.With, ast.AsyncWith):
            names = set()
            for item in s.items:
                if item.optional_vars is not None:
                    _target_names(item.optional_vars, names)
            return self.block(s.body, bound | names)
        if t is ast.Try or t.__name__ == "TryStar":
            everything = bound | bound_names([s], self.walrus)
            self.block(s.body, set(bound))
            for h in s.handlers:
                self.block(h.body, everything | ({h.name} if h.name else set()))
            self.block(s.orelse, everything)
            self.block(s.finalbody, everything)
            return everything
        if t in (ast.AsyncFor, ast.AsyncWith) or t.__name__ == "Match":
            return bound | bound_names([s], self.walrus)
        names = set()
        _bound(s, names, self.walrus)
        return bound | names


_NESTED_SCOPES = {ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
                  ast.SetComp, ast.DictComp, ast.GeneratorExp}


def analyze(function_node, state, kinds=None) -> Facts:
    """Liveness and modified names of every converted statement of the function, then
    definedness given `state(facts, node)` (the state variables the converter chooses from
    the liveness facts). `kinds`, the node classes in the function's scope when known, lets
    the analysis skip what cannot be there (declarations, nested scopes, `:=`)."""
    facts = Facts()
    body = function_node.body
    walrus = kinds is None or ast.NamedExpr in kinds
    if kinds is None or ast.Global in kinds or ast.Nonlocal in kinds:
        globals_, nonlocals = declared(function_node)
    else:
        globals_, nonlocals = set(), set()
    if kinds is None or not _NESTED_SCOPES.isdisjoint(kinds):
        exit_names = exit_live(function_node)
    else:
        exit_names = globals_ | nonlocals
    liveness = _Liveness(facts, walrus)
    liveness.block(body, exit_names)
    _Bindings(facts, state, walrus, liveness.memo).block(
        body, _parameters(function_node.args) | globals_ | nonlocals)
    return facts
