"""Segment reductions: `math.unsorted_segment_sum` (an op), and `math.segment_sum`,
`math.unsorted_segment_mean` built on it.

`unsorted_segment_sum(data, segment_ids, num_segments)` adds the rows of `data` (its leading
`segment_ids.shape` dimensions) into `num_segments` outputs by id, as TensorFlow's kernel: a
negative id drops its row, an id >= num_segments is an InvalidArgumentError naming it. The
gradient gathers the output gradient back by id, zero for dropped rows (TensorFlow's
`_GatherDropNegatives`). `num_segments` must be known when the op is created (a Python int, an
eager tensor, or a size the trace can evaluate).
"""

from __future__ import annotations

from ..base import dtypes as _dt
from ..core.specs import TensorSpec
from ..base.tensor_shape import UNKNOWN_SHAPE, TensorShape
from . import math_ops as m
from .array_ops import reshape
from ..core.argument_conversion import as_tensor, check_dtype
from .creation_ops import zeros_like
from ..core.dispatch import execute
from ..core.registry import op_error, register_op
from .scatter_add import scatter_add
from ..core.shapes import static_int
from .slicing_ops import INDEX_DTYPES, gather

__all__ = ["unsorted_segment_sum", "segment_sum", "unsorted_segment_mean"]


def _segment_shape(data_shape, ids_shape, num_segments):
    if not data_shape._rank_known or not ids_shape._rank_known:
        return UNKNOWN_SHAPE
    k = len(ids_shape)
    if len(data_shape) < k or not TensorShape(tuple(data_shape)[:k]).is_compatible_with(
            ids_shape):
        raise op_error("UnsortedSegmentSum", f"data.shape = {data_shape} does not start with "
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
    kept = reshape(m.greater_equal(ids, zero), list(ids.shape) + [1] * rest)
    return m.where(kept, gathered, zeros_like(gathered)), None


def segment_sum(data, segment_ids, name=None):
    """≈ `tf.math.segment_sum` for 1-D sorted `segment_ids`: as many outputs as the largest id
    plus one (a value: known eagerly, or when the trace can evaluate it)."""
    segment_ids = as_tensor(segment_ids)
    if segment_ids.shape.rank != 1:
        raise op_error("SegmentSum", f"segment_ids should be a vector, got shape "
                                     f"{segment_ids.shape}")
    count = 0 if segment_ids.shape[0] == 0 else m.add(m.reduce_max(segment_ids), 1)
    return unsorted_segment_sum(data, segment_ids, count)


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
