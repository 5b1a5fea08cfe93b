"""Graphviz: `to_dot(graph)`, the raw text of a graph; `picture_to_dot(picture)`, the text of
what eager draws (`eager.graph.picture`); `run_dot(text)`, Graphviz's own drawing of either.

`to_dot` is one node per operation (its name and type), a solid edge per data edge labelled
with the tensor's shape, a dashed edge per control edge: every operation, dead ones included,
for looking at exactly what a trace produced. `picture_to_dot` is the picture eager's own
layout draws (the same boxes, labels, edges and panels, one cluster per panel), so a drawing
through Graphviz shows the same thing. Plain text, no Graphviz needed to make either.

`run_dot` needs Graphviz's `dot` program, which Python cannot install: without it on PATH it
raises a RuntimeError saying so (`eager.graph.drawing` decides what a drawing does then).
"""

from __future__ import annotations

import shutil

__all__ = ["to_dot", "picture_to_dot", "run_dot", "dot_program"]

_FILL = {"op": "#eaf1fb", "input": "#e6f4ea", "variable": "#fff1dc", "capture": "#f2f2f2",
         "constant": "#f7f7f7", "output": "#efe8f7", "group": "#fff8d0"}


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape(t) -> str:
    shape = t.shape
    if shape.rank is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def to_dot(graph) -> str:
    lines = [f"digraph {_quote(graph.name)} {{", "  node [shape=box];"]
    for op in graph.get_operations():
        label = f"{op.name}\n{op.type}"
        style = ', style=rounded' if op.type == "Placeholder" else ""
        lines.append(f"  {_quote(op.name)} [label={_quote(label)}{style}];")
    for op in graph.get_operations():
        for t in op.inputs:
            lines.append(f"  {_quote(t.op.name)} -> {_quote(op.name)} "
                         f"[label={_quote(f'{t.dtype.name}{_shape(t)}')}];")
        for c in op.control_inputs:
            lines.append(f"  {_quote(c.name)} -> {_quote(op.name)} [style=dashed];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def picture_to_dot(picture) -> str:
    """The Graphviz text of `picture` and its panels (module doc)."""
    lines = [f"digraph {_quote(picture.title)} {{",
             '  node [shape=box, style="filled", fontname="monospace", fontsize=10];',
             "  compound=true;"]
    for n, panel in enumerate(picture.all_pictures()):
        lines.append(f"  subgraph cluster_{n} {{")
        lines.append(f"    label={_quote(panel.title)};")
        prefix = f"p{n}:"
        for key, node in panel.nodes.items():
            style = "filled,rounded" if node.kind in ("input", "output") else "filled"
            if node.kind == "group":
                style += ",bold"
            lines.append(f"    {_quote(prefix + key)} [label={_quote(chr(10).join(node.lines))}, "
                         f"tooltip={_quote(node.tooltip or key)}, style={_quote(style)}, "
                         f"fillcolor={_quote(_FILL.get(node.kind, _FILL['op']))}];")
        drawn = set()
        for e in panel.edges:
            if (e.src, e.dst) in drawn or e.src == e.dst:
                continue
            drawn.add((e.src, e.dst))
            extra = ", style=dashed" if e.control else ""
            lines.append(f"    {_quote(prefix + e.src)} -> {_quote(prefix + e.dst)} "
                         f"[tooltip={_quote(e.label or 'control')}{extra}];")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def dot_program():
    """The path of Graphviz's `dot`, or None when it is not on PATH."""
    return shutil.which("dot")


def run_dot(text, timeout=30.0) -> str:
    """Graphviz's drawing (`dot -Tsvg`) of dot `text`, as SVG text."""
    # Only drawing runs a program; subprocess would add ~3 ms to every `import eager`.
    import subprocess  # noqa: PLC0415

    dot = dot_program()
    if dot is None:
        raise RuntimeError("Drawing a graph with Graphviz needs its `dot` program, which is not "
                           "on PATH. Install Graphviz (e.g. `apt install graphviz`, `brew install "
                           "graphviz`, `conda install graphviz`), or draw with eager's own "
                           "layout (engine=\"builtin\").")
    done = subprocess.run([dot, "-Tsvg"], input=text, capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"Graphviz `dot` failed (exit {done.returncode}): "
                           f"{done.stderr.strip()[:500]}")
    return done.stdout
