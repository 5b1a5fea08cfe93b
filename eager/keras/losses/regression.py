"""Keras's regression losses as functions: one value per sample (the last axis is averaged).

Each converts `y_pred` to a tensor, `y_true` to its dtype, and lines their ranks up
(`squeeze_or_expand_to_same_rank`) before the formula.
"""

from __future__ import annotations

import math

import numpy as np

from ..utils import loss_ops as kops
from .loss import squeeze_or_expand_to_same_rank
from ..utils.numerical_utils import normalize

__all__ = ["mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error",
           "mean_squared_logarithmic_error", "cosine_similarity", "huber", "log_cosh"]


def _prepare(y_true, y_pred):
    y_pred = kops.convert(y_pred)
    y_true = kops.convert(y_true, y_pred.dtype)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


def mean_squared_error(y_true, y_pred):
    """mean((y_true - y_pred) ** 2, axis=-1)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return kops.mean(kops.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """mean(|y_true - y_pred|, axis=-1)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    return kops.mean(kops.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    """100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7), axis=-1)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    diff = kops.abs((y_true - y_pred) / kops.maximum(kops.abs(y_true), kops.epsilon()))
    return 100.0 * kops.mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    """mean((log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1)) ** 2, axis=-1)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    first_log = kops.log(kops.maximum(y_pred, kops.epsilon()) + 1.0)
    second_log = kops.log(kops.maximum(y_true, kops.epsilon()) + 1.0)
    return kops.mean(kops.square(first_log - second_log), axis=-1)


def cosine_similarity(y_true, y_pred, axis=-1):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis): -1 for the same direction."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_pred = normalize(y_pred, axis=axis)
    y_true = normalize(y_true, axis=axis)
    return -kops.reduce_sum(y_true * y_pred, axis=axis)


def huber(y_true, y_pred, delta=1.0):
    """mean over the last axis of 0.5 * e**2 where |e| <= delta, else
    delta * |e| - 0.5 * delta**2, with e = y_pred - y_true."""
    y_true, y_pred = _prepare(y_true, y_pred)
    delta = kops.convert(delta, y_pred.dtype)
    error = y_pred - y_true
    abs_error = kops.abs(error)
    half = kops.convert(0.5, abs_error.dtype)
    return kops.mean(kops.where(abs_error <= delta, half * kops.square(error),
                                delta * abs_error - half * kops.square(delta)), axis=-1)


def log_cosh(y_true, y_pred):
    """mean(log(cosh(y_pred - y_true)), axis=-1), as x + softplus(-2x) - log(2) (no overflow).
    log(2) is rounded to float32 first whatever the dtype, as Keras computes it."""
    y_true, y_pred = _prepare(y_true, y_pred)
    log2 = kops.convert(np.float32(math.log(2.0)), y_pred.dtype)
    x = y_pred - y_true
    return kops.mean(x + kops.softplus(x * -2.0) - log2, axis=-1)
