"""Converted `and`, `or` and `not`.

Python's `a and b` evaluates `b` only when `a` is true; on a traced tensor that is decided when
the function runs, so `and_` makes it an `eager.cond` (`b` is traced in one branch, `a` is the
other's result), as TensorFlow's AutoGraph does. The operands arrive as functions so that `b`
is still evaluated lazily when `a` is a Python value. `not_` is `eager.logical_not` on any
tensor, Python's `not` on anything else.
"""

from __future__ import annotations

from ...control_flow.api import cond as _cond
from ...graph.symbolic import SymbolicTensor
from ...ops.math_ops import logical_not
from ...tensor import Tensor

__all__ = ["and_", "or_", "not_"]


def and_(a, b):
    """`a() and b()`: staged when `a()` is a symbolic tensor."""
    value = a()
    if isinstance(value, SymbolicTensor):
        return _cond(value, b, lambda: value)
    return value and b()


def or_(a, b):
    """`a() or b()`: staged when `a()` is a symbolic tensor."""
    value = a()
    if isinstance(value, SymbolicTensor):
        return _cond(value, lambda: value, b)
    return value or b()


def not_(a):
    """`not a`: `eager.logical_not` for a tensor."""
    if isinstance(a, Tensor):
        return logical_not(a)
    return not a
