"""Keras's hinge losses as functions: labels of 0/1 are read as -1/1 (other labels as given)."""

from __future__ import annotations

from ..utils import loss_ops as kops

__all__ = ["hinge", "squared_hinge", "categorical_hinge"]


def _binary_labels_to_signs(y_true):
    """2 * y_true - 1 when every label is 0 or 1, else y_true unchanged (decided on the values,
    so it also holds inside a traced function)."""
    is_binary = kops.reduce_all(kops.logical_or(kops.equal(y_true, 0), kops.equal(y_true, 1)))
    return kops.where(is_binary, 2.0 * y_true - 1.0, y_true)


def _prepare(y_true, y_pred):
    y_pred = kops.convert(y_pred)
    return kops.cast(kops.convert(y_true), y_pred.dtype), y_pred


def hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0), axis=-1)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _binary_labels_to_signs(y_true)
    return kops.mean(kops.maximum(1.0 - y_true * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    """mean(max(1 - y_true * y_pred, 0) ** 2, axis=-1)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _binary_labels_to_signs(y_true)
    return kops.mean(kops.square(kops.maximum(1.0 - y_true * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    """max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0) over the last axis."""
    y_true, y_pred = _prepare(y_true, y_pred)
    pos = kops.reduce_sum(y_true * y_pred, axis=-1)
    neg = kops.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return kops.maximum(neg - pos + 1.0, kops.convert(0.0, y_pred.dtype))
