"""Ragged to dense: `RaggedTensor.to_tensor`, as one gather per ragged level.

Each level's rows become `[nrows, width]` indices into its values with one extra padding row
appended (index `nvals`), so the dense result is `gather(concat([values, pad]), indices)`: made
of ordinary ops, it runs traced and its gradient (the gather's) reaches the flat values.
"""

from __future__ import annotations

from ..core.tensor_conversion import convert_to_tensor
from . import math_ops as m
from .array_ops import broadcast_to, concat, expand_dims, range as _range, shape as _shape
from .creation_ops import zeros
from .slicing_ops import gather

__all__ = ["to_dense", "padding_indices"]


def padding_indices(rt, width=None, nrows=None):
    """`[nrows, width]` indices into `rt.values` of each row's elements, `nvals` (the padding
    row) past a row's end; `width` defaults to the longest row, `nrows` to `rt.nrows()`."""
    splits = rt.row_splits
    dtype = splits.dtype
    lengths = rt.row_lengths()
    starts = splits[:-1]
    if nrows is not None:
        have = rt.nrows()
        extra = m.maximum(m.subtract(m.cast(nrows, dtype), have), m.cast(0, dtype))
        lengths = concat([lengths, zeros(expand_dims(extra, 0), dtype)], 0)[:nrows]
        starts = concat([starts, zeros(expand_dims(extra, 0), dtype)], 0)[:nrows]
    if width is None:
        width = m.reduce_max(concat([m.cast([0], dtype), lengths], 0))
    columns = _range(0, m.cast(width, dtype), dtype=dtype)
    indices = m.add(expand_dims(starts, 1), expand_dims(columns, 0))
    nvals = m.cast(splits[-1], dtype)
    return m.where(m.less(expand_dims(columns, 0), expand_dims(lengths, 1)), indices, nvals)


def to_dense(rt, default_value=None, shape=None):
    """See `RaggedTensor.to_tensor`."""
    dims = None
    if shape is not None:
        dims = [None if d is None else int(d) for d in
                (shape.as_list() if hasattr(shape, "as_list") else list(shape))]
    values = rt.values
    if isinstance(values, type(rt)):
        inner = to_dense(values, default_value, None if dims is None else [None] + dims[2:])
    else:
        inner = values
    dtype = rt.dtype
    default = zeros([], dtype) if default_value is None else \
        convert_to_tensor(default_value, dtype=dtype)
    row_shape = _shape(inner, out_type=rt.row_splits.dtype)[1:]
    pad_row = broadcast_to(default, concat([m.cast([1], row_shape.dtype), row_shape], 0))
    table = concat([inner, pad_row], 0)
    width = nrows = None
    if dims is not None:
        nrows, width = dims[0], dims[1] if len(dims) > 1 else None
    return gather(table, padding_indices(rt, width, nrows))
