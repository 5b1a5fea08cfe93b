"""`Picture`: what a drawing of a graph shows, before any layout: labelled boxes, edges, panels.

A picture is what both drawing paths (eager's own layout, `svg_render`, and Graphviz, `dot`)
draw, so they show the same thing. `graph_picture(graph)` decides it for a traced graph:

* the op type once: a node named after its type (`Mul`, `s/Mul_1`) shows its name alone,
  another shows its name and, below, its type;
* variables by their name (the resource handle a capture stands for carries it), other
  captures as "captured" with their type, constants with their value when it is one number;
* only the live operations: those the outputs and the must-run operations need (what a call
  runs, after pruning), plus the arguments; a graph with neither outputs nor must-run
  operations (one built by hand for a Session) is drawn whole;
* a `return` box the outputs flow into;
* control flow (`If`, `Case`, `While`): the op is one box; *expanded*, its branch graphs are
  drawn as panels beside the graph, titled by the op and the branch. `expand=None` expands
  everything unless the picture would hold more than `LARGE_GRAPH` boxes; `True` / `False`
  expand all / none; a collection of op names expands those.

The runtime builds pictures of optimised programs the same way (`eager.runtime.program_view`),
with fused nodes as the collapsible boxes.
"""

from __future__ import annotations

from .constant import CONST
from .placeholder import PLACEHOLDER

__all__ = ["Picture", "PictureNode", "PictureEdge", "graph_picture", "op_lines", "type_text",
           "constant_lines", "capture_lines", "wants_expanded", "LARGE_GRAPH", "RETURN"]

#: The key of the box the outputs flow into (no op name has parentheses).
RETURN = "(return)"

#: Above this many boxes, `expand=None` draws control flow and fused clusters collapsed.
LARGE_GRAPH = 60


class PictureNode:
    """One box: `lines` of text, a `kind` (op, input, variable, capture, constant, output,
    group: a collapsed box that `expand=` opens), and a hover `tooltip`."""

    __slots__ = ("key", "lines", "kind", "tooltip")

    def __init__(self, key, lines, kind="op", tooltip=""):
        self.key, self.lines, self.kind, self.tooltip = key, tuple(lines), kind, tooltip


class PictureEdge:
    """A data edge (`label`: the value's dtype and shape) or a control edge (drawn dashed)."""

    __slots__ = ("src", "dst", "label", "control")

    def __init__(self, src, dst, label="", control=False):
        self.src, self.dst, self.label, self.control = src, dst, label, control


class Picture:
    """`nodes` (key -> PictureNode, in program order), `edges`, and `panels`: pictures of
    expanded sub-graphs, drawn beside this one."""

    __slots__ = ("title", "nodes", "edges", "panels")

    def __init__(self, title):
        self.title = title
        self.nodes = {}
        self.edges = []
        self.panels = []

    def add(self, key, lines, kind="op", tooltip="") -> None:
        self.nodes[key] = PictureNode(key, lines, kind, tooltip)

    def connect(self, src, dst, label="", control=False) -> None:
        self.edges.append(PictureEdge(src, dst, label, control))

    def all_pictures(self) -> list:
        """This picture and every panel below it, depth first (the drawing order)."""
        found = [self]
        for p in self.panels:
            found += p.all_pictures()
        return found

    def __len__(self):
        return sum(len(p.nodes) for p in self.all_pictures())


# -- labels, shared with the runtime's program pictures ------------------------------------------
def type_text(dtype, shape) -> str:
    if shape.rank is None:
        return f"{dtype.name}[?]"
    return f"{dtype.name}[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def op_lines(name, op_type) -> tuple:
    """The op type once: the name alone when it already says the type, else name and type."""
    last = name.rsplit("/", 1)[-1]
    base, _, suffix = last.rpartition("_")
    if not (base and suffix.isdigit()):
        base = last
    if base.lower() == op_type.lower():
        return (name,)
    return (name, op_type)


def constant_lines(tensor) -> tuple:
    """A constant's box: its value when it is one number, else its type."""
    described = type_text(tensor.dtype, tensor.shape)
    if tensor.shape.rank is not None and tensor.shape.num_elements() == 1:
        try:
            value = tensor._numpy_host().reshape(()).item()
        except Exception:  # noqa: BLE001 - a value that cannot be shown: its type instead
            return ("Const", described)
        text = repr(value)
        if isinstance(value, float) and len(text) > 10:
            text = f"{value:.6g}"
        return (f"Const {text[:24]}", described)
    return ("Const", described)


def capture_lines(value) -> tuple:
    """(lines, kind) of a captured eager tensor: a variable's handle by the variable's name."""
    if hasattr(value, "graph"):  # a branch's capture of its enclosing graph's tensor
        return (f"outer {value.name}", type_text(value.dtype, value.shape)), "capture"
    handle = getattr(value, "_value", None)
    if value.dtype.name == "resource" and getattr(handle, "kind", None) == "Variable":
        return (handle.name, "variable " + type_text(handle.var_dtype, handle.var_shape)), \
            "variable"
    return ("captured", type_text(value.dtype, value.shape)), "capture"


def wants_expanded(expand, name, auto) -> bool:
    """Whether the collapsible box `name` is drawn open, under `expand` (module doc)."""
    if expand is None:
        return auto
    if expand is True or expand is False:
        return expand
    return name in expand


# -- a traced graph ------------------------------------------------------------------------------
def graph_picture(graph, expand=None) -> Picture:
    """The picture of `graph` (module doc)."""
    if expand is not None and not isinstance(expand, bool):
        expand = frozenset([expand] if isinstance(expand, str) else expand)
    auto = expand is not None or _count_boxes(graph) <= LARGE_GRAPH
    return _picture(graph, graph.name, expand, auto)


def _live(graph):
    """The operations the outputs and must-run operations need, with the arguments (module
    doc); None when every operation is shown."""
    roots = [t.op for t in graph.outputs] + list(graph.control_outputs)
    if not roots:
        return None
    live, stack = set(), list(roots)
    while stack:
        op = stack.pop()
        if id(op) in live:
            continue
        live.add(id(op))
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    for t in graph.inputs:
        if graph.captured_value(t) is None:
            live.add(id(t.op))
    return live


def _outermost(graph, placeholder):
    """The eager tensor a capture placeholder stands for, through enclosing graphs (a branch
    captures its outer graph's placeholder, which captures the eager value); None for an
    argument."""
    value = graph.captured_value(placeholder)
    while value is not None and hasattr(value, "graph") and value.op.op_def is PLACEHOLDER:
        outer = value.graph.captured_value(value)
        if outer is None:
            break
        value = outer
    return value


def _subgraphs(op) -> list:
    """(title, graph) of each sub-graph an op's attributes hold (control flow's branches)."""
    found = []
    for value in op.attrs.values():
        for slot in getattr(type(value), "__slots__", ()):
            held = getattr(value, slot, None)
            if _is_graph(held):
                found.append((slot, held))
            elif isinstance(held, tuple) and held and all(_is_graph(g) for g in held):
                names = ("else", "then") if getattr(value, "is_if", False) and len(held) == 2 \
                    else [f"{slot}[{i}]" for i in range(len(held))]
                found.extend(zip(names, held))
    return found


def _is_graph(value) -> bool:
    # Graph's module imports this one: a graph is recognised by what it is, not its class.
    return getattr(value, "is_graph", False) is True and hasattr(value, "get_operations")


def _count_boxes(graph) -> int:
    live = _live(graph)
    total = 0
    for op in graph.get_operations():
        if live is None or id(op) in live:
            total += 1
            for _, sub in _subgraphs(op):
                total += _count_boxes(sub)
    return total


def _picture(graph, title, expand, auto) -> Picture:
    picture = Picture(title)
    live = _live(graph)
    for op in graph.get_operations():
        if live is not None and id(op) not in live:
            continue
        key = op.name
        if op.op_def is PLACEHOLDER:
            value = _outermost(graph, op.outputs[0])
            if value is None:
                picture.add(key, (op.name, type_text(op.outputs[0].dtype, op.outputs[0].shape)),
                            "input", "argument")
            else:
                lines, kind = capture_lines(value)
                picture.add(key, lines, kind, f"captured as {op.name}")
        elif op.op_def is CONST:
            picture.add(key, constant_lines(op.attrs["value"].tensor), "constant", op.name)
        else:
            subs = _subgraphs(op)
            lines = op_lines(op.name, op.type)
            tooltip = f"{op.type} {op.name}" + (f" on {op.device}" if op.device else "")
            if subs and not wants_expanded(expand, op.name, auto):
                counts = ", ".join(f"{name}: {sub.operations_count}" for name, sub in subs)
                picture.add(key, (*lines, f"[+] {counts} ops"), "group",
                            f"{tooltip}; collapsed: draw(expand=[{op.name!r}]) opens it")
            else:
                picture.add(key, lines, "op", tooltip)
                for name, sub in subs:
                    picture.panels.append(_picture(sub, f"{op.name} · {name}", expand, auto))
        for t in op.inputs:
            picture.connect(t.op.name, key, type_text(t.dtype, t.shape))
        for c in op.control_inputs:
            picture.connect(c.name, key, control=True)
    if graph.outputs:
        picture.add(RETURN, ("return",), "output", "the function's outputs")
        for t in graph.outputs:
            picture.connect(t.op.name, RETURN, type_text(t.dtype, t.shape))
    return picture
