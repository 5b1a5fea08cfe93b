"""Segment reductions: `math.unsorted_segment_sum` and `math.segment_sum` (ops), and
`math.unsorted_segment_mean` built on the first.

`unsorted_segment_sum(data, segment_ids, num_segments)` adds the rows of `data` (its leading
`segment_ids.shape` dimensions) into `num_segments` outputs by id, as TensorFlow's kernel: a
negative id drops its row, an id >= num_segments is an InvalidArgumentError naming it. The
gradient gathers the output gradient back by id, zero for dropped rows (TensorFlow's
`_GatherDropNegatives`). `num_segments` must be known when the op is created (a Python int, an
eager tensor, or a size the trace can evaluate).

`segment_sum(data, segment_ids)` is TensorFlow's SegmentSum: the ids are a sorted vector, one per
row, and the output has a row per id from 0 to the last, so its first dimension is known only
from the values (inference leaves it None, as for `where`). Ids that are not sorted, or negative,
are TensorFlow's errors, checked in its order when the kernel sees them. The gradient gathers the
output gradient back by id.
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..core.specs import TensorSpec
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from . import math_ops as m
from .array_ops import expand_dims, reshape
from ..core.argument_conversion import as_tensor, check_dtype
from .creation_ops import zeros_like
from ..core.dispatch import execute, named
from ..core.registry import op_error, register_op
from .scatter_add import scatter_add
from ..core.shapes import static_int
from .slicing_ops import INDEX_DTYPES, gather

__all__ = ["unsorted_segment_sum", "segment_sum", "unsorted_segment_mean",
           "unsorted_segment_sqrt_n"]


def _segment_shape(data_shape, ids_shape, num_segments, op_name="UnsortedSegmentSum"):
    if not data_shape._rank_known or not ids_shape._rank_known:
        return UNKNOWN_SHAPE
    k = len(ids_shape)
    if len(data_shape) < k or not TensorShape(tuple(data_shape)[:k]).is_compatible_with(
            ids_shape):
        raise op_error(op_name, f"data.shape = {data_shape} does not start with "
                                f"segment_ids.shape = {ids_shape}")
    return TensorShape((num_segments,) + tuple(data_shape)[k:])


def _unsorted_segment_sum_infer(data, segment_ids, num_segments):
    return TensorSpec(_segment_shape(data.shape, segment_ids.shape, num_segments), data.dtype)


def _unsorted_segment_sum_kernel(xp, data, segment_ids, num_segments):
    _segment_shape(TensorShape(data.shape), TensorShape(segment_ids.shape), num_segments)
    flat = segment_ids.reshape(-1)
    rows = data.reshape((flat.size,) + data.shape[segment_ids.ndim:])
    too_large = flat >= num_segments
    if bool(too_large.any()):
        i = int(too_large.argmax())
        raise op_error("UnsortedSegmentSum", f"segment_ids[{i}] = {int(flat[i])} is out of "
                                             f"range [0, {num_segments})")
    out = xp.zeros((num_segments,) + data.shape[segment_ids.ndim:], data.dtype)
    keep = flat >= 0  # a negative id drops its row, as TensorFlow's kernel
    scatter_add(xp, out, flat[keep], rows[keep])
    return out


UNSORTED_SEGMENT_SUM = register_op("UnsortedSegmentSum", _unsorted_segment_sum_kernel,
                                   _unsorted_segment_sum_infer, dtypes=_dt.NUMERIC)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """≈ `tf.math.unsorted_segment_sum` (see the module doc)."""
    data, segment_ids = as_tensor(data), as_tensor(segment_ids)
    check_dtype(UNSORTED_SEGMENT_SUM, segment_ids, INDEX_DTYPES, "segment_ids")
    num_segments = static_int("UnsortedSegmentSum", num_segments, "num_segments")
    if num_segments < 0:
        raise op_error("UnsortedSegmentSum", f"num_segments must be >= 0, got {num_segments}")
    return execute(UNSORTED_SEGMENT_SUM, (data, segment_ids), {"num_segments": num_segments})


@UNSORTED_SEGMENT_SUM.def_gradient(keep_inputs=(1,))
def _unsorted_segment_sum_grad(forward, dy):
    ids = forward.inputs[1]
    zero = m.cast(0, ids.dtype)
    gathered = gather(dy, m.maximum(ids, zero))
    rest = len(forward.input_shapes[0]) - len(forward.input_shapes[1])
    kept = m.greater_equal(ids, zero)
    for _ in range(rest):  # one size-1 axis per data axis past the ids' (any ids' shape)
        kept = expand_dims(kept, -1)
    return m.where(kept, gathered, zeros_like(gathered)), None


# TensorFlow's SegmentSum: segment ids are a vector as long as the data's first dimension,
# sorted; the output has one row per id up to the last.
SEGMENT_ID_DTYPES = frozenset({_dt.int32, _dt.int64})


def _segment_sum_infer(data, segment_ids, op_name="SegmentSum"):
    if data.shape.rank == 0:
        raise op_error(op_name, "input must be at least rank 1", [data, segment_ids])
    if segment_ids.shape.rank not in (1, None):
        raise op_error(op_name, "segment_ids should be a vector.", [data, segment_ids])
    n, rows = segment_ids.shape[0] if segment_ids.shape.rank else None, None
    if data.shape.rank is not None:
        rows = data.shape[0]
        if n is not None and rows is not None and n != rows:
            raise op_error(op_name, "segment_ids should be the same size as dimension 0 "
                                    "of input.", [data, segment_ids])
    rest = data.shape[1:] if data.shape.rank is not None else UNKNOWN_SHAPE
    count = 0 if n == 0 else None  # the last id plus one: known only from the values
    return TensorSpec(TensorShape([count]).concatenate(rest), data.dtype)


def _check_sorted_ids(xp, data, ids, op_name="SegmentSum"):
    """TensorFlow's SegmentSum checks, in its order (its kernel walks the segments): the last id
    must be >= 0; then, segment by segment, the next id must be larger, and the id within
    [0, last + 1). Returns the output's row count."""
    if ids.shape[0] == 0:
        return 0
    last = int(ids[-1])
    if last < 0:
        raise op_error(op_name, "segment ids must be >= 0", [data, ids])
    starts = xp.concatenate([xp.ones(1, dtype=bool), ids[1:] != ids[:-1]])
    seg = ids[starts]  # each segment's id, in order
    decreasing = xp.concatenate([seg[:-1] > seg[1:], xp.zeros(1, dtype=bool)])
    bad = decreasing | (seg < 0) | (seg > last)
    if bool(bad.any()):
        k = int(bad.argmax())
        if bool(decreasing[k]):
            raise op_error(op_name, "segment ids are not increasing", [data, ids])
        raise op_error(op_name, f"Segment id {int(seg[k])} out of range [0, {last + 1}), "
                                "possibly because 'segment_ids' input is not sorted.",
                       [data, ids])
    return last + 1


def _segment_sum_kernel(xp, data, segment_ids):
    if data.ndim == 0 or segment_ids.ndim != 1 or segment_ids.shape[0] != data.shape[0]:
        raise ValueError("shapes")  # dispatch asks the inference for TensorFlow's message
    rows = _check_sorted_ids(xp, data, segment_ids)
    out = xp.zeros((rows,) + data.shape[1:], data.dtype)
    scatter_add(xp, out, segment_ids, data)
    return out


SEGMENT_SUM = register_op("SegmentSum", _segment_sum_kernel, _segment_sum_infer,
                          dtypes=_dt.NUMERIC)


def segment_sum(data, segment_ids, name=None):
    """≈ `tf.math.segment_sum`: the rows of `data` added by their sorted `segment_ids` (int32
    or int64), one output row per id from 0 to the last; an id with no row gets zeros. Ids that
    are not sorted, or negative, are TensorFlow's InvalidArgumentError ("segment ids are not
    increasing", "segment ids must be >= 0", "Segment id -1 out of range [0, 2), ..."), found
    when the kernel sees the values."""
    data, segment_ids = as_tensor(data), as_tensor(segment_ids)
    check_dtype(SEGMENT_SUM, segment_ids, SEGMENT_ID_DTYPES, "segment_ids")
    out = execute(SEGMENT_SUM, (data, segment_ids))
    return out if name is None else named(out, name)


@SEGMENT_SUM.def_gradient(keep_inputs=(1,))
def _segment_sum_grad(forward, dy):
    return gather(dy, forward.inputs[1]), None


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """≈ `tf.math.unsorted_segment_mean`: each segment's sum over its row count (0 for an empty
    segment)."""
    data, segment_ids = as_tensor(data), as_tensor(segment_ids)
    total = unsorted_segment_sum(data, segment_ids, num_segments)
    ones = m.cast(m.greater_equal(segment_ids, m.cast(0, segment_ids.dtype)), data.dtype)
    count = unsorted_segment_sum(ones, segment_ids, num_segments)
    rest = total.shape.rank - 1
    count = reshape(m.maximum(count, m.cast(1, data.dtype)), [-1] + [1] * rest)
    return m.divide(total, count)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """≈ `tf.math.unsorted_segment_sqrt_n`: each segment's sum over the square root of its row
    count (0 for an empty segment). Floating and complex data only, as TensorFlow's (whose Sqrt
    of the count rejects integers: InvalidArgumentError)."""
    data, segment_ids = as_tensor(data), as_tensor(segment_ids)
    if not (data.dtype.is_floating or data.dtype.is_complex):
        raise op_error("Sqrt", f"Value for attr 'T' of {data.dtype.name} is not in the list of "
                               "allowed values: bfloat16, half, float, double, complex64, "
                               "complex128", [data])
    total = unsorted_segment_sum(data, segment_ids, num_segments)
    real = data.dtype.real_dtype if hasattr(data.dtype, "real_dtype") else data.dtype
    ones = m.cast(m.greater_equal(segment_ids, m.cast(0, segment_ids.dtype)), real)
    count = unsorted_segment_sum(ones, segment_ids, num_segments)
    rest = total.shape.rank - 1
    root = m.sqrt(m.maximum(count, m.cast(1, real)))
    return m.divide(total, m.cast(reshape(root, [-1] + [1] * rest), data.dtype))
