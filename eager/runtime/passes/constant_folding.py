"""Constant folding: nodes whose inputs are all known are run once, at compile time.

A node is folded when running it at compile time cannot be told apart from running it on every
call:

* it is pure: not stateful, no resource inputs (`Node.is_stateful`), no sub-graphs (control-flow
  ops replay their branches), not a Placeholder, and it produces something;
* no value it reads or writes is a resource handle or a variant (TensorList): those are
  references to state or containers, not data (a value without a recorded spec in
  `program.specs` counts as unknown, and its readers and writers are not folded);
* it has **no control inputs**. A folded node disappears, so it could no longer wait for
  anything; TensorFlow moves such edges onto the consumers, but a fetched folded value would
  still lose them (a fetch of a constant waits for nothing). Not folding these nodes keeps the
  rule simple and always right; they are rare (pure ops get control inputs only from explicit
  `control_dependencies` scopes and from the return Identities of functions with side effects);
* it is not named in `targets` (a target must stay a node: something must run);
* every data input is in `program.constants` (captured tensors and earlier folds), and each
  output holds at most `max_bytes` (checked from the static spec before running when it is
  fully known, and on the result): folding a large tensor would trade compute for memory held
  by the program forever.

`Shape`, `Size`, `Rank`, `OnesLike` and `ZerosLike` are also folded when the input's static
shape tells the answer (fully known dims; the rank for `Rank`), whatever computes the input
(a gradient's seed, `ones_like(loss)`, is then a constant and the ops scaling it fold too),
unless that input is an unfed Placeholder: the program must still raise the missing-feed error.
This trusts the static shapes of fed values: callers (the function layer, `Session`) must reject
feeds whose shape contradicts the feed's spec, as TensorFlow does.

The kernel runs through `dispatch.run_kernel`, on the device the node would run on when that
device computes synchronously (a CPU), else on CPU:0 with the result copied to that device (a
GPU kernel's failure would otherwise surface later, on its stream). "The device the node would
run on" follows eager placement without the caller's scope, which is unknown at compile time:
the node's requested device, else the device its first constant input lives on, else the
default device; soft placement moves an op without a kernel there to the CPU. Any exception
while folding (a kernel error, an inference mismatch) leaves the node in the program, so the
error surfaces when it runs, as it would eagerly.

Control inputs that named a folded node are dropped: that node waited for nothing (no control
inputs, only constant inputs), so "after it" orders nothing.
"""

from __future__ import annotations

import math

from ...core import context as _context
from ...base import dtypes as _dt
from ...devices import registry as _devices
from ...graph.constant_value import shape_stand_in
from ...graph.placeholder import PLACEHOLDER
from ...core import dispatch as _dispatch
from ...ops.array_ops import IDENTITY, RANK, SHAPE, SIZE
from ...ops.creation_ops import ONES_LIKE, ZEROS_LIKE
from ...tensor import EagerTensor

__all__ = ["fold_constants", "DEFAULT_MAX_BYTES"]

#: Outputs larger than this (per output) are left to be computed on every call.
DEFAULT_MAX_BYTES = 10 * 2**20

_SHAPE_OPS = (SHAPE, SIZE, RANK, ONES_LIKE, ZEROS_LIKE)
_REFERENCE_DTYPES = (_dt.resource, _dt.variant)


def fold_constants(program, max_bytes=DEFAULT_MAX_BYTES):
    """The program with every foldable node (see the module doc) replaced by constants holding
    its outputs. Folding runs in topological order, so whole constant sub-graphs fold at once.
    Returns `program` itself when nothing folds."""
    constants = dict(program.constants)
    targets = set(program.targets)
    unfed = {node.outputs[0] for node in program.nodes if node.op_def is PLACEHOLDER}
    kept, folded = [], set()
    for node in program.nodes:
        values = None
        if _is_foldable(node, program, targets):
            if all(v in constants for v in node.inputs):
                values = _evaluate(node, tuple(constants[v] for v in node.inputs), program,
                                   max_bytes)
            elif any(node.op_def is op for op in _SHAPE_OPS):
                values = _static_shape_value(node, program, unfed, max_bytes)
        if values is None:
            kept.append(node)
        else:
            constants.update(zip(node.outputs, values))
            folded.add(node.name)
    if not folded:
        return program
    nodes = tuple(
        node.replace(control_inputs=tuple(c for c in node.control_inputs if c not in folded))
        if any(c in folded for c in node.control_inputs) else node
        for node in kept)
    return program.replace(nodes=nodes, constants=constants)


def _is_foldable(node, program, targets) -> bool:
    op_def = node.op_def
    if (node.is_stateful or op_def is PLACEHOLDER or op_def.replay is not None
            or node.control_inputs or node.name in targets or not node.outputs):
        return False
    for v in node.inputs + node.outputs:
        spec = program.specs.get(v)
        if spec is None or spec.dtype in _REFERENCE_DTYPES:
            return False
    return True


def _evaluate(node, inputs, program, max_bytes):
    """The node's outputs computed now, or None when it must stay a node."""
    for v in node.outputs:
        spec = program.specs[v]
        if spec.shape.is_fully_defined() and _nbytes(spec.shape, spec.dtype) > max_bytes:
            return None  # known too large: do not even compute it
    target = _fold_device(node, inputs)
    if target is None:
        return None
    compute = target if target.inline else _devices.lookup("CPU:0")
    try:
        out = _dispatch.run_kernel(node.op_def, inputs, node.attrs, compute)
    except Exception:  # noqa: BLE001 - any failure is the run's to report, not compilation's
        return None
    outputs = (out,) if node.op_def.num_outputs == 1 else tuple(out)
    if len(outputs) != len(node.outputs):
        return None
    for t in outputs:
        if (t.__class__ is not EagerTensor or not t.dtype.is_numpy_compatible
                or _nbytes(t.shape, t.dtype) > max_bytes):
            return None
    if compute is not target:
        outputs = tuple(_dispatch.run_kernel(IDENTITY, (t,), {}, target) for t in outputs)
    return outputs


def _static_shape_value(node, program, unfed, max_bytes):
    """`Shape`/`Size`/`Rank`/`OnesLike`/`ZerosLike` of a value whose static shape answers it,
    or None."""
    (v,) = node.inputs
    if v in unfed:
        return None  # folding would hide the missing-feed error
    spec = program.specs[v]
    if not spec.dtype.is_numpy_compatible:
        return None
    stand_in = shape_stand_in(node.op_def, spec.shape, spec.dtype.as_numpy_dtype)
    if stand_in is None:
        return None
    out_spec = program.specs[node.outputs[0]]
    if not out_spec.shape.is_fully_defined() or _nbytes(out_spec.shape, out_spec.dtype) > max_bytes:
        return None
    cpu = _devices.lookup("CPU:0")
    try:
        t = _dispatch.run_kernel(node.op_def, (_dispatch.wrap_output(stand_in, cpu, node.op_def),),
                                node.attrs, cpu)
        target = _fold_device(node, ())
        if target is None:
            return None
        if target is not cpu:
            t = _dispatch.run_kernel(IDENTITY, (t,), {}, target)
    except Exception:  # noqa: BLE001
        return None
    return (t,)


def _fold_device(node, inputs):
    """Where the node would run without a caller's device scope (see the module doc), or None
    when its device request cannot be satisfied (the run then reports it)."""
    op_def = node.op_def
    if node.device:
        try:
            spec = _devices.parse_device(node.device)
        except Exception:  # noqa: BLE001
            return None
        device, _ = _devices.resolve(spec, _context.placement_config.soft_placement)
        if device is None:
            return None
        if device.device_type not in op_def.device_types:
            if not _context.placement_config.soft_placement:
                return None
            device = _devices.lookup("CPU:0")
        return device
    if inputs:
        device = inputs[0]._meta.device
    else:
        device = _devices.default_device()
    if device.device_type not in op_def.device_types:
        device = _devices.lookup("CPU:0")
    return device


def _nbytes(shape, dtype) -> int:
    return math.prod(shape) * dtype.size
