"""`Program`: what the graph runtime compiles, a graph cut down to one call's feeds and fetches.

A traced `Graph` is the record of what a Python function did; a `Program` is what one kind of
call runs: which values are fed, which are fetched, which operations must run although nothing
fetched needs them (targets), and which values are already known (captured constants). Passes
(`eager.runtime.passes`) rewrite programs into programs, the placer gives each node a device,
and a compiler turns the result into straight-line Python. Keeping this separate from `Graph`
means a graph is never mutated by running it, and one graph can be run many ways (a Session
fetching different tensors, a function call).

Representation, chosen so passes are easy to write and to check:

* Every value is an `int` id. A node's `inputs` and `outputs` are tuples of value ids.
* `nodes` is a tuple of `Node`s in a topological order (data *and* control edges); running them
  in that order is always legal.
* `control_inputs` are node *names* (unique in a program), so a pass that replaces a node can
  redirect control edges by name.
* `feeds` are value ids bound by the caller, in order; `constants` maps value ids to the eager
  tensors they always hold (captured tensors, folded results); `fetches` are the value ids
  returned, in order (a fetch may also be a feed or a constant); `targets` name nodes that must
  run.
* `specs` gives each value's static `TensorSpec`, `value_names` its "op:index" name (messages).

Placeholders that are fed or constant are not nodes of the program; a placeholder left unfed
stays a node, and running it is TensorFlow's "You must feed a value for placeholder" error.
Feeding a value that some other node produces (a Session may feed any tensor, as TensorFlow's)
gives that node's output a fresh id nobody reads: consumers see the fed value, and pruning drops
the producer if nothing else needs it.
"""

from __future__ import annotations

from ..graph.constant import CONST
from ..graph.placeholder import PLACEHOLDER
from ..core.specs import TensorSpec

__all__ = ["Node", "Program"]


class Node:
    """One operation of a program: `op_def` applied to the values `inputs` with `attrs`,
    producing the values `outputs`, after the nodes named in `control_inputs`. `device` is the
    device string requested when the op was traced ("" for none); placement may pick another.
    `source` is where user code created the op (for error messages)."""

    __slots__ = ("name", "op_def", "attrs", "inputs", "outputs", "control_inputs", "device",
                 "source")

    def __init__(self, name, op_def, attrs, inputs, outputs, control_inputs=(), device="",
                 source=(None, 0)):
        self.name = name
        self.op_def = op_def
        self.attrs = attrs
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.control_inputs = tuple(control_inputs)
        self.device = device
        self.source = source  # the user's (code, offset) that traced it: `user_code.line_of`

    @property
    def type(self) -> str:
        return self.op_def.name

    @property
    def is_stateful(self) -> bool:
        """Stateful ops and ops on resources are never folded, merged or pruned away when they
        must run."""
        op_def = self.op_def
        return op_def.stateful or bool(op_def.resource_reads or op_def.resource_writes)

    def replace(self, **changes) -> "Node":
        """A copy with some fields changed (nodes are treated as immutable by passes)."""
        fields = {name: getattr(self, name) for name in Node.__slots__}
        fields.update(changes)
        return Node(**fields)

    def __repr__(self):
        return (f"<Node {self.name} {self.type} in={list(self.inputs)} out={list(self.outputs)}"
                + (f" ctrl={list(self.control_inputs)}" if self.control_inputs else "") + ">")


class Program:
    """See the module doc. Immutable by convention: passes return new programs
    (`Program.replace`)."""

    __slots__ = ("nodes", "feeds", "fetches", "targets", "constants", "specs", "value_names",
                 "name", "_next_value")

    def __init__(self, nodes, feeds, fetches, targets=(), constants=None, specs=None,
                 value_names=None, name="program", next_value=None):
        self.nodes = tuple(nodes)
        self.feeds = tuple(feeds)
        self.fetches = tuple(fetches)
        self.targets = tuple(targets)
        self.constants = dict(constants or {})
        self.specs = dict(specs or {})
        self.value_names = dict(value_names or {})
        self.name = name
        if next_value is None:
            used = [v for n in self.nodes for v in n.outputs]
            used += list(self.feeds) + list(self.constants)
            next_value = max(used, default=-1) + 1
        self._next_value = next_value

    # -- building ------------------------------------------------------------------------------
    @classmethod
    def from_graph(cls, graph, feeds=None, fetches=None, targets=None, constants=None):
        """The program running `graph` with `feeds` (symbolic tensors of the graph, default:
        `graph.inputs` that `constants` does not cover) returning `fetches` (default:
        `graph.outputs`) and running the operations `targets` (default: the graph's
        `control_outputs`). `constants` maps symbolic tensors (usually capture placeholders)
        to eager tensors they always hold."""
        value_of = {}  # id(SymbolicTensor) -> value id
        specs, names = {}, {}
        for op in graph.get_operations():
            for t in op.outputs:
                v = value_of[id(t)] = len(value_of)
                specs[v] = TensorSpec(t.shape, t.dtype)
                names[v] = t.name
        next_value = len(value_of)

        def vid(t):
            try:
                return value_of[id(t)]
            except KeyError:
                raise ValueError(f"Tensor {t!r} is not an element of graph {graph.name!r}.") \
                    from None

        const_values = {vid(t): value for t, value in (constants or {}).items()}
        if feeds is None:
            feeds = [t for t in graph.inputs if value_of[id(t)] not in const_values]
        feed_ids = tuple(vid(t) for t in feeds)
        if len(set(feed_ids)) != len(feed_ids):
            raise ValueError("A tensor is fed twice.")
        for op in graph.get_operations():  # the trace's own constants hold their values
            if op.op_def is CONST and value_of[id(op.outputs[0])] not in feed_ids:
                const_values.setdefault(value_of[id(op.outputs[0])], op.attrs["value"].tensor)
        replaced = set(feed_ids) | set(const_values)
        nodes = []
        for op in graph.get_operations():
            if ((op.op_def is PLACEHOLDER or op.op_def is CONST)
                    and value_of[id(op.outputs[0])] in replaced):
                continue  # fed or constant: nothing to run
            outputs = []
            for t in op.outputs:
                v = value_of[id(t)]
                if v in replaced:  # fed or known: the producer's own output goes nowhere
                    v = next_value
                    next_value += 1
                    specs[v] = TensorSpec(t.shape, t.dtype)
                    names[v] = t.name
                outputs.append(v)
            nodes.append(Node(op.name, op.op_def, op.attrs, (value_of[id(t)] for t in op.inputs),
                              outputs, (c.name for c in op.control_inputs), op.device,
                              op._source))
        fetch_ids = tuple(vid(t) for t in (graph.outputs if fetches is None else fetches))
        if targets is None:
            targets = graph.control_outputs
        target_names = tuple(op.name for op in targets)
        return cls(nodes, feed_ids, fetch_ids, target_names, const_values, specs, names,
                   graph.name, next_value)

    def new_value(self, spec, name) -> int:
        """A fresh value id with `spec` (for passes that add nodes); recorded in this program's
        tables, so build the replacement program with `replace` afterwards."""
        v = self._next_value
        self._next_value += 1
        self.specs[v] = spec
        self.value_names[v] = name
        return v

    def replace(self, **changes) -> "Program":
        """A new program with some fields changed; the value tables are shared copies."""
        fields = dict(nodes=self.nodes, feeds=self.feeds, fetches=self.fetches,
                      targets=self.targets, constants=self.constants, specs=self.specs,
                      value_names=self.value_names, name=self.name,
                      next_value=self._next_value)
        fields.update(changes)
        return Program(**fields)

    # -- reading -------------------------------------------------------------------------------
    def producers(self) -> dict:
        """value id -> (node, output index) for every value a node produces."""
        return {v: (node, i) for node in self.nodes for i, v in enumerate(node.outputs)}

    def consumers(self) -> dict:
        """value id -> list of nodes reading it (a node reading a value twice appears twice)."""
        found = {}
        for node in self.nodes:
            for v in node.inputs:
                found.setdefault(v, []).append(node)
        return found

    def node(self, name) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"No node named {name!r} in program {self.name!r}.")

    def describe_value(self, v) -> str:
        spec = self.specs.get(v)
        text = self.value_names.get(v, f"value {v}")
        if spec is not None:
            text += f" ({spec.dtype.name}{_shape_text(spec.shape)})"
        return text

    def validate(self) -> None:
        """Raises ValueError unless the program is well formed: every input and fetch is fed,
        constant or produced earlier; control inputs and targets name earlier / existing nodes;
        no value is produced twice. Passes' tests call it on what they return."""
        available = set(self.feeds) | set(self.constants)
        seen = set()
        produced = set()
        for node in self.nodes:
            if node.name in seen:
                raise ValueError(f"Two nodes are named {node.name!r}.")
            for v in node.inputs:
                if v not in available:
                    raise ValueError(f"Node {node.name!r} reads {self.describe_value(v)}, which "
                                     "is neither fed, constant nor produced before it.")
            for c in node.control_inputs:
                if c not in seen:
                    raise ValueError(f"Node {node.name!r} has control input {c!r}, which is "
                                     "not an earlier node.")
            for v in node.outputs:
                if v in produced or v in self.feeds or v in self.constants:
                    raise ValueError(f"{self.describe_value(v)} is produced twice.")
                produced.add(v)
            available.update(node.outputs)
            seen.add(node.name)
        for v in self.fetches:
            if v not in available:
                raise ValueError(f"Fetch {self.describe_value(v)} is never computed.")
        for t in self.targets:
            if t not in seen:
                raise ValueError(f"Target {t!r} is not a node of the program.")

    def unfed_placeholders(self) -> list:
        """Placeholder nodes still in the program: running it would need their values."""
        return [n for n in self.nodes if n.op_def is PLACEHOLDER]

    def __repr__(self):
        return (f"<Program {self.name!r}: {len(self.nodes)} nodes, {len(self.feeds)} feeds, "
                f"{len(self.fetches)} fetches, {len(self.targets)} targets, "
                f"{len(self.constants)} constants>")


def _shape_text(shape) -> str:
    if shape.rank is None:
        return "[?]"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"
