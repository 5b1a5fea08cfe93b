"""Indexing a `RaggedTensor` (`rt[i]`, `rt[i, j]`, `rt[a:b]`, `rt[:, a:b]`), as TensorFlow's.

The first index picks rows: an integer gives one row (a dense tensor, or a ragged one for
ragged rank > 1), a slice a ragged tensor of the rows it selects. Later indices apply inside the
rows: on a ragged dimension only slices are allowed (each row is cut to the slice; an integer
is TensorFlow's ValueError, since rows may be too short), on a uniform inner dimension anything
a dense tensor takes. Row selections are gathers of the values, so gradients reach them; the
positions are computed from the eager row splits, so indexing beyond the first integer index
needs eager splits.
"""

from __future__ import annotations

import numpy as np

from ..tensor import EagerTensor, Tensor
from . import math_ops as m
from .slicing_ops import gather

__all__ = ["getitem", "gather_rows"]


def _int_index(k):
    if isinstance(k, (bool, np.bool_)):
        return None
    if isinstance(k, (int, np.integer)):
        return int(k)
    if isinstance(k, EagerTensor) and k.shape.rank == 0 and k.dtype.is_integer:
        return int(k.numpy())
    return None


def getitem(rt, key):
    if not isinstance(key, tuple):
        key = (key,)
    if not key:
        return rt
    first, rest = key[0], key[1:]
    if first is Ellipsis:
        if rest:
            raise ValueError("Ellipsis not supported for ragged tensors unless it is the last "
                             "index.")
        return rt
    i = _int_index(first)
    if i is not None:
        row = _row(rt, i)
        if not rest:
            return row
        return getitem(row, rest) if isinstance(row, type(rt)) else row[rest]
    if isinstance(first, slice):
        rows = _slice_rows(rt, first)
        return _index_inner(rows, rest) if rest else rows
    if first is None:
        raise ValueError("Cannot add a new axis (None) to a RaggedTensor's outer dimension.")
    raise TypeError(f"Ragged indexing takes integers and slices, got {first!r:.80}.")


def _row(rt, i):
    splits = rt.row_splits
    if splits.__class__ is EagerTensor:
        s = splits.numpy()
        n = len(s) - 1
        if not -n <= i < n:
            raise IndexError(f"Row key {i} out of bounds")
        if i < 0:
            i += n
        start, stop = int(s[i]), int(s[i + 1])
    else:
        if i < 0:
            i = m.add(rt.nrows(), i)
        start, stop = splits[i], splits[m.add(i, 1) if isinstance(i, Tensor) else i + 1]
    values = rt.values
    if isinstance(values, type(rt)):
        return _slice_rows(values, slice(start, stop))
    return values[start:stop]


def _splits(rt):
    splits = rt.row_splits
    if splits.__class__ is not EagerTensor:
        raise NotImplementedError("Slicing a RaggedTensor's rows in a traced function is not "
                                  "supported; index rows with an integer, or slice outside "
                                  "the function.")
    return splits.numpy()


def gather_rows(rt, rows):
    """The ragged tensor of rows `rows` (a sequence of row numbers) of `rt`, in that order."""
    ragged = type(rt)
    s = _splits(rt)
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    lengths = s[rows + 1] - s[rows]
    positions = np.concatenate([np.arange(s[r], s[r + 1]) for r in rows]) if rows.size else \
        np.zeros(0, np.int64)
    values = rt.values
    if isinstance(values, ragged):
        new_values = gather_rows(values, positions)
    else:
        new_values = gather(values, positions)
    splits = np.concatenate([[0], np.cumsum(lengths)]).astype(
        rt.row_splits.dtype.as_numpy_dtype)
    return ragged.from_row_splits(new_values, splits, validate=False)


def _slice_rows(rt, key):
    s = _splits(rt) if not isinstance(key.start, Tensor) else None
    if s is None:  # a row's inner rows, by tensor bounds (see `_row`)
        ragged = type(rt)
        splits = rt.row_splits[key.start:m.add(key.stop, 1)]
        first = splits[0]
        values = rt.values
        inner = values[first:splits[-1]] if not isinstance(values, ragged) else \
            _slice_rows(values, slice(first, splits[-1]))
        return ragged.from_row_splits(inner, m.subtract(splits, first), validate=False)
    n = len(s) - 1
    return gather_rows(rt, range(n)[key])


def _index_inner(rt, key):
    """Applies `key` inside each row (see the module doc)."""
    first, rest = key[0], key[1:]
    if first is Ellipsis:
        if rest:
            raise ValueError("Ellipsis not supported for ragged tensors unless it is the last "
                             "index.")
        return rt
    if not isinstance(first, slice):
        raise ValueError("Cannot index into an inner ragged dimension.")
    ragged = type(rt)
    s = _splits(rt)
    positions, lengths = [], []
    for r in range(len(s) - 1):
        picked = range(int(s[r]), int(s[r + 1]))[first]
        positions.extend(picked)
        lengths.append(len(picked))
    positions = np.asarray(positions, dtype=np.int64)
    values = rt.values
    if isinstance(values, ragged):
        new_values = gather_rows(values, positions)
        if rest:
            new_values = _index_inner(new_values, rest)
    else:
        new_values = gather(values, positions)
        if rest:
            new_values = new_values[(slice(None),) + tuple(rest)]
    splits = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(
        rt.row_splits.dtype.as_numpy_dtype)
    return ragged.from_row_splits(new_values, splits, validate=False)
