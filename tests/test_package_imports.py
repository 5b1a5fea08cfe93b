"""The package's own import graph: layers import downward only, so no module of `eager` imports,
directly or through others, a module that imports it back (at module level or inside a
function: a function-local import is still an edge, it only hides the cycle until called)."""

import ast
import pathlib

import eager

ROOT = pathlib.Path(eager.__file__).parent


def _modules():
    """module name -> parsed source, for every .py file of the package."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = ("eager",) + path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = (path, ast.parse(path.read_text(), str(path)))
    return out


def _imported(module, path, node, modules):
    """The package modules an import statement of `module` names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in modules]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    if node.level:
        base = package.split(".")[:len(package.split(".")) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target not in modules:
        return []
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target
            for a in node.names]


def _import_graph():
    modules = _modules()
    graph = {}
    for name, (path, tree) in modules.items():
        graph[name] = {t for node in ast.walk(tree)
                       if isinstance(node, (ast.Import, ast.ImportFrom))
                       for t in _imported(name, path, node, modules) if t != name}
    return graph


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_cycle():
    assert _cycles(_import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
