"""Keras's probabilistic losses as functions: cross-entropies (plain and focal), KL divergence,
Poisson. Probabilities are clipped to [1e-7, 1 - 1e-7] where Keras clips them; the logits forms
are the fused ops (see `crossentropy_ops`)."""

from __future__ import annotations

import warnings

from . import crossentropy_ops
from ..utils import loss_ops as kops
from ..utils.annotations import set_keras_mask

__all__ = ["binary_crossentropy", "binary_focal_crossentropy", "categorical_crossentropy",
           "categorical_focal_crossentropy", "sparse_categorical_crossentropy",
           "kl_divergence", "poisson"]


def _check_int_axis(axis):
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} "
                         f"of type {type(axis)}")


def _warn_single_class(fn_name, y_pred):
    if y_pred.shape[-1] == 1:
        warnings.warn(f"In loss {fn_name}, expected y_pred.shape to be (batch_size, "
                      f"num_classes) with num_classes > 1. Received: "
                      f"y_pred.shape={tuple(y_pred.shape)}. Consider using "
                      "'binary_crossentropy' if you only have 2 classes.",
                      SyntaxWarning, stacklevel=3)


def _smooth_categorical(y_true, y_pred, label_smoothing):
    if not label_smoothing:
        return y_true
    num_classes = kops.cast(kops.shape(y_true)[-1], y_pred.dtype)
    return y_true * (1.0 - label_smoothing) + label_smoothing / num_classes


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Mean over `axis` of the elementwise binary cross-entropy; labels smoothed toward 0.5."""
    y_pred = kops.convert(y_pred)
    y_true = kops.cast(kops.convert(y_true), y_pred.dtype)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return kops.mean(crossentropy_ops.binary_crossentropy(y_true, y_pred, from_logits),
                     axis=axis)


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25,
                              gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1):
    """Binary cross-entropy scaled by (1 - p_t) ** gamma (and by alpha / 1 - alpha when
    `apply_class_balancing`), averaged over `axis`."""
    y_pred = kops.convert(y_pred)
    y_true = kops.cast(kops.convert(y_true), y_pred.dtype)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = kops.sigmoid(y_pred)
    bce = crossentropy_ops.binary_crossentropy(y_true, y_pred, from_logits=False)
    p_t = y_true * y_pred + (1 - y_true) * (1 - y_pred)
    focal_bce = kops.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal_bce = (y_true * alpha + (1 - y_true) * (1 - alpha)) * focal_bce
    return kops.mean(focal_bce, axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Cross-entropy along `axis` against one-hot (or soft) labels; labels smoothed toward
    1 / num_classes."""
    _check_int_axis(axis)
    y_pred = kops.convert(y_pred)
    y_true = kops.cast(kops.convert(y_true), y_pred.dtype)
    _warn_single_class("categorical_crossentropy", y_pred)
    y_true = _smooth_categorical(y_true, y_pred, label_smoothing)
    return crossentropy_ops.categorical_crossentropy(y_true, y_pred, from_logits=from_logits,
                                                     axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1):
    """Categorical cross-entropy with each class's term scaled by alpha * (1 - p) ** gamma."""
    _check_int_axis(axis)
    y_pred = kops.convert(y_pred)
    y_true = kops.cast(kops.convert(y_true), y_pred.dtype)
    _warn_single_class("categorical_focal_crossentropy", y_pred)
    y_true = _smooth_categorical(y_true, y_pred, label_smoothing)
    if from_logits:
        y_pred = kops.softmax(y_pred, axis=axis)
    output = y_pred / kops.reduce_sum(y_pred, axis=axis, keepdims=True)
    output = kops.clip_by_value(output, kops.epsilon(), 1.0 - kops.epsilon())
    cce = -y_true * kops.log(output)
    weighting = kops.pow(1.0 - output, gamma) * alpha
    return kops.reduce_sum(weighting * cce, axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None,
                                    axis=-1):
    """Cross-entropy against integer labels. With `ignore_class`, entries labelled with it give
    0 and are masked out of the loss's mean."""
    y_true, y_pred = kops.convert(y_true), kops.convert(y_pred)
    if kops.rank(y_true) == kops.rank(y_pred) and y_true.shape[axis] == 1:
        y_true = kops.squeeze(y_true, axis=[axis])
    valid = None
    if ignore_class is not None:
        valid = kops.not_equal(y_true, kops.cast(ignore_class, y_true.dtype))
        y_true = kops.where(valid, y_true, kops.zeros_like(y_true))
        y_pred = kops.where(kops.expand_dims(valid, axis), y_pred, kops.zeros_like(y_pred))
    res = crossentropy_ops.sparse_categorical_crossentropy(y_true, y_pred,
                                                           from_logits=from_logits, axis=axis)
    if valid is not None:
        static = tuple(res.shape)
        valid = kops.reshape(valid, list(static) if None not in static else kops.shape(res))
        res = kops.where(valid, res, kops.zeros_like(res))
        set_keras_mask(res, valid)
    return res


def kl_divergence(y_true, y_pred):
    """sum(y_true * log(y_true / y_pred), axis=-1), both clipped to [1e-7, 1]."""
    y_pred = kops.convert(y_pred)
    y_true = kops.convert(y_true, y_pred.dtype)
    y_true = kops.clip_by_value(y_true, kops.epsilon(), 1)
    y_pred = kops.clip_by_value(y_pred, kops.epsilon(), 1)
    return kops.reduce_sum(y_true * kops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    """mean(y_pred - y_true * log(y_pred + 1e-7), axis=-1)."""
    y_pred = kops.convert(y_pred)
    y_true = kops.convert(y_true, y_pred.dtype)
    return kops.mean(y_pred - y_true * kops.log(y_pred + kops.epsilon()), axis=-1)
