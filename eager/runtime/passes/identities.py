"""Multiplicative identities: `x * 1`, `1 * x` and `x / 1` are `x`.

A backward pass starts from the gradient of the loss with respect to itself, a one; a compiled
backward plan holds it as a constant (`eager.runtime.tape_backward_plans`), and constant folding
turns the first rule's use of it into a constant of ones (the gradient of `reduce_sum(y)` is
ones broadcast to y's shape). The next rule then multiplies by it: `sum(x * x)`'s plan would
compute `ones * x` before adding `x + x`. This pass lets readers read `x` instead.

A `Mul` (either operand) or `RealDiv` (the divisor) node is bypassed, its readers reading the
other operand `x` instead, when

* the constant operand holds ones only and has a real (floating or integer) dtype: for those,
  `x * 1` and `x / 1` equal `x` exactly, signed zeros, infinities and NaNs included (complex
  products are not exact: `(inf + 0j) * (1 + 0j)` has a NaN part);
* the node's output has exactly `x`'s fully known shape and dtype, so no later value changes
  shape;
* its output is not fetched (a fetch would return `x` itself, possibly a fed or constant
  tensor, where a fresh one is expected), no node has a control input on it and it is not a
  target.

The node is left for `prune` to drop once nothing reads it (the default pipeline prunes later).
"""

from __future__ import annotations

import numpy as np

from ...ops import math_ops as _m

__all__ = ["bypass_identities"]


def bypass_identities(program):
    """The program with multiplications and divisions by constant ones bypassed (module doc).
    Returns `program` itself when there are none."""
    constants = program.constants
    if not constants:
        return program
    controlled = set(program.targets)
    for node in program.nodes:
        controlled.update(node.control_inputs)
    fetched = set(program.fetches)
    specs = program.specs
    bypass = {}  # the node's output -> the operand it equals
    for node in program.nodes:
        op_def = node.op_def
        if (op_def is not _m.MUL and op_def is not _m.REALDIV) or node.name in controlled:
            continue
        (out,) = node.outputs
        if out in fetched:
            continue
        a, b = node.inputs
        if _ones(b, constants):
            other = a
        elif op_def is _m.MUL and _ones(a, constants):
            other = b
        else:
            continue
        spec, other_spec = specs.get(out), specs.get(other)
        if (spec is not None and other_spec is not None and spec.dtype is other_spec.dtype
                and spec.shape.is_fully_defined() and other_spec.shape.is_fully_defined()
                and tuple(spec.shape) == tuple(other_spec.shape)):
            bypass[out] = bypass.get(other, other)  # a chain of them reads the first operand
    if not bypass:
        return program
    nodes = [node.replace(inputs=tuple(bypass.get(v, v) for v in node.inputs))
             if any(v in bypass for v in node.inputs) else node for node in program.nodes]
    return program.replace(nodes=nodes)


def _ones(v, constants) -> bool:
    """Whether value `v` is a constant of a real dtype whose every element is one (read once,
    at compile time: on the host, for a constant on another device)."""
    tensor = constants.get(v)
    if tensor is None:
        return False
    dtype = tensor.dtype
    if not (dtype.is_floating or dtype.is_integer):
        return False
    value = tensor._value
    if not isinstance(value, (np.ndarray, np.generic)):
        value = tensor.numpy()
    return bool(np.all(value == 1))
