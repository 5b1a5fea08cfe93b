"""The three cross-entropies under Keras's losses, as Keras's TensorFlow backend computes them.

From logits they are TensorFlow's fused, overflow-free ops (`sigmoid_cross_entropy_with_logits`,
`softmax_cross_entropy_with_logits`, `sparse_softmax_cross_entropy_with_logits`). From
probabilities the probabilities are clipped to [1e-7, 1 - 1e-7] first (the categorical one is
also renormalised to sum to 1), as Keras does. A probability that a `softmax`/`sigmoid`
computed is traced back to its logits: inside a traced function when the tensor is the output
of a Softmax/Sigmoid op, anywhere when the activation recorded its logits
(`annotations.set_keras_logits`), so a model ending in a softmax trains on the stable form.
Shape mismatches are Keras's ValueErrors, raised before any op runs.
"""

from __future__ import annotations

import warnings

from ..utils import loss_ops as kops
from ..utils.annotations import get_keras_logits

__all__ = ["binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy"]


def _recover_logits(output, from_logits, op_type, fn_name):
    """(logits or probabilities, whether they are logits) for `output` (see the module doc)."""
    recorded = get_keras_logits(output)
    from_op = False
    if recorded is not None:
        result = recorded, True
    else:
        op = getattr(output, "op", None) if getattr(output, "is_symbolic", False) else None
        from_op = op is not None and getattr(op, "type", None) == op_type
        if from_op:
            inputs = list(op.inputs)
            if len(inputs) != 1:
                raise ValueError(f"Expected 1 input for {op_type}.")
            result = inputs[0], True
        else:
            result = output, from_logits
    if from_logits and (recorded is not None or from_op):
        warnings.warn(f'"`{fn_name}` received `from_logits=True`, but the `output` argument '
                      f"was produced by a {op_type} activation and thus does not represent "
                      "logits. Was this intended?", stacklevel=3)
    return result


def _check_same_shape(target, output):
    if kops.rank(target) != kops.rank(output):
        raise ValueError("Arguments `target` and `output` must have the same rank (ndim). "
                         f"Received: target.shape={tuple(target.shape)}, "
                         f"output.shape={tuple(output.shape)}")
    for a, b in zip(target.shape, output.shape):
        if a is not None and b is not None and a != b:
            raise ValueError("Arguments `target` and `output` must have the same shape. "
                             f"Received: target.shape={tuple(target.shape)}, "
                             f"output.shape={tuple(output.shape)}")


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary cross-entropy (no reduction)."""
    target, output = kops.convert(target), kops.convert(output)
    _check_same_shape(target, output)
    output, from_logits = _recover_logits(output, from_logits, "Sigmoid", "binary_crossentropy")
    if from_logits:
        return kops.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    output = kops.clip_by_value(output, kops.epsilon(), 1.0 - kops.epsilon())
    bce = target * kops.log(output)
    bce = bce + (1 - target) * kops.log(1 - output)
    return -bce


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy between distributions along `axis` (that axis is reduced)."""
    target, output = kops.convert(target), kops.convert(output)
    if kops.rank(target) < 1:
        raise ValueError("Arguments `target` and `output` must be at least rank 1. Received: "
                         f"target.shape={tuple(target.shape)}, "
                         f"output.shape={tuple(output.shape)}")
    _check_same_shape(target, output)
    output, from_logits = _recover_logits(output, from_logits, "Softmax",
                                          "categorical_crossentropy")
    if from_logits:
        return kops.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    output = output / kops.reduce_sum(output, axis=axis, keepdims=True)
    output = kops.clip_by_value(output, kops.epsilon(), 1.0 - kops.epsilon())
    return -kops.reduce_sum(target * kops.log(output), axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy against integer class indices along the last axis."""
    output = kops.convert(output)
    if axis != -1 and axis != kops.rank(output) - 1:
        raise ValueError(f"Only axis=-1 is currently supported. Received: axis={axis}")
    output, from_logits = _recover_logits(output, from_logits, "Softmax",
                                          "sparse_categorical_crossentropy")
    target = kops.cast(kops.convert(target), "int64")
    if kops.rank(target) == kops.rank(output) and target.shape[-1] == 1:
        target = kops.squeeze(target, axis=[-1])
    if kops.rank(output) < 1:
        raise ValueError("Argument `output` must be at least rank 1. Received: "
                         f"output.shape={tuple(output.shape)}")
    if kops.rank(target) != kops.rank(output) - 1:
        raise ValueError("Argument `output` must have rank (ndim) `target.ndim - 1`. Received: "
                         f"target.shape={tuple(target.shape)}, "
                         f"output.shape={tuple(output.shape)}")
    for a, b in zip(target.shape, output.shape[:-1]):
        if a is not None and b is not None and a != b:
            raise ValueError("Arguments `target` and `output` must have the same shape up "
                             f"until the last dimension: target.shape={tuple(target.shape)}, "
                             f"output.shape={tuple(output.shape)}")
    if not from_logits:
        output = kops.log(kops.clip_by_value(output, kops.epsilon(), 1 - kops.epsilon()))
    return kops.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
