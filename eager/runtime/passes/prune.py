"""Pruning: a program cut down to the nodes its fetches and targets need.

TensorFlow's DirectSession prunes the graph to what one call's fetches and targets need before
building an executor (`subgraph::RewriteGraphForExecution`); we do the same on a `Program`. A node
is *needed* when it produces a fetched value, is named in `targets`, or is a data or control
input of a needed node. Everything else goes, with the constants nobody reads any more.

Fed-over values need no producer: `Program.from_graph` gives a fed value's producer a fresh
output id nobody reads, so the walk below never reaches it through that value. Placeholders are
nodes only when unfed; one that is needed stays, so running the program raises TensorFlow's
"You must feed a value for placeholder" error, and one that is not needed goes silently (as in a
Session that fetches something not depending on it).
"""

from __future__ import annotations

__all__ = ["prune"]


def prune(program):
    """The program keeping only the nodes needed by `program.fetches` and `program.targets`
    (transitively through data and control inputs), in their original order, and only the
    constants those nodes or the fetches read. Returns `program` itself when nothing goes."""
    by_name = {node.name: node for node in program.nodes}
    producer = {v: node for node in program.nodes for v in node.outputs}
    pending = [producer[v] for v in program.fetches if v in producer]
    for name in program.targets:
        try:
            pending.append(by_name[name])
        except KeyError:
            raise ValueError(f"Target {name!r} is not a node of program {program.name!r}; "
                             "it cannot be kept.") from None
    needed = set()
    while pending:
        node = pending.pop()
        if node.name in needed:
            continue
        needed.add(node.name)
        for v in node.inputs:
            p = producer.get(v)
            if p is not None and p.name not in needed:
                pending.append(p)
        for name in node.control_inputs:
            if name not in needed:
                pending.append(by_name[name])
    nodes = tuple(node for node in program.nodes if node.name in needed)
    read = set(program.fetches)
    for node in nodes:
        read.update(node.inputs)
    constants = {v: t for v, t in program.constants.items() if v in read}
    if len(nodes) == len(program.nodes) and len(constants) == len(program.constants):
        return program
    return program.replace(nodes=nodes, constants=constants)
