"""Overlapping all-reduces with the computation before them: each cross-process all-reduce
split into a start, as early as its inputs allow, and a wait, where the all-reduce was.

A traced training step computes every gradient, then all-reduces the gradient buckets, then
updates the variables: as traced, the exchange of the first bucket waits for the last gradient
of the backward pass although its own gradients were ready long before. This pass rewrites
each `CollectiveReduceN` (and `CollectiveReduceV2`) whose group has an asynchronous engine
(`collective_ops.overlaps`: a host engine with a communication thread, more than one process)
into

    h = CollectiveReduceNStart(inputs)     # just after the last of its inputs is computed
    ...                                    # the rest of the backward pass, meanwhile
    outputs = CollectiveReduceNDone(h)     # where the all-reduce was, under its name

(XLA's all-reduce-start / all-reduce-done, scheduled as its latency-hiding scheduler would for
one stream). Buckets are planned in reverse variable order (`eager.distribute.buckets`), so the
first bucket holds the last layers' gradients, which the backward pass computes first.

Order: processes must start their collectives in the same order. A start goes after its inputs'
producers and its control inputs, where a control input naming another split collective (the
chain of automatic control dependencies) becomes that collective's start: starts keep the
chain's order, and the engine's thread runs them in that order (FIFO) on every worker, since
every worker compiles the same program with the same pass. Everything else that waited for the
collective (a control edge, a target) waits for its `Done`, which keeps the collective's name.

Values: the start reads its inputs when it runs; nothing after it in the program writes them
(a value read by the start is never donated to a later node while the communication thread
holds it: donation checks the array's reference count). The wait returns new arrays.
"""

from __future__ import annotations

from ...base import dtypes as _dt
from ...core.specs import TensorSpec
from ...ops import collective_ops as _collective_ops
from ..program import Node

__all__ = ["overlap_collectives"]

_SPLIT = (_collective_ops.COLLECTIVE_REDUCE_N, _collective_ops.COLLECTIVE_REDUCE)


def _splits(node) -> bool:
    if node.op_def not in _SPLIT:
        return False
    attrs = node.attrs
    return _collective_ops.overlaps(attrs["group_key"], attrs["group_size"])


def overlap_collectives(program):
    """`program` with its overlappable all-reduces split and their starts moved early (see the
    module doc); `program` itself when it has none."""
    nodes = program.nodes
    split = [node for node in nodes if _splits(node)]
    if not split:
        return program
    names = {node.name for node in nodes}
    start_name = {}
    for node in split:
        name = f"{node.name}/start"
        while name in names:
            name += "_"
        names.add(name)
        start_name[node.name] = name
    position = {}  # node name -> sort key: (index, 0) originals, (index, 1, k) starts
    producer_key = {}  # value id -> the sort key of its producer
    for i, node in enumerate(nodes):
        position[node.name] = (i, 0)
        for v in node.outputs:
            producer_key[v] = (i, 0)
    placed = []  # (key, node)
    for k, node in enumerate(split):
        handle = program.new_value(TensorSpec((), _dt.variant), f"{node.name}/start:0")
        controls = tuple(start_name.get(c, c) for c in node.control_inputs)
        after = [producer_key[v] for v in node.inputs if v in producer_key]
        after += [position[c] for c in controls]
        anchor = max(after, default=(-1, 0))
        key = (anchor[0], 1, k)
        start = Node(start_name[node.name], _collective_ops.COLLECTIVE_REDUCE_N_START,
                     _start_attrs(node.attrs), node.inputs, (handle,), controls, node.device,
                     node.source)
        position[start.name] = key
        placed.append((key, start))
        specs = [program.specs[v] for v in node.outputs]
        done = Node(node.name, _collective_ops.COLLECTIVE_REDUCE_N_DONE,
                    _collective_ops.done_attrs(specs, node.attrs), (handle,), node.outputs, (),
                    node.device, node.source)
        placed.append((position[node.name], done))
    replaced = {node.name for node in split}
    placed += [((i, 0), node) for i, node in enumerate(nodes) if node.name not in replaced]
    placed.sort(key=lambda item: item[0])
    return program.replace(nodes=tuple(node for _, node in placed))


def _start_attrs(attrs) -> dict:
    return {name: attrs[name] for name in ("group_size", "group_key", "instance_key",
                                           "merge_op", "final_op")}
