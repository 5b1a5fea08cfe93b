"""`Sum`, `Mean` and `MeanMetricWrapper`: metrics that accumulate (weighted) values.

Values are first reduced to one per sample: sample weights are lined up with the values
(`squeeze_or_expand_to_same_rank`), extra value axes are reduced away, the weights broadcast to
the values; then `Sum` adds the weighted values and `Mean` also adds the weights (or the
number of samples) to divide by, as Keras 3 does.
"""

from __future__ import annotations

from .. import losses as _losses
from ..utils.annotations import get_keras_mask
from ..losses.loss import apply_mask, squeeze_or_expand_to_same_rank
from ..utils import loss_ops as kops
from ..losses.serialization import serialize_object
from .functions import resolve_metric_function
from .metric import Metric

__all__ = ["Sum", "Mean", "MeanMetricWrapper", "reduce_to_samplewise_values"]


def _is_keras_loss(fn) -> bool:
    """Is `fn` one of Keras's loss functions, or an instance of one of its loss classes
    (exactly, not a subclass), as Keras 3's `MeanMetricWrapper` asks?"""
    return any(fn is f for f in _losses._FUNCTIONS) or type(fn) in _losses._CLASSES


def reduce_to_samplewise_values(values, sample_weight, reduce_fn, dtype):
    """(values reduced to one per sample and weighted, the weights reduced alike)."""
    mask = get_keras_mask(values)
    values = kops.cast(kops.convert(values), dtype)
    if sample_weight is not None:
        sample_weight = kops.convert(sample_weight, dtype)
        if mask is not None:
            sample_weight = apply_mask(sample_weight, mask, dtype=dtype, reduction="sum")
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        weight_ndim, values_ndim = kops.rank(sample_weight), kops.rank(values)
        if values_ndim > weight_ndim:
            values = reduce_fn(values, axis=list(range(weight_ndim, values_ndim)))
        sample_weight = kops.broadcast_to(sample_weight, kops.shape(values))
        values = values * sample_weight
        if weight_ndim > 1:
            sample_weight = reduce_fn(sample_weight, axis=list(range(1, weight_ndim)))
    values_ndim = kops.rank(values)
    if values_ndim > 1:
        values = reduce_fn(values, axis=list(range(1, values_ndim)))
    return values, sample_weight


class Sum(Metric):
    """≈ `keras.metrics.Sum(name="sum", dtype=None)`: the (weighted) sum of the values."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(shape=(), initializer="zeros", dtype=self.dtype,
                                       name="total")

    def update_state(self, values, sample_weight=None):
        values, _ = reduce_to_samplewise_values(values, sample_weight, kops.reduce_sum,
                                                self.dtype)
        self.total.assign_add(kops.reduce_sum(values))

    def reset_state(self):
        self.total.assign(kops.zeros((), self.dtype))

    def result(self):
        return kops.cast(self.total, self.dtype)


class Mean(Metric):
    """≈ `keras.metrics.Mean(name="mean", dtype=None)`: the (weighted) mean of the values;
    0 before any update."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(shape=(), initializer="zeros", dtype=self.dtype,
                                       name="total")
        self.count = self.add_variable(shape=(), initializer="zeros", dtype=self.dtype,
                                       name="count")

    def update_state(self, values, sample_weight=None):
        values, sample_weight = reduce_to_samplewise_values(values, sample_weight,
                                                            kops.reduce_mean, self.dtype)
        self.total.assign_add(kops.reduce_sum(values))
        if sample_weight is not None:
            num_samples = kops.reduce_sum(sample_weight)
        elif kops.rank(values) >= 1:
            num_samples = kops.shape(values)[0]
        else:
            num_samples = 1
        self.count.assign_add(kops.cast(num_samples, self.dtype))

    def reset_state(self):
        self.total.assign(kops.zeros((), self.dtype))
        self.count.assign(kops.zeros((), self.dtype))

    def result(self):
        return kops.divide_no_nan(self.total, kops.cast(self.count, self.dtype))


class MeanMetricWrapper(Mean):
    """≈ `keras.metrics.MeanMetricWrapper(fn, name=None, dtype=None, **kwargs)`: the mean of
    `fn(y_true, y_pred, **kwargs)` over every sample seen (a mask on `y_pred` is honoured)."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs
        if _is_keras_loss(fn):  # a loss is minimised (the monitor callbacks' "auto" mode)
            self._direction = "down"

    def update_state(self, y_true, y_pred, sample_weight=None):
        mask = get_keras_mask(y_pred)
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        sample_weight = apply_mask(sample_weight, mask, dtype=self.dtype, reduction="sum")
        return super().update_state(values, sample_weight=sample_weight)

    def get_config(self):
        config = {**super().get_config(), "fn": serialize_object(self._fn, "keras.metrics")}
        config.update(serialize_object(self._fn_kwargs, "keras.metrics"))
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        fn = config.get("fn")
        if isinstance(fn, (dict, str)):
            config["fn"] = resolve_metric_function(fn)
        return cls(**config)
