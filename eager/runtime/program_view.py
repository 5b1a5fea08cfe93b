"""`ProgramView`: the optimised program a function call runs, to read and to look at.

What `fn.experimental_get_program(*args)` returns (≈ JAX's `make_jaxpr`, torch.fx's
`print_readable`): the program after the passes (pruned, folded, merged, fused), exactly the
one the call compiles, so what it shows is what runs (`nodes` is that program's node list).

* `str(view)` / `print_readable()`: one line per node, as code: its outputs with dtypes and
  shapes, the op and its inputs by name, small attributes, the device it asked for (or was
  placed on, for a program spanning devices), and the user's line that made it; a header with
  the feeds, the constants (variables by name) and the must-run nodes, and the `return`;
* `source`: the generated Python that runs (`eager.runtime.compiler`; one module per device
  for a program spanning devices);
* `draw(expand=...)`, `to_svg(...)`, and the SVG a notebook shows: the program's picture,
  fused nodes as boxes that `expand=True` (or their names) opens into their members.
"""

from __future__ import annotations

import os

from ..base import user_code as _user_code
from ..graph.drawing import Drawing, svg
from ..graph.picture import (LARGE_GRAPH, RETURN, Picture, capture_lines, constant_lines,
                             op_lines, type_text, wants_expanded)
from .compiler import compile_program
from .executable import current_device

__all__ = ["ProgramView"]

_SIMPLE_ATTRS = (bool, int, float, str, type(None))


class ProgramView:
    """See the module doc. `program` is the `eager.runtime.Program` that runs."""

    __slots__ = ("program", "_executable", "_source", "_names")

    def __init__(self, executable):
        """`executable`: what a call runs (`executable.build`): a compiled program, or one
        spanning devices, shown placed for the caller's current device."""
        self._executable = executable
        if hasattr(executable, "partitioned_for"):
            self.program = executable.partitioned_for(current_device()).program
        else:
            self.program = executable.program
        self._source = None
        self._names = _value_names(self.program)

    @property
    def nodes(self) -> tuple:
        return self.program.nodes

    @property
    def source(self) -> str:
        """The generated Python that runs the program."""
        if self._source is None:
            source = getattr(self._executable, "source", None)
            if source is None:  # spans devices: one compiled module per partition
                partitioned = self._executable.partitioned_for(current_device())
                source = "".join(
                    f"# partition on {device}\n"
                    + compile_program(part, placed=True).source + "\n"
                    for device, part in zip(partitioned.devices, partitioned.partitions))
            self._source = source
        return self._source

    # -- text ----------------------------------------------------------------------------------
    def __str__(self):
        p = self.program
        name = self._names
        feeds = ", ".join(f"{name[v]}: {_spec_text(p, v)}" for v in p.feeds)
        results = ", ".join(_spec_text(p, v) for v in p.fetches)
        lines = [f"def {_identifier(p.name)}({feeds}) -> ({results}):"]
        used = {v for n in p.nodes for v in n.inputs} | set(p.fetches)
        for v, tensor in p.constants.items():
            if v in used:
                lines.append(f"    {name[v]}: {_spec_text(p, v)} = {_constant_text(tensor)}")
        for node in p.nodes:
            lines.append("    " + self._node_line(node))
        if p.targets:
            lines.append(f"    # must run: {', '.join(p.targets)}")
        lines.append(f"    return {', '.join(name[v] for v in p.fetches)}")
        return "\n".join(lines) + "\n"

    def _node_line(self, node) -> str:
        p, name = self.program, self._names
        outs = ", ".join(f"{name[v]}: {_spec_text(p, v)}" for v in node.outputs) or "_"
        args = [name[v] for v in node.inputs]
        for key, value in sorted((node.attrs or {}).items()):
            if isinstance(value, _SIMPLE_ATTRS) and len(repr(value)) <= 40:
                args.append(f"{key}={value!r}")
        line = f"{outs} = {node.type}({', '.join(args)})"
        notes = []
        members = getattr(node.op_def.kernel, "members", None)
        if members:
            notes.append(f"{len(members)} fused ops")
        if node.device:
            notes.append(f"on {node.device}")
        if node.control_inputs:
            notes.append(f"after {', '.join(node.control_inputs)}")
        file, lineno = _user_code.line_of(node.source)
        if lineno:
            notes.append(f"{os.path.basename(file)}:{lineno}")
        return line + (f"  # {'; '.join(notes)}" if notes else "")

    def print_readable(self, file=None) -> str:
        """Prints the program as readable code (`str(view)`) and returns that text."""
        text = str(self)
        print(text, end="", file=file)
        return text

    def __repr__(self):
        p = self.program
        return (f"<eager.runtime.ProgramView {p.name!r}: {len(p.nodes)} nodes, "
                f"{len(p.feeds)} feeds, {len(p.fetches)} fetches>")

    # -- pictures ------------------------------------------------------------------------------
    def picture(self, expand=None) -> Picture:
        """What a drawing shows: feeds, the constants used, every node (fused nodes collapsed
        unless `expand` opens them: None opens all unless the picture is large, True, False,
        or node names), and the return."""
        if expand is not None and not isinstance(expand, bool):
            expand = frozenset([expand] if isinstance(expand, str) else expand)
        p, name = self.program, self._names
        boxes = len(p.nodes) + sum(len(getattr(n.op_def.kernel, "members", ()) or ())
                                   for n in p.nodes)
        auto = boxes <= LARGE_GRAPH
        picture = Picture(p.name)
        source = {}  # value id -> key of the box producing it
        for v in p.feeds:
            key = source[v] = f"feed {name[v]}"
            picture.add(key, (name[v], _spec_text(p, v)), "input", "fed by the call")
        used = {v for n in p.nodes for v in n.inputs} | set(p.fetches)
        for v, tensor in p.constants.items():
            if v in used:
                key = source[v] = f"constant {name[v]}"
                if tensor.dtype.name == "resource":
                    lines, kind = capture_lines(tensor)
                else:
                    lines, kind = constant_lines(tensor), "constant"
                picture.add(key, lines, kind, name[v])
        for node in p.nodes:
            members = getattr(node.op_def.kernel, "members", None)
            if members and wants_expanded(expand, node.name, auto):
                self._add_members(picture, node, members, source)
                continue
            if members:
                lines = ("Fused", f"[+] {len(members)} ops: "
                         + ",".join(t for _, t, _ in members[:3])
                         + (",…" if len(members) > 3 else ""))
                kind = "group"
                tooltip = f"{node.type}; collapsed: draw(expand=[{node.name!r}]) opens it"
            else:
                lines, kind = op_lines(node.name, node.type), "op"
                tooltip = f"{node.type} {node.name}" + (f" on {node.device}" if node.device
                                                       else "")
            picture.add(node.name, lines, kind, tooltip)
            for v in node.inputs:
                picture.connect(source[v], node.name, _spec_text(p, v))
            for c in node.control_inputs:
                picture.connect(c, node.name, control=True)
            for v in node.outputs:
                source[v] = node.name
        picture.add(RETURN, ("return",), "output", "the fetched values")
        for v in p.fetches:
            picture.connect(source[v], RETURN, _spec_text(p, v))
        return picture

    def _add_members(self, picture, node, members, source) -> None:
        """A fused node opened: its members as boxes, wired as the fused kernel runs them; the
        last member is the node itself (it has the node's name and output)."""
        p = self.program
        keys = []
        for i, (member, op_type, args) in enumerate(members):
            key = node.name if i == len(members) - 1 else member
            picture.add(key, op_lines(member, op_type), "op", f"{op_type} {member} (fused into "
                        f"{node.name})")
            for kind, j in args:
                if kind == "a":
                    v = node.inputs[j]
                    picture.connect(source[v], key, _spec_text(p, v))
                else:
                    picture.connect(keys[j], key)
            keys.append(key)
        for c in node.control_inputs:
            picture.connect(c, keys[0], control=True)
        for v in node.outputs:
            source[v] = node.name

    def to_svg(self, engine="auto", expand=None) -> str:
        """The picture as SVG text (engines as `eager.graph.Graph.to_svg`)."""
        return svg(self.picture(expand), engine)

    def draw(self, expand=None, engine="auto") -> Drawing:
        """The picture drawn for a notebook."""
        return Drawing(self.picture(expand), engine, repr(self))

    def _repr_svg_(self):
        return self.draw().svg

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.draw().svg, "text/plain": str(self)}


def _value_names(program) -> dict:
    """value id -> the name a listing uses: the producing op's name for its first output,
    "name:i" for others (TensorFlow's tensor names, shortened)."""
    names = {}
    taken = set()
    for v, full in program.value_names.items():
        op, _, index = full.rpartition(":")
        text = op if index == "0" and op else full
        if text in taken:
            text = f"{text}#{v}"
        taken.add(text)
        names[v] = text
    for v, tensor in program.constants.items():  # a variable's handle by the variable's name
        if tensor.dtype.name == "resource":
            lines, kind = capture_lines(tensor)
            if kind == "variable" and lines[0] not in taken:
                names[v] = lines[0]
                taken.add(lines[0])
    for v in (*program.feeds, *program.constants, *program.fetches):
        names.setdefault(v, f"v{v}")
    for node in program.nodes:
        for v in (*node.inputs, *node.outputs):
            names.setdefault(v, f"v{v}")
    return names


def _spec_text(program, v) -> str:
    spec = program.specs.get(v)
    return "?" if spec is None else type_text(spec.dtype, spec.shape)


def _constant_text(tensor) -> str:
    if tensor.dtype.name == "resource":
        lines, kind = capture_lines(tensor)
        return f"{kind} {lines[0]!r}" if kind == "variable" else "resource"
    first = constant_lines(tensor)[0]
    if first.startswith("Const "):
        return first[len("Const "):]
    return f"<{type_text(tensor.dtype, tensor.shape)}>"


def _identifier(name) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "program"
