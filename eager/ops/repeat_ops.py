"""`eager.repeat` ≈ `tf.repeat`: each slice along an axis repeated, composed as a gather.

TensorFlow's semantics: `axis=None` flattens the input first; a scalar input counts as a
vector of one; `repeats` is an integer scalar or vector (rank <= 1) broadcast along the axis (a
vector must have one count per slice, or one count for all). A negative scalar count is the
InvalidArgumentError TensorFlow's Tile gives ("Expected multiples[1] >= 0, but got -1"); a
negative count in a vector repeats its slice zero times, as in TensorFlow. The gradient is
gather's (the slices' gradients summed back).

Counts known when the op is created (Python ints, arrays, eager tensors, values a trace can
evaluate) become gather indices at once; a scalar count known only when a traced function runs
is composed from `range` and `floordiv`. A vector of counts known only at run time is not
supported (NotImplementedError).
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor
from ..core.dispatch import named
from ..core.registry import op_error
from ..core.shapes import trace_time_value
from . import math_ops as m
from .array_ops import (expand_dims, gather, gather_nd, range as _range, reshape,
                        shape as _shape)

__all__ = ["repeat"]


def _counts(repeats):
    """`repeats` as a numpy int array if known now, else the symbolic tensor."""
    if getattr(repeats, "is_symbolic", False):
        known = trace_time_value(repeats)
        if known is None:
            return repeats
        repeats = known
    value = repeats.numpy() if hasattr(repeats, "numpy") else np.asarray(repeats)
    if value.dtype.kind not in "iu":
        kind = "float32" if value.dtype.kind == "f" else value.dtype.name
        raise TypeError(f"Argument `tensor` (name: repeats) must be of type integer. Received "
                        f"`tensor` = {repeats!r} of dtype: <dtype: '{kind}'>")
    return value


def repeat(input, repeats, axis=None, name=None):  # noqa: A002 - TensorFlow's name
    """≈ `tf.repeat` (see the module doc)."""
    x = as_tensor(input)
    if axis is None:
        x, axis = reshape(x, [-1]), 0
    elif x.shape.rank == 0:
        x = reshape(x, [1])
    rank = x.shape.rank
    if rank is None:
        raise NotImplementedError("repeat: the input's rank must be known (it is unknown while "
                                  "tracing).")
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"axis={axis} out of bounds: expected {-rank}<=axis<{rank}")
    axis %= rank
    counts = _counts(repeats)
    if getattr(counts, "is_symbolic", False):
        out = _symbolic_repeat(x, counts, axis)
    else:
        if counts.ndim > 1:
            raise ValueError(f"Shape {tuple(counts.shape)} must have rank at most 1")
        n = x.shape[axis]
        if counts.ndim == 0 or counts.size == 1:
            count = int(counts.reshape(()))
            if count < 0:
                raise op_error("Tile", f"Expected multiples[1] >= 0, but got {count}", [x])
            if n is None:
                out = _symbolic_repeat(x, as_tensor(count, dtype=_dt.int32), axis)
                return out if name is None else named(out, name)
            counts = np.full(n, count)
        elif n is not None and counts.size != n:
            raise ValueError(f"Dimensions {n} and {counts.size} are not compatible")
        index = np.repeat(np.arange(counts.size), np.maximum(counts, 0)).astype(np.int32)
        out = _take(x, index, axis)
    return out if name is None else named(out, name)


def _symbolic_repeat(x, count, axis):
    """x's slices along `axis` each repeated `count` (a scalar tensor) times."""
    if count.shape.rank not in (0, None):
        raise NotImplementedError("repeat: a vector of counts must be known when the function "
                                  "is traced (a scalar count may be a traced value).")
    count = m.cast(count, _dt.int32)
    n = _shape(x, out_type=_dt.int32)[axis]
    total = m.multiply(n, count)
    index = m.floordiv(_range(total), m.maximum(count, m.cast(1, _dt.int32)))
    return _take(x, index, axis)


def _take(x, index, axis):
    """gather along `axis`; along axis 0 through gather_nd, whose gradient is a dense tensor
    (TensorFlow's repeat gives a dense gradient, where gather's would be IndexedSlices)."""
    if axis == 0:
        return gather_nd(x, expand_dims(index, -1))
    return gather(x, index, axis=axis)
