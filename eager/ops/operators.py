"""Python operators on tensors, as TensorFlow defines them, installed into `eager.tensor`.

`a + b` is `add(a, b)`; `/` is `truediv`; `//` `floordiv`; `%` `floormod`; `**` `pow`; `@`
`matmul`; `&`, `|`, `^`, `~` are logical for bool tensors and bitwise for integers; comparisons
are elementwise. `==`/`!=` follow TensorFlow 2: elementwise when the shapes broadcast, a scalar
False/True when they do not, False/True against None; a value that cannot be converted to the
tensor's dtype raises, as in TensorFlow 2.21 (`int_tensor == 1.5` is a TypeError).
"""

from __future__ import annotations


from ..tensor import Tensor, register_operators
from . import math_ops as m
from .array_ops import getitem
from ..core.argument_conversion import same_type
from ..core.dispatch import execute
from .product_ops import matmul


def _and(x, y):
    x, y = same_type(m.LOGICAL_AND if _is_bool(x, y) else m.BITWISE_AND, x, y)
    return m.logical_and(x, y) if x.dtype.is_bool else m.bitwise_and(x, y)


def _or(x, y):
    x, y = same_type(m.LOGICAL_OR if _is_bool(x, y) else m.BITWISE_OR, x, y)
    return m.logical_or(x, y) if x.dtype.is_bool else m.bitwise_or(x, y)


def _xor(x, y):
    x, y = same_type(m.LOGICAL_OR if _is_bool(x, y) else m.BITWISE_XOR, x, y)
    return m.logical_xor(x, y) if x.dtype.is_bool else m.bitwise_xor(x, y)


def _is_bool(x, y):
    """As TensorFlow: logical for bool tensors, bitwise for every other dtype (so a float
    operand fails as BitwiseAnd/Or/Xor, which has no float kernel)."""
    for v in (x, y):
        if isinstance(v, Tensor):
            return v.dtype.is_bool
    return True


def _invert(x):
    return m.logical_not(x) if x.dtype.is_bool else m.invert(x)


def _equality(fn, on_mismatch):
    def compare(x, y):
        if y is None or x is None:
            return on_mismatch
        # As TensorFlow 2.21: a value that cannot take the tensor's dtype raises (TypeError for
        # `int_tensor == 1.5` or `== "a"`), it does not compare unequal.
        x, y = same_type(m.EQUAL, x, y)
        return execute(m.EQUAL if fn is m.equal else m.NOT_EQUAL, (x, y),
                       {"incompatible_shape_error": False})
    return compare


#: The op each fast-path operator stands for (for floating and complex operands, the only ones
#: a tape follows): what dispatch would have run, and so what a tape must record (the tapes'
#: recorder, `eager.autodiff.tape.record_operator`, is installed with
#: `eager.tensor.set_operator_recorder`).
OPERATOR_OPS = {"add": m.ADD, "sub": m.SUB, "mul": m.MUL, "truediv": m.REALDIV}


register_operators(
    add=m.add, sub=m.subtract, mul=m.multiply, truediv=m.truediv, floordiv=m.floordiv,
    mod=m.floormod, pow=m.pow, matmul=matmul, neg=m.negative, abs=m.abs, invert=_invert,
    and_=_and, or_=_or, xor=_xor, lt=m.less, le=m.less_equal, gt=m.greater, ge=m.greater_equal,
    eq=_equality(m.equal, False), ne=_equality(m.not_equal, True), getitem=getitem)
