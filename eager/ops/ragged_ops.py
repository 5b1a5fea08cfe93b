"""Ragged operations (`eager.ragged`): `constant`, `map_flat_values`, `range`,
`boolean_mask`, the Python operators on ragged tensors, and what `eager.reduce_*`,
`eager.concat`, `eager.stack`, `eager.cast` and the elementwise math functions do when given
one (registered with `eager.core.composite.register_api`).

Elementwise math works on the flat values: with a scalar, a dense tensor of the inner uniform
dimensions, a `[nrows, 1]` column (broadcast along each row), or a ragged tensor of the same row
partition (checked when eager, with TensorFlow's error). Reductions over a ragged axis pad the
rows with the reduction's identity (zero, one, the dtype's lowest or highest value) and reduce
the dense result, which gives TensorFlow's values, empty rows included.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError
from ..core.composite import register_api
from ..core.tensor_conversion import convert_to_tensor
from . import math_ops as m
from .array_ops import concat as _concat, expand_dims, ones_like, range as _range, reshape
from .ragged_dense import to_dense
from .ragged_indexing import gather_rows
from .ragged_math import check_same_partition
from .ragged_tensor import RaggedTensor
from .composite_ops import boolean_mask as dense_mask
from .segment_ops import unsorted_segment_sum

__all__ = ["constant", "map_flat_values", "range", "boolean_mask", "reduce", "concat",
           "stack"]


# -- constant ------------------------------------------------------------------------------------
def _scalar_depth(value, depth=0):
    """The nesting depth of the scalars in `value` (a set; empty lists give none) and the
    deepest list nesting found."""
    if isinstance(value, (list, tuple)):
        depths, deepest = set(), depth + 1
        for item in value:
            d, n = _scalar_depth(item, depth + 1)
            depths |= d
            deepest = max(deepest, n)
        return depths, deepest
    if isinstance(value, np.ndarray) and value.ndim:
        return {depth + value.ndim}, depth + value.ndim
    return {depth}, depth


def _flatten_levels(value, levels, splits):
    """The items `levels` list levels down, recording each level's row lengths in `splits`."""
    items = list(value)
    for level in builtins.range(levels):
        lengths, nxt = [], []
        for item in items:
            item = list(item)
            lengths.append(len(item))
            nxt.extend(item)
        splits[level].extend(lengths)
        items = nxt
    return items


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
             row_splits_dtype=_dt.int64):
    """≈ `tf.ragged.constant`: a ragged tensor from nested Python lists; `ragged_rank`
    (default: all but the innermost list level, less `inner_shape`'s rank) levels are ragged,
    the rest uniform. A value with no list level is a dense tensor, as in TensorFlow."""
    if isinstance(pylist, RaggedTensor):
        raise TypeError("pylist may not be a RaggedTensor or RaggedTensorValue.")
    depths, deepest = _scalar_depth(pylist)
    if len(depths) > 1:
        raise ValueError("all scalar values must have the same nesting depth")
    depth = depths.pop() if depths else deepest
    inner_rank = 0 if inner_shape is None else len(inner_shape)
    if ragged_rank is None:
        ragged_rank = max(0, depth - 1 - inner_rank)
    if ragged_rank < 0:
        raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank="
                         f"{ragged_rank}")
    if ragged_rank and depth and ragged_rank >= depth:
        raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank="
                         f"{ragged_rank}")
    splits_dtype = _dt.as_dtype(row_splits_dtype)
    lengths = [[] for _ in builtins.range(ragged_rank)]
    items = _flatten_levels(pylist, ragged_rank, lengths)
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
    if items:
        flat = convert_to_tensor(items, dtype=dtype)
    else:
        inner = list(inner_shape) if inner_shape is not None else \
            [0] * max(0, depth - 1 - ragged_rank) if depth else []
        flat = convert_to_tensor(np.zeros([0] + inner, dtype=(dtype or _dt.float32)
                                          .as_numpy_dtype), dtype=dtype or _dt.float32)
    if inner_shape is not None and flat.shape.rank is not None and \
            list(flat.shape[1:]) != list(inner_shape):
        flat = reshape(flat, [-1] + list(inner_shape))
    result = flat
    for level in reversed(lengths):
        splits = np.concatenate([[0], np.cumsum(level, dtype=np.int64)])
        result = RaggedTensor.from_row_splits(
            result, convert_to_tensor(splits.astype(splits_dtype.as_numpy_dtype)),
            validate=False)
    return result


# -- building ------------------------------------------------------------------------------------
def map_flat_values(op, *args, **kwargs):
    """≈ `tf.ragged.map_flat_values`: `op` applied to the flat values of the ragged arguments
    (which must share their row partitions), the result rebuilt with that partition."""
    partition = []

    def flat(x):
        if isinstance(x, RaggedTensor):
            partition.append(x)
            return x.flat_values
        if isinstance(x, (list, tuple)):
            return type(x)(flat(v) for v in x)
        if isinstance(x, dict):
            return {k: flat(v) for k, v in x.items()}
        return x

    args = flat(args)
    kwargs = flat(kwargs)
    if not partition:
        return op(*args, **kwargs)
    first = partition[0]
    for other in partition[1:]:
        check_same_partition(first, other)
    return first.with_flat_values(op(*args, **kwargs))


def range(starts, limits=None, deltas=1, dtype=None, name=None,  # noqa: A001 - TF's name
          row_splits_dtype=_dt.int64):
    """≈ `tf.ragged.range`: row `i` is `range(starts[i], limits[i], deltas[i])` (one argument:
    `range(0, starts[i])`)."""
    if limits is None:
        starts, limits = 0, starts
    starts, limits, deltas = (np.asarray(convert_to_tensor(v, dtype=dtype).numpy())
                              for v in (starts, limits, deltas))
    out_dtype = np.result_type(starts, limits, deltas)
    n = max(starts.size, limits.size, deltas.size)
    starts, limits, deltas = (np.broadcast_to(v.reshape(-1) if v.ndim else v, (n,))
                              for v in (starts, limits, deltas))
    if (deltas == 0).any():
        raise InvalidArgumentError(None, "RaggedRange", "Requires delta != 0")
    rows = [np.arange(s, lim, d, dtype=out_dtype) for s, lim, d in zip(starts, limits, deltas)]
    values = np.concatenate(rows) if rows else np.zeros(0, out_dtype)
    lengths = np.asarray([len(r) for r in rows], np.int64)
    splits = np.concatenate([[0], np.cumsum(lengths)]).astype(
        _dt.as_dtype(row_splits_dtype).as_numpy_dtype)
    return RaggedTensor.from_row_splits(convert_to_tensor(values), convert_to_tensor(splits),
                                        validate=False)


def boolean_mask(data, mask, name=None):
    """≈ `tf.ragged.boolean_mask`: the elements of `data` where `mask` is true, rows kept (a
    ragged result; `mask`'s shape is a prefix of `data`'s)."""
    if isinstance(mask, RaggedTensor):
        if not isinstance(data, RaggedTensor):
            raise ValueError("boolean_mask: a ragged mask needs ragged data.")
        check_same_partition(data, mask)
        if isinstance(data.values, RaggedTensor):
            return data.with_values(boolean_mask(data.values, mask.values))
        kept = m.cast(mask.values, data.row_splits.dtype)
        lengths = _segment_sum(kept, data.value_rowids(), data.nrows())
        return RaggedTensor.from_row_lengths(dense_mask(data.values, mask.values), lengths,
                                             validate=False)
    mask = convert_to_tensor(mask)
    if isinstance(data, RaggedTensor):
        return _gather_rows_mask(data, mask)
    data = convert_to_tensor(data)
    if mask.shape.rank == 1:
        return dense_mask(data, mask)
    # A dense [n, m] mask on dense data: each row keeps its true positions.
    lengths = m.reduce_sum(m.cast(mask, _dt.int64), axis=1)
    return RaggedTensor.from_row_lengths(dense_mask(data, mask), lengths, validate=False)


def _gather_rows_mask(data, mask):
    return gather_rows(data, np.flatnonzero(mask.numpy()))


def _segment_sum(x, ids, n):
    return unsorted_segment_sum(x, ids, n)


# -- reductions ----------------------------------------------------------------------------------
def _identity(kind, dtype):
    if kind in ("sum", "mean"):
        return 0
    if kind == "prod":
        return 1
    np_dtype = dtype.as_numpy_dtype
    if dtype.is_floating:
        info = np.finfo(np_dtype)
        return info.min if kind == "max" else info.max
    if dtype.is_bool:
        return kind != "max"
    info = np.iinfo(np_dtype)
    return info.min if kind == "max" else info.max


_DENSE = {"sum": m.reduce_sum, "prod": m.reduce_prod, "max": m.reduce_max,
          "min": m.reduce_min, "mean": m.reduce_mean}


def reduce(kind, rt, axis=None, keepdims=False):
    """`reduce_<kind>` of a ragged tensor over `axis` (see the module doc)."""
    dense_fn = _DENSE[kind]
    rank = rt.shape.rank
    if axis is None:
        return dense_fn(rt.flat_values, keepdims=keepdims)
    axes = [axis] if not isinstance(axis, (list, tuple)) else list(axis)
    axes = sorted({int(a) + rank if int(a) < 0 else int(a) for a in axes})
    for a in axes:
        if not 0 <= a < rank:
            raise ValueError(f"axis={a} out of bounds: expected {-rank}<=axis<{rank}.")
    if keepdims:
        raise NotImplementedError("reduce over a ragged tensor with keepdims=True is not "
                                  "supported.")
    if axes == list(builtins.range(rank)):
        return dense_fn(rt.flat_values)
    if axes[0] >= rt.ragged_rank + 1:  # only uniform inner dimensions
        return rt.with_flat_values(dense_fn(rt.flat_values, axis=[a - rt.ragged_rank
                                                                  for a in axes]))
    if kind == "mean":
        ones = rt.with_flat_values(ones_like(rt.flat_values))
        return m.truediv(reduce("sum", rt, axes), reduce("sum", ones, axes))
    if len(axes) > 1:
        result = rt
        for a in reversed(axes):
            result = reduce(kind, result, a) if isinstance(result, RaggedTensor) else \
                dense_fn(result, axis=a)
        return result
    a = axes[0]
    if a >= 2:  # inside the rows: the values' reduction, rows kept
        return rt.with_values(reduce(kind, rt.values, a - 1))
    if rt.ragged_rank > 1 and a == 0:
        raise NotImplementedError("reduce over axis 0 of a ragged tensor of ragged rank > 1 is "
                                  "not supported.")
    padded = to_dense(rt, _identity(kind, rt.dtype))
    result = dense_fn(padded, axis=a)
    if rt.ragged_rank > 1:  # the rows' rows reduced: ragged again
        return RaggedTensor.from_tensor(result) if a == 0 else _rows_of(rt, result)
    return result


def _rows_of(rt, dense):
    """`dense` ([nrows, width, ...], from a reduction over axis 1 of a ragged rank > 1 tensor)
    cut back to each row's longest inner row, as TensorFlow's result is."""
    per_row = rt.with_values(rt.values.row_lengths())
    longest = m.maximum(reduce("max", per_row, 1), m.cast(0, per_row.dtype))
    return RaggedTensor.from_tensor(dense, lengths=longest)


def _reduce_api(kind):
    def handler(input_tensor, axis=None, keepdims=False, name=None):
        return reduce(kind, input_tensor, axis, keepdims)
    return handler


for _kind in _DENSE:
    register_api(f"reduce_{_kind}", RaggedTensor, _reduce_api(_kind))


# -- concat, stack, cast, elementwise functions ----------------------------------------------------
def _as_ragged(value, like):
    if isinstance(value, RaggedTensor):
        return value
    return RaggedTensor.from_tensor(convert_to_tensor(value, dtype=like.dtype))


def concat(values, axis, name=None):
    """`eager.concat` of ragged tensors (dense ones are made ragged first): along axis 0 the
    rows follow each other; along axis 1 (ragged rank 1) row `i` joins every input's row `i`."""
    values = list(values)
    first = next(v for v in values if isinstance(v, RaggedTensor))
    values = [_as_ragged(v, first) for v in values]
    rank = first.shape.rank
    axis = int(axis) + rank if int(axis) < 0 else int(axis)
    if axis == 0:
        return _concat_rows(values)
    if axis == 1 and all(v.ragged_rank == 1 for v in values):
        lengths = [v.row_lengths() for v in values]
        n = len(values)
        # interleave: row i of every input, in order
        stacked_rows = _concat_rows(values)
        nrows = values[0].nrows()
        order = m.add(m.multiply(expand_dims(_range(0, n, dtype=nrows.dtype), 0), nrows),
                      expand_dims(_range(0, nrows, dtype=nrows.dtype), 1))
        flat_rows = gather_rows(stacked_rows, np.asarray(order.numpy()).reshape(-1))
        total = lengths[0]
        for more in lengths[1:]:
            total = m.add(total, more)
        return RaggedTensor.from_row_lengths(flat_rows.values, total, validate=False)
    raise NotImplementedError(f"concat of ragged tensors along axis {axis} is not supported "
                              "(axis 0, or 1 for ragged rank 1).")


def _concat_rows(values):
    """The rows of every ragged tensor in `values`, one after another."""
    if len(values) == 1:
        return values[0]
    dtype = values[0].row_splits.dtype
    splits, offset = [values[0].row_splits], values[0].row_splits[-1]
    for v in values[1:]:
        splits.append(m.add(m.cast(v.row_splits[1:], dtype), offset))
        offset = m.add(offset, m.cast(v.row_splits[-1], dtype))
    inner = [v.values for v in values]
    if isinstance(inner[0], RaggedTensor):
        joined = _concat_rows(inner)
    else:
        joined = _concat(inner, 0)
    return RaggedTensor.from_row_splits(joined, _concat(splits, 0), validate=False)


def stack(values, axis=0, name=None):
    """`eager.stack` of ragged tensors along axis 0: each input becomes one row."""
    values = list(values)
    first = next(v for v in values if isinstance(v, RaggedTensor))
    values = [_as_ragged(v, first) for v in values]
    if int(axis) != 0:
        raise NotImplementedError("stack of ragged tensors is supported along axis 0 only.")
    joined = _concat_rows(values)
    counts = _concat([m.cast(expand_dims(v.nrows(), 0), joined.row_splits.dtype)
                      for v in values], 0)
    return RaggedTensor.from_row_lengths(joined, counts, validate=False)


def _cast(x, dtype, name=None):
    return x.with_flat_values(m.cast(x.flat_values, dtype))


register_api("concat", RaggedTensor, concat)
register_api("stack", RaggedTensor, stack)
register_api("cast", RaggedTensor, _cast)
register_api("elementwise", RaggedTensor, lambda fn, x: x.with_flat_values(fn(x.flat_values)))
