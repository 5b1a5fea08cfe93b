"""The placer: which device each node of a `Program` runs on (≈ TensorFlow's `Placer`).

Nodes that must share a device are grouped with union-find (TensorFlow's colocation graph):
an op taking a resource handle joins the node that produced the handle, or the captured handle
itself (a constant of the program), so every op on one variable lands where the variable lives.
Each group then gets one device:

1. the device its resource lives on (a captured handle's device; a `VarHandleOp`'s `device`
   attribute; a fed handle's entry in `feed_devices`). A resource cannot move, so this wins
   over any request, as in eager execution (dispatch places resource ops on the resource's
   device whatever the scope says). Two different such devices in one group is an error.
2. else the members' explicit requests, merged (partial requests like "GPU" or "/device:CPU:*"
   combine field by field); two requests that cannot both hold are an error naming both nodes,
   since no device choice would honour the program.
3. else the default device: `default_device`, or the caller's device scope, else the process
   default (the GPU when there is one), as eager execution would choose.

Then each node is checked for a kernel on its group's device (`OpDef.device_types`). A node
whose device came from a resource or the default runs on the CPU instead, quietly, as
eager dispatch does. A node whose device was *requested* moves to the CPU only under soft
placement; without it the run could not do what the program asks, so it is TensorFlow's
"Cannot assign a device for operation" error, naming the node, op and device.

Stateful nodes are pinned (TensorFlow's GraphExecutionState keeps `stateful_placements`): a
caller placing several cuts of one graph (a Session, one program per feeds/fetches) passes the
same dict to every `place`; a stateful node placed once keeps its device in every later
placement, whatever its group would choose now (another default device, other requests in a
different cut), so a random generator or a print never changes device between calls. Soft
placement never moves a pinned node: its device already had its kernel.

With `eager.debugging.set_log_device_placement(True)` the placer prints one line per node,
TensorFlow's format: "<node name>: (<op type>): <device>".
"""

from __future__ import annotations

import sys

from ..core import context as _context
from ..base import dtypes as _dt
from ..devices import registry as _registry
from ..devices.base import Device
from ..devices.spec import DeviceSpec
from ..base.errors import InvalidArgumentError

__all__ = ["place"]


def place(program, default_device=None, soft_placement=None, *, stateful_placements=None,
          feed_devices=None):
    """A copy of `program` whose every node's `device` is a full device name
    ("/job:localhost/replica:0/task:0/device:CPU:0"). See the module doc for the rules.

    `default_device`: a device name or Device for nodes nothing constrains (default: the
    calling thread's device scope, else the process default). `soft_placement`: default
    `eager.config.get_soft_device_placement()`. `stateful_placements`: a dict (node name ->
    full device name) shared by the placements of one graph; read and updated.
    `feed_devices`: value id -> device name for fed resource handles (their ops colocate with
    them); a fed handle without one only groups its ops together.

    Raises InvalidArgumentError for a requested device that does not exist (without soft
    placement) or has no kernel for the node's op (without soft placement), and for groups
    whose constraints contradict each other.
    """
    if soft_placement is None:
        soft_placement = _context.soft_device_placement()
    default = _default_device(default_device)
    nodes = program.nodes
    pins = stateful_placements if stateful_placements is not None else {}
    groups = _Colocation(program, feed_devices or {})
    members = groups.members()
    chosen = {}  # group root -> (device, requested: bool)
    placed = []
    log = _context.log_device_placement()
    for i, node in enumerate(nodes):
        root = groups.find(i)
        choice = chosen.get(root)
        if choice is None:
            choice = chosen[root] = groups.device_of(members[root], default, soft_placement)
        device, requested = choice
        pinned = pins.get(node.name) if node.is_stateful else None
        if pinned is not None:
            device = _device_named(pinned, node)
        else:
            device = _with_kernel(node, device, requested, soft_placement)
            if device.device_type != "CPU" and _on_strings(program, node):
                device = _registry.lookup("CPU:0")  # strings live in host memory
            if node.is_stateful:
                pins[node.name] = device.full_name
        if log:
            print(f"{node.name}: ({node.type}): {device.full_name}", file=sys.stderr)
        placed.append(node if node.device == device.full_name
                      else node.replace(device=device.full_name))
    return program.replace(nodes=placed)


# -- colocation ------------------------------------------------------------------------------------
class _Colocation:
    """Union-find over the program's nodes plus one member per resource handle that no node
    produces (a captured or fed handle), with what constrains each group's device."""

    __slots__ = ("_parent", "_program", "_fixed", "_requests", "_labels")

    def __init__(self, program, feed_devices):
        nodes = program.nodes
        self._program = program
        self._parent = list(range(len(nodes)))
        self._fixed = {}  # member -> (Device, why: str)
        self._requests = {}  # member -> DeviceSpec
        self._labels = {}  # handle member -> "the handle 'capture:0'"
        producers = {v: i for i, node in enumerate(nodes) for v in node.outputs}
        handles = {}  # value id of an unproduced handle -> its member index
        for i, node in enumerate(nodes):
            created_on = _creates_resource_on(program, node)
            if created_on is not None:
                self._fix(i, _device_named(created_on, node), "the resource it creates lives "
                                                              "there")
            spec = _request(node)
            if spec is not None:
                self._requests[i] = spec
            for v in _resource_inputs(program, node):
                if v in producers:
                    self.union(i, producers[v])
                    continue
                member = handles.get(v)
                if member is None:
                    member = handles[v] = len(self._parent)
                    self._parent.append(member)
                    self._labels[member] = f"the handle '{program.value_names.get(v, v)}'"
                    device = _handle_device(program, v, feed_devices)
                    if device is not None:
                        self._fix(member, device, "its resource lives there")
                self.union(i, member)

    def _fix(self, member, device, why):
        self._fixed[member] = (device, why)

    def find(self, i):
        parent = self._parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(self, a, b):
        a, b = self.find(a), self.find(b)
        if a != b:
            self._parent[max(a, b)] = min(a, b)

    def members(self) -> dict:
        """group root -> its members, in order."""
        found = {}
        for m in range(len(self._parent)):
            found.setdefault(self.find(m), []).append(m)
        return found

    def _describe(self, member):
        nodes = self._program.nodes
        if member < len(nodes):
            return f"'{nodes[member].name}'"
        return self._labels.get(member, "a resource handle")

    def device_of(self, members, default, soft):
        """(device, requested) for the group of `members`; raises when its constraints
        clash."""
        fixed = None
        for m in members:
            entry = self._fixed.get(m)
            if entry is None:
                continue
            if fixed is None:
                fixed = (m, entry)
            elif entry[0] is not fixed[1][0]:
                (first, (d1, why1)), (d2, why2) = fixed, entry
                nodes = self._program.nodes
                ops = [nodes[k].name for k in members if k < len(nodes)]
                raise InvalidArgumentError(
                    None, ops[0] if ops else None,
                    f"Cannot colocate {self._describe(first)} and {self._describe(m)}: the "
                    f"first must be on {d1.full_name} ({why1}), the second on {d2.full_name} "
                    f"({why2}), and {', '.join(map(repr, ops))} must run beside both. An op "
                    "can use resources of one device only; read the other into a tensor "
                    "first.")
        if fixed is not None:
            return fixed[1][0], False
        merged = first = None
        for m in members:
            spec = self._requests.get(m)
            if spec is None:
                continue
            if merged is None:
                merged, first = spec, m
                continue
            combined = _merge(merged, spec)
            if combined is None:
                nodes = self._program.nodes
                raise InvalidArgumentError(
                    None, nodes[m].name,
                    f"Cannot colocate nodes {self._describe(first)} and {self._describe(m)}: "
                    f"they must share a device (they use the same resource), but request "
                    f"incompatible devices '{nodes[first].device}' and '{nodes[m].device}'. "
                    "Remove one of the device requests.")
            merged = combined
        if merged is None:
            return default, False
        device, message = _registry.resolve(merged, soft)
        if device is None:
            node = self._program.nodes[first]
            raise InvalidArgumentError(
                None, node.name,
                f"Cannot assign a device for operation '{node.name}' ({node.type}): {message} "
                "Enable soft placement (eager.config.set_soft_device_placement(True)) or "
                "request an existing device.")
        return device, True


def _request(node):
    """The node's explicit device request as a DeviceSpec, or None (none, or no device type:
    "/job:localhost" constrains nothing we place on)."""
    if not node.device:
        return None
    spec = _registry.parse_device(node.device)
    return spec if spec.device_type is not None else None


def _merge(a: DeviceSpec, b: DeviceSpec):
    """The spec both `a` and `b` allow, or None when they contradict each other."""
    if a.device_type != b.device_type:
        return None
    if a.device_index is not None and b.device_index is not None \
            and a.device_index != b.device_index:
        return None
    index = a.device_index if a.device_index is not None else b.device_index
    return DeviceSpec(device_type=a.device_type, device_index=index)


def _resource_inputs(program, node):
    """The value ids of `node`'s resource-handle inputs: typed `resource` in the program, or
    declared as resource inputs by the op."""
    found = []
    declared = node.op_def.resource_inputs
    for k, v in enumerate(node.inputs):
        spec = program.specs.get(v)
        if (spec is not None and spec.dtype is _dt.resource) or k in declared:
            if v not in found:
                found.append(v)
    return found


def _creates_resource_on(program, node):
    """The device name a resource-creating node puts its resource on (a `VarHandleOp` names it
    in its `device` attribute), or None."""
    if not node.is_stateful or not isinstance(node.attrs, dict):
        return None
    specs = program.specs
    if not any(getattr(specs.get(v), "dtype", None) is _dt.resource for v in node.outputs):
        return None
    device = node.attrs.get("device")
    return device if isinstance(device, str) and device else None


def _handle_device(program, v, feed_devices):
    """The Device a captured or fed resource handle lives on, when known."""
    value = program.constants.get(v)
    if value is not None:
        meta = getattr(value, "_meta", None)
        return meta.device if meta is not None else None
    name = feed_devices.get(v)
    if name is None:
        return None
    return _device_named(name, None)


def _device_named(name, node) -> Device:
    if isinstance(name, Device):
        return name
    device, message = _registry.resolve(_registry.parse_device(name), False)
    if device is None:
        where = f" for operation '{node.name}' ({node.type})" if node is not None else ""
        raise InvalidArgumentError(None, node.name if node is not None else None,
                                   f"Cannot assign a device{where}: {message}")
    return device


def _default_device(default_device) -> Device:
    if default_device is None:
        return _context.placement_device()
    if isinstance(default_device, Device):
        return default_device
    spec = _registry.parse_device(default_device)
    if spec.device_type is None:
        return _context.placement_device()
    return _device_named(spec, None)


# -- kernels ---------------------------------------------------------------------------------------
def _on_strings(program, node) -> bool:
    """Whether `node` reads or makes a string tensor (it then runs on the CPU, as eager
    dispatch's `touches_strings` decides)."""
    specs = program.specs
    return any(specs[v].dtype.is_string for v in node.inputs + node.outputs if v in specs)


def _with_kernel(node, device, requested, soft):
    """`device` if `node`'s op has a kernel there; else the CPU when allowed (see the module
    doc), else TensorFlow's "Cannot assign a device for operation" error."""
    kinds = node.op_def.device_types
    if device.device_type in kinds:
        return device
    if requested and not soft:
        raise InvalidArgumentError(
            None, node.name,
            f"Cannot assign a device for operation '{node.name}': Could not satisfy explicit "
            f"device specification '{node.device or device.full_name}' because no supported "
            f"kernel for {device.device_type} devices is available (op {node.type} has kernels "
            f"for {', '.join(sorted(kinds))}). Enable soft placement "
            "(eager.config.set_soft_device_placement(True)) or request a device of one of "
            "those types.")
    cpu = _registry.lookup("CPU:0")
    if "CPU" not in kinds:
        raise InvalidArgumentError(
            None, node.name,
            f"Cannot assign a device for operation '{node.name}': op {node.type} has no kernel "
            f"for {device.device_type} (placed on {device.full_name}) nor for the CPU; it has "
            f"kernels for {', '.join(sorted(kinds))}.")
    return cpu
