"""Keras's accuracy functions: one 0/1 (float32) value per sample, which the accuracy metrics
average.

`binary_accuracy` thresholds the predictions; `categorical_accuracy` compares argmaxes of
one-hot labels and predictions; the sparse forms take class indices; the top-k forms count a
label within the k largest predictions (ties at the boundary count as in, as in
`tf.math.in_top_k`).
"""

from __future__ import annotations

from ..losses.classes import LOSS_FUNCTIONS
from ..losses.loss import squeeze_or_expand_to_same_rank
from ..utils import loss_ops as kops

__all__ = ["accuracy", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
           "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy",
           "METRIC_FUNCTIONS", "resolve_metric_function"]


def accuracy(y_true, y_pred):
    """1.0 where y_true == y_pred (Keras keeps this one unexported; `Accuracy` averages it)."""
    y_pred = kops.convert(y_pred)
    y_true = kops.convert(y_true, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return kops.cast(kops.equal(y_true, y_pred), "float32")


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """1.0 where (y_pred > threshold) equals y_true."""
    y_pred = kops.convert(y_pred)
    y_true = kops.convert(y_true)
    threshold = kops.convert(threshold, y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    y_pred = kops.cast(kops.greater(y_pred, threshold), y_true.dtype)
    return kops.cast(kops.equal(y_true, y_pred), "float32")


def categorical_accuracy(y_true, y_pred):
    """1.0 where argmax(y_true) == argmax(y_pred) along the last axis."""
    y_true = kops.argmax(kops.convert(y_true), axis=-1)
    y_pred = kops.convert(y_pred)
    y_true = kops.cast(y_true, y_pred.dtype)
    reshape_to = None
    if kops.rank(y_true) == kops.rank(y_pred):
        reshape_to = kops.shape(y_true)
        y_true = kops.squeeze(y_true, axis=[-1])
    y_pred = kops.cast(kops.argmax(y_pred, axis=-1), y_true.dtype)
    matches = kops.cast(kops.equal(y_true, y_pred), "float32")
    return matches if reshape_to is None else kops.reshape(matches, reshape_to)


def sparse_categorical_accuracy(y_true, y_pred):
    """1.0 where y_true (a class index) == argmax(y_pred) along the last axis."""
    y_pred = kops.convert(y_pred)
    y_true = kops.convert(y_true, y_pred.dtype)
    reshape_to = None
    if kops.rank(y_true) == kops.rank(y_pred) and y_true.shape[-1] == 1:
        reshape_to = kops.shape(y_true)
        y_true = kops.squeeze(y_true, axis=[-1])
    y_pred = kops.cast(kops.argmax(y_pred, axis=-1), y_true.dtype)
    matches = kops.cast(kops.equal(y_true, y_pred), "float32")
    if reshape_to is not None:
        matches = kops.reshape(matches, reshape_to)
    if kops.rank(matches) > 1 and matches.shape[-1] == 1:
        matches = kops.squeeze(matches, axis=[-1])
    return matches


def _top_k_matches(y_true, y_pred, k):
    """in_top_k over flattened leading axes, reshaped back to y_true's shape."""
    original_shape = kops.shape(y_true)
    reshape = kops.rank(y_true) > 1
    if kops.rank(y_pred) > 2:
        y_pred = kops.reshape(y_pred, [-1, y_pred.shape[-1]])
    if reshape:
        y_true = kops.reshape(y_true, [-1])
    matches = kops.cast(kops.in_top_k(kops.cast(y_true, "int32"), y_pred, k), "float32")
    return kops.reshape(matches, original_shape) if reshape else matches


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1.0 where argmax(y_true) is among the k largest predictions."""
    y_pred = kops.convert(y_pred)
    y_true = kops.argmax(kops.convert(y_true, y_pred.dtype), axis=-1)
    return _top_k_matches(y_true, y_pred, k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    """1.0 where the class index y_true is among the k largest predictions; with
    `from_sorted_ids`, y_pred holds class ids sorted by score and its first k are compared."""
    y_pred = kops.convert(y_pred)
    y_true = kops.convert(y_true, y_pred.dtype if from_sorted_ids else "int32")
    if not from_sorted_ids:
        return _top_k_matches(y_true, y_pred, k)
    original_shape = kops.shape(y_true)
    reshape = kops.rank(y_true) > 1
    if kops.rank(y_pred) > 2:
        y_pred = kops.reshape(y_pred, [-1, y_pred.shape[-1]])
    if reshape:
        y_true = kops.reshape(y_true, [-1])
    matches = kops.reduce_any(kops.equal(kops.expand_dims(y_true, 1), y_pred[:, :k]), axis=1)
    matches = kops.cast(matches, "float32")
    return kops.reshape(matches, original_shape) if reshape else matches


#: Every function a metric may wrap, by name (accuracies and the loss functions).
METRIC_FUNCTIONS = {fn.__name__: fn for fn in (
    accuracy, binary_accuracy, categorical_accuracy, sparse_categorical_accuracy,
    top_k_categorical_accuracy, sparse_top_k_categorical_accuracy)}
METRIC_FUNCTIONS.update(LOSS_FUNCTIONS)


def resolve_metric_function(fn):
    """A wrapped function from its serialized form (a name or Keras's function dict)."""
    name = fn.get("config") if isinstance(fn, dict) else fn
    if name not in METRIC_FUNCTIONS:
        raise ValueError(f"Could not interpret metric identifier: {name}")
    return METRIC_FUNCTIONS[name]
