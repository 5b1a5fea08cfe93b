"""Counting true/false positives/negatives at a list of thresholds, as Keras's
`update_confusion_matrix_variables` does.

A prediction is positive at threshold t when it is > t; a label is positive when nonzero.
Counts are weighted by the sample weights (broadcast to the predictions) and, for `AUC`, the
label weights. Two ways to count, with Keras's results in both:

* any thresholds: compare every prediction with every threshold (a [thresholds, predictions]
  boolean table) and sum;
* evenly spaced thresholds (0, 1/(n-1), ..., 1, as `AUC`'s): put each prediction in the bucket
  of the last threshold below it (`ceil(p * (n - 1)) - 1`), sum the weights per bucket and take
  the reversed cumulative sum, which is O(predictions + thresholds) instead of their product.
"""

from __future__ import annotations

import numpy as np

from ..losses.loss import squeeze_or_expand_to_same_rank
from ..utils import loss_ops as kops

__all__ = ["TRUE_POSITIVES", "FALSE_POSITIVES", "TRUE_NEGATIVES", "FALSE_NEGATIVES", "NEG_INF",
           "parse_init_thresholds", "is_evenly_distributed_thresholds",
           "update_confusion_matrix_variables"]

TRUE_POSITIVES, FALSE_POSITIVES = "tp", "fp"
TRUE_NEGATIVES, FALSE_NEGATIVES = "tn", "fn"
_CONDITIONS = (TRUE_POSITIVES, FALSE_POSITIVES, TRUE_NEGATIVES, FALSE_NEGATIVES)

#: What `top_k` filtering sets the predictions outside the top k to (Keras's value).
NEG_INF = -1e10


def _to_list(x):
    return list(x) if isinstance(x, (list, tuple, np.ndarray)) else [x]


def parse_init_thresholds(thresholds, default_threshold=0.5):
    """The thresholds as a list (the default when None); each must be in [0, 1]."""
    if thresholds is not None:
        invalid = [t for t in _to_list(thresholds) if t is None or t < 0 or t > 1]
        if invalid:
            raise ValueError(f"Threshold values must be in [0, 1]. Received: {invalid}")
    return _to_list(default_threshold if thresholds is None else thresholds)


def is_evenly_distributed_thresholds(thresholds) -> bool:
    """Whether the thresholds are 0, 1/(n-1), ..., 1 (n >= 3) to within 1e-7."""
    n = len(thresholds)
    if n < 3:
        return False
    even = np.arange(n, dtype=np.float32) / (n - 1)
    return bool(np.allclose(thresholds, even, atol=kops.epsilon()))


def _filter_top_k(x, k):
    """x with every entry outside its row's top k set to NEG_INF."""
    _, top_k_idx = kops.top_k(x, k)
    mask = kops.reduce_sum(kops.one_hot(top_k_idx, x.shape[-1], dtype=x.dtype), axis=-2)
    return x * mask + NEG_INF * (1 - mask)


def update_confusion_matrix_variables(variables_to_update, y_true, y_pred, thresholds,
                                      top_k=None, class_id=None, sample_weight=None,
                                      multi_label=False, label_weights=None,
                                      thresholds_distributed_evenly=False):
    """Add this batch's counts to `variables_to_update` ({"tp"/"fp"/"tn"/"fn": variable},
    each of shape [thresholds] or, with `multi_label`, [thresholds, labels])."""
    if multi_label and label_weights is not None:
        raise ValueError("`label_weights` for multilabel data should be handled outside of "
                         "`update_confusion_matrix_variables` when `multi_label` is True.")
    if not variables_to_update:
        return
    invalid = [key for key in variables_to_update if key not in _CONDITIONS]
    if invalid:
        raise ValueError(f'Invalid keys: "{invalid}". Valid variable key options are: '
                         f'"{list(_CONDITIONS)}"')
    dtype = next(iter(variables_to_update.values())).dtype
    y_true = kops.cast(kops.convert(y_true), dtype)
    y_pred = kops.cast(kops.convert(y_pred), dtype)
    thresholds_with_epsilon = False
    if thresholds_distributed_evenly:
        thresholds_with_epsilon = thresholds[0] < 0.0 or thresholds[-1] > 1.0
    thresholds = kops.convert(np.asarray(thresholds), dtype)

    y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
    if sample_weight is not None:
        sample_weight = kops.expand_dims(kops.cast(kops.convert(sample_weight), dtype), -1)
        _, sample_weight = squeeze_or_expand_to_same_rank(y_true, sample_weight,
                                                          expand_rank_1=False)
    if top_k is not None:
        y_pred = _filter_top_k(y_pred, top_k)
    if class_id is not None:
        if kops.rank(y_pred) == 1:
            raise ValueError("When class_id is provided, y_pred must be a 2D array with shape "
                             "(num_samples, num_classes), found shape: "
                             f"{tuple(y_pred.shape)}")
        y_true = kops.expand_dims(y_true[..., class_id], -1)
        y_pred = kops.expand_dims(y_pred[..., class_id], -1)
    if label_weights is not None:
        label_weights = kops.convert(label_weights, dtype)

    if thresholds_distributed_evenly:
        counts = _bucketed_counts(y_true, y_pred, thresholds.shape[0], multi_label,
                                  sample_weight, label_weights, thresholds_with_epsilon)
    else:
        counts = _thresholded_counts(variables_to_update, y_true, y_pred, thresholds,
                                     multi_label, sample_weight, label_weights)
    for key, variable in variables_to_update.items():
        variable.assign(variable + kops.cast(counts[key], variable.dtype))


def _thresholded_counts(variables_to_update, y_true, y_pred, thresholds, multi_label,
                        sample_weight, label_weights):
    """Counts by comparing every prediction with every threshold."""
    weights = None
    if sample_weight is not None:
        weights = kops.broadcast_to(kops.cast(sample_weight, y_pred.dtype), kops.shape(y_pred))
    if label_weights is not None and not multi_label:
        lw = kops.broadcast_to(kops.expand_dims(label_weights, 0), kops.shape(y_pred))
        weights = lw if weights is None else weights * lw
    labels = kops.cast(y_true, "bool")
    if multi_label:  # [thresholds, samples, labels]
        preds = kops.expand_dims(y_pred, 0)
        labels = kops.expand_dims(labels, 0)
        limits = kops.reshape(thresholds, [-1, 1, 1])
        if weights is not None:
            weights = kops.expand_dims(weights, 0)
    else:  # [thresholds, predictions]
        preds = kops.reshape(y_pred, [1, -1])
        labels = kops.reshape(labels, [1, -1])
        limits = kops.reshape(thresholds, [-1, 1])
        if weights is not None:
            weights = kops.reshape(weights, [1, -1])
    pred_is_pos = kops.greater(preds, limits)
    label_is_pos = kops.logical_and(labels, kops.ones_like(pred_is_pos))
    wanted = set(variables_to_update)
    conditions = {TRUE_POSITIVES: (label_is_pos, pred_is_pos)}
    if wanted & {FALSE_NEGATIVES, TRUE_NEGATIVES}:
        conditions[FALSE_NEGATIVES] = (label_is_pos, kops.logical_not(pred_is_pos))
    if wanted & {FALSE_POSITIVES, TRUE_NEGATIVES}:
        label_is_neg = kops.logical_not(label_is_pos)
        conditions[FALSE_POSITIVES] = (label_is_neg, pred_is_pos)
        conditions[TRUE_NEGATIVES] = (label_is_neg, kops.logical_not(pred_is_pos))
    counts = {}
    for key in wanted:
        label, pred = conditions[key]
        hit = kops.logical_and(label, pred)
        if weights is None:
            value = kops.cast(hit, y_pred.dtype)
        else:
            value = kops.where(hit, weights * kops.ones_like(kops.cast(hit, y_pred.dtype)),
                               kops.zeros_like(kops.cast(hit, y_pred.dtype)))
        counts[key] = kops.reduce_sum(value, axis=1)
    return counts


def _bucketed_counts(y_true, y_pred, num_thresholds, multi_label, sample_weight, label_weights,
                     thresholds_with_epsilon):
    """Counts for evenly spaced thresholds by bucketing (see the module doc)."""
    weights = None
    if sample_weight is not None:
        weights = kops.broadcast_to(kops.cast(sample_weight, y_pred.dtype), kops.shape(y_pred))
    if label_weights is not None:
        lw = kops.broadcast_to(kops.expand_dims(label_weights, 0), kops.shape(y_pred))
        weights = lw if weights is None else weights * lw
    y_pred = kops.clip_by_value(y_pred, 0.0, 1.0)
    y_true = kops.cast(kops.cast(y_true, "bool"), y_true.dtype)
    if not multi_label:
        y_true = kops.reshape(y_true, [-1])
        y_pred = kops.reshape(y_pred, [-1])
        if weights is not None:
            weights = kops.reshape(weights, [-1])
    true_labels = y_true if weights is None else y_true * weights
    false_labels = (1.0 - y_true) if weights is None else (1.0 - y_true) * weights
    buckets = kops.ceil(y_pred * float(num_thresholds - 1)) - 1
    if thresholds_with_epsilon:
        buckets = kops.relu(buckets)
    buckets = kops.cast(buckets, "int32")
    if multi_label:  # one segment sum over label-major ids: label * T + bucket
        num_labels = y_pred.shape[-1]
        offsets = kops.convert(np.arange(num_labels, dtype=np.int32) * num_thresholds)
        ids = kops.where(kops.greater_equal(buckets, 0), buckets + offsets,
                         -kops.ones_like(buckets))
        ids = kops.reshape(ids, [-1])

        def per_bucket(labels):
            sums = kops.unsorted_segment_sum(kops.reshape(labels, [-1]), ids,
                                             num_labels * num_thresholds)
            return kops.transpose(kops.reshape(sums, [num_labels, num_thresholds]))

        tp_buckets, fp_buckets = per_bucket(true_labels), per_bucket(false_labels)
        total_true = kops.reduce_sum(true_labels, axis=0)
        total_false = kops.reduce_sum(false_labels, axis=0)
    else:
        tp_buckets = kops.unsorted_segment_sum(true_labels, buckets, num_thresholds)
        fp_buckets = kops.unsorted_segment_sum(false_labels, buckets, num_thresholds)
        total_true = kops.reduce_sum(true_labels)
        total_false = kops.reduce_sum(false_labels)
    tp = kops.reverse(kops.cumsum(kops.reverse(tp_buckets, [0]), axis=0), [0])
    fp = kops.reverse(kops.cumsum(kops.reverse(fp_buckets, [0]), axis=0), [0])
    return {TRUE_POSITIVES: tp, FALSE_POSITIVES: fp,
            TRUE_NEGATIVES: total_false - fp, FALSE_NEGATIVES: total_true - tp}
