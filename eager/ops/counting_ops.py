"""Counting values: `eager.unique`, `eager.unique_with_counts`, `eager.math.bincount` (ops), and
`eager.math.confusion_matrix` and `eager.math.in_top_k` composed from others.

`Unique`/`UniqueWithCounts` (TensorFlow's ops): the distinct entries of a vector in order of
first appearance, each entry's position among them (`idx`, int32 or int64 as `out_idx`), and
for the second how often each occurs. Equality is the dtype's `==`, as TensorFlow's hash map
compares: -0.0 equals 0.0 and a NaN equals nothing, so each NaN is its own entry. The output
length is known only from the values (None when traced). No gradient, as in TensorFlow.

`DenseBincount` (behind `bincount`): how often each value in [0, size) occurs in `arr`, or the
sum of its `weights`; with `binary_output`, 1 where it occurs. Values >= size are dropped,
negative values are TensorFlow's InvalidArgumentError ("Input arr must be non-negative!").
`bincount` computes `size` as TensorFlow does: max(arr) + 1, at least `minlength`, at most
`maxlength`; a rank-2 `arr` with `axis=-1` counts each row.
"""

from __future__ import annotations

import collections

import numpy as np

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor, check_dtype
from ..core.dispatch import execute, named
from ..core.registry import op_error, register_op
from ..core.shapes import static_int
from ..core.specs import TensorSpec
from . import math_ops as m
from .array_ops import expand_dims, reshape, shape as _shape, stack
from .composite_ops import is_finite
from .creation_ops import ones_like, range as _range
from .scatter_add import scatter_add
from .slicing_ops import gather_nd, scatter_nd

__all__ = ["unique", "unique_with_counts", "bincount", "confusion_matrix", "in_top_k"]

#: ≈ TensorFlow's result types (namedtuples named after the ops).
Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
_OUT_IDX = (_dt.int32, _dt.int64)


# -----------------------------------------------------------------------------------------------
# UniqueWithCounts (Unique is its first two outputs)
# -----------------------------------------------------------------------------------------------

def _unique_infer(x, out_idx):
    if x.shape.rank not in (1, None):
        raise op_error("UniqueWithCounts", "unique expects a 1D vector.", [x])
    n = x.shape[0] if x.shape.rank else None
    return (TensorSpec([0 if n == 0 else None], x.dtype), TensorSpec([n], out_idx),
            TensorSpec([0 if n == 0 else None], out_idx))


def _unique_kernel(xp, x, out_idx):
    if x.ndim != 1:
        raise op_error("UniqueWithCounts", "unique expects a 1D vector.")
    host = x if xp is np else xp.asnumpy(x)  # CuPy's unique has no equal_nan or object arrays
    _, first, inverse, counts = np.unique(host, return_index=True, return_inverse=True,
                                          return_counts=True, equal_nan=False)
    order = np.argsort(first, kind="stable")  # sorted values -> first-appearance order
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    idx = rank[inverse.reshape(-1)].astype(out_idx.dtype)
    return (x[xp.asarray(first[order])], xp.asarray(idx),
            xp.asarray(counts[order].astype(out_idx.dtype)))


UNIQUE_WITH_COUNTS = register_op("UniqueWithCounts", _unique_kernel, _unique_infer,
                                 num_outputs=3, dtypes=_dt.ALL_AND_STRING, differentiable=False,
                                 doc="Distinct entries of a vector, their positions and counts.")


def _unique(x, out_idx):
    x = as_tensor(x)
    out_idx = _dt.as_dtype(out_idx)
    if out_idx not in _OUT_IDX:
        raise op_error("UniqueWithCounts", f"Value for attr 'out_idx' of {out_idx.name} is not in "
                                           "the list of allowed values: int32, int64")
    check_dtype(UNIQUE_WITH_COUNTS, x, UNIQUE_WITH_COUNTS.dtypes)
    return execute(UNIQUE_WITH_COUNTS, (x,), {"out_idx": out_idx})


def unique(x, out_idx=_dt.int32, name=None):
    """≈ `tf.unique`: `(y, idx)`, the distinct entries of the vector `x` in order of first
    appearance and each entry's index into them (see the module doc)."""
    y, idx, _ = _unique(x, out_idx)
    return Unique(y, idx)


def unique_with_counts(x, out_idx=_dt.int32, name=None):
    """≈ `tf.unique_with_counts`: `(y, idx, count)` (see the module doc)."""
    return UniqueWithCounts(*_unique(x, out_idx))


# -----------------------------------------------------------------------------------------------
# DenseBincount
# -----------------------------------------------------------------------------------------------

def _bincount_infer(arr, size, weights, binary_output):
    if arr.shape.rank is not None and arr.shape.rank > 2:
        raise op_error("DenseBincount", "Shape must be at most rank 2 but is rank "
                                        f"{arr.shape.rank}", [arr, weights])
    if arr.shape.rank == 2:  # the size is a value: known when the kernel runs
        return TensorSpec([arr.shape[0], None], weights.dtype)
    return TensorSpec([None], weights.dtype)


def _bincount_kernel(xp, arr, size, weights, binary_output):
    size = int(size)
    if arr.size and bool((arr < 0).any()):
        raise op_error("DenseBincount", "Input arr must be non-negative!")
    weighted = weights.size != 0
    if weighted and weights.shape != arr.shape:
        raise op_error("DenseBincount", "`weights` must be the same shape as `arr` or a length-0 "
                                        "`Tensor`, in which case it acts as all weights equal "
                                        f"to 1. Received {list(weights.shape)}")
    dtype = weights.dtype
    rows = arr if arr.ndim == 2 else arr[None, :]
    out = xp.zeros((rows.shape[0], size), dtype)
    keep = rows < size
    row_of = xp.broadcast_to(xp.arange(rows.shape[0])[:, None], rows.shape)
    flat = (row_of * size + rows)[keep].astype(np.int64)
    if binary_output:
        out.reshape(-1)[flat] = 1
    else:
        values = weights.reshape(rows.shape)[keep] if weighted else xp.ones(flat.size, dtype)
        scatter_add(xp, out.reshape(-1), flat, values)
    return out if arr.ndim == 2 else out.reshape(size)


DENSE_BINCOUNT = register_op("DenseBincount", _bincount_kernel, _bincount_infer,
                             dtypes=_dt.REAL, differentiable=False,
                             doc="Counts (or summed weights) of each value in [0, size).")


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dt.int32, name=None,
             axis=None, binary_output=False):
    """≈ `tf.math.bincount` (see the module doc): the result has `dtype` (int32 by default)
    unless `weights` are given, when it has theirs; `binary_output` and `weights` exclude each
    other (ValueError). `axis` is None or 0 (flatten) or -1 (count each row of a matrix)."""
    if weights is not None and binary_output:
        raise ValueError("Arguments `binary_output` and `weights` are mutually exclusive. Please "
                         "specify only one.")
    if axis not in (None, 0, -1):
        raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are "
                         "currently supported.")
    arr = m.cast(as_tensor(arr), _dt.int32)  # TensorFlow counts int32 values
    if axis is None or axis == 0 or arr.shape.rank in (0, 1):
        arr = _flatten(arr)
        if weights is not None:
            weights = _flatten(as_tensor(weights))
    elif arr.shape.rank != 2:
        raise ValueError(f"bincount: axis=-1 needs a rank-2 arr, got shape {arr.shape}")
    size = _size(arr, minlength, maxlength)
    # The result has the weights' dtype; without weights, an empty vector carries `dtype`.
    weights = as_tensor(np.zeros(0, _dt.as_dtype(dtype).dtype)) if weights is None else \
        as_tensor(weights)
    check_dtype(DENSE_BINCOUNT, weights, DENSE_BINCOUNT.dtypes, "weights")
    out = execute(DENSE_BINCOUNT, (arr, size, weights), {"binary_output": bool(binary_output)})
    return out if name is None else named(out, name)


def _flatten(x):
    return reshape(x, [-1])


def _size(arr, minlength, maxlength):
    """TensorFlow's output length, an int32 scalar tensor: max(arr) + 1 (0 for an empty arr),
    at least minlength, at most maxlength."""
    size = m.add(m.reduce_max(_flatten(arr)) if arr.shape.num_elements() != 0 else
                 as_tensor(-1, dtype=_dt.int32), m.cast(1, _dt.int32))
    size = m.maximum(size, m.cast(0, _dt.int32))
    if minlength is not None:
        size = m.maximum(size, m.cast(as_tensor(minlength), _dt.int32))
    if maxlength is not None:
        size = m.minimum(size, m.cast(as_tensor(maxlength), _dt.int32))
    return size


# -----------------------------------------------------------------------------------------------
# confusion_matrix and in_top_k (composites)
# -----------------------------------------------------------------------------------------------

def _assert(condition, message):
    if not bool(np.all(condition)):
        raise op_error("confusion_matrix", message)


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=_dt.int32,
                     name=None):
    """≈ `tf.math.confusion_matrix`: entry [i, j] counts (or sums the `weights` of) the
    examples with label i and prediction j, as a `num_classes` x `num_classes` tensor of
    `dtype` (num_classes defaults to the largest label or prediction plus one). Negative or
    out-of-range labels or predictions are TensorFlow's InvalidArgumentError ("`labels`
    contains negative values", "`labels` out of bound"), checked when the values are known."""
    labels = m.cast(as_tensor(labels), _dt.int64)
    predictions = m.cast(as_tensor(predictions), _dt.int64)
    dtype = _dt.as_dtype(dtype)
    ls, ps = labels.shape, predictions.shape
    if ls.rank is not None and ps.rank is not None and not ls.is_compatible_with(ps):
        raise op_error("confusion_matrix", f"Shapes of all inputs must match: values[0].shape = "
                                           f"{list(ls)} != values[1].shape = {list(ps)}",
                       [labels, predictions])
    concrete = not (getattr(labels, "is_symbolic", False) or
                    getattr(predictions, "is_symbolic", False))
    if concrete:
        lv, pv = labels.numpy(), predictions.numpy()
        _assert(lv >= 0, "`labels` contains negative values. Condition x >= 0 did not hold "
                         "element-wise.")
        _assert(pv >= 0, "`predictions` contains negative values. Condition x >= 0 did not "
                         "hold element-wise.")
    if num_classes is None:
        if concrete:
            size = int(max(lv.max(initial=-1), pv.max(initial=-1))) + 1
        else:
            size = m.add(m.maximum(m.reduce_max(labels), m.reduce_max(predictions)),
                         m.cast(1, _dt.int64))
    else:
        size = num_classes if getattr(num_classes, "is_symbolic", False) else \
            static_int("confusion_matrix", num_classes, "num_classes")
        if concrete and not getattr(size, "is_symbolic", False):
            _assert(lv < size, "`labels` out of bound. Condition x < y did not hold.")
            _assert(pv < size, "`predictions` out of bound. Condition x < y did not hold.")
    values = ones_like(labels, dtype=dtype) if weights is None else \
        m.cast(as_tensor(weights), dtype)
    indices = stack([labels, predictions], axis=1)
    shape = [size, size] if isinstance(size, int) else stack([size, size])
    out = scatter_nd(indices, values, shape)
    return out if name is None else named(out, name)


def in_top_k(targets, predictions, k, name=None):
    """≈ `tf.math.in_top_k` (TensorFlow's InTopKV2): for each row of `predictions` (float32,
    [batch, classes]), whether its `targets` entry (int32 or int64) is among the `k` largest,
    ties at the boundary counting as in: fewer than `k` predictions in the row are larger than
    the target's. A target out of range, or a row holding inf or NaN, gives False."""
    targets, predictions = as_tensor(targets), as_tensor(predictions)
    if predictions.dtype != _dt.float32:
        got = _C_NAMES.get(predictions.dtype, predictions.dtype.name)
        raise op_error("InTopKV2", "cannot compute InTopKV2 as input #0(zero-based) was "
                                   f"expected to be a float tensor but is a {got} tensor")
    if targets.dtype not in _OUT_IDX:
        raise op_error("InTopKV2", f"Value for attr 'T' of {targets.dtype.name} is not in the "
                                   "list of allowed values: int32, int64")
    p, t = predictions.shape, targets.shape
    if p.rank is not None and p.rank != 2:
        raise op_error("InTopKV2", "predictions must be 2-dimensional", [predictions, targets])
    if t.rank is not None and t.rank != 1:
        raise op_error("InTopKV2", "targets must be 1-dimensional", [predictions, targets])
    if p.rank == 2 and t.rank == 1 and None not in (p[0], t[0]) and p[0] != t[0]:
        raise op_error("InTopKV2", f"First dimension of predictions {p[0]} must match length of "
                                   f"targets {t[0]}", [predictions, targets])
    classes = m.cast(_shape(predictions)[1], targets.dtype)
    zero = m.cast(0, targets.dtype)
    in_range = m.logical_and(m.greater_equal(targets, zero), m.less(targets, classes))
    clipped = m.minimum(m.maximum(targets, zero), m.maximum(m.subtract(classes, m.cast(
        1, targets.dtype)), zero))
    rows = m.cast(_range(_shape(targets)[0]), targets.dtype)
    target_value = gather_nd(predictions, stack([rows, clipped], axis=1))
    larger = m.reduce_sum(m.cast(m.greater(predictions, expand_dims(target_value, 1)),
                                 _dt.int64), axis=1)
    finite = m.reduce_all(is_finite(predictions), axis=1)
    k = m.cast(as_tensor(k), _dt.int64)
    out = m.logical_and(m.logical_and(in_range, finite), m.less(larger, k))
    return out if name is None else named(out, name)


#: TensorFlow's C++ names of the dtypes its InTopKV2 error names.
_C_NAMES = {_dt.float64: "double", _dt.float16: "half"}
