"""Elementwise math, comparisons, casts and reductions (`eager.math`).

Each op is one `register_op` record (kernel + shape inference) and one public function that
converts its arguments and calls `execute`. Kernels take the array module `xp` first, so the same
code runs on numpy and cupy.
"""

from __future__ import annotations

import numpy as np

from ..base import dtypes as _dt
from ..base.errors import InvalidArgumentError, NotFoundError, UnimplementedError
from ..base.ieee import add_reduce, multiply_reduce
from ..tensor import EagerTensor
from ..core.specs import TensorSpec
from ..base.tensor_shape import TensorShape
from ..core.argument_conversion import as_tensor, check_dtype, same_type
from ..core.dispatch import execute, named, run_bare_unary
from ..core.composite import CompositeTensor, dispatch_api
from ..core.registry import OpDef, op_error, register_op
from .shape_arguments import read_dims, shape_elements
from ..core.shapes import (broadcast_shapes, normalize_axes, normalize_axis, reduced_shape,
                           static_int)

__all__ = [
    "add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "mod", "pow",
    "negative", "abs", "sign", "square", "sqrt", "rsqrt", "exp", "log", "log1p", "sin", "cos",
    "tanh", "sigmoid", "maximum", "minimum", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_not", "logical_xor",
    "where", "cast", "clip_by_value", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
    "reduce_prod", "reduce_any", "reduce_all", "reduce_logsumexp", "argmax", "argmin", "real",
    "imag", "conj", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
]

NUMERIC = _dt.NUMERIC
REAL = _dt.REAL
INEXACT = _dt.INEXACT
BOOL = frozenset({_dt.bool})
INTEGER = _dt.INTEGER
# TensorFlow's Neg, Sign and Pow have no unsigned kernels (InvalidArgumentError for uint8..64).
SIGNED = _dt.FLOATING | _dt.SIGNED_INTEGER | _dt.COMPLEX


# -----------------------------------------------------------------------------------------------
# Inference rules
# -----------------------------------------------------------------------------------------------

def _infer_broadcast(op_name, out_dtype=None):
    def infer(x, y):
        return TensorSpec(broadcast_shapes(op_name, x.shape, y.shape), out_dtype or x.dtype)
    return infer


def _infer_same(x):
    return TensorSpec(x.shape, x.dtype)


def _infer_real_of(x):
    return TensorSpec(x.shape, x.dtype.real_dtype)


def _infer_bool(x):
    return TensorSpec(x.shape, _dt.bool)


# -----------------------------------------------------------------------------------------------
# Elementwise binary ops
# -----------------------------------------------------------------------------------------------

def _binary(api_name, op_name, kernel, dtypes, out_dtype=None, doc="", infix=None, ufunc=None,
            donatable_inputs=()):
    op = register_op(op_name, kernel, _infer_broadcast(op_name, out_dtype), dtypes=dtypes,
                     differentiable=out_dtype is None, infer_from_types=True, elementwise=True,
                     infix=infix, ufunc=ufunc, donatable_inputs=donatable_inputs, doc=doc)

    def api(x, y, name=None):
        x, y = same_type(op, x, y)
        out = execute(op, (x, y))
        return out if name is None else named(out, name)

    api.__name__ = api.__qualname__ = api_name
    api.__doc__ = f"≈ `tf.math.{api_name}(x, y)`: {doc} Broadcasts; dtypes of x and y must match."
    return op, api


def _int_div_check(op_name, y):
    if y.dtype.kind in "iu" and not y.all():
        raise op_error(op_name, "Integer division by zero")


def _floordiv_kernel(xp, x, y):
    _int_div_check("FloorDiv", y)
    if x.dtype.kind == "f":  # TF's floor(x / y): 1.0 // 0.1 is 10, not numpy's 9
        return xp.floor(x / y)
    return xp.floor_divide(x, y)


def _floormod_kernel(xp, x, y):
    _int_div_check("FloorMod", y)
    if x.dtype.kind == "f":
        # The exact C remainder moved into y's sign (TensorFlow's floor_fmod); a zero takes
        # y's sign too, as in Python and numpy. Not xp.mod: CuPy computes float remainders as
        # x - floor(x / y) * y, which is off by up to an ulp of x (1.0 % 3.8e-289 gave 1e-16,
        # not 3.6e-289).
        r = xp.fmod(x, y)
        return xp.where((r != 0) & ((r < 0) != (y < 0)), r + y, xp.copysign(r, y))
    return xp.mod(x, y)


def _pow_kernel(xp, x, y):
    if y.dtype.kind in "iu" and (y < 0).any():
        raise op_error("Pow", "Integers to negative integer powers are not allowed")
    return xp.power(x, y)


# Their kernels are exactly the Python operator (`infix`) and the numpy ufunc (`ufunc`).
ADD, add = _binary("add", "AddV2", lambda xp, x, y: x + y, NUMERIC | {_dt.string},
                   doc="x + y (strings: concatenated).", infix="+", ufunc=np.add,
                   donatable_inputs=(0, 1))
SUB, subtract = _binary("subtract", "Sub", lambda xp, x, y: x - y, NUMERIC, doc="x - y.",
                        infix="-", ufunc=np.subtract, donatable_inputs=(0, 1))
MUL, multiply = _binary("multiply", "Mul", lambda xp, x, y: x * y, NUMERIC, doc="x * y.",
                        infix="*", ufunc=np.multiply, donatable_inputs=(0, 1))
REALDIV, _realdiv = _binary("realdiv", "RealDiv", lambda xp, x, y: x / y, INEXACT,
                            doc="x / y for floating and complex x, y.", infix="/")
FLOORDIV, floordiv = _binary("floordiv", "FloorDiv", _floordiv_kernel, REAL,
                             doc="Floor of x / y (Python's //); integer division by zero is an "
                                 "error.")
FLOORDIV.no_kernel_dtypes = _dt.COMPLEX  # TF lists complex, has no CPU kernel: NotFoundError
FLOORMOD, floormod = _binary("floormod", "FloorMod", _floormod_kernel, REAL,
                             doc="x - floor(x / y) * y, with the sign of y (Python's %).")
POW, pow = _binary("pow", "Pow", _pow_kernel, SIGNED, doc="x ** y.")  # noqa: A001
MAXIMUM, maximum = _binary("maximum", "Maximum", lambda xp, x, y: xp.maximum(x, y), REAL,
                           doc="Elementwise max(x, y).")
MINIMUM, minimum = _binary("minimum", "Minimum", lambda xp, x, y: xp.minimum(x, y), REAL,
                           doc="Elementwise min(x, y).")
LESS, less = _binary("less", "Less", lambda xp, x, y: x < y, REAL, _dt.bool, "x < y.")
LESS_EQUAL, less_equal = _binary("less_equal", "LessEqual", lambda xp, x, y: x <= y, REAL,
                                 _dt.bool, "x <= y.")
GREATER, greater = _binary("greater", "Greater", lambda xp, x, y: x > y, REAL, _dt.bool, "x > y.")
GREATER_EQUAL, greater_equal = _binary("greater_equal", "GreaterEqual",
                                       lambda xp, x, y: x >= y, REAL, _dt.bool, "x >= y.")
LOGICAL_AND, logical_and = _binary("logical_and", "LogicalAnd", lambda xp, x, y: x & y, BOOL,
                                   _dt.bool, "x AND y.")
LOGICAL_OR, logical_or = _binary("logical_or", "LogicalOr", lambda xp, x, y: x | y, BOOL,
                                 _dt.bool, "x OR y.")
BITWISE_AND, bitwise_and = _binary("bitwise_and", "BitwiseAnd", lambda xp, x, y: x & y, INTEGER,
                                   None, "Bitwise x & y.")
BITWISE_OR, bitwise_or = _binary("bitwise_or", "BitwiseOr", lambda xp, x, y: x | y, INTEGER,
                                 None, "Bitwise x | y.")
BITWISE_XOR, bitwise_xor = _binary("bitwise_xor", "BitwiseXor", lambda xp, x, y: x ^ y, INTEGER,
                                   None, "Bitwise x ^ y.")
for _op in (FLOORDIV, FLOORMOD, BITWISE_AND, BITWISE_OR, BITWISE_XOR):
    _op.differentiable = _op in (FLOORMOD,)  # floordiv's gradient is zero a.e.: TF gives none


def mod(x, y, name=None):
    """≈ `tf.math.mod`: the same as `floormod`."""
    return floormod(x, y)


def _equality(api_name, op_name, kernel):
    def infer(x, y, incompatible_shape_error=True):
        try:
            shape = broadcast_shapes(op_name, x.shape, y.shape)
        except Exception:
            if incompatible_shape_error:
                raise
            shape = TensorShape([])
        return TensorSpec(shape, _dt.bool)

    def run(xp, x, y, incompatible_shape_error=True):
        if not incompatible_shape_error:
            try:
                return kernel(xp, x, y)
            except ValueError:
                return xp.asarray(op_name == "NotEqual")
        return kernel(xp, x, y)

    op = register_op(op_name, run, infer, dtypes=_dt.ALL_AND_STRING, differentiable=False,
                     elementwise=True)

    def api(x, y, name=None):
        x, y = same_type(op, x, y)
        return execute(op, (x, y))

    api.__name__ = api.__qualname__ = api_name
    symbol = "==" if op_name == "Equal" else "!="
    api.__doc__ = f"≈ `tf.math.{api_name}(x, y)`: elementwise {symbol}."
    return op, api


EQUAL, equal = _equality("equal", "Equal", lambda xp, x, y: x == y)
NOT_EQUAL, not_equal = _equality("not_equal", "NotEqual", lambda xp, x, y: x != y)


def logical_xor(x, y, name=None):
    """≈ `tf.math.logical_xor`: (x OR y) AND NOT (x AND y)."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


# TensorFlow's truediv: integers are converted to a float type wide enough, then divided.
_TRUEDIV_FLOAT = {_dt.int8: _dt.float32, _dt.uint8: _dt.float32, _dt.int16: _dt.float32,
                  _dt.uint16: _dt.float32, _dt.int32: _dt.float64, _dt.uint32: _dt.float64,
                  _dt.int64: _dt.float64, _dt.uint64: _dt.float64}


# How truediv's arguments are converted (never registered: RealDiv runs, after the cast).
_TRUEDIV_ARGS = OpDef("RealDiv", None, None, dtypes=NUMERIC)


def truediv_float_dtype(dtype):
    """The floating dtype `truediv` divides integers of `dtype` in (float32 for 8/16-bit, float64
    for 32/64-bit integers, as TensorFlow's `_TRUEDIV_TABLE`), or None for other dtypes."""
    return _TRUEDIV_FLOAT.get(dtype)


def truediv(x, y, name=None):
    """≈ `tf.math.truediv`: x / y; integer inputs are first cast to float32 (8/16-bit) or
    float64 (32/64-bit), as TensorFlow does. As in TensorFlow (which checks this in Python),
    mismatched or non-numeric dtypes are a TypeError."""
    try:
        x, y = same_type(_TRUEDIV_ARGS, x, y)
    except (InvalidArgumentError, NotFoundError) as exc:
        raise TypeError(f"truediv: `x` and `y` must have the same numeric dtype: "
                        f"{exc.message}") from None
    target = _TRUEDIV_FLOAT.get(x.dtype)
    if target is not None:
        x, y = cast(x, target), cast(y, target)
    return execute(REALDIV, (x, y))


def divide(x, y, name=None):
    """≈ `tf.math.divide`: the same as `truediv`."""
    return truediv(x, y)


# -----------------------------------------------------------------------------------------------
# Elementwise unary ops
# -----------------------------------------------------------------------------------------------

def _unary(api_name, op_name, kernel, dtypes, infer=_infer_same, differentiable=True, doc=""):
    op = register_op(op_name, kernel, infer, dtypes=dtypes, differentiable=differentiable,
                     infer_from_types=True, elementwise=True, doc=doc)

    def api(x, name=None):
        try:
            x = as_tensor(x)
        except ValueError:
            if isinstance(x, CompositeTensor):  # ragged/sparse: on their values (checked
                return dispatch_api("elementwise", x, api, x)  # only here: no cost otherwise)
            raise
        if x.dtype not in dtypes:
            check_dtype(op, x, dtypes)
        out = execute(op, (x,))
        return out if name is None else named(out, name)

    api.__name__ = api.__qualname__ = api_name
    api.__doc__ = f"≈ `tf.math.{api_name}(x)`: {doc}"
    return op, api


def _sigmoid_kernel(xp, x):
    # One exp, no overflow, full relative accuracy in both tails.
    if x.dtype.kind == "c":
        # exp of a non-positive real part never overflows (TF's formula: nan at -90+1j).
        neg = x.real < 0
        e = xp.exp(xp.where(neg, x, -x))
        return xp.where(neg, e / (1 + e), 1 / (1 + e)).astype(x.dtype, copy=False)
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _abs_kernel(xp, x):
    return xp.abs(x)


def _sign_kernel(xp, x):
    if x.dtype.kind == "c":
        mag = xp.abs(x)
        return xp.where(mag == 0, 0, x / xp.where(mag == 0, 1, mag)).astype(x.dtype)
    return xp.sign(x)


NEG, negative = _unary("negative", "Neg", lambda xp, x: -x, SIGNED, doc="-x.")
ABS, abs = _unary("abs", "Abs", _abs_kernel, SIGNED, _infer_real_of,  # noqa: A001
                  doc="|x| (the magnitude, as a real dtype, for complex x).")
SIGN, sign = _unary("sign", "Sign", _sign_kernel, SIGNED, differentiable=True,
                    doc="-1, 0 or 1 (x / |x| for complex x).")
SQUARE, square = _unary("square", "Square", lambda xp, x: x * x, NUMERIC, doc="x * x.")
SQRT, sqrt = _unary("sqrt", "Sqrt", lambda xp, x: xp.sqrt(x), INEXACT, doc="Square root.")
def rsqrt_of(xp, x, fix_zero_sign):
    """1 / sqrt(x). With `fix_zero_sign` (GPUs), the result takes x's sign for real x: CUDA's
    half-precision sqrt(-0.) can return +0., making rsqrt(-0.) +inf where IEEE, numpy and
    TensorFlow give -inf. (Separate so the formula is tested on any machine.)"""
    r = 1 / xp.sqrt(x)
    if fix_zero_sign and x.dtype.kind == "f":
        r = xp.copysign(r, x)
    return r


def complex_log_of(xp, z, plus_one):
    """log(z), or log(1 + z) with `plus_one`, with the imaginary part recomputed as
    atan2(imag, real): CuPy's complex log/log1p lose the sign of a zero imaginary part
    (log(-0+0j) gives -inf+0j, numpy and TensorFlow -inf+pi j; log1p(-2-0j) gives +pi j, not
    -pi j). The real part is the library's own."""
    out = xp.log1p(z) if plus_one else xp.log(z)
    real = z.real + 1 if plus_one else z.real
    out.imag = xp.arctan2(z.imag, real)
    return out


def _rsqrt_kernel(xp, x):
    return rsqrt_of(xp, x, xp is not np)


def _log_kernel(xp, x):
    if xp is np or x.dtype.kind != "c":
        return xp.log(x)
    return complex_log_of(xp, x, plus_one=False)


def _log1p_kernel(xp, x):
    if xp is np or x.dtype.kind != "c":
        return xp.log1p(x)
    return complex_log_of(xp, x, plus_one=True)


RSQRT, rsqrt = _unary("rsqrt", "Rsqrt", _rsqrt_kernel, INEXACT, doc="1 / sqrt(x).")
EXP, exp = _unary("exp", "Exp", lambda xp, x: xp.exp(x), INEXACT, doc="e ** x.")
LOG, log = _unary("log", "Log", _log_kernel, INEXACT, doc="Natural logarithm.")
LOG1P, log1p = _unary("log1p", "Log1p", _log1p_kernel, INEXACT,
                      doc="log(1 + x), accurate for small x.")
SIN, sin = _unary("sin", "Sin", lambda xp, x: xp.sin(x), INEXACT, doc="Sine.")
COS, cos = _unary("cos", "Cos", lambda xp, x: xp.cos(x), INEXACT, doc="Cosine.")
TANH, tanh = _unary("tanh", "Tanh", lambda xp, x: xp.tanh(x), INEXACT,
                    doc="Hyperbolic tangent.")
SIGMOID, sigmoid = _unary("sigmoid", "Sigmoid", _sigmoid_kernel, INEXACT,
                          doc="1 / (1 + exp(-x)), computed without overflow.")
LOGICAL_NOT, logical_not = _unary("logical_not", "LogicalNot", lambda xp, x: ~x, BOOL,
                                  differentiable=False, doc="NOT x.")
INVERT, invert = _unary("invert", "Invert", lambda xp, x: ~x, INTEGER, differentiable=False,
                        doc="Bitwise NOT of an integer tensor.")
REAL_OP, _real = _unary("real", "Real", lambda xp, x: xp.real(x).copy(), NUMERIC,
                        _infer_real_of, doc="Real part.")
IMAG_OP, _imag = _unary("imag", "Imag", lambda xp, x: xp.imag(x).copy(), NUMERIC,
                        _infer_real_of, doc="Imaginary part.")
CONJ, _conj = _unary("conj", "Conj", lambda xp, x: xp.conj(x), NUMERIC,
                     doc="Complex conjugate.")


def real(input, name=None):  # noqa: A002 - TensorFlow's argument name
    """≈ `tf.math.real`: the real part (real inputs are returned unchanged)."""
    x = as_tensor(input)
    return x if not x.dtype.is_complex else _real(x)


def imag(input, name=None):  # noqa: A002
    """≈ `tf.math.imag`: the imaginary part (zeros for real inputs, even inf or nan ones)."""
    x = as_tensor(input)
    if x.dtype.is_complex:
        return _imag(x)
    return cast(_imag(cast(x, _dt.complex128)), x.dtype)


def conj(x, name=None):
    """≈ `tf.math.conj`: complex conjugate (real inputs are returned unchanged)."""
    x = as_tensor(x)
    return _conj(x) if x.dtype.is_complex else x


# -----------------------------------------------------------------------------------------------
# Cast, select, clip
# -----------------------------------------------------------------------------------------------

def _cast_kernel(xp, x, dtype):
    target = dtype.dtype
    kind = target.kind
    if x.dtype.kind == "c" and kind != "c":
        x = xp.real(x)
    if kind == "b":
        return x != 0
    if kind in "iu" and x.dtype.kind == "f":
        return _float_to_int(xp, x, target)
    return x.astype(target, copy=True) if x.dtype != target else x


def _cast_plan(target, wide):
    """(the floats that cast into `target` exactly, as float64 bounds [low, high), the integer
    width TensorFlow's x86 code truncates to first, that width's float64 limit 2**31 or 2**63,
    that width's minimum -2**31 or -2**63 as a scalar of the width)."""
    info, wide = np.iinfo(target), np.dtype(wide)
    return (np.float64(info.min), np.float64(info.max) + 1, wide,
            np.float64(np.iinfo(wide).max) + 1, wide.type(np.iinfo(wide).min))


# Per integer target (see `_float_to_int`; the CuPy kernel layer's one-launch cast reads them
# too). The bounds are float64 scalars so that a float16 minimum or maximum is compared in
# float64 (a Python float would be taken as float16).
FLOAT_TO_INT_PLANS = {np.dtype(t): _cast_plan(t, w)
               for t, w in ((np.int8, np.int32), (np.int16, np.int32), (np.uint8, np.int32),
                            (np.uint16, np.int32), (np.int32, np.int32), (np.int64, np.int64),
                            (np.uint32, np.int64), (np.uint64, np.int64))}
_TWO_63 = np.float64(2.0 ** 63)
_HIGH_BIT = np.uint64(1 << 63)
_min_reduce, _max_reduce = np.minimum.reduce, np.maximum.reduce


def _float_to_int(xp, x, target):
    """`x` (a float array) cast to integer dtype `target` with TensorFlow's CPU values, silently,
    on every device. Values in the target's range truncate toward zero. Beyond it C++ leaves the
    result undefined and TensorFlow returns what its x86 code gives: the float truncated to 32
    bits (64 for int64, uint32 and uint64), NaN and anything out of that range becoming the
    width's minimum, then wrapped to the target; uint64 takes values from 2**63 up as
    `2**63 | (x - 2**63)`. So NaN is -2**31 as int32, 0 as int8 (the low byte of -2**31), 2**63
    as uint64. (TensorFlow's vectorised loop saturates some narrow targets instead, so its values
    for long tensors can differ by position; these are the ones it gives element by element, as
    for a short tensor.)

    Only conversions whose results C++ defines are ever asked of the array module: a float is
    converted only where it truncates into the width's range, and integers wrap to the target
    (modular on every backend). So CuPy, whose float-to-integer casts are CUDA's (saturating,
    NaN to 0), gives the same values as numpy."""
    low, high, wide, limit, wide_min = FLOAT_TO_INT_PLANS[target]
    if not x.size:
        return x.astype(target)
    if xp is np:  # two reductions find the common cases, one cast or two each (on a GPU,
        # reading the reductions would wait for the device: it takes the masked path at once)
        smallest, largest = _min_reduce(x, None), _max_reduce(x, None)  # (NaN if any is NaN)
        if smallest >= low and largest < high:
            return x.astype(target)  # every value in range: two reductions more than a cast
        if smallest > -limit - 1 and largest < limit:  # (-limit - 1: -2**31 - 0.5 truncates in)
            return x.astype(wide).astype(target)  # in the width's range: truncated, then wrapped
    x = x.astype(np.float64, copy=False)  # exact for float16 and float32
    high_half = None
    if target == np.uint64:
        high_half = x >= _TWO_63
        x = xp.where(high_half, x - _TWO_63, x)
    inside = (x > -limit - 1) & (x < limit)  # truncates into the width's range (NaN: False)
    out = xp.where(inside, x, 0).astype(wide)
    out = xp.where(inside, out, wide_min).astype(target)  # wrapped to the target
    if high_half is not None:
        out = xp.where(high_half, out | _HIGH_BIT, out)
    return out


def _cast_infer(x, dtype):
    return TensorSpec(x.shape, dtype)


CAST = register_op("Cast", _cast_kernel, _cast_infer, dtypes=_dt.ALL, elementwise=True)


def cast(x, dtype, name=None):
    """≈ `tf.cast`: converts to `dtype`; floats to integers truncate toward zero, complex to
    real keeps the real part. Casting to the same dtype returns `x` itself."""
    dtype = _dt.as_dtype(dtype)
    if isinstance(x, CompositeTensor):  # ragged/sparse: their values cast
        return dispatch_api("cast", x, x, dtype, name)
    x = as_tensor(x)
    if x.dtype is dtype:
        return x
    if dtype.is_string or x.dtype.is_string:  # TensorFlow's Cast kernel refuses strings
        raise UnimplementedError(None, "Cast", f"Cast {x.dtype.name} to {dtype.name} is not "
                                               "supported (eager.strings.to_number and "
                                               "as_string convert) [Op:Cast]")
    if dtype not in _dt.ALL:
        raise TypeError(f"Cast: cannot cast to {dtype.name}.")
    if x.dtype not in _dt.ALL:
        raise TypeError(f"Cast: cannot cast a {x.dtype.name} tensor.")
    out = execute(CAST, (x,), {"dtype": dtype})
    return out if name is None else named(out, name)


def _select_infer(condition, x, y):
    if condition.dtype is not _dt.bool:
        raise op_error("SelectV2", f"condition must be bool, got {condition.dtype.name}")
    return TensorSpec(broadcast_shapes("SelectV2", condition.shape, x.shape, y.shape), x.dtype)


SELECT = register_op("SelectV2", lambda xp, c, x, y: xp.where(c, x, y), _select_infer,
                     dtypes=_dt.ALL_AND_STRING, elementwise=True)


def _where_indices_infer(condition):
    rank = condition.shape.rank
    return TensorSpec([None, rank], _dt.int64)


WHERE_INDICES = register_op("Where", lambda xp, c: xp.argwhere(c).astype(np.int64),
                            _where_indices_infer, dtypes=_dt.ALL, differentiable=False)


def where(condition, x=None, y=None, name=None):
    """≈ `tf.where` (v2): elementwise `x if condition else y`, broadcasting all three; with only
    `condition`, the int64 coordinates of its true elements, shape [num_true, rank]."""
    if (x is None) != (y is None):
        raise ValueError("x and y must both be non-None or both be None.")
    condition = as_tensor(condition)
    if x is None:
        # As TensorFlow: any nonzero element counts (for complex, either part; NaN is true),
        # and the condition must have rank >= 1.
        if condition.shape.rank == 0:
            raise op_error("Where", "WhereOp : Unhandled input dimensions: 0", [condition])
        return execute(WHERE_INDICES, (condition,))
    if condition.dtype is not _dt.bool:
        raise op_error("SelectV2", f"condition must be a bool tensor, got {condition.dtype.name}",
                       [condition])
    x, y = same_type(SELECT, x, y)
    return execute(SELECT, (condition, x, y))


def _clip_infer(t, lo, hi):
    shape = broadcast_shapes("ClipByValue", t.shape, lo.shape, hi.shape)
    if shape != t.shape and t.shape.is_fully_defined():
        raise op_error("ClipByValue", f"clip bounds of shapes {lo.shape} and {hi.shape} must "
                                      f"broadcast to the input's shape {t.shape}")
    return TensorSpec(t.shape, t.dtype)


def _clip_kernel(xp, t, lo, hi):
    _clip_infer(*(TensorSpec(a.shape, a.dtype) for a in (t, lo, hi)))  # raises for bad shapes
    # TensorFlow's order: max(min(t, hi), lo), so lo wins when lo > hi.
    return xp.maximum(xp.minimum(t, hi), lo)


CLIP = register_op("ClipByValue", _clip_kernel, _clip_infer, dtypes=REAL, elementwise=True)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """≈ `tf.clip_by_value`: max(min(t, clip_value_max), clip_value_min) (so the lower bound
    wins when the bounds cross, as in TensorFlow); the bounds broadcast to `t`'s shape, and the
    result has `t`'s shape. Bounds that do not broadcast are an InvalidArgumentError; bounds that
    would enlarge `t` a ValueError (TensorFlow's shape check)."""
    t, lo, hi = same_type(CLIP, t, clip_value_min, clip_value_max)
    shape = broadcast_shapes("ClipByValue", t.shape, lo.shape, hi.shape)
    if not shape.is_compatible_with(t.shape):
        raise ValueError(f"ClipByValue: Shapes {t.shape} and {shape} are incompatible")
    return execute(CLIP, (t, lo, hi))


# -----------------------------------------------------------------------------------------------
# Reductions
# -----------------------------------------------------------------------------------------------

def _reduce_infer(op_name, out_dtype=None):
    def infer(x, axes=None, keepdims=False):
        rank = x.shape.rank
        if axes is not None and rank is not None:
            normalize_axes(op_name, axes, rank)
        return TensorSpec(reduced_shape(x.shape, axes, keepdims), out_dtype or x.dtype)
    return infer


def _empty_initial(xp, x, axes, reducer, lowest):
    """max/min of an empty reduction: TensorFlow returns the dtype's lowest/highest value."""
    if x.size == 0:
        if x.dtype.kind == "f":
            fill = -np.inf if lowest else np.inf
        elif x.dtype.kind == "b":
            fill = not lowest
        else:
            info = np.iinfo(x.dtype)
            fill = info.min if lowest else info.max
        shape = [1 if (axes is None or i in axes) else d for i, d in enumerate(x.shape)]
        return xp.full(shape, fill, dtype=x.dtype)
    return None


def _squeeze_kept(xp, out, x, axes, keepdims):
    if keepdims:
        return out
    if axes is None:
        return out.reshape(())
    return out.reshape([d for i, d in enumerate(out.shape) if i not in axes])


def _sum_kernel(xp, x, axes=None, keepdims=False):
    # numpy's `ndarray.sum` and module-level `sum` are Python wrappers around `add.reduce`
    # that cost more than a small reduction itself; the ufunc method is the same computation.
    if xp is np:
        if not keepdims and x.dtype.kind in "fc" and (axes is None or len(axes) == x.ndim):
            return _add_reduce(x, None)  # a full reduction: floating and complex keep their dtype
        return _add_reduce(x, axes, x.dtype, None, keepdims)  # integers must be told (no widening)
    if not keepdims and (axes is None or len(axes) == x.ndim):
        return x.sum() if x.dtype.kind in "fc" else x.sum(dtype=x.dtype)
    return x.sum(axis=axes, keepdims=keepdims, dtype=x.dtype)


_add_reduce = np.add.reduce


def _prod_kernel(xp, x, axes=None, keepdims=False):
    return multiply_reduce(xp, x, axes, x.dtype, keepdims)  # (its overflow: eager.base.ieee)


def _mean_kernel(xp, x, axes=None, keepdims=False):
    n = 1
    for i in range(x.ndim) if axes is None else axes:
        n *= x.shape[i]
    if x.dtype.kind in "iu":
        # As TensorFlow: sum in 64 bits (no int8 overflow), exact division truncating to 0.
        total = xp.sum(x, axis=axes, keepdims=keepdims,
                       dtype=np.int64 if x.dtype.kind == "i" else np.uint64)
        if n == 0:
            return xp.zeros_like(total, dtype=x.dtype)
        q = total // n
        if x.dtype.kind == "i":
            q = q + ((q * n != total) & (total < 0))
        return q.astype(x.dtype)
    # sum / count as numpy's mean, but an empty mean is a silent 0 / 0 = nan (as in TF),
    # except for complex values, whose mean over nothing TensorFlow's kernel gives as 0; the
    # sum's overflow is raised here, where eager's filter sees it (eager.base.ieee).
    total = add_reduce(xp, x, axes, x.dtype, keepdims)
    if n == 0 and x.dtype.kind == "c":
        return total
    return (total / n).astype(x.dtype, copy=False)


def _max_kernel(xp, x, axes=None, keepdims=False):
    empty = _empty_initial(xp, x, axes, xp.max, True)
    if empty is not None:
        return _squeeze_kept(xp, empty, x, axes, keepdims)
    return x.max(axis=axes, keepdims=keepdims)


def _min_kernel(xp, x, axes=None, keepdims=False):
    empty = _empty_initial(xp, x, axes, xp.min, False)
    if empty is not None:
        return _squeeze_kept(xp, empty, x, axes, keepdims)
    return x.min(axis=axes, keepdims=keepdims)


def _any_kernel(xp, x, axes=None, keepdims=False):
    return xp.any(x, axis=axes, keepdims=keepdims)


def _all_kernel(xp, x, axes=None, keepdims=False):
    return xp.all(x, axis=axes, keepdims=keepdims)


def _logsumexp_kernel(xp, x, axes=None, keepdims=False):
    if x.size == 0:
        return xp.full(reduced_shape(TensorShape(x.shape), axes, keepdims), -np.inf, x.dtype)
    m = xp.max(x, axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    out = xp.log(xp.sum(xp.exp(x - m), axis=axes, keepdims=True)) + m
    return _squeeze_kept(xp, out, x, axes, keepdims).astype(x.dtype, copy=False)


SUM = register_op("Sum", _sum_kernel, _reduce_infer("Sum"), dtypes=NUMERIC)
PROD = register_op("Prod", _prod_kernel, _reduce_infer("Prod"), dtypes=NUMERIC)
MEAN = register_op("Mean", _mean_kernel, _reduce_infer("Mean"), dtypes=NUMERIC)
MAX = register_op("Max", _max_kernel, _reduce_infer("Max"), dtypes=REAL)
MIN = register_op("Min", _min_kernel, _reduce_infer("Min"), dtypes=REAL)
ANY = register_op("Any", _any_kernel, _reduce_infer("Any"), dtypes=BOOL, differentiable=False)
ALL = register_op("All", _all_kernel, _reduce_infer("All"), dtypes=BOOL, differentiable=False)
LOGSUMEXP = register_op("ReduceLogSumExp", _logsumexp_kernel, _reduce_infer("ReduceLogSumExp"),
                        dtypes=_dt.FLOATING)


def _sum_to_shape_axes(x_shape, target):
    """The axes to sum x over to undo broadcasting a tensor of `target`'s shape to x's; the
    op's error when no such broadcast gives x's shape."""
    lead = len(x_shape) - len(target)
    axes = None if lead < 0 else list(range(lead))
    for i, d in enumerate(target):
        if axes is None:
            break
        n = x_shape[lead + i]
        if d == 1 and n != 1:
            axes.append(lead + i)
        elif d != n and n is not None and d is not None:
            axes = None
    if axes is None:
        raise op_error("SumToShape", f"a tensor of shape {list(target)} does not broadcast to "
                                     f"shape {list(x_shape)}")
    return tuple(axes)


def _sum_to_shape_infer(x, shape):
    known = shape_elements("SumToShape", shape)
    if known is None or x.shape.rank is None:
        return TensorSpec(TensorShape(None) if known is None else [None] * len(known), x.dtype)
    _sum_to_shape_axes(tuple(x.shape), known)
    lead = len(x.shape) - len(known)
    # An unknown size is x's where x has 1 there (a size-1 dimension came from 1).
    return TensorSpec([1 if d is None and x.shape[lead + i] == 1 else d
                       for i, d in enumerate(known)], x.dtype)


def _sum_to_shape_kernel(xp, x, shape):
    target = read_dims("SumToShape", shape)
    axes = _sum_to_shape_axes(x.shape, target)
    if axes:
        x = _sum_kernel(xp, x, axes)
    return x if x.shape == target else x.reshape(target)


#: SumToShape(x, shape): x summed over the axes along which a tensor of `shape` (an int vector,
#: read when the op runs) was broadcast to x's shape, so that the result has `shape`. The
#: gradient of broadcasting when a traced function knows the shapes only when it runs
#: (TensorFlow's BroadcastGradientArgs, Sum and Reshape in one op); static shapes use Sum.
SUM_TO_SHAPE = register_op("SumToShape", _sum_to_shape_kernel, _sum_to_shape_infer,
                           dtypes=NUMERIC, host_inputs=(1,))


_FULL_RANKS = 9  # ranks below this get their full-reduction attributes made once


def _reduction(api_name, op, fast_full=None):
    # The attributes of a full reduction (axis=None, keepdims=False) of each small rank, made
    # once: `reduce_sum(loss)` of an eager tensor goes straight to dispatch with them. With
    # `fast_full` (the kernel of a full reduction of a floating or complex numpy array, whose
    # result has the array's dtype), it skips dispatch where dispatch would only run that
    # kernel (`dispatch.run_bare_unary`, which also tells the tapes).
    full = tuple({"axes": normalize_axes(op.name, None, rank), "keepdims": False}
                 for rank in range(_FULL_RANKS))

    def api(input_tensor, axis=None, keepdims=False, name=None):
        if (input_tensor.__class__ is EagerTensor and axis is None and keepdims is False
                and name is None):
            rank = input_tensor._value.ndim
            if rank < _FULL_RANKS:
                if fast_full is not None:
                    t = run_bare_unary(op, input_tensor, full[rank], fast_full)
                    if t is not None:
                        return t
                if input_tensor._meta.dtype in op.dtypes:
                    return execute(op, (input_tensor,), full[rank])
        if isinstance(input_tensor, CompositeTensor):  # ragged/sparse (eager.core.composite)
            return dispatch_api(api_name, input_tensor, input_tensor, axis, keepdims, name)
        x = as_tensor(input_tensor)
        if x.dtype not in op.dtypes:
            check_dtype(op, x, op.dtypes)
        rank = x._value.ndim if x.__class__ is EagerTensor else x.shape.rank
        axes = normalize_axes(op.name, axis, rank)
        out = execute(op, (x,), {"axes": axes, "keepdims": bool(keepdims)})
        return out if name is None else named(out, name)

    api.__name__ = api.__qualname__ = api_name
    api.__doc__ = (f"≈ `tf.math.{api_name}(input_tensor, axis=None, keepdims=False)`: reduces "
                   "over `axis` (an int, a list, or None for all axes).")
    return api


def _full_float_sum(value):
    """`_sum_kernel(np, value)` for a floating or complex array: its full reduction."""
    return _add_reduce(value, None)


reduce_sum = _reduction("reduce_sum", SUM, _full_float_sum)
reduce_prod = _reduction("reduce_prod", PROD)
reduce_mean = _reduction("reduce_mean", MEAN)
reduce_max = _reduction("reduce_max", MAX)
reduce_min = _reduction("reduce_min", MIN)
reduce_any = _reduction("reduce_any", ANY)
reduce_all = _reduction("reduce_all", ALL)
reduce_logsumexp = _reduction("reduce_logsumexp", LOGSUMEXP)
reduce_mean.__doc__ += " Integer means truncate toward zero, as in TensorFlow."
reduce_max.__doc__ += " An empty reduction gives the dtype's lowest value (-inf for floats)."
reduce_logsumexp.__doc__ += " Computed stably: log(sum(exp(x - max))) + max."


def _scalar_axis(op_name, axis, what="dimension"):
    """TensorFlow's ArgMax/Cumsum/Cumprod take the axis as a scalar tensor: a list is an
    InvalidArgumentError (not a TypeError)."""
    if isinstance(axis, (list, tuple)) or getattr(axis, "ndim", 0):
        raise op_error(op_name, f"{what} must be a scalar, but received {axis!r}")
    return axis


def _check_axis_rank(op_name, axis, rank):
    """ArgMax/ArgMin/Cumsum/Cumprod: the axis must lie in [-rank, rank); a scalar has no valid
    axis."""
    if rank is not None and not -rank <= axis < rank:
        raise op_error(op_name, f"Expected dimension in the range [{-rank}, {rank}), but got "
                                f"{axis}")


def _empty_axis_error(op_name, axis, shape):
    """TensorFlow's error for ArgMax/ArgMin over an empty axis, the same from inference (traced,
    asynchronous) and from the kernel: "Reduction axis 1 is empty in shape [2,0]"."""
    dims = ",".join("?" if d is None else str(d) for d in shape)
    return op_error(op_name, f"Reduction axis {axis} is empty in shape [{dims}]")


def _arg_infer(op_name):
    def infer(x, axis, output_type):
        rank = x.shape.rank
        _check_axis_rank(op_name, axis, rank)
        if rank is not None:
            normalize_axis(op_name, axis, rank)
            if rank and x.shape[axis] == 0:
                raise _empty_axis_error(op_name, axis, x.shape)
        shape = reduced_shape(x.shape, (axis % rank,) if rank else (), False)
        return TensorSpec(shape, output_type)
    return infer


def _argmax_kernel(xp, x, axis, output_type):
    if x.ndim and x.shape[axis] == 0:
        raise _empty_axis_error("ArgMax", axis, x.shape)
    if x.dtype.kind == "f":  # as TensorFlow, NaN never wins (numpy's argmax picks NaN)
        x = xp.where(xp.isnan(x), -np.inf, x)
    return xp.argmax(x, axis=axis).astype(output_type.dtype)


def _argmin_kernel(xp, x, axis, output_type):
    if x.ndim and x.shape[axis] == 0:
        raise _empty_axis_error("ArgMin", axis, x.shape)
    if x.dtype.kind == "f":
        x = xp.where(xp.isnan(x), np.inf, x)
    return xp.argmin(x, axis=axis).astype(output_type.dtype)


ARGMAX = register_op("ArgMax", _argmax_kernel, _arg_infer("ArgMax"), dtypes=REAL | BOOL,
                     differentiable=False)
ARGMIN = register_op("ArgMin", _argmin_kernel, _arg_infer("ArgMin"), dtypes=REAL | BOOL,
                     differentiable=False)


def _arg_reduction(api_name, op, out_types):
    def api(input, axis=None, output_type=_dt.int64, name=None):  # noqa: A002
        x = as_tensor(input)
        check_dtype(op, x, op.dtypes)
        output_type = _dt.as_dtype(output_type)
        if output_type not in out_types:  # TensorFlow: attr output_type not in its list
            raise op_error(op.name, f"output_type must be one of "
                                    f"{', '.join(d.name for d in out_types)}, got "
                                    f"{output_type.name}")
        axis = 0 if axis is None else axis
        if op is ARGMIN:  # TensorFlow: argmax's Python layer raises TypeError for a list axis,
            _scalar_axis(op.name, axis)  # argmin's kernel InvalidArgumentError
        axis = static_int(op.name, axis, "axis")
        _check_axis_rank(op.name, axis, x.shape.rank)  # TF: a scalar input has no axis 0
        given, axis = axis, normalize_axis(op.name, axis, x.shape.rank)
        if x.shape.rank and x.shape[axis] == 0:  # (named as given, as TensorFlow names it)
            raise _empty_axis_error(op.name, given, x.shape)
        return execute(op, (x,), {"axis": axis, "output_type": output_type})

    api.__name__ = api.__qualname__ = api_name
    api.__doc__ = (f"≈ `tf.math.{api_name}(input, axis=None, output_type=int64)`: index of the "
                   "first extreme element along `axis` (axis None means 0, as in TensorFlow).")
    return api


argmax = _arg_reduction("argmax", ARGMAX, (_dt.int16, _dt.uint16, _dt.int32, _dt.int64))
argmin = _arg_reduction("argmin", ARGMIN, (_dt.int32, _dt.int64))
