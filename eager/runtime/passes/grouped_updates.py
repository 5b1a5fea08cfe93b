"""Grouped updates: a traced step's per-variable optimizer updates as grouped ones.

On a GPU a traced training step ends with one update per variable (`ResourceApplyAdam` or
`ResourceApplyKerasMomentum` from the optimizers, `ResourceApplyGradientDescent` from them or
from `fold_scaled_updates`' rewrite of `v.assign_sub(lr * g)`): one launch each, where the
device work is tiny. Where the variables' device runs grouped updates as one launch
(`training_ops_grouped.groups_on`: the CUDA backend), this pass merges updates of one kind
(`training_ops_grouped.KINDS`) into grouped nodes of up to `MAX_GROUP` variables, one launch per
eight. The results are the same bits (the grouped kernels are the per-variable ones'
arithmetic).

Which updates merge: those with the same attributes and scalars (the same values, or constants
of equal dtype and value: each `lr * g` of a traced loop captures its own constant), on the same
requested device, of distinct variables whose handles (and slots') are constants of the program.
Program order and every edge are kept: a group is closed (merged where its last member was)
before the first node that waits for one of its members (a control edge, which automatic control
dependencies put on every later use of an updated variable) and before an update of a variable
it already has. So the merged node runs after everything any member waited for, and before
everything that waited for a member; names of the other members that `targets` or control inputs
mention now name it. This and `fold_scaled_updates` are the passes that replace stateful nodes:
each by a node with the same effects on the same variables, no earlier than any of them was
allowed to run and no later than anything that depended on them.
"""

from __future__ import annotations

from ...devices.resource_handles import eager_handle
from ...ops.training_ops_grouped import MAX_GROUP, grouped_update, groups_on, kind_of

__all__ = ["group_updates"]


def group_updates(program, groups=groups_on):
    """The program with its optimizer updates grouped where `groups(device)` says a variable's
    device runs them as one launch (module doc). Returns `program` itself when nothing
    merges."""
    open_groups = {}  # key -> [member nodes, in program order]
    merged = {}  # first member's name -> the merged node (placed where the last member was)
    renamed = {}  # member name -> the merged node's name
    drop = set()  # members other than the last: removed

    def close(key):
        members = open_groups.pop(key)
        if len(members) < 2:
            return
        last = members[-1]
        kind = kind_of(last.op_def)
        controls = tuple(dict.fromkeys(c for m in members for c in m.control_inputs))
        parts = [kind.of_op(m.inputs) for m in members]  # (handles, scalars, gradient)
        inputs = (*[v for handles, _, _ in parts for v in handles], *parts[0][1],
                  *[grad for _, _, grad in parts])
        node = last.__class__(last.name, grouped_update(kind.name, len(members)), last.attrs,
                              inputs, (), controls, last.device, last.source)
        merged[last.name] = node
        for m in members[:-1]:
            drop.add(m.name)
            renamed[m.name] = last.name

    for node in program.nodes:
        waits = set(node.control_inputs)
        for key in [k for k, members in open_groups.items()
                    if any(m.name in waits for m in members)]:
            close(key)
        key = _key(program, node, groups)
        if key is None:
            continue
        members = open_groups.get(key)
        uid = _variable_uid(program, node)
        if members is not None and (len(members) == MAX_GROUP
                                    or any(_variable_uid(program, m) == uid for m in members)):
            close(key)
            members = None
        if members is None:
            open_groups[key] = [node]
        else:
            members.append(node)
    for key in list(open_groups):
        close(key)
    if not merged:
        return program
    nodes = []
    for node in program.nodes:
        if node.name in drop:
            continue
        node = merged.get(node.name, node)
        if any(c in renamed for c in node.control_inputs):
            node = node.replace(control_inputs=tuple(dict.fromkeys(
                renamed.get(c, c) for c in node.control_inputs)))
        nodes.append(node)
    targets = tuple(dict.fromkeys(renamed.get(t, t) for t in program.targets))
    return program.replace(nodes=nodes, targets=targets)


def _key(program, node, groups):
    """What updates must share to merge (None: this node never merges): the kind, the scalars
    (their values where they are constants), the requested device, the variable's device."""
    kind = kind_of(node.op_def)
    if kind is None:
        return None
    handles, scalar_values, _ = kind.of_op(node.inputs)
    handles = [program.constants.get(v) for v in handles]
    if any(h is None or eager_handle(h) is None for h in handles):
        return None
    device = eager_handle(handles[0]).device
    if not groups(device):
        return None
    scalars = []
    for v in scalar_values:
        constant = program.constants.get(v)
        if constant is not None:
            value = constant.numpy()
            v = ("constant", value.dtype.str, value.tobytes())
        scalars.append(v)
    return kind.name, tuple(sorted(node.attrs.items())), tuple(scalars), node.device, device


def _variable_uid(program, node):
    return eager_handle(program.constants[node.inputs[0]]).uid
