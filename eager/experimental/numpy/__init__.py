"""`eager.experimental.numpy` ≈ `tf.experimental.numpy` (tnp): numpy's function names and dtype
rules over eager tensors.

As in TensorFlow, tnp's arrays are the framework's tensors (`ndarray` is `eager.Tensor`) and
each function is a thin wrapper over eager's ops: it converts Python values the way numpy does
(ints to int64, floats to float64; float32 instead when `experimental_enable_numpy_behavior`
was called with `prefer_float32=True`), finds the result dtype with numpy's own promotion rules
(asking numpy for the dtype of the same operation on empty arrays, so Python scalars stay weak
as in numpy 2), casts the operands to it and runs the op. Results are eager tensors, so
gradients, `eager.function` and devices work on them as on any tensor.
"""

from __future__ import annotations

import numpy as _np

from ...base import dtypes as _dt
from ...ops import array_ops as _array
from ...ops import math_ops as _math
from ...ops.product_ops import matmul as _matmul
from ...core.tensor_conversion import constant
from ...tensor import Tensor
from . import random  # noqa: F401
from .behavior import experimental_enable_numpy_behavior, default_float_type

__all__ = ["ndarray", "asarray", "array", "ones", "zeros", "arange", "copy", "newaxis",
           "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
           "bool_", "complex64", "complex128", "sum", "mean", "square", "sqrt", "exp", "log",
           "abs", "add", "subtract", "multiply", "divide", "maximum", "minimum", "matmul",
           "dot", "expand_dims", "reshape", "transpose", "random",
           "experimental_enable_numpy_behavior"]

#: tnp's array type is the framework's tensor, as TensorFlow's is tf.Tensor.
ndarray = Tensor
newaxis = None
float16, float32, float64 = _np.float16, _np.float32, _np.float64
int8, int16, int32, int64, uint8 = _np.int8, _np.int16, _np.int32, _np.int64, _np.uint8
bool_, complex64, complex128 = _np.bool_, _np.complex64, _np.complex128


def _numpy_value(value):
    """A Python value as numpy converts it (floats as float32 under prefer_float32)."""
    array_ = _np.asarray(value)
    if array_.dtype == _np.float64 and not isinstance(value, _np.ndarray) and \
            default_float_type() == _np.float32:
        array_ = array_.astype(_np.float32)
    return array_


def asarray(a, dtype=None):
    """≈ `tnp.asarray`: `a` as a tensor; a tensor is returned as it is (cast to `dtype`)."""
    if isinstance(a, Tensor):
        return a if dtype is None or _dt.as_dtype(dtype) == a.dtype else _math.cast(a, dtype)
    value = _numpy_value(a) if dtype is None else _np.asarray(a, dtype=_dt.as_dtype(dtype).dtype)
    return constant(value)


def array(val, dtype=None, copy=True, ndmin=0):  # noqa: A002 - numpy's names
    """≈ `tnp.array`: a new tensor holding `val` (tensors are immutable, so `copy` only decides
    whether an identity op is recorded), with at least `ndmin` axes."""
    out = asarray(val, dtype)
    if copy and out is val:
        out = _array.identity(out)
    while len(out.shape) < ndmin:
        out = _array.expand_dims(out, 0)
    return out


def copy(a):
    """≈ `tnp.copy`: a tensor with `a`'s values (an identity op on a tensor)."""
    return _array.identity(asarray(a))


def _creation(fill):
    def make(shape, dtype=float):
        dtype = default_float_type() if dtype is float else dtype
        return constant(fill(shape, dtype=_np.dtype(_dt.as_dtype(dtype).dtype)))
    return make


ones = _creation(_np.ones)
ones.__name__ = "ones"
ones.__doc__ = "≈ `tnp.ones(shape, dtype=float)`: ones, float64 by default as in numpy."
zeros = _creation(_np.zeros)
zeros.__name__ = "zeros"
zeros.__doc__ = "≈ `tnp.zeros(shape, dtype=float)`: zeros, float64 by default as in numpy."


def arange(start, stop=None, step=1, dtype=None):
    """≈ `tnp.arange`: numpy's arange (its dtype rules) as a tensor."""
    values = _np.arange(start, stop, step) if stop is not None else _np.arange(start, step=step)
    if dtype is not None:
        values = values.astype(_dt.as_dtype(dtype).dtype)
    elif values.dtype == _np.float64 and default_float_type() == _np.float32:
        values = values.astype(_np.float32)
    return constant(values)


# -- numpy's promotion over eager's ops --------------------------------------------------------

def _probe(value):
    """What numpy's promotion sees of an operand: an empty array of a tensor's dtype, a Python
    scalar as itself (weak), anything else as numpy converts it."""
    if isinstance(value, Tensor):
        return _np.zeros(0, value.dtype.dtype)
    if isinstance(value, (bool, int, float, complex)):
        return value
    return _np.zeros(0, _numpy_value(value).dtype)


def _result_dtype(np_fn, *operands):
    with _np.errstate(all="ignore"):
        return _np.asarray(np_fn(*(_probe(v) for v in operands))).dtype


def _operand(value, dtype):
    if isinstance(value, Tensor):
        return value if value.dtype.dtype == dtype else _math.cast(value, _dt.as_dtype(dtype))
    return constant(_np.asarray(value, dtype=dtype))


def _elementwise(name, np_fn, eager_fn, doc):
    def fn(*operands):
        dtype = _result_dtype(np_fn, *operands)
        return eager_fn(*(_operand(v, dtype) for v in operands))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"≈ `tnp.{name}`: {doc}, in numpy's result dtype."
    return fn


square = _elementwise("square", _np.square, _math.square, "x * x")
sqrt = _elementwise("sqrt", _np.sqrt, _math.sqrt, "the square root")
exp = _elementwise("exp", _np.exp, _math.exp, "e ** x")
log = _elementwise("log", _np.log, _math.log, "the natural logarithm")
abs = _elementwise("abs", _np.abs, _math.abs, "|x|")  # noqa: A001 - numpy's name
add = _elementwise("add", _np.add, _math.add, "x1 + x2")
subtract = _elementwise("subtract", _np.subtract, _math.subtract, "x1 - x2")
multiply = _elementwise("multiply", _np.multiply, _math.multiply, "x1 * x2")
divide = _elementwise("divide", _np.divide, _math.truediv, "x1 / x2 (true division)")
maximum = _elementwise("maximum", _np.maximum, _math.maximum, "the larger of x1 and x2")
minimum = _elementwise("minimum", _np.minimum, _math.minimum, "the smaller of x1 and x2")
matmul = _elementwise("matmul", lambda a, b: _np.result_type(a, b).type(0), _matmul,
                      "the matrix product")


def dot(a, b):
    """≈ `tnp.dot` for vectors and matrices (the matrix product; a vector dot product for two
    vectors)."""
    a, b = asarray(a), asarray(b)
    if len(a.shape) == 1 and len(b.shape) == 1:
        return sum(multiply(a, b))
    return matmul(a, b)


def _axis(axis):
    return list(axis) if isinstance(axis, tuple) else axis


def sum(a, axis=None, dtype=None, keepdims=False):  # noqa: A001 - numpy's name
    """≈ `tnp.sum`: numpy's accumulator dtype (int64 for smaller integers and bools)."""
    a = asarray(a)
    dtype = _np.sum(_np.zeros(1, a.dtype.dtype)).dtype if dtype is None else \
        _np.dtype(_dt.as_dtype(dtype).dtype)
    return _math.reduce_sum(_operand(a, dtype), axis=_axis(axis), keepdims=keepdims)


def mean(a, axis=None, dtype=None, keepdims=False):
    """≈ `tnp.mean`: float64 for integer inputs, as numpy."""
    a = asarray(a)
    dtype = _np.mean(_np.zeros(1, a.dtype.dtype)).dtype if dtype is None else \
        _np.dtype(_dt.as_dtype(dtype).dtype)
    return _math.reduce_mean(_operand(a, dtype), axis=_axis(axis), keepdims=keepdims)


def expand_dims(a, axis):
    """≈ `tnp.expand_dims`: a new axis of size 1 at `axis`."""
    return _array.expand_dims(asarray(a), axis)


def reshape(a, newshape, order="C"):
    """≈ `tnp.reshape` (row-major order only)."""
    if order != "C":
        raise NotImplementedError(f"reshape: only order='C' is supported, got {order!r}.")
    return _array.reshape(asarray(a), newshape)


def transpose(a, axes=None):
    """≈ `tnp.transpose`: axes reversed, or permuted by `axes`."""
    return _array.transpose(asarray(a), perm=axes)
