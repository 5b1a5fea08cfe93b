"""Metrics from confusion-matrix counts at thresholds: `TruePositives`, `FalsePositives`,
`TrueNegatives`, `FalseNegatives`, `Precision`, `Recall` and `AUC`.

Each holds one count per threshold in a variable (`AUC`: four, of shape [num_thresholds] or
[num_thresholds, num_labels]); `confusion_utils` adds each batch's counts. Results follow
Keras 3: precision tp / (tp + fp) and recall tp / (tp + fn) with 0 for 0 / 0, one value per
threshold (a scalar for one threshold); AUC a Riemann sum over the curve's points.
"""

from __future__ import annotations

import numpy as np

from ..utils import loss_ops as kops
from . import confusion_utils as cu
from .metric import Metric

__all__ = ["TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives", "Precision",
           "Recall", "AUC"]


class _ConfusionMatrixConditionCount(Metric):
    """One count (true positives, ...) per threshold."""

    _condition = None

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.init_thresholds = thresholds
        self.thresholds = cu.parse_init_thresholds(thresholds, default_threshold=0.5)
        self._thresholds_distributed_evenly = cu.is_evenly_distributed_thresholds(
            self.thresholds)
        self.accumulator = self.add_variable(shape=(len(self.thresholds),),
                                             initializer="zeros", name="accumulator")

    def update_state(self, y_true, y_pred, sample_weight=None):
        cu.update_confusion_matrix_variables(
            {self._condition: self.accumulator}, y_true, y_pred, thresholds=self.thresholds,
            thresholds_distributed_evenly=self._thresholds_distributed_evenly,
            sample_weight=sample_weight)

    def result(self):
        if len(self.thresholds) == 1:
            return self.accumulator[0]
        return kops.convert(self.accumulator)

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds}


class TruePositives(_ConfusionMatrixConditionCount):
    """≈ `keras.metrics.TruePositives(thresholds=None, name=None, dtype=None)`."""
    _condition = cu.TRUE_POSITIVES


class FalsePositives(_ConfusionMatrixConditionCount):
    """≈ `keras.metrics.FalsePositives(thresholds=None, name=None, dtype=None)`."""
    _condition = cu.FALSE_POSITIVES


class TrueNegatives(_ConfusionMatrixConditionCount):
    """≈ `keras.metrics.TrueNegatives(thresholds=None, name=None, dtype=None)`."""
    _condition = cu.TRUE_NEGATIVES


class FalseNegatives(_ConfusionMatrixConditionCount):
    """≈ `keras.metrics.FalseNegatives(thresholds=None, name=None, dtype=None)`."""
    _condition = cu.FALSE_NEGATIVES


class _PrecisionRecall(Metric):
    """Precision and Recall: true positives and one other count per threshold."""

    _other = None  # "fp" for precision, "fn" for recall
    _other_name = None

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self._direction = "up"  # Keras sets it on Precision and Recall (not the counts)
        self.init_thresholds = thresholds
        self.top_k = top_k
        self.class_id = class_id
        default = 0.5 if top_k is None else cu.NEG_INF
        self.thresholds = cu.parse_init_thresholds(thresholds, default_threshold=default)
        self._thresholds_distributed_evenly = cu.is_evenly_distributed_thresholds(
            self.thresholds)
        n = len(self.thresholds)
        self.true_positives = self.add_variable(shape=(n,), initializer="zeros",
                                                name="true_positives")
        setattr(self, self._other_name, self.add_variable(shape=(n,), initializer="zeros",
                                                          name=self._other_name))

    def update_state(self, y_true, y_pred, sample_weight=None):
        cu.update_confusion_matrix_variables(
            {cu.TRUE_POSITIVES: self.true_positives,
             self._other: getattr(self, self._other_name)},
            y_true, y_pred, thresholds=self.thresholds,
            thresholds_distributed_evenly=self._thresholds_distributed_evenly,
            top_k=self.top_k, class_id=self.class_id, sample_weight=sample_weight)

    def result(self):
        tp = self.true_positives
        result = kops.divide_no_nan(tp, tp + getattr(self, self._other_name))
        return result[0] if len(self.thresholds) == 1 else result

    def get_config(self):
        return {**super().get_config(), "thresholds": self.init_thresholds,
                "top_k": self.top_k, "class_id": self.class_id}


class Precision(_PrecisionRecall):
    """≈ `keras.metrics.Precision(thresholds=None, top_k=None, class_id=None, name=None,
    dtype=None)`: tp / (tp + fp). With `top_k`, only each row's k largest predictions count
    (the default threshold is then -1e10, so they are all positive)."""
    _other, _other_name = cu.FALSE_POSITIVES, "false_positives"


class Recall(_PrecisionRecall):
    """≈ `keras.metrics.Recall(thresholds=None, top_k=None, class_id=None, name=None,
    dtype=None)`: tp / (tp + fn)."""
    _other, _other_name = cu.FALSE_NEGATIVES, "false_negatives"


_CURVES = {"roc": "ROC", "ROC": "ROC", "pr": "PR", "PR": "PR", "prgain": "PRGAIN",
           "PRGAIN": "PRGAIN"}
_SUMMATIONS = {"interpolation": "interpolation", "Interpolation": "interpolation",
               "majoring": "majoring", "Majoring": "majoring", "minoring": "minoring",
               "Minoring": "minoring"}


class AUC(Metric):
    """≈ `keras.metrics.AUC(num_thresholds=200, curve="ROC", summation_method="interpolation",
    name=None, dtype=None, thresholds=None, multi_label=False, num_labels=None,
    label_weights=None, from_logits=False)`.

    The thresholds are `num_thresholds` evenly spaced points in [0, 1] (the ends moved out by
    1e-7), or the given `thresholds` plus those two ends. `curve` is "ROC", "PR" or "PRGAIN";
    "PR" with "interpolation" uses Davis & Goadrich's interpolation, as Keras. With
    `multi_label`, each label has its own curve and the result is their (label-weighted) mean;
    the variables are created on the first update unless `num_labels` is given.
    """

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, dtype=None, thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        self._init_from_thresholds = thresholds is not None
        if thresholds is not None:
            self.num_thresholds = len(thresholds) + 2
            thresholds = sorted(thresholds)
            self._thresholds_distributed_evenly = cu.is_evenly_distributed_thresholds(
                np.array([0.0] + thresholds + [1.0]))
        else:
            if num_thresholds <= 1:
                raise ValueError("Argument `num_thresholds` must be an integer > 1. "
                                 f"Received: num_thresholds={num_thresholds}")
            self.num_thresholds = num_thresholds
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1)
                          for i in range(num_thresholds - 2)]
            self._thresholds_distributed_evenly = True
        self._thresholds = np.array([0.0 - kops.epsilon()] + thresholds + [1.0 + kops.epsilon()])
        if curve not in _CURVES:
            raise ValueError(f'Invalid AUC curve value: "{curve}". '
                             'Expected values are ["PR", "ROC", "PRGAIN"]')
        if summation_method not in _SUMMATIONS:
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". '
                             'Expected values are ["interpolation", "majoring", "minoring"]')
        self.curve = _CURVES[curve]
        self.summation_method = _SUMMATIONS[summation_method]
        super().__init__(name=name, dtype=dtype)
        self._direction = "up"
        self.multi_label = multi_label
        self.num_labels = num_labels
        self.label_weights = (None if label_weights is None
                              else kops.convert(np.asarray(label_weights), self.dtype))
        self._from_logits = from_logits
        self._built = False
        if multi_label:
            if num_labels:
                self._build([None, num_labels])
        else:
            if num_labels:
                raise ValueError("`num_labels` is needed only when `multi_label` is True.")
            self._build(None)

    @property
    def thresholds(self) -> list:
        """The thresholds, including the two ends just outside [0, 1]."""
        return list(self._thresholds)

    def _build(self, shape):
        if self.multi_label:
            if len(shape) != 2:
                raise ValueError("`y_pred` must have rank 2 when `multi_label=True`. "
                                 f"Found rank {len(shape)}. Full shape received for "
                                 f"`y_pred`: {tuple(shape)}")
            self._num_labels = shape[1]
            variable_shape = (self.num_thresholds, self._num_labels)
        else:
            variable_shape = (self.num_thresholds,)
        self._build_input_shape = shape
        self.true_positives = self.add_variable(variable_shape, "zeros", name="true_positives")
        self.false_positives = self.add_variable(variable_shape, "zeros",
                                                 name="false_positives")
        self.true_negatives = self.add_variable(variable_shape, "zeros", name="true_negatives")
        self.false_negatives = self.add_variable(variable_shape, "zeros",
                                                 name="false_negatives")
        self._built = True

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = kops.convert(y_pred)
        if not self._built:
            self._build(tuple(y_pred.shape))
        if self._from_logits:
            y_pred = kops.sigmoid(y_pred)
        cu.update_confusion_matrix_variables(
            {cu.TRUE_POSITIVES: self.true_positives, cu.TRUE_NEGATIVES: self.true_negatives,
             cu.FALSE_POSITIVES: self.false_positives,
             cu.FALSE_NEGATIVES: self.false_negatives},
            y_true, y_pred, self._thresholds,
            thresholds_distributed_evenly=self._thresholds_distributed_evenly,
            sample_weight=sample_weight, multi_label=self.multi_label,
            label_weights=None if self.multi_label else self.label_weights)

    def _average_over_labels(self, by_threshold):
        if not self.multi_label:
            return kops.reduce_sum(by_threshold)
        by_label = kops.reduce_sum(by_threshold, axis=0)
        if self.label_weights is None:
            return kops.mean(by_label)
        return kops.divide_no_nan(kops.reduce_sum(by_label * self.label_weights),
                                  kops.reduce_sum(self.label_weights))

    def interpolate_pr_auc(self):
        """The PR curve's area by Davis & Goadrich's interpolation between thresholds."""
        n = self.num_thresholds
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        prec_slope = kops.divide_no_nan(dtp, kops.maximum(dp, 0))
        intercept = tp[1:] - prec_slope * p[1:]
        safe_p_ratio = kops.where(
            kops.logical_and(p[:n - 1] > 0, p[1:] > 0),
            kops.divide_no_nan(p[:n - 1], kops.maximum(p[1:], 0)), kops.ones_like(p[1:]))
        increment = kops.divide_no_nan(prec_slope * (dtp + intercept * kops.log(safe_p_ratio)),
                                       kops.maximum(tp[1:] + fn[1:], 0))
        return self._average_over_labels(increment)

    def result(self):
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self.interpolate_pr_auc()
        n = self.num_thresholds
        tp, fp = self.true_positives, self.false_positives
        tn, fn = self.true_negatives, self.false_negatives
        recall = kops.divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = kops.divide_no_nan(fp, fp + tn), recall
        elif self.curve == "PR":
            x, y = recall, kops.divide_no_nan(tp, tp + fp)
        else:  # PRGAIN
            scaling = kops.divide_no_nan(tp + fn, tn + fp)
            recall_gain = 1.0 - scaling * kops.divide_no_nan(fn, tp)
            precision_gain = 1.0 - scaling * kops.divide_no_nan(fp, tp)
            no_tp = kops.equal(tp, 0.0)
            recall_gain = kops.where(no_tp, kops.zeros_like(recall_gain), recall_gain)
            precision_gain = kops.where(no_tp, kops.ones_like(precision_gain), precision_gain)
            x, y = kops.maximum(recall_gain, 0.0), precision_gain
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = kops.minimum(y[:n - 1], y[1:])
        else:
            heights = kops.maximum(y[:n - 1], y[1:])
        return self._average_over_labels((x[:n - 1] - x[1:]) * heights)

    def reset_state(self):
        if self._built:
            super().reset_state()

    def get_config(self):
        label_weights = self.label_weights
        if label_weights is not None:
            label_weights = label_weights.numpy().tolist()
        config = {"num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": self.multi_label,
                  "num_labels": self.num_labels, "label_weights": label_weights,
                  "from_logits": self._from_logits}
        if self._init_from_thresholds:
            config["thresholds"] = self.thresholds[1:-1]
        return {**super().get_config(), **config}
