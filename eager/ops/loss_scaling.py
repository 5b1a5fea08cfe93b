"""`eager.nn.compute_average_loss` and `eager.nn.scale_regularization_loss`: losses scaled for
a training step of one replica, as TensorFlow defines them.

TensorFlow divides by the global batch (every replica's examples) so that summing the replicas'
gradients gives the mean. Without `global_batch_size`, the global batch is this replica's batch
times the current strategy's `num_replicas_in_sync` (1 outside any strategy), and a
regularization loss is divided by `num_replicas_in_sync`; called in cross-replica context
(inside `strategy.scope()` but not in `strategy.run`) both raise TensorFlow's RuntimeError. The
strategy is `eager.distribute`'s, a layer above this one: it registers how to read the count
(`set_replica_count_hook`). `global_batch_size`, when given, must be a non-negative integer
scalar; a zero batch gives 0 (`divide_no_nan`), as in TensorFlow. Integer losses give float64,
as TensorFlow's true division does.
"""

from __future__ import annotations

from ..core.argument_conversion import as_tensor
from ..core.registry import op_error
from . import math_ops as m
from .array_ops import broadcast_to, shape as _shape
from .composite_ops import add_n, divide_no_nan

__all__ = ["compute_average_loss", "scale_regularization_loss", "set_replica_count_hook"]

#: `eager.distribute`'s answer to "how many replicas are in sync here": a function returning
#: (num_replicas_in_sync, in_cross_replica_context) for the current strategy.
_replica_count = None


def set_replica_count_hook(hook) -> None:
    """Installs `hook() -> (num_replicas_in_sync, in_cross_replica_context)` (see the module
    doc); called once by `eager.distribute` at import."""
    global _replica_count
    _replica_count = hook


def _replicas_in_sync(api_name) -> int:
    if _replica_count is None:
        return 1
    num, cross_replica = _replica_count()
    if cross_replica:
        raise RuntimeError(f"You are calling `{api_name}` in cross replica context, while it "
                           "was expected to be called in replica context.")
    return num


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """≈ `tf.nn.compute_average_loss`: sum(per_example_loss * sample_weight) / global batch
    size (see the module doc)."""
    loss = as_tensor(per_example_loss)
    if loss.shape.rank == 0:
        raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor with at "
                         f"least rank 1. Received per_example_loss={_value(loss)} with rank 0")
    dtype = loss.dtype
    if sample_weight is not None:
        weight = m.cast(as_tensor(sample_weight), dtype)
        loss = m.multiply(loss, broadcast_to(weight, _shape(loss)))
    if global_batch_size is None:
        replicas = _replicas_in_sync("compute_average_loss")
        global_batch_size = _shape(loss)[0]
        if replicas != 1:
            global_batch_size = m.multiply(global_batch_size,
                                           m.cast(replicas, global_batch_size.dtype))
    else:
        global_batch_size = as_tensor(global_batch_size)
        if global_batch_size.shape.rank != 0:
            raise ValueError("global_batch_size must be scalar.")
        if not global_batch_size.dtype.is_integer:
            raise TypeError("global_batch_size must be an integer.  Expected \"x\" to be integer "
                            "type.  Found: tensor of dtype "
                            f"<dtype: '{global_batch_size.dtype.name}'>")
        if not getattr(global_batch_size, "is_symbolic", False) and \
                int(global_batch_size.numpy()) < 0:
            raise op_error("compute_average_loss", "global_batch_size must be non-negative. "
                                                   "Condition x >= 0 did not hold element-wise.")
    total = m.reduce_sum(loss)
    if not dtype.is_floating:  # true division, as TensorFlow's: int32 gives float64
        return m.divide(total, m.cast(global_batch_size, dtype))
    return divide_no_nan(total, m.cast(global_batch_size, dtype))


def scale_regularization_loss(regularization_loss):
    """≈ `tf.nn.scale_regularization_loss`: the sum of the regularization loss (a tensor or a
    list of them) over the current strategy's number of replicas (see the module doc)."""
    replicas = _replicas_in_sync("scale_regularization_loss")
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = add_n([as_tensor(t) for t in regularization_loss])
    total = m.reduce_sum(as_tensor(regularization_loss))
    if not total.dtype.is_floating or replicas != 1:
        return m.divide(total, m.cast(replicas, total.dtype))
    return total



def _value(t):
    return t.numpy().tolist() if not getattr(t, "is_symbolic", False) else t
