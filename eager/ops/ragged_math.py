"""Elementwise math on ragged tensors: the Python operators of `RaggedTensor`.

An operation runs on the flat values. The other operand may be a ragged tensor of the same row
partition (checked when eager, with TensorFlow's InvalidArgumentError), a scalar or a dense
tensor of the inner uniform dimensions (numpy broadcasting against the flat values), or, for
ragged rank 1, a `[nrows, 1]` column (one value per row, spread along it). Ragged operands are
recognised as `CompositeTensor`s with row splits, so this module sits below `ragged_tensor`.
"""

from __future__ import annotations

import numpy as np

from ..base.errors import InvalidArgumentError
from ..core.composite import CompositeTensor
from ..core.tensor_conversion import convert_to_tensor
from ..tensor import EagerTensor, Tensor
from .array_ops import squeeze
from .slicing_ops import gather

__all__ = ["binary", "unary", "check_same_partition"]


def _is_ragged(x) -> bool:
    return isinstance(x, CompositeTensor) and hasattr(x, "nested_row_splits")


def check_same_partition(a, b):
    """TensorFlow's InvalidArgumentError when two ragged tensors' row splits differ (checked
    when both are eager)."""
    if a.ragged_rank != b.ragged_rank:
        raise ValueError(f"Ragged ranks differ: {a.ragged_rank} and {b.ragged_rank}.")
    for x, y in zip(a.nested_row_splits, b.nested_row_splits):
        if x is y or x.__class__ is not EagerTensor or y.__class__ is not EagerTensor:
            continue
        xs, ys = x.numpy(), y.numpy()
        if xs.shape == ys.shape and (xs == ys).all():
            continue
        if xs.shape == ys.shape:
            bad = int(np.flatnonzero(xs != ys)[0])
            detail = (f"Indices of first 1 different values:\n[[{bad}]]\nCorresponding x "
                      f"values:\n[{xs[bad]}]\nCorresponding y values:\n[{ys[bad]}]\n")
        else:
            detail = ""
        raise InvalidArgumentError(
            None, None, f"Condition x == y did not hold.\n{detail}First 3 elements of x:\n"
            f"{xs[:3]}\nFirst 3 elements of y:\n{ys[:3]}")


def _dense_operand(rt, other):
    """`other` (not ragged) as an operand aligned with `rt`'s flat values."""
    if not isinstance(other, Tensor):
        other = convert_to_tensor(other, dtype_hint=rt.dtype) if not isinstance(
            other, (int, float, bool, complex)) else convert_to_tensor(other, dtype=rt.dtype)
    rank = other.shape.rank
    flat_rank = rt.flat_values.shape.rank
    if rank is not None and rank <= flat_rank - 1:
        return other  # a scalar, or the inner uniform dimensions: numpy broadcasting
    if rt.ragged_rank == 1 and rank == flat_rank + 1 and other.shape[1] == 1:
        return squeeze(gather(other, rt.value_rowids()), axis=[1])  # one value per row
    raise InvalidArgumentError(
        None, None, f"Unable to broadcast a dense tensor of shape {other.shape} to the ragged "
        f"shape {rt.shape}: a dense operand must be a scalar, have the inner uniform "
        "dimensions only, or be a [nrows, 1] column.")


def binary(fn):
    """The operator and its reflection for elementwise function `fn(x, y)`."""
    def apply(x, y):
        if _is_ragged(x) and _is_ragged(y):
            check_same_partition(x, y)
            return x.with_flat_values(fn(x.flat_values, y.flat_values))
        if _is_ragged(x):
            return x.with_flat_values(fn(x.flat_values, _dense_operand(x, y)))
        return y.with_flat_values(fn(_dense_operand(y, x), y.flat_values))

    def reflected(x, y):
        return apply(y, x)

    return apply, reflected


def unary(fn):
    """The operator for elementwise function `fn(x)`."""
    return lambda x: x.with_flat_values(fn(x.flat_values))
