"""Python operators on tensors, as TensorFlow defines them, installed into `eager.tensor`.

`a + b` is `add(a, b)`; `/` is `truediv`; `//` `floordiv`; `%` `floormod`; `**` `pow`; `@`
`matmul`; `&`, `|`, `^`, `~` are logical for bool tensors and bitwise for integers; comparisons
are elementwise. `==`/`!=` follow TensorFlow 2: elementwise when the shapes broadcast, a scalar
False/True when they do not, False/True against None; a value that cannot be converted to the
tensor's dtype raises, as in TensorFlow 2.21 (`int_tensor == 1.5` is a TypeError).

With a composite operand (`dense + ragged`), a tensor's binary operator returns NotImplemented,
so Python asks the composite's reflected operator, which broadcasts the tensor into it as
TensorFlow's dispatch does. The check runs only on the op-library path: the dense operators'
fast path (`eager.tensor`) never meets a composite operand.
"""

from __future__ import annotations


from ..tensor import Tensor, register_operator_ops, register_operators
from . import math_ops as m
from .array_ops import getitem
from ..core.argument_conversion import same_type
from ..core.composite import CompositeTensor
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
register_operator_ops(OPERATOR_OPS)  # what the operators' launching path (a GPU's) runs


def _deferring(fn, reflected):
    """`fn(x, y)`, or NotImplemented when either operand is a composite whose class has the
    `reflected` operator (see the module doc); other composites fail in `fn` as in TF."""
    def operator(x, y):
        if isinstance(y, CompositeTensor) or isinstance(x, CompositeTensor):
            other = y if isinstance(y, CompositeTensor) else x
            if hasattr(type(other), reflected):
                return NotImplemented
        return fn(x, y)
    operator.__name__ = getattr(fn, "__name__", "operator")
    return operator


register_operators(
    add=_deferring(m.add, "__radd__"), sub=_deferring(m.subtract, "__rsub__"),
    mul=_deferring(m.multiply, "__rmul__"), truediv=_deferring(m.truediv, "__rtruediv__"),
    floordiv=_deferring(m.floordiv, "__rfloordiv__"), mod=_deferring(m.floormod, "__rmod__"),
    pow=_deferring(m.pow, "__rpow__"), matmul=matmul, neg=m.negative, abs=m.abs,
    invert=_invert, and_=_deferring(_and, "__rand__"), or_=_deferring(_or, "__ror__"),
    xor=_deferring(_xor, "__rxor__"), lt=_deferring(m.less, "__gt__"),
    le=_deferring(m.less_equal, "__ge__"), gt=_deferring(m.greater, "__lt__"),
    ge=_deferring(m.greater_equal, "__le__"),
    eq=_deferring(_equality(m.equal, False), "__eq__"),
    ne=_deferring(_equality(m.not_equal, True), "__ne__"), getitem=getitem)
