"""Scaled variable updates: `v.assign_sub(lr * g)` as one `ResourceApplyGradientDescent`.

TensorFlow's guides write a custom training loop's update as `v.assign_sub(learning_rate * g)`:
a `Mul` making the scaled gradient, then an `AssignSubVariableOp` subtracting it. On a GPU
that is two launches per variable and a temporary the size of the variable; the gradient
descent op does the same arithmetic, `var - (alpha * delta)`, in one (`cupy_kernels.UPDATES`),
and on the CPU it scales into a reused scratch buffer. The results are the same bits: the
product rounds once, then the difference (the CUDA kernels are compiled without
multiply-add contraction), and a shared variable is copied on write either way.

The pair `AssignSubVariableOp(var, Mul(a, b))` becomes `ResourceApplyGradientDescent(var,
alpha, delta)`, at the assignment's place and with its name, when

* one operand of the `Mul` is a scalar (rank 0) and the other, `delta`, has exactly the `Mul`'s
  fully known shape and dtype (so the product broadcasts nothing but the scalar);
* the variable is a constant handle whose shape is known and equal to `delta`'s (so neither
  form can fail: the assignment's own shape error needs no counterpart), and it lives on an
  accelerator (not the CPU: there the compiled program already scales the gradient in place,
  into its own dying buffer, and the pair measured about 10% faster on the traced MLP step,
  case (n), than the gradient descent kernel);
* the product is read by the assignment alone (once), is not fetched, no node has a control
  input on it and it is not a target; both ask for the same device.

The `Mul` is left for `prune` to drop (nothing reads it any more); the new node waits for the
control inputs of both. This is the one pass that replaces a stateful node: by a single node
with the same effect on the same variable, in the same place in program order.
"""

from __future__ import annotations

from collections import Counter

from ...core.registry import NO_ATTRS
from ...ops import math_ops as _m
from ...ops import training_ops as _training
from ...ops.resource_ops import ASSIGN_SUB
from ...devices.resource_handles import handle_data

__all__ = ["fold_scaled_updates"]


def fold_scaled_updates(program):
    """The program with each `assign_sub` of a scaled value made one gradient descent update
    (module doc). Returns `program` itself when there is none."""
    uses = Counter(program.fetches)
    controlled = set(program.targets)
    producer = {}
    for node in program.nodes:
        uses.update(node.inputs)
        controlled.update(node.control_inputs)
        for v in node.outputs:
            producer[v] = node
    replaced = {}  # assignment name -> the gradient descent node
    for node in program.nodes:
        if node.op_def is not ASSIGN_SUB:
            continue
        handle, value = node.inputs
        product = producer.get(value)
        if (product is None or product.op_def is not _m.MUL or uses[value] != 1
                or product.name in controlled or product.device != node.device):
            continue
        operands = _scalar_and_delta(program, product)
        if operands is None or not _variable_shape_is(program, handle, operands[1]):
            continue
        alpha, delta = operands
        controls = tuple(dict.fromkeys(product.control_inputs + node.control_inputs))
        replaced[node.name] = node.__class__(
            node.name, _training.APPLY_GRADIENT_DESCENT, NO_ATTRS, (handle, alpha, delta), (),
            controls, node.device, node.source)
    if not replaced:
        return program
    return program.replace(nodes=[replaced.get(node.name, node) for node in program.nodes])


def _scalar_and_delta(program, product):
    """(the scalar operand, the other) of a `Mul` whose product has the other's exact, fully
    known shape and dtype; None otherwise."""
    specs = program.specs
    out = specs.get(product.outputs[0])
    if out is None or not out.shape.is_fully_defined() or not out.dtype._inexact:
        return None
    a, b = product.inputs
    for alpha, delta in ((a, b), (b, a)):
        alpha_spec, delta_spec = specs.get(alpha), specs.get(delta)
        if (alpha_spec is not None and delta_spec is not None and alpha_spec.shape.rank == 0
                and delta_spec.dtype is out.dtype and delta_spec.shape.is_fully_defined()
                and tuple(delta_spec.shape) == tuple(out.shape)):
            return alpha, delta
    return None


def _variable_shape_is(program, handle, delta) -> bool:
    """Whether `handle` is a constant handle of a variable off the CPU, of exactly `delta`'s
    known shape."""
    tensor = program.constants.get(handle)
    if tensor is None or tensor._meta.device.device_type == "CPU":
        return False
    _, shape = handle_data(tensor)
    return shape.is_fully_defined() and tuple(shape) == tuple(program.specs[delta].shape)
