"""`_GroupedResourceApplyGradientDescent`: plain gradient descent on several variables as one op.

Why: an SGD step without momentum is one `ResourceApplyGradientDescent` per variable, and on a
GPU each is a dispatch, a stream entry and a launch of host time, where the device work is tiny.
This op takes n variables, one learning rate and n deltas; the CUDA backend runs it as one
grouped launch per eight variables (`cupy_grouped_updates`). Elsewhere (numpy, the simulated
GPUs) it runs `ResourceApplyGradientDescent`'s kernel once per pair, so its results are that
op's, bit for bit, on every device.

It is eager's own op (the leading underscore, as TensorFlow names its internal fused ops):
optimizers use it only while executing eagerly on a device whose backend groups the updates
(`groups_on`). A traced function keeps one `ResourceApplyGradientDescent` per variable, as
TensorFlow's graphs have them. Inputs: n variable handles, alpha, then the n deltas. Errors
(an uninitialized variable, a dtype or shape mismatch, a variable passed twice) name
`ResourceApplyGradientDescent`, as the per-variable ops would; on the CUDA backend every pair is
checked before any variable changes.
"""

from __future__ import annotations

from ..core.registry import OpDef, op_error
from .cupy_grouped_updates import GroupedGradientDescent
from .cupy_kernels import update_kernel
from .training_ops import (APPLY_GRADIENT_DESCENT, check_grad, handle_key, holding, storages_of,
                           writable)

__all__ = ["GROUPED_GD", "MAX_GROUP", "grouped_gradient_descent", "groups_on"]

GROUPED_GD = "_GroupedResourceApplyGradientDescent"
_GD = APPLY_GRADIENT_DESCENT.name
#: The most variables one op takes (a bigger update is several ops), so that at most this many
#: OpDefs are ever made.
MAX_GROUP = 64

_GROUPED = GroupedGradientDescent()
_OPS: dict = {}  # n -> the OpDef for n variables


def _kernel(xp, *inputs):
    """Every pair checked first (nothing is half applied), then each through
    `ResourceApplyGradientDescent`'s own kernel, in order."""
    n = (len(inputs) - 1) // 2
    handles, alpha, deltas = inputs[:n], inputs[n], inputs[n + 1:]
    for handle, storage, delta in zip(handles, storages_of(_GD, handles), deltas):
        check_grad(_GD, handle.name, storage.value, delta)
    gd = APPLY_GRADIENT_DESCENT.kernel
    for handle, delta in zip(handles, deltas):
        gd(xp, handle, alpha, delta)
    return ()


def _cuda_kernel(xp, *inputs):
    """The CUDA backend's: every pair checked with all the variables locked (in uid order), then
    one grouped launch per eight pairs that `GroupedGradientDescent.covers`, and the fused
    per-variable kernel for the rest."""
    n = (len(inputs) - 1) // 2
    handles, alpha, deltas = inputs[:n], inputs[n], inputs[n + 1:]
    storages = storages_of(_GD, handles)
    locks = [storages[i].lock for i in sorted(range(n), key=lambda i: handles[i].uid)]

    def locked():
        for handle, storage, delta in zip(handles, storages, deltas):
            check_grad(_GD, handle.name, storage.value, delta)
        arrays = [writable(s) for s in storages]
        grouped = [i for i in range(n) if _GROUPED.covers(arrays[i], deltas[i])]
        if len(grouped) > 1:
            _GROUPED(xp, alpha, [arrays[i] for i in grouped], [deltas[i] for i in grouped])
        else:
            grouped = ()
        for i in sorted(set(range(n)).difference(grouped)):
            update_kernel(xp, "gradient_descent", arrays[i].dtype)(alpha, deltas[i], arrays[i])
        for storage in storages:
            storage.version += 1

    holding(locks, locked)
    return ()


def _infer(*inputs):
    n = (len(inputs) - 1) // 2
    one = APPLY_GRADIENT_DESCENT.infer
    for handle, delta in zip(inputs[:n], inputs[n + 1:]):
        one(handle, inputs[n], delta)
    if len({handle_key(h) for h in inputs[:n]}) < n:
        raise op_error(_GD, "the same variable is passed twice to one grouped update")
    return ()


def grouped_gradient_descent(n) -> OpDef:
    """The op for `n` variables (2 <= n <= MAX_GROUP), made once per `n`."""
    op = _OPS.get(n)
    if op is None:
        if not 2 <= n <= MAX_GROUP:
            raise ValueError(f"{GROUPED_GD} takes 2 to {MAX_GROUP} variables, not {n}")
        op = OpDef(GROUPED_GD, _kernel, _infer, resource_writes=tuple(range(n)), num_outputs=0,
                   differentiable=False, doc=__doc__)
        op.cupy_kernel = _cuda_kernel
        op = _OPS.setdefault(n, op)
    return op


def groups_on(device) -> bool:
    """Whether `device` runs grouped updates as grouped launches (the CUDA backend): elsewhere
    one op per variable is just as fast, and keeps TensorFlow's op names in placement logs."""
    op = grouped_gradient_descent(2)
    return device.kernel_for(op) is not op.kernel

