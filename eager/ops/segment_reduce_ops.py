"""The segment reductions other than the sum: `math.segment_max/min/prod/mean` (sorted ids) and
`math.unsorted_segment_max/min/prod`, with TensorFlow's gradients.

Shapes, id checks and error wording are the sums' (`segment_ops`), under each op's own name:
sorted ids are a vector as long as the data's first dimension, checked when the kernel sees them;
unsorted ids drop a row when negative and are an InvalidArgumentError when >= num_segments.

What an empty segment holds is TensorFlow's: 0 for a sorted max, min or mean and 1 for a sorted
product; for the unsorted forms, the reduction's identity: the dtype's lowest value for max
(-3.4028235e+38 for float32, not -inf), its highest for min, 1 for prod. A NaN in a segment
makes its max or min NaN (numpy's rule; TensorFlow's CPU kernels keep or drop a NaN depending on
where it sits in the segment). An integer mean truncates toward zero, as TensorFlow's.

Gradients (TensorFlow's rules): max and min share the output gradient equally among the
entries equal to their segment's result; prod's gradient is the product of the other entries,
computed without dividing by zero (a segment with two zeros has none), conjugated for complex
data as every complex gradient in eager (TensorFlow's own rule omits the conjugate); mean's is
the output gradient over the segment's row count.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..core.argument_conversion import as_tensor, check_dtype
from ..core.dispatch import execute, named
from ..core.registry import op_error, register_op
from ..core.shapes import static_int
from ..core.specs import TensorSpec
from ..base.tensor_shape import TensorShape
from . import math_ops as m
from .array_ops import expand_dims
from .scatter_add import scatter_reduce
from .creation_ops import ones_like, zeros_like
from .segment_ops import (SEGMENT_ID_DTYPES, _check_sorted_ids, _segment_shape,
                          _segment_sum_infer, segment_sum, unsorted_segment_sum)
from .slicing_ops import INDEX_DTYPES, gather

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_mean",
           "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod"]


def _identity(reducer, dtype):
    """The value an unsorted segment with no rows holds."""
    if reducer == "multiply":
        return 1
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.min if reducer == "maximum" else info.max


# -----------------------------------------------------------------------------------------------
# Unsorted: UnsortedSegmentMax / Min / Prod
# -----------------------------------------------------------------------------------------------

def _unsorted_op(op_name, reducer, dtypes):
    def infer(data, segment_ids, num_segments):
        shape = _segment_shape(data.shape, segment_ids.shape, num_segments, op_name)
        return TensorSpec(shape, data.dtype)

    def kernel(xp, data, segment_ids, num_segments):
        _segment_shape(TensorShape(data.shape), TensorShape(segment_ids.shape), num_segments,
                       op_name)
        flat = segment_ids.reshape(-1)
        rows = data.reshape((flat.size,) + data.shape[segment_ids.ndim:])
        too_large = flat >= num_segments
        if bool(too_large.any()):
            i = int(too_large.argmax())
            raise op_error(op_name, f"segment_ids[{i}] = {int(flat[i])} is out of range "
                                    f"[0, {num_segments})")
        out = xp.full((num_segments,) + rows.shape[1:], _identity(reducer, data.dtype),
                      data.dtype)
        keep = flat >= 0  # a negative id drops its row
        scatter_reduce(xp, reducer, out, flat[keep], rows[keep])
        return out

    return register_op(op_name, kernel, infer, dtypes=dtypes,
                       doc=f"Unsorted segment {reducer} over num_segments outputs.")


UNSORTED_SEGMENT_MAX = _unsorted_op("UnsortedSegmentMax", "maximum", _dt.REAL)
UNSORTED_SEGMENT_MIN = _unsorted_op("UnsortedSegmentMin", "minimum", _dt.REAL)
UNSORTED_SEGMENT_PROD = _unsorted_op("UnsortedSegmentProd", "multiply", _dt.NUMERIC)


def _unsorted(op, data, segment_ids, num_segments, name):
    data, segment_ids = as_tensor(data), as_tensor(segment_ids)
    check_dtype(op, data, op.dtypes, "data")
    check_dtype(op, segment_ids, INDEX_DTYPES, "segment_ids")
    num_segments = static_int(op.name, num_segments, "num_segments")
    if num_segments < 0:
        raise op_error(op.name, f"num_segments must be >= 0, got {num_segments}")
    out = execute(op, (data, segment_ids), {"num_segments": num_segments})
    return out if name is None else named(out, name)


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """≈ `tf.math.unsorted_segment_max` (see the module doc)."""
    return _unsorted(UNSORTED_SEGMENT_MAX, data, segment_ids, num_segments, name)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """≈ `tf.math.unsorted_segment_min` (see the module doc)."""
    return _unsorted(UNSORTED_SEGMENT_MIN, data, segment_ids, num_segments, name)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """≈ `tf.math.unsorted_segment_prod` (see the module doc)."""
    return _unsorted(UNSORTED_SEGMENT_PROD, data, segment_ids, num_segments, name)


# -----------------------------------------------------------------------------------------------
# Sorted: SegmentMax / Min / Prod / Mean
# -----------------------------------------------------------------------------------------------

def _sorted_op(op_name, reducer, dtypes):
    def infer(data, segment_ids):
        return _segment_sum_infer(data, segment_ids, op_name)

    def kernel(xp, data, segment_ids):
        if data.ndim == 0 or segment_ids.ndim != 1 or segment_ids.shape[0] != data.shape[0]:
            raise ValueError("shapes")  # dispatch asks the inference for TensorFlow's message
        rows = _check_sorted_ids(xp, data, segment_ids, op_name)
        shape = (rows,) + data.shape[1:]
        if reducer == "mean":
            total = xp.zeros(shape, data.dtype)
            scatter_reduce(xp, "add", total, segment_ids, data)
            count = xp.bincount(segment_ids, minlength=rows).reshape((rows,) + (1,) * (
                data.ndim - 1)).astype(data.dtype)
            count = xp.maximum(count, 1)
            if data.dtype.kind in "iu":  # truncated toward zero, as TensorFlow's integer mean
                return (xp.sign(total) * (xp.abs(total) // count)).astype(data.dtype)
            return total / count
        out = xp.full(shape, _identity(reducer, data.dtype), data.dtype)
        scatter_reduce(xp, reducer, out, segment_ids, data)
        if reducer != "multiply" and rows:  # an id with no rows holds 0
            present = xp.zeros(rows, bool)
            present[segment_ids] = True
            out[~present] = 0
        return out

    return register_op(op_name, kernel, infer, dtypes=dtypes,
                       doc=f"Segment {reducer} over sorted ids.")


SEGMENT_MAX = _sorted_op("SegmentMax", "maximum", _dt.REAL)
SEGMENT_MIN = _sorted_op("SegmentMin", "minimum", _dt.REAL)
SEGMENT_PROD = _sorted_op("SegmentProd", "multiply", _dt.NUMERIC)
SEGMENT_MEAN = _sorted_op("SegmentMean", "mean", _dt.NUMERIC)


def _sorted(op, data, segment_ids, name):
    data, segment_ids = as_tensor(data), as_tensor(segment_ids)
    check_dtype(op, data, op.dtypes, "data")
    check_dtype(op, segment_ids, SEGMENT_ID_DTYPES, "segment_ids")
    out = execute(op, (data, segment_ids))
    return out if name is None else named(out, name)


def segment_max(data, segment_ids, name=None):
    """≈ `tf.math.segment_max`: per sorted id, the largest row (0 for an id with no rows)."""
    return _sorted(SEGMENT_MAX, data, segment_ids, name)


def segment_min(data, segment_ids, name=None):
    """≈ `tf.math.segment_min`: per sorted id, the smallest row (0 for an id with no rows)."""
    return _sorted(SEGMENT_MIN, data, segment_ids, name)


def segment_prod(data, segment_ids, name=None):
    """≈ `tf.math.segment_prod`: per sorted id, the product of its rows (1 with none)."""
    return _sorted(SEGMENT_PROD, data, segment_ids, name)


def segment_mean(data, segment_ids, name=None):
    """≈ `tf.math.segment_mean`: per sorted id, the mean of its rows (0 with none)."""
    return _sorted(SEGMENT_MEAN, data, segment_ids, name)


# -----------------------------------------------------------------------------------------------
# Gradients
# -----------------------------------------------------------------------------------------------

def _kept_mask(ids, rest):
    """ids >= 0, with one size-1 axis per data axis past the ids' (for `where`)."""
    kept = m.greater_equal(ids, m.cast(0, ids.dtype))
    for _ in range(rest):
        kept = expand_dims(kept, -1)
    return kept


def _clipped(ids):
    return m.maximum(ids, m.cast(0, ids.dtype))


def _extremum_grad(forward, dy, sorted_ids):
    data, ids = forward.inputs
    out = forward.outputs[0]
    rest = len(forward.input_shapes[0]) - len(forward.input_shapes[1])
    if sorted_ids:
        selected = m.equal(data, gather(out, ids))
        count = segment_sum(m.cast(selected, dy.dtype), ids)
        share = gather(m.divide(dy, m.maximum(count, ones_like(count))), ids)
    else:
        kept = _kept_mask(ids, rest)
        selected = m.logical_and(m.equal(data, gather(out, _clipped(ids))), kept)
        count = unsorted_segment_sum(m.cast(selected, dy.dtype), ids, out.shape[0])
        share = gather(m.divide(dy, m.maximum(count, ones_like(count))), _clipped(ids))
    return m.where(selected, share, zeros_like(share)), None


def _prod_grad(forward, dy, sorted_ids):
    data, ids = forward.inputs
    out = forward.outputs[0]
    rest = len(forward.input_shapes[0]) - len(forward.input_shapes[1])
    zero = zeros_like(data)
    is_zero = m.equal(data, zero)
    nonzero_data = m.where(is_zero, ones_like(data), data)
    if sorted_ids:
        zeros = segment_sum(m.cast(is_zero, _dt.int32), ids)
        nonzero_prod = segment_prod(nonzero_data, ids)
        at = ids
    else:
        zeros = unsorted_segment_sum(m.cast(is_zero, _dt.int32), ids, out.shape[0])
        nonzero_prod = unsorted_segment_prod(nonzero_data, ids, out.shape[0])
        at = _clipped(ids)
    dy = m.where(m.greater(zeros, m.cast(1, _dt.int32)), zeros_like(dy), dy)
    partial = m.where(is_zero, gather(nonzero_prod, at), m.divide(gather(out, at), nonzero_data))
    if data.dtype.is_complex:  # the conjugate, as every complex gradient here
        partial = m.conj(partial)
    grad = m.multiply(gather(dy, at), partial)
    if not sorted_ids:
        grad = m.where(_kept_mask(ids, rest), grad, zeros_like(grad))
    return grad, None


@SEGMENT_MEAN.def_gradient(keep_inputs=(1,))
def _segment_mean_grad(forward, dy):
    ids = forward.inputs[1]
    ones = m.cast(ones_like(ids), dy.dtype)
    count = segment_sum(ones, ids)
    count = m.maximum(count, ones_like(count))
    rest = len(forward.input_shapes[0]) - 1
    for _ in range(rest):
        count = expand_dims(count, -1)
    return gather(m.divide(dy, count), ids), None


for _op in (SEGMENT_MAX, SEGMENT_MIN):
    _op.def_gradient(keep_inputs=(0, 1), keep_outputs=(0,))(
        lambda forward, dy: _extremum_grad(forward, dy, True))
for _op in (UNSORTED_SEGMENT_MAX, UNSORTED_SEGMENT_MIN):
    _op.def_gradient(keep_inputs=(0, 1), keep_outputs=(0,))(
        lambda forward, dy: _extremum_grad(forward, dy, False))
SEGMENT_PROD.def_gradient(keep_inputs=(0, 1), keep_outputs=(0,))(
    lambda forward, dy: _prod_grad(forward, dy, True))
UNSORTED_SEGMENT_PROD.def_gradient(keep_inputs=(0, 1), keep_outputs=(0,))(
    lambda forward, dy: _prod_grad(forward, dy, False))
