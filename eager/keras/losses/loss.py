"""`keras.losses.Loss`: the base class, and the weighting and reduction every loss shares.

A loss's `call(y_true, y_pred)` gives one value per sample (or per element); `__call__` then
merges the sample weights with any Keras mask on the prediction and reduces, by Keras 3's rules:

* "sum_over_batch_size" (the default) and "mean": the weighted sum over the number of values;
  "sum": the weighted sum; "mean_with_sample_weight": the weighted sum over the sum of the
  weights; "none" / None: the weighted values themselves. A scalar or empty result is returned
  as is.
* Weights whose rank differs from the values' by one lose or gain a trailing axis of length 1,
  then broadcast.
* Under "mean" and "sum_over_batch_size" a mask reweights the valid entries by total/valid, so
  the mean is over the valid entries only.

Inputs are converted to the loss's dtype (float32 unless `dtype` says otherwise) first.
"""

from __future__ import annotations

from ..utils import loss_ops as kops
from ..utils.annotations import get_keras_mask
from ..backend import auto_name, floatx

__all__ = ["Loss", "Reduction", "standardize_reduction", "squeeze_or_expand_to_same_rank",
           "reduce_values", "reduce_weighted_values", "apply_mask"]

_REDUCTIONS = ("sum_over_batch_size", "sum", None, "none", "mean", "mean_with_sample_weight")


class Reduction:
    """≈ `tf.keras.losses.Reduction`: the TF 2 names of the reductions, kept by `tf.keras` for
    code written before Keras 3 (`reduction=tf.keras.losses.Reduction.NONE` before
    `tf.nn.compute_average_loss`, the distributed-training pattern). The values are Keras 3's
    strings, except `AUTO`, which Keras 3's losses reject as TF's `tf.keras` does."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


def standardize_reduction(reduction):
    if reduction not in _REDUCTIONS:
        allowed = "{" + ", ".join(repr(r) for r in _REDUCTIONS) + "}"
        raise ValueError("Invalid value for argument `reduction`. "
                         f"Expected one of {allowed}. Received: reduction={reduction}")
    return reduction


def _float_dtype(dtype):
    """A loss's or metric's dtype: `keras.backend.floatx()` (float32) unless given."""
    if dtype is None:
        return floatx()
    if hasattr(dtype, "compute_dtype"):  # a Keras-style dtype policy
        dtype = dtype.compute_dtype
    return kops.dtype_name(dtype)


class Loss:
    """≈ `keras.losses.Loss(name=None, reduction="sum_over_batch_size", dtype=None)`.

    Subclasses implement `call(y_true, y_pred)`. See the module doc for the reductions.
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or auto_name(self.__class__.__name__)
        self.reduction = standardize_reduction(reduction)
        self._dtype = _float_dtype(dtype)

    @property
    def dtype(self) -> str:
        return self._dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        in_mask = get_keras_mask(y_pred)
        y_pred = _convert_nested(y_pred, self.dtype)
        y_true = _convert_nested(y_true, self.dtype)
        losses = self.call(y_true, y_pred)
        out_mask = get_keras_mask(losses)
        if in_mask is not None and out_mask is not None:
            mask = kops.logical_and(kops.cast(in_mask, "bool"), kops.cast(out_mask, "bool"))
        else:
            mask = in_mask if in_mask is not None else out_mask
        return reduce_weighted_values(losses, sample_weight=sample_weight, mask=mask,
                                      reduction=self.reduction, dtype=self.dtype)

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{self.__class__.__name__} name={self.name}>"


def _convert_nested(value, dtype):
    if isinstance(value, (list, tuple)) and value and any(kops.is_tensor(v) for v in value):
        return type(value)(_convert_nested(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _convert_nested(v, dtype) for k, v in value.items()}
    return kops.convert(value, dtype)


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Make ranks equal when they differ by one and the longer one ends in an axis of length 1:
    the rank-1 side gains that axis (when `expand_rank_1`), else the longer side loses it."""
    r1, r2 = kops.rank(x1), kops.rank(x2)
    if r1 == r2:
        return x1, x2
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = kops.expand_dims(x2, -1)
        else:
            x1 = kops.squeeze(x1, axis=[-1])
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = kops.expand_dims(x1, -1)
        else:
            x2 = kops.squeeze(x2, axis=[-1])
    return x1, x2


def reduce_values(values, sample_weight=None, reduction="sum_over_batch_size"):
    dims = tuple(values.shape)
    if reduction is None or reduction == "none" or dims == () or dims == (0,):
        return values
    loss = kops.reduce_sum(values)
    if reduction in ("sum_over_batch_size", "mean", "mean_with_sample_weight"):
        if reduction == "mean_with_sample_weight" and sample_weight is not None:
            divisor = kops.cast(kops.reduce_sum(sample_weight), loss.dtype)
        else:
            divisor = kops.cast(kops.size(values), loss.dtype)
        loss = kops.divide_no_nan(loss, divisor)
    return loss


def reduce_weighted_values(values, sample_weight=None, mask=None,
                           reduction="sum_over_batch_size", dtype=None):
    reduction = standardize_reduction(reduction)
    values = kops.convert(values, dtype)
    if sample_weight is not None:
        sample_weight = kops.convert(sample_weight, dtype)
    if mask is not None:
        mask = kops.convert(mask, dtype)
    sample_weight = apply_mask(sample_weight, mask, dtype=values.dtype, reduction=reduction)
    if sample_weight is not None:
        sample_weight = kops.cast(sample_weight, values.dtype)
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        values = values * sample_weight
    return reduce_values(values, sample_weight, reduction)


def apply_mask(sample_weight, mask, dtype, reduction):
    """`sample_weight` with `mask` folded in (see the module doc for the mean reweighting)."""
    if mask is None:
        return sample_weight
    if reduction in ("mean", "sum_over_batch_size"):
        total = kops.cast(kops.size(mask), dtype)
        valid = kops.reduce_sum(kops.cast(mask, dtype))  # may be 0
        mask_weight = kops.divide_no_nan(total, valid)
        float_mask = kops.where(kops.cast(mask, "bool"), mask_weight * kops.ones_like(
            kops.cast(mask, dtype)), kops.zeros_like(kops.cast(mask, dtype)))
    else:
        float_mask = kops.cast(mask, dtype)
    if sample_weight is None:
        return float_mask
    sample_weight = kops.cast(sample_weight, dtype)
    float_mask, sample_weight = squeeze_or_expand_to_same_rank(float_mask, sample_weight)
    return sample_weight * float_mask
