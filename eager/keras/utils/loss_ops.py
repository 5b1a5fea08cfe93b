"""The eager ops that `eager.keras`'s losses and metrics are written with, under short names.

Keras writes its losses against `keras.ops`; ours are written against eager's own op library.
This module only gathers names from `eager.ops` (and adds the few small compositions Keras's
`ops` have and TensorFlow's do not: `mean`, `in_top_k`, `ceil`; `sigmoid` and `softmax`
record their logits, as Keras's backend's do), so the loss and metric modules
read like the formulas they implement. It imports no public namespace (only `eager.ops` and
below), so `eager.keras` stays a layer below `eager/__init__.py`.
"""

from __future__ import annotations

import numpy as np

from ...base import dtypes as _dt
from ...core.tensor_conversion import convert_to_tensor as _convert_to_tensor
from ...ops.array_ops import (broadcast_to, expand_dims, reshape, shape, size, squeeze,  # noqa: F401
                              stack, tile, transpose)
from ...ops.composite_ops import divide_no_nan, l2_normalize, reverse, softplus  # noqa: F401
from ...ops.creation_ops import one_hot, ones_like, zeros, zeros_like  # noqa: F401
from ...ops.cumulative_ops import cumsum  # noqa: F401
from ...ops.math_ops import abs, pow  # noqa: F401,A004 - keras.ops's names
from ...ops.math_ops import (add, argmax, cast, clip_by_value, equal, exp,  # noqa: F401
                             floordiv, greater, greater_equal, less, log, log1p, logical_and,
                             logical_not, logical_or, maximum, minimum, multiply, not_equal,
                             reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min,
                             reduce_prod, reduce_sum, rsqrt, sqrt, square, subtract, where)
from ...ops.math_ops import sigmoid as _sigmoid
from ...ops.nn_ops import (relu, sigmoid_cross_entropy_with_logits,  # noqa: F401
                           softmax_cross_entropy_with_logits,
                           sparse_softmax_cross_entropy_with_logits)
from ...ops.nn_ops import softmax as _softmax
from ...ops.segment_ops import unsorted_segment_sum  # noqa: F401
from ...ops.slicing_ops import gather  # noqa: F401
from ...ops.sort_ops import top_k  # noqa: F401
from ...tensor import is_tensor
from ..backend import epsilon  # noqa: F401 - the fuzz factor losses clip with (1e-7)
from .annotations import set_keras_logits



def dtype_name(dtype) -> str:
    """A dtype as Keras names it ("float32"), from a name, an eager DType or a numpy dtype."""
    return _dt.as_dtype(dtype).name


def convert(x, dtype=None):
    """`keras.ops.convert_to_tensor(x, dtype)` on the TF backend: values become tensors, and a
    tensor of another dtype is cast (TensorFlow's own `convert_to_tensor` would refuse)."""
    if is_tensor(x):
        if dtype is not None and x.dtype != _dt.as_dtype(dtype):
            return cast(x, dtype)
        return x
    if dtype is None:
        return _convert_to_tensor(x)
    target = _dt.as_dtype(dtype)
    if isinstance(x, (bool, int, float)):
        return _convert_to_tensor(x, dtype=target)
    return _convert_to_tensor(np.asarray(x).astype(target.as_numpy_dtype, copy=False))


def sigmoid(x):
    """sigmoid(x), remembering x as the result's logits (as Keras's backend does, so a
    cross-entropy given the result computes from x)."""
    output = _sigmoid(x)
    set_keras_logits(output, x)
    return output


def softmax(x, axis=-1):
    """softmax(x) along `axis`, remembering x as the result's logits (see `sigmoid`)."""
    output = _softmax(x, axis=axis)
    set_keras_logits(output, x)
    return output


def rank(x) -> int:
    return len(x.shape)


def mean(x, axis=None, keepdims=False):
    return reduce_mean(x, axis=axis, keepdims=keepdims)


def ceil(x):
    """ceil(x) = -floor(-x), elementwise, for float tensors."""
    return -floordiv(-x, 1.0)


def in_top_k(targets, predictions, k):
    """`tf.math.in_top_k`: whether `predictions[i, targets[i]]` is among the row's `k` largest,
    ties at the boundary counting as in (fewer than `k` entries strictly larger). A target out
    of range or a non-finite prediction is never in the top k, as in TensorFlow's kernel."""
    predictions = convert(predictions)
    num_classes = predictions.shape[-1]
    targets = cast(targets, _dt.int32)
    valid = logical_and(greater_equal(targets, 0), less(targets, num_classes))
    safe = where(valid, targets, zeros_like(targets))
    target_score = gather(predictions, safe, axis=1, batch_dims=1)
    finite = logical_and(equal(target_score, target_score),
                         less(abs(target_score), float("inf")))
    larger = reduce_sum(cast(greater(predictions, expand_dims(target_score, -1)), _dt.int32),
                        axis=-1)
    return logical_and(logical_and(valid, finite), less(larger, k))
