"""Building the converter's syntax trees: small constructors for the nodes passes generate,
fresh names, and the user's positions on every generated node.

Every generated node takes the position of the user's node it stands for, so that compiled
converted code reports the user's file, line and columns. The constructors take that position
(`at`: a dict from `position` or `header`) and set it as they build, since walking the trees
afterwards would cost more than building them, and conversion is paid on a function's first
trace. Positions are one line long: a call standing for a whole `if` statement is reported at
the statement's first line. Names the passes introduce (`if_body`, `break_`, `get_state`, ...)
come from one `Namer` per conversion, which knows every identifier of the function and never
returns one of them twice.
"""

from __future__ import annotations

import ast
import types

__all__ = ["Namer", "child_fields", "children", "position", "header", "name", "ag", "call",
           "const", "assign", "function_def", "arguments", "lambda_", "located", "placed",
           "OPERATORS", "LOAD", "STORE"]

#: The name converted code reaches the runtime operators by (a free variable of it).
OPERATORS = "ag__"
LOAD = ast.Load()
STORE = ast.Store()
_AST = ast.AST
_DEF_FIELDS = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}


class Namer:
    """Fresh identifiers, distinct from every name the converted function's code uses (its
    variables, globals, attributes and those of the code nested in it: what its code objects
    list, which is every identifier of its source) and from each other."""

    def __init__(self, code):
        taken = {OPERATORS}
        stack = [code]
        while stack:
            c = stack.pop()
            taken.update(c.co_names, c.co_varnames, c.co_cellvars, c.co_freevars)
            taken.add(c.co_name)
            stack.extend(k for k in c.co_consts if k.__class__ is types.CodeType)
        self.taken = taken

    def new(self, base: str) -> str:
        candidate, k = base, 0
        while candidate in self.taken:
            k += 1
            candidate = f"{base}_{k}"
        self.taken.add(candidate)
        return candidate


#: Fields that never hold a node the passes look into: names, numbers and flags, and the
#: context (`Load`, `Store`) and operator (`Add`, `Not`, ...) singletons, which the passes read
#: off their parent when they need them.
_NOT_CHILDREN = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "names", "asname",
                           "level", "module", "kind", "type_comment", "conversion", "is_async",
                           "simple", "tag"})
_CHILD_FIELDS = {ast.Constant: ()}  # AST class -> the fields that can hold child nodes


def child_fields(cls) -> tuple:
    """The fields of AST class `cls` that can hold child nodes (expressions, statements and
    their parts), cached per class: walks skip the others without reading them."""
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _NOT_CHILDREN)
    return fields


def children(node):
    """The child nodes of `node` (see `child_fields`; contexts and operators are not among
    them): a faster `ast.iter_child_nodes`, as a list."""
    out = []
    fields = _CHILD_FIELDS.get(node.__class__)
    if fields is None:
        fields = child_fields(node.__class__)
    for field in fields:
        value = getattr(node, field, None)
        if value.__class__ is list:
            out.extend(v for v in value if isinstance(v, _AST))
        elif isinstance(value, _AST):
            out.append(value)
    return out


# -- positions ---------------------------------------------------------------------------------
def position(origin) -> dict:
    """`origin`'s position, cut to its first line."""
    line = origin.lineno
    end = origin.end_col_offset if origin.end_lineno == line else origin.col_offset
    return {"lineno": line, "col_offset": origin.col_offset, "end_lineno": line,
            "end_col_offset": end}


def header(statement) -> dict:
    """The position of a compound statement's first line up to the end of its test or
    iterable (what a traceback underlines for code standing for the statement)."""
    line = statement.lineno
    part = getattr(statement, "test", None) or getattr(statement, "iter", None)
    same_line = part is not None and part.end_lineno == line
    return {"lineno": line, "col_offset": statement.col_offset, "end_lineno": line,
            "end_col_offset": part.end_col_offset if same_line else statement.col_offset}


# -- constructors ------------------------------------------------------------------------------
# Hot for conversion: each generated node is built with its fields given by position and its
# position written into its attributes at once (`located`), which costs half of passing
# everything by keyword.
def located(node, at):
    """`node`, at position `at`."""
    node.__dict__.update(at)
    return node


def name(identifier, at, store=False):
    node = ast.Name(identifier, STORE if store else LOAD)
    node.__dict__.update(at)
    return node


def ag(attribute, at):
    """`ag__.<attribute>`: a runtime operator."""
    operators = ast.Name(OPERATORS, LOAD)
    operators.__dict__.update(at)
    node = ast.Attribute(operators, attribute, LOAD)
    node.__dict__.update(at)
    return node


def call(func, args, at, keywords=()):
    node = ast.Call(func, list(args), list(keywords))
    node.__dict__.update(at)
    return node


def const(value, at):
    node = ast.Constant(value)
    node.__dict__.update(at)
    return node


def assign(identifier, value, at):
    node = ast.Assign([name(identifier, at, store=True)], value)
    node.__dict__.update(at)
    return node


def arguments(params, at):
    args = []
    for p in params:
        arg = ast.arg(p)
        arg.__dict__.update(at)
        args.append(arg)
    return ast.arguments([], args, None, [], [], None, [])


def function_def(identifier, params, body, at):
    node = ast.FunctionDef(name=identifier, args=arguments(params, at),
                           body=list(body) or [located(ast.Pass(), at)], decorator_list=[],
                           returns=None, **_DEF_FIELDS)
    node.__dict__.update(at)
    return node


def lambda_(body, at):
    """`lambda: body`."""
    node = ast.Lambda(arguments((), at), body)
    node.__dict__.update(at)
    return node


def placed(nodes, origin):
    """`nodes` (a node or a list), with `origin`'s first line on every node that has no
    position (for the few generated nodes built without one)."""
    at = position(origin)
    stack = list(nodes) if isinstance(nodes, list) else [nodes]
    while stack:
        n = stack.pop()
        if n._attributes:
            if getattr(n, "lineno", None) is not None:
                continue  # the user's node: it and its children have their positions
            for k, v in at.items():
                setattr(n, k, v)
        if n._fields:  # (not a Load / Store context)
            stack.extend(children(n))
    return nodes
