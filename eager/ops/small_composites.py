"""Three of TensorFlow's Python-composed names, each a few ops: `repeat` (numpy's repeat),
`saturate_cast` (a cast that clamps to the target's range first) and `math.confusion_matrix`
(a segment sum of weights at label * num_classes + prediction). Being compositions they
trace and differentiate through their parts."""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..core.argument_conversion import as_tensor
from ..core.dispatch import named
from . import math_ops as m
from .array_ops import reshape
from .segment_ops import unsorted_segment_sum
from .slicing_ops import gather

__all__ = ["repeat", "saturate_cast", "confusion_matrix"]


def repeat(input, repeats, axis=None, name=None):  # noqa: A002 - TensorFlow's names
    """≈ `tf.repeat`: each element (each slice along `axis`; of the flattened input without
    one) repeated `repeats` times (an int, or one count per element)."""
    x = as_tensor(input)
    counts = np.asarray(repeats.numpy() if hasattr(repeats, "numpy") else repeats)
    if axis is None:
        x, axis = reshape(x, [-1]), 0
    axis %= max(x.shape.rank, 1)
    size = x.shape[axis]
    if counts.ndim and counts.shape[0] != 1 and counts.shape[0] != size:
        raise ValueError(f"Dimensions {size} and {counts.shape[0]} are not compatible")
    index = np.repeat(np.arange(size), counts.reshape(-1) if counts.ndim else int(counts))
    out = gather(x, as_tensor(index.astype(np.int32)), axis=axis)
    return out if name is None else named(out, name)


def _clamp_bound(bound, dtype):
    """`bound` (the target's limit) as the largest value of the source `dtype` inside it."""
    value = dtype.dtype.type(bound)
    if dtype.is_floating and np.isfinite(value):
        # float32(2**31 - 1) rounds up to 2**31, outside int32: step back inside, as TF
        while (bound > 0 and int(value) > bound) or (bound < 0 and int(value) < bound):
            value = np.nextafter(value, dtype.dtype.type(0))
    return value


def saturate_cast(value, dtype, name=None):
    """≈ `tf.saturate_cast`: `value` clamped to `dtype`'s range, then cast (no wrap-around)."""
    x = as_tensor(value)
    target = _dt.as_dtype(dtype)
    if x.dtype.is_complex and not target.is_complex:
        x = m.real(x)
    if target.is_integer or (target.is_floating and x.dtype.is_floating and
                             target.size < x.dtype.size):
        info = np.iinfo(target.dtype) if target.is_integer else np.finfo(target.dtype)
        source = x.dtype
        if source.is_integer:
            src = np.iinfo(source.dtype)
            low, high = max(int(info.min), int(src.min)), min(int(info.max), int(src.max))
        else:
            low, high = info.min, info.max
        low, high = _clamp_bound(low, source), _clamp_bound(high, source)
        x = m.minimum(m.maximum(x, as_tensor(np.asarray(low, source.dtype))),
                      as_tensor(np.asarray(high, source.dtype)))
    out = m.cast(x, target)
    return out if name is None else named(out, name)


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=_dt.int32,
                     name=None):
    """≈ `tf.math.confusion_matrix`: counts (or summed `weights`) of each (label, prediction)
    pair in a [num_classes, num_classes] matrix, rows labels; num_classes defaults to the
    largest class seen plus one."""
    dtype = _dt.as_dtype(dtype)
    labels = m.cast(as_tensor(labels), _dt.int64)
    predictions = m.cast(as_tensor(predictions), _dt.int64)
    if labels.shape.rank != 1 or predictions.shape.rank != 1 or \
            labels.shape[0] != predictions.shape[0]:
        raise ValueError(f"confusion_matrix: labels and predictions must be vectors of one "
                         f"length, got shapes {labels.shape} and {predictions.shape}.")
    lv, pv = labels.numpy(), predictions.numpy()
    for what, v in (("labels", lv), ("predictions", pv)):
        if v.size and v.min() < 0:
            raise InvalidArgumentError(None, None, f"`{what}` contains negative values.  "
                                                   f"Condition x >= 0 did not hold "
                                                   f"element-wise: x = {v.tolist()}")
    if num_classes is None:
        num_classes = int(max(lv.max(initial=-1), pv.max(initial=-1))) + 1
    else:
        num_classes = int(num_classes)
        for what, v in (("labels", lv), ("predictions", pv)):
            if v.size and v.max() >= num_classes:
                raise InvalidArgumentError(None, None, f"`{what}` out of bound  Condition x < "
                                                       f"y did not hold: x = {v.tolist()}, "
                                                       f"y = [{num_classes}]")
    values = (m.cast(as_tensor(weights), dtype) if weights is not None
              else as_tensor(np.ones(lv.shape, dtype.dtype)))
    cells = labels * num_classes + predictions
    out = reshape(unsorted_segment_sum(values, cells, num_classes * num_classes),
                  [num_classes, num_classes])
    return out if name is None else named(out, name)
