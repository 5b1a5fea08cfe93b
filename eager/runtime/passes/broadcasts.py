"""Broadcast folding: a `BroadcastTo` whose every reader broadcasts by itself is left out.

The gradient of a reduction broadcasts the upstream gradient to the input's shape, and the
next rule usually multiplies that by a tensor of the input's shape (`sum(x * x)`: dy broadcast
to x's shape, times x). The multiply would broadcast dy itself, to the same values: the
explicit `BroadcastTo` is an allocation and a copy that change nothing. In a tiny gradient's
compiled plan it is one of the two kernels left.

A `BroadcastTo` node is removed, its readers reading its input instead, when

* its output is not fetched, no node has a control input on it and it is not a target;
* it does not change the dtype (it never does; checked anyway) and its output shape is fully
  known;
* every reader is an op of `BROADCASTING_BINARY_OPS` whose other input is another value with
  exactly the broadcast's (fully known) shape. The reader's output then has that shape either
  way, so no later value changes shape, and each of its elements is computed from the same
  two input elements: results are bit-identical.

The node itself is left for `prune` to drop once nothing reads it (the default pipeline prunes
right after this pass).
"""

from __future__ import annotations

from ...ops import array_ops as _array
from ...ops import math_ops as _m

__all__ = ["fold_broadcasts", "BROADCASTING_BINARY_OPS"]

#: Binary ops whose kernels broadcast their operands elementwise (numpy's rules), computing
#: each output element from one element of each operand.
BROADCASTING_BINARY_OPS = frozenset({
    _m.ADD, _m.SUB, _m.MUL, _m.REALDIV, _m.MAXIMUM, _m.MINIMUM, _m.POW,
})


def fold_broadcasts(program):
    """The program with foldable `BroadcastTo` nodes bypassed (module doc). Returns `program`
    itself when none is."""
    readers = {}
    controlled = set(program.targets)
    for node in program.nodes:
        for v in node.inputs:
            readers.setdefault(v, []).append(node)
        controlled.update(node.control_inputs)
    fetched = set(program.fetches)
    specs = program.specs
    bypass = {}  # BroadcastTo output -> its input
    for node in program.nodes:
        if (node.op_def is not _array.BROADCAST_TO or node.name in controlled
                or len(node.inputs) != 1):  # a shape read at run time: nothing is proved
            continue
        (out,), (source,) = node.outputs, node.inputs
        spec, source_spec = specs.get(out), specs.get(source)
        if (out in fetched or spec is None or source_spec is None
                or spec.dtype is not source_spec.dtype or not spec.shape.is_fully_defined()):
            continue
        shape = tuple(spec.shape)
        if all(_broadcasts_itself(reader, out, shape, specs) for reader in readers.get(out, ())):
            bypass[out] = source
    if not bypass:
        return program
    nodes = [node.replace(inputs=tuple(bypass.get(v, v) for v in node.inputs))
             if any(v in bypass for v in node.inputs) else node for node in program.nodes]
    return program.replace(nodes=nodes)


def _broadcasts_itself(reader, value, shape, specs) -> bool:
    """Whether `reader` reads `value` as one operand of a broadcasting binary op whose other
    operand is a different value of exactly `shape`."""
    if reader.op_def not in BROADCASTING_BINARY_OPS or len(reader.inputs) != 2:
        return False
    a, b = reader.inputs
    other = b if a == value else a
    if other == value:  # both operands: the output would take the small shape
        return False
    other_spec = specs.get(other)
    return (other_spec is not None and other_spec.shape.is_fully_defined()
            and tuple(other_spec.shape) == shape)
