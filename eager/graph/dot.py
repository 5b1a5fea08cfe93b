"""`to_dot(graph)`: Graphviz text of a graph, for looking at what a trace produced.

One node per operation (its name and type), a solid edge per data edge labelled with the tensor's
shape, a dashed edge per control edge. Plain text, no Graphviz needed to make it.

`to_svg(graph)` renders that text with Graphviz's `dot` program, which Python cannot install:
without it on PATH, `to_svg` raises a RuntimeError saying so, and a notebook's `_repr_svg_`
warns once and returns None (the notebook then shows the graph's text repr instead of failing
the cell).
"""

from __future__ import annotations

import shutil
import warnings

__all__ = ["to_dot", "to_svg", "repr_svg"]

_warned_missing_dot = False


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


def to_svg(graph, timeout=30.0) -> str:
    """The graph drawn by Graphviz (`dot -Tsvg`), as SVG text."""
    # Only drawing runs a program; subprocess would add ~3 ms to every `import eager`.
    import subprocess  # noqa: PLC0415

    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError("Drawing a graph needs Graphviz's `dot` program, which is not on "
                           "PATH. Install Graphviz (e.g. `apt install graphviz`, `brew install "
                           "graphviz`, `conda install graphviz`), or use graph.to_dot() for "
                           "the text.")
    done = subprocess.run([dot, "-Tsvg"], input=to_dot(graph), capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"Graphviz `dot` failed (exit {done.returncode}): "
                           f"{done.stderr.strip()[:500]}")
    return done.stdout


def repr_svg(graph):
    """For notebooks: the SVG, or None (with one warning) when Graphviz is missing."""
    global _warned_missing_dot
    try:
        return to_svg(graph)
    except RuntimeError as exc:
        if not _warned_missing_dot:
            _warned_missing_dot = True
            warnings.warn(str(exc), RuntimeWarning, stacklevel=2)
        return None
