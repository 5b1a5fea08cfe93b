"""The reference runner for a `Program`: each node in order, with the op's own kernel.

This is the meaning every faster form (the compiled straight-line plan, the parallel executor,
partitioned plans) must reproduce, and the yardstick their tests compare against. It is written
for clarity, not speed.

Placement of one node, as eager execution would place the op (`dispatch.place`): a resource
input's device, else the node's `device` (the device it was traced under, or the device the
placer chose), else the caller's device scope, else the default device.
"""

from __future__ import annotations

from ..core import context as _context
from ..base.errors import InvalidArgumentError
from ..graph.placeholder import PLACEHOLDER
from ..core import dispatch as _dispatch

__all__ = ["run_program", "device_scope_for", "missing_feed_error"]


def run_program(program, feed_values) -> list:
    """Runs `program` with `feed_values` bound to `program.feeds` (in order) and returns the
    values of `program.fetches`."""
    if len(feed_values) != len(program.feeds):
        raise ValueError(f"Program {program.name!r} has {len(program.feeds)} feeds; "
                         f"{len(feed_values)} values were given.")
    values = dict(program.constants)
    values.update(zip(program.feeds, feed_values))
    st = _context.thread_state()
    for node in program.nodes:
        if node.op_def is PLACEHOLDER:
            raise missing_feed_error(program, node)
        inputs = tuple(values[v] for v in node.inputs)
        device = _dispatch.place(node.op_def, inputs, device_scope_for(node.device, st),
                                  node.attrs)
        out = _dispatch.run_kernel(node.op_def, inputs, node.attrs, device)
        if len(node.outputs) == 1 and node.op_def.num_outputs == 1:
            values[node.outputs[0]] = out
        else:
            values.update(zip(node.outputs, out))
    return [values[v] for v in program.fetches]


class _Requested:
    """Stands in for the thread state in `dispatch.place`: a device scope holding just the
    device a node asks for (placement rules, soft placement and logging stay dispatch's own)."""

    __slots__ = ("device_stack",)

    def __init__(self, device):
        self.device_stack = [_context.DeviceScopeEntry(_context.registry.parse_device(device))]


def device_scope_for(device, st):
    """What `dispatch.place` should see for a node that requests `device` ("" for none: the
    caller's own scopes)."""
    return _Requested(device) if device else st


def missing_feed_error(program, node) -> InvalidArgumentError:
    """TensorFlow's error for a placeholder a run needs but nobody fed."""
    spec = program.specs.get(node.outputs[0]) if node.outputs else None
    detail = ""
    if spec is not None:
        shape = spec.shape
        dims = "<unknown>" if shape.rank is None else \
            "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"
        detail = f" with dtype {spec.dtype.name} and shape {dims}"
    return InvalidArgumentError(None, node.name,
                                f"You must feed a value for placeholder tensor '{node.name}'"
                                f"{detail}")
