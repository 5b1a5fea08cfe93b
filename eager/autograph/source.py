"""A function's source as a syntax tree with the user's file positions.

The converter rewrites the tree and compiles it under the user's file name, so every node must
keep the line and column it has in the user's file: then tracebacks through converted code show
the user's lines, read by `linecache` from the user's file, and never generated text.

* A `def` is read from its first line (`co_firstlineno`, the first decorator's) to the end of
  its block (found by indentation, or by `inspect.getblock`, which tokenizes, when that does
  not parse) and parsed alone; an indented one is parsed under an `if 1:` line, so that no
  text is dedented (dedenting would change multi-line strings) and columns stay the user's.
* A lambda can sit anywhere inside a longer statement, so its file is parsed whole (kept per
  file, while `linecache` keeps the same lines) and the `Lambda` node on its line with its
  parameters is copied out.

Source is unavailable for code made by `exec`/`eval` or typed into a REPL, and for a file
changed since it was imported (the parsed definition no longer matches the code object): each
is a `ConversionError` saying so.
"""

from __future__ import annotations

import ast
import copy
import inspect
import linecache
import threading

from .errors import ConversionError

__all__ = ["parse_function"]

_FILE_TREES = {}  # file name -> (the linecache lines it was parsed from, module tree)
_MAX_FILE_TREES = 16  # the files most recently searched for lambdas
_LOCK = threading.Lock()


def parse_function(function):
    """(a fresh `FunctionDef` or `Lambda` node of `function`, its file name)."""
    code = function.__code__
    filename = code.co_filename
    lines = linecache.getlines(filename, function.__globals__)
    if not lines:
        raise ConversionError(f"could not get source code of {function!r} (file "
                              f"{filename!r} cannot be read: code made by exec or eval, or "
                              "typed into an interactive session)")
    if code.co_name == "<lambda>":
        return _lambda_node(function, code, filename, lines), filename
    return _def_node(function, code, lines), filename


def _indentation(line) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _block_end(lines, start) -> int:
    """The index after the last line of the `def` (with its decorators) starting at line index
    `start`, by indentation: the lines that follow and are more indented, skipping blank lines,
    comments and closing brackets at the `def`'s own indentation. A block this misjudges (a
    multi-line string less indented than its function) fails to parse, and `inspect.getblock`
    reads it instead."""
    indent = _indentation(lines[start])
    i = start
    while i < len(lines) and lines[i].lstrip().startswith("@"):
        i += 1
    end = i + 1
    for k in range(i + 1, len(lines)):
        line = lines[k]
        stripped = line.strip()
        if not stripped or stripped[0] == "#":
            continue
        if _indentation(line) <= indent and stripped[0] not in ")]}":
            break
        end = k + 1
    return end


def _parse_block(block, start):
    """The module tree of `block` (lines from 0-based line `start` of the file), with the
    file's line numbers and columns: leading empty lines stand for the lines before it, and an
    indented block is parsed under an `if 1:` line."""
    first = block[0]
    if first[:1] in (" ", "\t"):
        prefix = "\n" * (start - 1) + "if 1:\n"
    else:
        prefix = "\n" * start
    tree = ast.parse(prefix + "".join(block))
    node = tree.body[0]
    return node.body[0] if isinstance(node, ast.If) else node


def _def_node(function, code, lines):
    start = code.co_firstlineno - 1
    if start >= len(lines):
        raise ConversionError(f"could not get source code of {function!r}: its file changed "
                              "since it was imported")
    try:
        node = _parse_block(lines[start:_block_end(lines, start)], start)
    except SyntaxError:
        try:
            node = _parse_block(inspect.getblock(lines[start:]), start)
        except Exception as exc:  # noqa: BLE001 - tokenize's and the parser's errors alike
            raise ConversionError(f"could not parse the source of {function!r}: "
                                  f"{exc}") from None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != \
            code.co_name:
        raise ConversionError(f"the source of {function!r} at line {start + 1} of its file "
                              "does not define it (its file changed since it was imported?)")
    return node


def _module_tree(filename, lines):
    with _LOCK:
        cached = _FILE_TREES.get(filename)
        if cached is not None and cached[0] is lines:
            return cached[1]
    try:
        tree = ast.parse("".join(lines), filename)
    except SyntaxError as exc:
        raise ConversionError(f"could not parse {filename}: {exc}") from None
    with _LOCK:
        _FILE_TREES.pop(filename, None)
        while len(_FILE_TREES) >= _MAX_FILE_TREES:
            del _FILE_TREES[next(iter(_FILE_TREES))]
        _FILE_TREES[filename] = (lines, tree)
    return tree


def _parameter_names(args):
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)] + \
        [a.arg for a in (args.vararg, args.kwarg) if a is not None]


def _lambda_node(function, code, filename, lines):
    tree = _module_tree(filename, lines)
    count = code.co_argcount + code.co_kwonlyargcount
    expected = list(code.co_varnames[:count])
    if code.co_flags & inspect.CO_VARARGS:
        expected.append(code.co_varnames[count])
        count += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        expected.append(code.co_varnames[count])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and n.lineno == code.co_firstlineno and _parameter_names(n.args) == expected]
    if len(found) > 1 and hasattr(code, "co_positions"):
        # Several on one line: the smallest one whose span holds all the code's instructions
        # (an enclosing lambda's span holds them too).
        spots = [(line, col) for line, _, col, _ in code.co_positions()
                 if line is not None and col]
        found = [n for n in found if all(
            (n.lineno, n.col_offset) <= spot < (n.end_lineno, n.end_col_offset)
            for spot in spots)]
        found = sorted(found, key=lambda n: (n.end_lineno - n.lineno,
                                             n.end_col_offset - n.col_offset))[:1]
    if len(found) != 1:
        why = "none" if not found else f"{len(found)} of them"
        raise ConversionError(f"could not identify the source of {function!r}: {why} on line "
                              f"{code.co_firstlineno} of {filename} with parameters "
                              f"{expected}")
    return copy.deepcopy(found[0])


def clear_cache():
    """Forgets the parsed files (for measurements that must parse from scratch)."""
    with _LOCK:
        _FILE_TREES.clear()
