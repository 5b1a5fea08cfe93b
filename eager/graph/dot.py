"""`to_dot(graph)`: Graphviz text of a graph, for looking at what a trace produced.

One node per operation (its name and type), a solid edge per data edge labelled with the tensor's
shape, a dashed edge per control edge. Plain text, no Graphviz needed to make it.
"""

from __future__ import annotations

__all__ = ["to_dot"]


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
