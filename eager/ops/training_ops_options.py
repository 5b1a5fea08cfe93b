"""Fused ops for the options every Keras 3 optimizer has: decoupled weight decay and the
exponential moving average of the weights (`eager.optimizers.Optimizer`).

Both are one op per variable and step, with `training_ops`' storage rules (locked, in place
when unshared, inf or nan stored as TensorFlow does), and Keras 3's arithmetic:

* ResourceApplyKerasWeightDecay (var, wd, lr): `var -= var * wd * lr`, before the update.
* ResourceApplyKerasMovingAverage (average, momentum, value): `average = momentum * average
  + (1 - momentum) * value`, after the update; `value` is the variable's new value.
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..base.ieee import quiet
from ..core.registry import op_error, register_op
from ..devices.resource_handles import handle_data
from .training_ops import locked_update, writable

__all__ = ["APPLY_WEIGHT_DECAY", "APPLY_MOVING_AVERAGE"]

_WEIGHT_DECAY = "ResourceApplyKerasWeightDecay"
_MOVING_AVERAGE = "ResourceApplyKerasMovingAverage"
_FLOATS = frozenset({_dt.float16, _dt.float32, _dt.float64})


def _weight_decay_kernel(xp, var, wd, lr):
    """var -= var * wd * lr (Keras' decoupled weight decay, applied before the update)."""
    storage = var.storage_or_uninitialized(_WEIGHT_DECAY)
    with storage.lock:
        for i, x in ((1, wd), (2, lr)):
            if x.dtype != storage.value.dtype:
                raise op_error(_WEIGHT_DECAY, f"input {i} must be {storage.value.dtype.name} (the "
                                              f"variable's dtype), got {x.dtype.name}")
        current = writable(storage)
        with quiet():  # inf/nan as TensorFlow whatever the user's filters (base.ieee)
            decay = xp.multiply(current, wd)
            xp.multiply(decay, lr, out=decay)
            xp.subtract(current, decay, out=current)
        storage.version += 1
    return ()


def _moving_average_math(xp, average, momentum, one_minus_momentum, value):
    tmp = xp.multiply(value, one_minus_momentum)
    xp.multiply(average, momentum, out=average)
    xp.add(average, tmp, out=average)


def _moving_average_kernel(xp, average, momentum, value):
    """average = momentum * average + (1 - momentum) * value (Keras' EMA of a weight)."""
    one_minus = 1 - momentum
    return locked_update(_MOVING_AVERAGE, (average,), value,
                         lambda a, v: _moving_average_math(xp, a, momentum, one_minus, v), xp=xp)


def _infer(op_name, n_scalars, value_at=None):
    def infer(*inputs, **attrs):
        h = inputs[0]
        if h.dtype is not _dt.resource:
            raise op_error(op_name, f"input 0 must be a resource handle, got a {h.dtype.name} "
                                    "tensor")
        dtype, shape = handle_data(h)
        if dtype not in _FLOATS:
            raise op_error(op_name, f"var must be float16, float32 or float64, got {dtype.name}")
        for i in range(1, 1 + n_scalars):
            x = inputs[i]
            if x.dtype is not dtype:
                raise op_error(op_name, f"input {i} must be {dtype.name} (the variable's dtype), "
                                        f"got {x.dtype.name}")
            if x.shape.rank is not None and x.shape.rank != 0:
                raise op_error(op_name, f"input {i} must be a scalar, got shape {x.shape}")
        if value_at is not None:
            value = inputs[value_at]
            if value.dtype is not dtype or not shape.is_compatible_with(value.shape):
                raise op_error(op_name, f"value must be {dtype.name}{shape} like the average, "
                                        f"got {value.dtype.name}{value.shape}")
        return ()
    return infer


#: (var, wd, lr): var -= var * wd * lr.
APPLY_WEIGHT_DECAY = register_op(_WEIGHT_DECAY, _weight_decay_kernel, _infer(_WEIGHT_DECAY, 2),
                                 resource_writes=(0,), num_outputs=0, differentiable=False,
                                 doc=_weight_decay_kernel.__doc__)
#: (average, momentum, value): average = momentum * average + (1 - momentum) * value.
APPLY_MOVING_AVERAGE = register_op(_MOVING_AVERAGE, _moving_average_kernel,
                                   _infer(_MOVING_AVERAGE, 1, 2), resource_writes=(0,),
                                   num_outputs=0, differentiable=False,
                                   doc=_moving_average_kernel.__doc__)
