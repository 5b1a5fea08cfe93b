"""Grouped optimizer updates: one op updating several variables, for a GPU.

Why: an optimizer step is one fused update op per variable (`ResourceApplyGradientDescent`,
`ResourceApplyAdam`), and on a GPU each is a dispatch, a stream entry and a launch of host time,
where the device work is tiny. A grouped op takes n variables (with their slots), the update's
scalars once, and the n gradients; the CUDA backend runs it as one launch per eight variables
(`cupy_grouped_updates`). Elsewhere (numpy, the simulated GPUs) it runs the per-variable op's
kernel once per variable, so its results are that op's, bit for bit, on every device.

The ops are eager's own (the leading underscore, as TensorFlow names its internal fused ops):
`_GroupedResourceApplyGradientDescent` and `_GroupedResourceApplyAdam`. Optimizers use them
while executing eagerly on a device whose backend groups (`groups_on`), and the
`group_updates` pass makes them in traced steps there; on the CPU a program keeps one op per
variable, as TensorFlow's graphs have them. Inputs: each variable's handle followed by its
slots' (`KINDS[kind].handles` per variable), the scalars (`.scalars`), then the n gradients.
Errors (an uninitialized variable, a dtype or shape mismatch, a variable passed twice) are the
per-variable op's, named after it, and are raised before any variable changes.
"""

from __future__ import annotations

from ..core.registry import OpDef, op_error
from .cupy_grouped_updates import GROUPED
from .training_ops import (APPLY_ADAM, APPLY_GRADIENT_DESCENT, APPLY_KERAS_MOMENTUM, check_grad,
                           handle_key, holding, storages_of, writable)

__all__ = ["KINDS", "MAX_GROUP", "GroupedKind", "grouped_update", "groups_on"]

#: The most variables one op takes (a bigger update is several ops), so that at most this many
#: OpDefs are ever made per kind.
MAX_GROUP = 64


class GroupedKind:
    """One kind of grouped update: the per-variable op it groups and that op's input layout
    (how many handles each variable brings, itself and its slots first; where the scalars and
    the gradient are among the other inputs), and `update_for(attrs)`, the grouped CUDA update
    for the op's attributes."""

    __slots__ = ("name", "op", "handles", "scalar_at", "grad_at", "update_for", "_ops")

    def __init__(self, name, op, handles, scalar_at, grad_at, update_for):
        self.name = name
        self.op = op
        self.handles = handles
        self.scalar_at = scalar_at
        self.grad_at = grad_at
        self.update_for = update_for
        self._ops = {}  # n -> OpDef

    @property
    def scalars(self) -> int:
        return len(self.scalar_at)

    def split(self, inputs):
        """(per-variable handle tuples, scalars, gradients) of a grouped op's inputs."""
        h, s = self.handles, self.scalars
        n = (len(inputs) - s) // (h + 1)
        handles = [tuple(inputs[i * h:(i + 1) * h]) for i in range(n)]
        return handles, inputs[n * h:n * h + s], inputs[n * h + s:]

    def op_inputs(self, handles, scalars, grad):
        """One variable's inputs to the per-variable op."""
        inputs = list(handles) + [None] * (self.scalars + 1)
        for at, scalar in zip(self.scalar_at, scalars):
            inputs[at] = scalar
        inputs[self.grad_at] = grad
        return inputs

    def of_op(self, inputs):
        """(handles, scalars, gradient) of one per-variable op's inputs (a graph node's)."""
        return (inputs[:self.handles], [inputs[at] for at in self.scalar_at],
                inputs[self.grad_at])


def _kernel(kind):
    def kernel(xp, *inputs, **attrs):
        """Every variable checked first (nothing is half applied), then each through the
        per-variable op's own kernel, in order."""
        per_variable, scalars, grads = kind.split(inputs)
        name = kind.op.name
        storages = storages_of(name, [h for group in per_variable for h in group])
        width = kind.handles
        for i, (handles, grad) in enumerate(zip(per_variable, grads)):
            _check(name, handles, storages[i * width:(i + 1) * width], grad)
        for handles, grad in zip(per_variable, grads):
            kind.op.kernel(xp, *kind.op_inputs(handles, scalars, grad), **attrs)
        return ()
    return kernel


def _check(name, handles, storages, grad):
    check_grad(name, handles[0].name, storages[0].value, grad)
    first = storages[0].value
    for handle, storage in zip(handles[1:], storages[1:]):
        if storage.value.shape != first.shape or storage.value.dtype != first.dtype:
            raise op_error(name, f"slot {handle.name} ({storage.value.dtype.name}"
                                 f"{list(storage.value.shape)}) does not match the variable "
                                 f"{handles[0].name} ({first.dtype.name}{list(first.shape)})")


def _cuda_kernel(kind):
    def kernel(xp, *inputs, **attrs):
        """The CUDA backend's: every variable checked with all the storages locked (in uid
        order), then one grouped launch per eight of those that `GroupedUpdate.covers`; the
        others (float16, a strided gradient) then run the per-variable op's kernel."""
        per_variable, scalars, grads = kind.split(inputs)
        name = kind.op.name
        handles = [h for group in per_variable for h in group]
        storages = storages_of(name, handles)
        locks = [storages[i].lock for i in sorted(range(len(handles)),
                                                    key=lambda i: handles[i].uid)]
        width = kind.handles

        def locked():
            mine = [storages[i * width:(i + 1) * width] for i in range(len(grads))]
            for group, own, grad in zip(per_variable, mine, grads):
                _check(name, group, own, grad)
            update = kind.update_for(attrs)
            chosen = [i for i, grad in enumerate(grads)
                      if update.covers([*(s.value for s in mine[i]), grad])]
            if len(chosen) < 2 or not all(isinstance(x, xp.ndarray) for x in scalars):
                # (the kernel reads its scalars on the device: a host one takes the op's path)
                return range(len(grads))
            update(xp, scalars, [[*(writable(s) for s in mine[i]), grads[i]] for i in chosen])
            for i in chosen:
                for storage in mine[i]:
                    storage.version += 1
            return sorted(set(range(len(grads))).difference(chosen))

        for i in holding(locks, locked):
            kind.op.kernel(xp, *kind.op_inputs(per_variable[i], scalars, grads[i]), **attrs)
        return ()
    return kernel


def _infer(kind):
    def infer(*inputs, **attrs):
        per_variable, scalars, grads = kind.split(inputs)
        one = kind.op.infer
        for handles, grad in zip(per_variable, grads):
            one(*kind.op_inputs(handles, scalars, grad), **attrs)
        keys = [handle_key(h) for handles in per_variable for h in handles]
        if len(set(keys)) < len(keys):
            raise op_error(kind.op.name, "the same variable is passed twice to one grouped "
                                         "update")
        return ()
    return infer


def _momentum_update(attrs):
    return GROUPED["nesterov" if attrs.get("use_nesterov") else "momentum"]


#: The grouped updates by kind: the per-variable ops' layouts (handles; where the scalars and
#: the gradient are), and the grouped CUDA update for the op's attributes.
KINDS = {
    "gradient_descent": GroupedKind("gradient_descent", APPLY_GRADIENT_DESCENT, 1, (1,), 2,
                                    lambda attrs: GROUPED["gradient_descent"]),
    # (var, accum, lr, grad, momentum; use_nesterov)
    "momentum": GroupedKind("momentum", APPLY_KERAS_MOMENTUM, 2, (2, 4), 3, _momentum_update),
    "adam": GroupedKind("adam", APPLY_ADAM, 3, (3, 4, 5, 6, 7, 8), 9,
                        lambda attrs: GROUPED["adam"]),
}
_BY_OP = {kind.op: kind for kind in KINDS.values()}


def grouped_update(kind_name, n) -> OpDef:
    """The grouped op of kind `kind_name` for `n` variables (2 <= n <= MAX_GROUP), made once."""
    kind = KINDS[kind_name]
    op = kind._ops.get(n)
    if op is None:
        if not 2 <= n <= MAX_GROUP:
            raise ValueError(f"a grouped update takes 2 to {MAX_GROUP} variables, not {n}")
        op = OpDef(f"_Grouped{kind.op.name}", _kernel(kind), _infer(kind),
                   resource_writes=tuple(range(n * kind.handles)), num_outputs=0,
                   differentiable=False, doc=__doc__)
        op.cupy_kernel = _cuda_kernel(kind)
        op = kind._ops.setdefault(n, op)
    return op


def kind_of(op_def):
    """The `GroupedKind` grouping `op_def` (a per-variable update op), or None."""
    return _BY_OP.get(op_def)


def groups_on(device) -> bool:
    """Whether `device` runs grouped updates as grouped launches (the CUDA backend): elsewhere
    one op per variable is just as fast, and keeps TensorFlow's op names in placement logs."""
    op = grouped_update("gradient_descent", 2)
    return device.kernel_for(op) is not op.kernel
