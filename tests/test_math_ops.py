"""eager.ops.math_ops: differential tests against numpy over hypothesis shapes and dtypes,
TensorFlow's semantics and edge cases, bad inputs, and shape inference on partial shapes.

The suite-wide `check_inference` cross-checks every op's inference against its kernel, so the
differential tests also test inference on concrete shapes.
"""

from inspect import unwrap  # public functions wrap the ops' (traceback filtering)
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import eager
from eager import errors
from eager.devices import registry
from eager.ops import math_ops
from eager.core.specs import TensorSpec
from eager.base.tensor_shape import TensorShape
from eager.ops.math_ops import complex_log_of, rsqrt_of
from strategies import COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES, arrays, broadcastable_pair, shapes

# strategies' dtypes plus the wider unsigned ones, which every integer op also accepts.
INT_DTYPES = INT_DTYPES + [np.uint16, np.uint32, np.uint64]
REAL_DTYPES = FLOAT_DTYPES + INT_DTYPES
NUMERIC_DTYPES = REAL_DTYPES + COMPLEX_DTYPES
# TensorFlow 2.21 (verified): Neg, Abs, Sign and Pow have no unsigned kernels.
SIGNED_DTYPES = [d for d in NUMERIC_DTYPES if np.dtype(d).kind != "u"]
BOOL_DTYPES = [np.bool_]
ALL_DTYPES = NUMERIC_DTYPES + BOOL_DTYPES
INEXACT_DTYPES = FLOAT_DTYPES + COMPLEX_DTYPES

RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-13,
        np.dtype(np.complex64): 2e-6, np.dtype(np.complex128): 1e-13}

T = eager.constant


def on_gpu(t) -> bool:
    """Whether tensor `t` lives on a GPU. A GPU's float arithmetic flushes denormals to zero
    (inputs and results: exp(-88) is 0 in float32, sqrt of 1e-45 is 0), where the CPU and numpy
    keep them; the differential tests allow exactly that there, and nothing on the CPU."""
    return registry.lookup(t.device).device_type != "CPU"


def flush_denormals(x):
    """`x` with every subnormal value (real and imaginary parts apart) replaced by a zero of
    its sign: a GPU's view of the same input."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        out = x.copy()
        out.real, out.imag = flush_denormals(x.real), flush_denormals(x.imag)
        return out
    if x.dtype.kind != "f":
        return x
    return np.where(np.abs(x) < np.finfo(x.dtype).tiny, x * 0, x)


def check(result, expected, rtol=None, atol=0.0, flushed=None):
    """`result` (an eager tensor) has expected's dtype and shape, and its values: exact for
    integers and bools, within tolerance (nan where nan) for inexact dtypes.

    On a GPU only (see `on_gpu`), inexact values may also differ by the dtype's smallest normal
    (a result flushed to zero), and an element may instead match `flushed`, the reference
    computed on the inputs with their denormals flushed (`flush_denormals`)."""
    expected = np.asarray(expected)
    assert isinstance(result, eager.Tensor), type(result)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    actual = np.asarray(result.numpy())
    if expected.dtype.kind in "fc":
        rtol = RTOL[expected.dtype] if rtol is None else rtol
        if on_gpu(result):
            atol = max(atol, np.finfo(expected.dtype).tiny)
            if flushed is not None:
                with np.errstate(all="ignore"):
                    matches = np.isclose(actual, np.asarray(flushed), rtol=rtol, atol=atol,
                                         equal_nan=True)
                expected = np.where(matches, actual, expected)
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def dtype_pair(dtypes, elements=None, max_dims=4):
    return st.sampled_from(dtypes).flatmap(
        lambda d: broadcastable_pair(d, max_dims=max_dims, elements=elements))


def array_of(dtypes, elements=None, **shape_kwargs):
    return st.sampled_from(dtypes).flatmap(
        lambda d: arrays(d, shapes(**shape_kwargs), elements))


# -----------------------------------------------------------------------------------------------
# Namespaces
# -----------------------------------------------------------------------------------------------

# Where TensorFlow 2 places each math op: tf.math, the top level, or tf.bitwise.
_TOP_LEVEL_ONLY = {"where", "cast", "clip_by_value"}
_BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert"}


def _public(name):
    if name in _BITWISE:
        return getattr(eager.bitwise, name)
    if name in _TOP_LEVEL_ONLY:
        return getattr(eager, name)
    return getattr(eager.math, name)


def test_every_public_name_is_exported_where_tensorflow_places_it():
    for name in math_ops.__all__:
        assert unwrap(_public(name)) is getattr(math_ops, name), name
        assert callable(getattr(math_ops, name))
    for name in _TOP_LEVEL_ONLY | _BITWISE:
        assert not hasattr(eager.math, name), name
    for name in ("log", "rsqrt", "floormod", "logical_xor", "top_k", "bitwise_and"):
        assert not hasattr(eager, name), name  # tf.math / tf.bitwise only, as in TensorFlow


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "truediv", "pow",
                                  "negative", "abs", "sign", "square", "sqrt", "exp", "sin",
                                  "cos", "tanh", "sigmoid", "maximum", "minimum", "equal",
                                  "not_equal", "less", "less_equal", "greater", "greater_equal",
                                  "logical_and", "logical_or", "logical_not", "where", "cast",
                                  "reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                                  "reduce_prod", "reduce_any", "reduce_all", "argmax", "argmin",
                                  "clip_by_value"])
def test_top_level_names_are_the_math_ops(name):
    assert unwrap(getattr(eager, name)) is getattr(math_ops, name)


# -----------------------------------------------------------------------------------------------
# Elementwise binary ops: differential against numpy
# -----------------------------------------------------------------------------------------------

def _np_floordiv(a, b):
    if a.dtype.kind == "f":
        return np.floor(a / b)  # TensorFlow: floor(x / y) for floats
    return np.floor_divide(a, b)


BINARY = {
    # name: (numpy reference, dtypes)
    "add": (np.add, NUMERIC_DTYPES),
    "subtract": (np.subtract, NUMERIC_DTYPES),
    "multiply": (np.multiply, NUMERIC_DTYPES),
    "maximum": (np.maximum, REAL_DTYPES),
    "minimum": (np.minimum, REAL_DTYPES),
    "less": (np.less, REAL_DTYPES),
    "less_equal": (np.less_equal, REAL_DTYPES),
    "greater": (np.greater, REAL_DTYPES),
    "greater_equal": (np.greater_equal, REAL_DTYPES),
    "equal": (np.equal, ALL_DTYPES),
    "not_equal": (np.not_equal, ALL_DTYPES),
    "logical_and": (np.logical_and, BOOL_DTYPES),
    "logical_or": (np.logical_or, BOOL_DTYPES),
    "logical_xor": (np.logical_xor, BOOL_DTYPES),
    "bitwise_and": (np.bitwise_and, INT_DTYPES),
    "bitwise_or": (np.bitwise_or, INT_DTYPES),
    "bitwise_xor": (np.bitwise_xor, INT_DTYPES),
    "floordiv": (_np_floordiv, REAL_DTYPES),
    "floormod": (np.mod, REAL_DTYPES),
    "mod": (np.mod, REAL_DTYPES),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@given(data=st.data())
def test_binary_matches_numpy(name, data):
    ref, dtypes = BINARY[name]
    a, b = data.draw(dtype_pair(dtypes))
    if name in ("floordiv", "floormod", "mod") and a.dtype.kind in "iu":
        b = np.where(b == 0, np.ones_like(b), b)  # integer division by zero is tested below
    fn = _public(name)
    with np.errstate(all="ignore"):  # the numpy reference warns on 0/0; TF is silent
        expected = ref(a, b)
        flushed = ref(flush_denormals(a), flush_denormals(b))
    check(fn(T(a), T(b)), expected, flushed=flushed)


class _FormulaModXP:
    """numpy, except that mod computes x - floor(x / y) * y, as CuPy's float remainder does."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def mod(x, y):
        return x - np.floor_divide(x, y) * y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floormod_is_exact_on_every_array_module(dtype):
    x = np.array([1.0, -1.0, 1.0, 7.5, -7.5, 0.0, -0.0, 5.0], dtype)
    y = np.array([3.78e-289 if dtype == np.float64 else 3.7e-37, 3e-30, -3e-30, 2.0, 2.0, -3.0,
                  3.0, -np.inf], dtype)
    with np.errstate(all="ignore"):
        out = math_ops._floormod_kernel(_FormulaModXP(), x, y)
        expected = np.mod(x, y)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(expected))  # zeros take y's sign


@given(pair=dtype_pair(SIGNED_DTYPES))
def test_pow_matches_numpy(pair):
    a, b = pair
    if a.dtype.kind in "iu":
        b = np.abs(b) % 5  # no negative integer exponents (an error, tested below)
    with np.errstate(all="ignore"):
        expected = np.power(a, b)
        flushed = np.power(flush_denormals(a), flush_denormals(b))
    result = eager.pow(T(a), T(b))
    # Complex pow is exp(b * log(a)): CUDA's exp/log differ from numpy's by a few ulps, which
    # the exponent magnifies (seen on an H100: 1.2e-13 relative for |a ** b| ~ 1e75).
    rtol = 1e-12 if on_gpu(result) and a.dtype == np.complex128 else None
    check(result, expected, rtol=rtol, flushed=flushed)


@pytest.mark.parametrize("name", ["truediv", "divide"])
@given(pair=dtype_pair(NUMERIC_DTYPES))
def test_truediv_matches_numpy_with_tf_int_promotion(name, pair):
    x, y = T(pair[0]), T(pair[1])
    if on_gpu(y) and pair[1].dtype.kind == "c":
        # CuPy's complex division gives nan+nanj for x / 0 where numpy's (C99 Annex G) gives
        # inf+infj: a zero divisor (denormals included: the GPU flushes them) is left out there.
        divisor = np.where(flush_denormals(pair[1]) == 0, np.ones_like(pair[1]), pair[1])
        pair, y = (pair[0], divisor), T(divisor)
    a, b = pair
    if a.dtype.kind in "iu":
        target = np.float32 if a.dtype.itemsize <= 2 else np.float64
        a, b = a.astype(target), b.astype(target)
    with np.errstate(all="ignore"):
        expected = np.true_divide(a, b)
        flushed = np.true_divide(flush_denormals(a), flush_denormals(b))
    result = _public(name)(x, y)
    check(result, expected, flushed=flushed)


# -----------------------------------------------------------------------------------------------
# Elementwise unary ops: differential against numpy
# -----------------------------------------------------------------------------------------------

def _np_sign(x):
    if x.dtype.kind == "c":
        mag = np.abs(x)
        return np.where(mag == 0, 0, x / np.where(mag == 0, 1, mag)).astype(x.dtype)
    return np.sign(x)


def _np_sigmoid(x):
    return (1 / (1 + np.exp(-x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)))
            ).astype(x.dtype)


UNARY = {
    "negative": (np.negative, SIGNED_DTYPES),
    "abs": (np.abs, SIGNED_DTYPES),
    "sign": (_np_sign, SIGNED_DTYPES),
    "square": (np.square, NUMERIC_DTYPES),
    "sqrt": (np.sqrt, INEXACT_DTYPES),
    "rsqrt": (lambda x: (1 / np.sqrt(x)).astype(x.dtype), INEXACT_DTYPES),
    "exp": (np.exp, INEXACT_DTYPES),
    "log": (np.log, INEXACT_DTYPES),
    "log1p": (np.log1p, INEXACT_DTYPES),
    "sin": (np.sin, INEXACT_DTYPES),
    "cos": (np.cos, INEXACT_DTYPES),
    "tanh": (np.tanh, INEXACT_DTYPES),
    "sigmoid": (_np_sigmoid, INEXACT_DTYPES),
    "logical_not": (np.logical_not, BOOL_DTYPES),
    "invert": (np.invert, INT_DTYPES),
    "real": (lambda x: np.real(x).copy(), NUMERIC_DTYPES),
    "imag": (lambda x: np.imag(x).copy() if x.dtype.kind == "c" else np.zeros_like(x),
             NUMERIC_DTYPES),
    "conj": (np.conj, NUMERIC_DTYPES),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary_matches_numpy(name, data):
    ref, dtypes = UNARY[name]
    x = data.draw(array_of(dtypes))
    with np.errstate(all="ignore"):
        expected = ref(x)
        flushed = ref(flush_denormals(x))
    # sigmoid's reference is computed in double precision; the others are numpy's own ufuncs.
    rtol = {np.dtype(np.float16): 4e-3, np.dtype(np.complex64): 1e-5}.get(
        expected.dtype) if name == "sigmoid" else None
    check(_public(name)(T(x)), expected, rtol=rtol,
          atol=1e-30 if name == "sigmoid" else 0.0, flushed=flushed)


# The op record behind each public function, to check the dtypes each accepts.
OPDEFS = {
    "add": "ADD", "subtract": "SUB", "multiply": "MUL", "maximum": "MAXIMUM",
    "minimum": "MINIMUM", "less": "LESS", "less_equal": "LESS_EQUAL", "greater": "GREATER",
    "greater_equal": "GREATER_EQUAL", "equal": "EQUAL", "not_equal": "NOT_EQUAL",
    "logical_and": "LOGICAL_AND", "logical_or": "LOGICAL_OR", "logical_xor": "LOGICAL_OR",
    "bitwise_and": "BITWISE_AND", "bitwise_or": "BITWISE_OR", "bitwise_xor": "BITWISE_XOR",
    "floordiv": "FLOORDIV", "floormod": "FLOORMOD", "mod": "FLOORMOD", "pow": "POW",
    "negative": "NEG", "abs": "ABS", "sign": "SIGN", "square": "SQUARE", "sqrt": "SQRT",
    "rsqrt": "RSQRT", "exp": "EXP", "log": "LOG", "log1p": "LOG1P", "sin": "SIN", "cos": "COS",
    "tanh": "TANH", "sigmoid": "SIGMOID", "logical_not": "LOGICAL_NOT", "invert": "INVERT",
}
OTHER_TESTED = {"truediv", "divide", "real", "imag", "conj", "where", "cast", "clip_by_value",
                "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
                "reduce_any", "reduce_all", "reduce_logsumexp", "argmax", "argmin"}


def test_every_public_op_has_a_differential_test():
    tested = set(BINARY) | set(UNARY) | {"pow"} | OTHER_TESTED
    assert set(math_ops.__all__) <= tested, set(math_ops.__all__) - tested


@pytest.mark.parametrize("name", sorted(set(BINARY) | set(UNARY)))
def test_differential_tables_cover_exactly_the_dtypes_each_op_accepts(name):
    dtypes = (BINARY.get(name) or UNARY[name])[1]
    if name in ("real", "imag", "conj"):
        return  # real inputs never reach their op records (the input or zeros come back)
    # (strings, which add and the equality ops also take: tests/test_strings.py)
    accepted = {d.dtype for d in getattr(math_ops, OPDEFS[name]).dtypes if not d.is_string}
    assert {np.dtype(d) for d in dtypes} == accepted


# TensorFlow 2.21 (verified): a dtype outside an op's type list is an InvalidArgumentError
# ("Value for attr 'T' of int32 is not in the list of allowed values"); only a dtype the op lists
# but has no CPU kernel for is a NotFoundError. Of the math ops, only FloorDiv has such dtypes.
NO_CPU_KERNEL = {"FloorDiv": {np.complex64, np.complex128}}


@pytest.mark.parametrize("name", sorted(OPDEFS))
def test_every_rejected_dtype_is_invalid_argument_naming_the_op(name):
    fn = _public(name)
    opdef = getattr(math_ops, OPDEFS[name])
    binary = name in BINARY or name == "pow"
    rejected = [d for d in ALL_DTYPES if np.dtype(d) not in {a.dtype for a in opdef.dtypes}]
    no_kernel = NO_CPU_KERNEL.get(opdef.name, set())
    for dtype in rejected:
        x = T(np.zeros(2, dtype))
        cls = errors.NotFoundError if dtype in no_kernel else errors.InvalidArgumentError
        with pytest.raises(errors.OpError, match=rf"\[Op:{opdef.name}\]") as info:
            fn(x, x) if binary else fn(x)
        assert type(info.value) is cls, (dtype, info.value)
        assert np.dtype(dtype).name in str(info.value) or dtype is np.bool_


@pytest.mark.parametrize("name,opdef", [
    ("reduce_sum", "SUM"), ("reduce_prod", "PROD"), ("reduce_mean", "MEAN"),
    ("reduce_max", "MAX"), ("reduce_min", "MIN"), ("reduce_any", "ANY"), ("reduce_all", "ALL"),
    ("reduce_logsumexp", "LOGSUMEXP"), ("argmax", "ARGMAX"), ("argmin", "ARGMIN"),
    ("clip_by_value", "CLIP")])
def test_other_ops_accept_exactly_their_dtypes(name, opdef):
    opdef = getattr(math_ops, opdef)
    fn = _public(name) if name != "clip_by_value" else eager.clip_by_value
    for dtype in ALL_DTYPES:
        x = T(np.ones(2, dtype))
        # `call` runs within this iteration (hence B023's noqa).
        call = (lambda: fn(x, x, x)) if name == "clip_by_value" else (lambda: fn(x))  # noqa: B023
        if np.dtype(dtype) in {a.dtype for a in opdef.dtypes}:
            assert call().shape.rank is not None
        else:  # TensorFlow 2.21 (verified): not in the type list
            with pytest.raises(errors.InvalidArgumentError, match=opdef.name):
                call()


def test_imag_of_real_inputs_is_zero_even_for_inf_and_nan():
    check(eager.math.imag(T(np.array([np.inf, -np.inf, np.nan, 1.0], np.float32))),
          np.zeros(4, np.float32))
    check(eager.math.imag(T(np.array([3], np.int64))), np.zeros(1, np.int64))


def test_real_and_conj_of_real_inputs_are_the_input():
    x = T([1.0, -2.0])
    assert eager.math.real(x) is x and eager.math.conj(x) is x


# -----------------------------------------------------------------------------------------------
# Sigmoid and logsumexp accuracy
# -----------------------------------------------------------------------------------------------

def _sigmoid_reference(x):
    """Sigmoid in extended precision, each branch without overflow."""
    x = x.astype(np.longdouble)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


@pytest.mark.parametrize("dtype,bound,rtol", [(np.float16, 10, 4e-3), (np.float32, 80, 4e-6),
                                              (np.float64, 700, 1e-14)])
@given(data=st.data())
def test_sigmoid_relative_accuracy_in_both_tails(dtype, bound, rtol, data):
    width = np.dtype(dtype).itemsize * 8
    x = data.draw(hnp.arrays(dtype, st.integers(1, 30), elements=st.floats(
        -bound, bound, width=width, allow_nan=False)))
    x = np.concatenate([x, np.array([-bound, bound, 0], dtype)])
    result = np.asarray(eager.sigmoid(T(x)).numpy(), np.longdouble)
    expected = _sigmoid_reference(x)
    assert np.all(np.abs(result - expected) <= rtol * expected), (x, result, expected)


def test_sigmoid_extremes():
    t = eager.sigmoid(T(np.array([-1000.0, -100.0, 0.0, 100.0, 1000.0], np.float32)))
    out = t.numpy()
    assert out.dtype == np.float32
    # sigmoid(-100) = 3.7e-44 is a float32 denormal: a GPU flushes it to zero.
    tiny = 0 <= out[1] < 1e-43 if on_gpu(t) else 0 < out[1] < 1e-43
    assert out[0] == 0 and tiny and out[2] == 0.5 and out[3] == 1 and out[4] == 1
    assert not np.isnan(out).any()
    assert eager.nn.sigmoid is eager.sigmoid
    # Complex inputs: no overflow either (exp of a large negative real part).
    z = np.array([-90 + 1j, 90 - 1j, 0j, 1 + 2j, -1 - 2j], np.complex64)
    t = eager.sigmoid(T(z))
    out = t.numpy()
    assert out.dtype == np.complex64 and not np.isnan(out).any()
    # sigmoid(-90 + 1j) ~ 8e-40: float32 denormal parts, which a GPU flushes to zero.
    np.testing.assert_allclose(out, 1 / (1 + np.exp(-z.astype(np.complex128))), rtol=1e-5,
                               atol=np.finfo(np.float32).tiny if on_gpu(t) else 1e-44)


def test_reduce_logsumexp_is_stable():
    lse = eager.math.reduce_logsumexp
    check(lse(T([1000.0, 1000.0])), np.float32(1000 + math.log(2)))
    check(lse(T([-1000.0, -1000.0])), np.float32(-1000 + math.log(2)))
    check(lse(T(np.array([1e300, 1e300]))), np.float64(1e300 + math.log(2)))
    check(lse(T([-np.inf, -np.inf])), np.float32(-np.inf))
    check(lse(T([-np.inf, 0.0])), np.float32(0.0))
    check(lse(T([np.inf, 1.0])), np.float32(np.inf))
    check(lse(T([[0.0, 0.0], [-np.inf, -np.inf]]), axis=1, keepdims=True),
          np.array([[math.log(2)], [-np.inf]], np.float32))
    check(lse(T(np.zeros((0, 2), np.float32)), axis=0), np.full(2, -np.inf, np.float32))


@given(data=st.data())
def test_reduce_logsumexp_matches_reference(data):
    x, axis, keepdims = data.draw(reduction_case(FLOAT_DTYPES))
    x64 = x.astype(np.float64)
    m = np.max(x64, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        expected = np.log(np.sum(np.exp(x64 - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        expected = np.squeeze(expected, axis=tuple(range(x.ndim)) if axis is None else axis)
    rtol = {np.float16: 4e-3, np.float32: 1e-5, np.float64: 1e-12}[x.dtype.type]
    check(eager.math.reduce_logsumexp(T(x), axis=_as_arg(axis), keepdims=keepdims),
          expected.astype(x.dtype), rtol=rtol, atol=rtol)


# -----------------------------------------------------------------------------------------------
# Reductions
# -----------------------------------------------------------------------------------------------

def _small(dtype, k):
    """Integers in [-k, k] ([0, k] for unsigned dtypes) as elements of `dtype`."""
    return st.integers(0 if np.dtype(dtype).kind == "u" else -k, k)


@st.composite
def reduction_case(draw, dtypes, small=None, max_dims=4, max_side=5):
    """(array, axis as a normalized tuple or None, keepdims); with `small`, the elements are
    integers of magnitude <= small."""
    dtype = draw(st.sampled_from(dtypes))
    elements = None if small is None or np.dtype(dtype).kind in "bc" else _small(dtype, small)
    x = draw(arrays(dtype, shapes(max_dims=max_dims, max_side=max_side), elements))
    rank = x.ndim
    options = [st.none(), st.just(())]
    if rank:
        options.append(st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank,
                                unique_by=lambda a: a % rank).map(tuple))
        options.append(st.integers(-rank, rank - 1).map(lambda a: (a,)))
    axis = draw(st.one_of(*options))
    keepdims = draw(st.booleans())
    if axis is not None:
        axis = tuple(sorted(a % rank for a in axis)) if rank else ()
    return x, axis, keepdims


def _as_arg(axis):
    """The axis as a user passes it: None, an int, or a list (negative forms tested too)."""
    if axis is None or len(axis) != 1:
        return None if axis is None else list(axis)
    return axis[0]


def _count(x, axis):
    return int(np.prod([x.shape[a] for a in (range(x.ndim) if axis is None else axis)],
                       dtype=np.int64))


def _inexact_bound(x, axis, keepdims):
    """Error bound of a floating sum: n * eps * sum|x| (+ final rounding)."""
    eps = np.finfo(x.dtype).eps
    mag = np.sum(np.abs(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)),
                 axis=axis, keepdims=keepdims)
    return 2 * (_count(x, axis) + 1) * eps * mag + np.finfo(x.dtype).tiny


def _wide(x):
    return x.astype({"f": np.float64, "c": np.complex128, "i": np.int64, "u": np.int64,
                     "b": np.bool_}[x.dtype.kind])


@given(data=st.data())
def test_reduce_sum_matches_numpy(data):
    x, axis, keepdims = data.draw(reduction_case(NUMERIC_DTYPES))
    expected = np.sum(_wide(x), axis=axis, keepdims=keepdims)  # ints wrap as in the dtype
    result = eager.reduce_sum(T(x), axis=_as_arg(axis), keepdims=keepdims)
    if x.dtype.kind in "fc":
        assert result.dtype == x.dtype and result.shape == expected.shape
        assert np.all(np.abs(result.numpy() - expected) <= _inexact_bound(x, axis, keepdims))
    else:
        check(result, expected.astype(x.dtype))


@given(data=st.data())
def test_reduce_prod_matches_numpy(data):
    x, axis, keepdims = data.draw(reduction_case(REAL_DTYPES, small=3, max_side=3))
    expected = np.prod(_wide(x), axis=axis, keepdims=keepdims).astype(x.dtype)
    rtol = 1e-2 if x.dtype == np.float16 else 1e-5
    check(eager.reduce_prod(T(x), axis=_as_arg(axis), keepdims=keepdims), expected, rtol=rtol)


@given(data=st.data())
def test_reduce_mean_matches_numpy(data):
    x, axis, keepdims = data.draw(reduction_case(NUMERIC_DTYPES))
    n = _count(x, axis)
    total = np.sum(_wide(x), axis=axis, keepdims=keepdims)  # exact for ints: no overflow
    result = eager.reduce_mean(T(x), axis=_as_arg(axis), keepdims=keepdims)
    if x.dtype.kind in "iu":
        # TensorFlow accumulates in 64 bits and truncates toward zero (0 for an empty
        # reduction, where TF itself divides by zero).
        expected = np.trunc(total / n) if n else np.zeros_like(total)
        check(result, expected.astype(x.dtype))
    else:
        assert result.dtype == x.dtype and result.shape == total.shape
        with np.errstate(invalid="ignore"):
            expected = total / n
        bound = _inexact_bound(x, axis, keepdims) / max(n, 1)
        actual = result.numpy()
        assert np.all((np.abs(actual - expected) <= bound) | (np.isnan(expected)
                                                              & np.isnan(actual)))


@pytest.mark.parametrize("op,np_op,lowest", [(eager.reduce_max, np.max, True),
                                             (eager.reduce_min, np.min, False)])
@given(data=st.data())
def test_reduce_max_min_match_numpy_including_empty(op, np_op, lowest, data):
    x, axis, keepdims = data.draw(reduction_case(REAL_DTYPES))
    if x.dtype.kind == "f":
        initial = -np.inf if lowest else np.inf
    else:
        info = np.iinfo(x.dtype)
        initial = info.min if lowest else info.max
    expected = np_op(x, axis=axis, keepdims=keepdims, initial=initial)
    check(op(T(x), axis=_as_arg(axis), keepdims=keepdims), np.asarray(expected, x.dtype))


@pytest.mark.parametrize("op,np_op", [(eager.reduce_any, np.any), (eager.reduce_all, np.all)])
@given(data=st.data())
def test_reduce_any_all_match_numpy(op, np_op, data):
    x, axis, keepdims = data.draw(reduction_case(BOOL_DTYPES))
    check(op(T(x), axis=_as_arg(axis), keepdims=keepdims),
          np_op(x, axis=axis, keepdims=keepdims))


def test_reduce_mean_of_ints_truncates_toward_zero():
    check(eager.reduce_mean(T([-3, -4])), np.int32(-3))
    check(eager.reduce_mean(T([3, 4])), np.int32(3))
    check(eager.reduce_mean(T([-1, -2, -2])), np.int32(-1))
    check(eager.reduce_mean(T([[1, 2], [-3, -6]]), axis=1), np.array([1, -4], np.int32))
    check(eager.reduce_mean(T(np.array([-7, 0], np.int8))), np.int8(-3))
    # The sum accumulates in 64 bits (as TF): no wrap-around in small integer types.
    check(eager.reduce_mean(T(np.array([255, 254], np.uint8))), np.uint8(254))
    check(eager.reduce_mean(T(np.array([100, 100, 99], np.int8))), np.int8(99))
    check(eager.reduce_mean(T(np.array([-128, -128], np.int8))), np.int8(-128))
    check(eager.reduce_mean(T(np.full(3, 2 ** 31 - 1, np.int32))), np.int32(2 ** 31 - 1))


def test_reduce_mean_of_int64_is_exact_beyond_float_precision():
    big = 2 ** 60 + 1
    check(eager.reduce_mean(T(np.array([big], np.int64))), np.int64(big))
    check(eager.reduce_mean(T(np.array([2 ** 62, 2 ** 62 - 2], np.int64))),
          np.int64(2 ** 62 - 1))
    check(eager.reduce_mean(T(np.array([-big, -big - 2], np.int64))), np.int64(-big - 1))
    check(eager.reduce_mean(T(np.array([-big, -big - 1], np.int64))), np.int64(-big))


def test_reduce_mean_of_empty_float_is_nan_without_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # eager's own filter (eager/__init__.py) for kernel floating-point warnings:
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"eager(\..*)?$")
        result = eager.reduce_mean(T(np.zeros((0, 3), np.float32)), axis=0)
    check(result, np.full(3, np.nan, np.float32))
    assert not caught, [str(w.message) for w in caught]


def test_reduce_max_min_of_empty_axis():
    check(eager.reduce_max(T(np.zeros((0, 2), np.float32)), axis=0),
          np.full(2, -np.inf, np.float32))
    check(eager.reduce_min(T(np.zeros((0, 2), np.float64)), axis=0),
          np.full(2, np.inf, np.float64))
    check(eager.reduce_max(T(np.zeros((0,), np.int32))), np.int32(-2 ** 31))
    check(eager.reduce_min(T(np.zeros((0,), np.uint8))), np.uint8(255))
    check(eager.reduce_max(T(np.zeros((3, 0), np.int8)), axis=1, keepdims=True),
          np.full((3, 1), -128, np.int8))


def test_reduction_axis_forms():
    x = T(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    n = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check(eager.reduce_sum(x), np.float32(n.sum()))
    check(eager.reduce_sum(x, axis=1), n.sum(axis=1))
    check(eager.reduce_sum(x, axis=-1), n.sum(axis=2))
    check(eager.reduce_sum(x, axis=[0, -1]), n.sum(axis=(0, 2)))
    check(eager.reduce_sum(x, axis=(2, 0)), n.sum(axis=(0, 2)))
    check(eager.reduce_sum(x, axis=[]), n)
    check(eager.reduce_sum(x, axis=T([0, 2])), n.sum(axis=(0, 2)))
    check(eager.reduce_sum(x, axis=T(1)), n.sum(axis=1))
    check(eager.reduce_sum(x, axis=np.int64(1)), n.sum(axis=1))
    check(eager.reduce_sum(x, axis=None, keepdims=True), n.sum(keepdims=True))
    check(eager.reduce_sum(x, axis=[1], keepdims=True), n.sum(axis=1, keepdims=True))
    check(eager.reduce_max(x, axis=-2, keepdims=True), n.max(axis=1, keepdims=True))
    check(eager.reduce_sum(T(5.0), axis=[]), np.float32(5.0))
    check(eager.reduce_sum(T(5.0)), np.float32(5.0))


REDUCTIONS = {
    "reduce_sum": ("Sum", [1.0, 2.0]), "reduce_prod": ("Prod", [1.0, 2.0]),
    "reduce_mean": ("Mean", [1.0, 2.0]), "reduce_max": ("Max", [1.0, 2.0]),
    "reduce_min": ("Min", [1.0, 2.0]), "reduce_any": ("Any", [True, False]),
    "reduce_all": ("All", [True, False]), "reduce_logsumexp": ("ReduceLogSumExp", [1.0, 2.0]),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", [[0, 0], [1, -1], 2, -3, [0, 5]])
def test_reduction_bad_axis_is_invalid_argument_naming_the_op(name, axis):
    op_name, row = REDUCTIONS[name]
    x = T([row, row])
    with pytest.raises(errors.InvalidArgumentError, match=rf"\[Op:{op_name}\]") as info:
        _public(name)(x, axis=axis)
    assert "duplicate" in str(info.value) or "Invalid reduction dimension" in str(info.value)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_of_a_scalar_with_axis_0_is_invalid(name):
    op_name, row = REDUCTIONS[name]
    with pytest.raises(errors.InvalidArgumentError, match=op_name):
        _public(name)(T(row[0]), axis=0)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", [1.5, "a"])
def test_reduction_non_integer_axis_is_typeerror(name, axis):
    op_name, row = REDUCTIONS[name]
    with pytest.raises(TypeError, match=op_name):
        _public(name)(T([row]), axis=axis)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", [[0.5], [1.0], T(1.0)])
def test_reduction_float_axis_tensor_is_invalid_argument(name, axis):
    # TensorFlow 2.21 (verified): a float list/tensor axis is rejected by the Tidx attr.
    op_name, row = REDUCTIONS[name]
    with pytest.raises(errors.InvalidArgumentError, match=op_name):
        _public(name)(T([row]), axis=axis)


# -----------------------------------------------------------------------------------------------
# argmax / argmin
# -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op,np_op", [(eager.argmax, np.argmax), (eager.argmin, np.argmin)])
@given(data=st.data())
def test_argmax_argmin_match_numpy(op, np_op, data):
    x = data.draw(array_of(REAL_DTYPES, min_dims=1, min_side=1))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    extra = [eager.int16, eager.uint16] if op is eager.argmax else []  # TF 2.21's attr lists
    out_type = data.draw(st.sampled_from([None, eager.int32, eager.int64] + extra))
    kwargs = {} if out_type is None else {"output_type": out_type}
    expected = np_op(x, axis=axis).astype(np.int64 if out_type is None else out_type.dtype)
    check(op(T(x), axis=axis, **kwargs), expected)
    # axis None means axis 0 (TensorFlow), not the flattened array (numpy).
    check(op(T(x)), np_op(x, axis=0).astype(np.int64))


def test_argmax_first_of_ties_and_output_type():
    check(eager.argmax(T([[1, 5], [3, 2]])), np.array([1, 0], np.int64))
    check(eager.argmin(T([[1, 5], [3, 2]]), axis=1, output_type=eager.int32),
          np.array([0, 1], np.int32))
    check(eager.argmax(T([2.0, 7.0, 7.0])), np.int64(1))
    # TensorFlow 2.21 (verified): output_type is an attr (InvalidArgumentError outside its
    # list: int16/uint16/int32/int64 for ArgMax, int32/int64 for ArgMin).
    with pytest.raises(errors.InvalidArgumentError, match="ArgMax"):
        eager.argmax(T([1.0]), output_type=eager.float32)
    with pytest.raises(errors.InvalidArgumentError, match="ArgMin"):
        eager.argmin(T([1.0]), output_type=eager.uint8)
    with pytest.raises(errors.InvalidArgumentError, match="ArgMin"):
        eager.argmin(T([1.0]), output_type=eager.int16)
    check(eager.argmax(T([1.0, 3.0]), output_type=eager.uint16), np.uint16(1))


def test_argmax_tensorflow_edge_cases():
    # Verified against TensorFlow 2.21.
    with pytest.raises(errors.InvalidArgumentError, match="ArgMax"):
        eager.argmax(T(1.5))  # a scalar has no axis 0
    with pytest.raises(errors.InvalidArgumentError, match="ArgMin"):
        eager.argmin(T(1.5), axis=0)
    check(eager.argmax(T([True, False, True])), np.int64(0))  # bool inputs are supported
    check(eager.argmin(T([[True, False], [False, False]]), axis=1), np.array([1, 0], np.int64))
    nan = np.nan  # NaN never wins (numpy's argmax would pick it)
    check(eager.argmax(T([1.0, nan, 3.0])), np.int64(2))
    check(eager.argmin(T([1.0, nan, 3.0])), np.int64(0))
    check(eager.argmax(T([nan, 1.0])), np.int64(1))
    check(eager.argmax(T([nan, nan])), np.int64(0))
    check(eager.argmin(T([np.inf, nan, 2.0])), np.int64(2))
    check(eager.argmax(T([[nan, 1.0], [2.0, nan]]), axis=1), np.array([1, 0], np.int64))
    # a list axis: TypeError from argmax's Python layer, InvalidArgumentError from ArgMin
    with pytest.raises(TypeError, match="ArgMax"):
        eager.argmax(T([[1.0]]), axis=[1])
    with pytest.raises(errors.InvalidArgumentError, match="ArgMin"):
        eager.argmin(T([[1.0]]), axis=[1])


@pytest.mark.parametrize("op,name", [(eager.argmax, "ArgMax"), (eager.argmin, "ArgMin")])
def test_argmax_bad_inputs(op, name):
    with pytest.raises(errors.InvalidArgumentError, match=name):
        op(T([1.0, 2.0]), axis=1)
    with pytest.raises(errors.InvalidArgumentError, match=name):
        op(T([[1.0, 2.0]]), axis=-3)
    with pytest.raises(errors.InvalidArgumentError, match=name):
        op(T(np.zeros((0, 3), np.float32)))  # reducing an empty axis has no answer
    with pytest.raises(errors.InvalidArgumentError, match=name):  # TF 2.21: not in the list
        op(T([1 + 1j]))
    with pytest.raises(TypeError, match=name):
        op(T([1.0]), axis=0.5)


@pytest.mark.parametrize("name,op_name", [("negative", "Neg"), ("abs", "Abs"), ("sign", "Sign")])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_unsigned_inputs_are_rejected_like_tensorflow(name, op_name, dtype):
    # TensorFlow 2.21 (verified): Neg, Abs, Sign and Pow do not list the unsigned types
    # (InvalidArgumentError).
    x = T(np.array([0, 1, 7], dtype))
    with pytest.raises(errors.InvalidArgumentError, match=op_name):
        _public(name)(x)
    with pytest.raises(errors.InvalidArgumentError, match="Pow"):
        eager.pow(x, x)
    if name == "negative":
        with pytest.raises(errors.InvalidArgumentError, match="Neg"):
            -x  # noqa: B018


# -----------------------------------------------------------------------------------------------
# where, cast, clip_by_value
# -----------------------------------------------------------------------------------------------

@given(data=st.data())
def test_where_three_args_broadcast_like_numpy(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    s = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=4))
    c = data.draw(arrays(np.bool_, s.input_shapes[0]))
    x = data.draw(arrays(dtype, s.input_shapes[1]))
    y = data.draw(arrays(dtype, s.input_shapes[2]))
    check(eager.where(T(c), T(x), T(y)), np.where(c, x, y))


@given(c=arrays(np.bool_, shapes(min_dims=1)))
def test_where_one_arg_gives_int64_coordinates(c):
    result = eager.where(T(c))
    check(result, np.argwhere(c).astype(np.int64))


def test_where_examples_and_errors():
    check(eager.where(T([True, False]), T([1, 2]), T(0)), np.array([1, 0], np.int32))
    check(eager.where(T([True, False]), 1.5, T([0.0, 2.0])), np.array([1.5, 2.0], np.float32))
    check(eager.where(T([[1, 0], [0, 3]])), np.array([[0, 0], [1, 1]], np.int64))
    # TensorFlow 2.21 (verified): one-argument where needs rank >= 1, and counts any nonzero
    # element (complex: either part; NaN is nonzero).
    with pytest.raises(errors.InvalidArgumentError, match="Where"):
        eager.where(T(True))
    check(eager.where(T([1e-30j, 0, complex(np.nan, 0)])), np.array([[0], [2]], np.int64))
    check(eager.where(T([1 + 2j, -0.5j, 3, 0])), np.array([[0], [1], [2]], np.int64))
    check(eager.where(T([0.0, -0.0, np.nan])), np.array([[2]], np.int64))
    with pytest.raises(ValueError):
        eager.where(T([True]), T([1]))
    with pytest.raises(errors.InvalidArgumentError, match="SelectV2"):
        eager.where(T([True, False, True]), T([1, 2]), T([3, 4]))
    with pytest.raises(errors.InvalidArgumentError, match="SelectV2") as info:
        eager.where(T([True]), T([1]), T([1.0]))
    assert "int32" in str(info.value) and "float32" in str(info.value)
    with pytest.raises(errors.InvalidArgumentError, match="SelectV2"):
        eager.where(T([1, 0]), T([1, 2]), T([3, 4]))  # a 3-arg condition must be bool


CAST_DTYPES = ALL_DTYPES + [np.uint16, np.uint32, np.uint64]


@st.composite
def cast_case(draw):
    src, dst = draw(st.sampled_from(CAST_DTYPES)), draw(st.sampled_from(CAST_DTYPES))
    src_kind, dst_kind = np.dtype(src).kind, np.dtype(dst).kind
    # Values every destination represents (float -> int truncates; no negatives into unsigned).
    low = 0 if dst_kind in "u" or src_kind == "u" else -100
    if src_kind == "f":
        elements = st.floats(low, 100, width=16 if src == np.float16 else 32)
    elif src_kind == "c":
        part = st.floats(low, 100, width=32)
        elements = st.builds(complex, part, st.floats(-100, 100, width=32))
    elif src_kind == "b":
        elements = st.booleans()
    else:
        elements = st.integers(low, 100)
    return draw(arrays(src, shapes(), elements)), dst


@given(case=cast_case())
def test_cast_matches_tf_semantics(case):
    x, dst = case
    src_kind, dst_kind = x.dtype.kind, np.dtype(dst).kind
    value = x.real if src_kind == "c" and dst_kind != "c" else x  # complex -> real: real part
    expected = (value != 0) if dst_kind == "b" else value.astype(dst)  # floats truncate
    result = eager.cast(T(x), dst)
    check(result, np.asarray(expected, dst))
    check(eager.cast(T(x), eager.as_dtype(dst)), np.asarray(expected, dst))


def test_cast_examples():
    check(eager.cast(T([-1.7, -0.5, 0.5, 1.7]), eager.int32), np.array([-1, 0, 0, 1], np.int32))
    check(eager.cast(T([1 + 2j]), eager.float32), np.array([1.0], np.float32))
    check(eager.cast(T([1j, 2 + 0j, 0j]), eager.bool), np.array([False, True, False]))
    check(eager.cast(T([0.0, 0.25, -3.0, np.nan]), "bool"), np.array([False, True, True, True]))
    check(eager.cast(T([True, False]), eager.float16), np.array([1, 0], np.float16))
    check(eager.cast(T([3.9]), np.uint8), np.array([3], np.uint8))
    x = T([1.0])
    assert eager.cast(x, eager.float32) is x
    assert eager.cast(x, "float32") is x


def test_cast_bad_inputs():
    with pytest.raises(TypeError):
        eager.cast(T([1.0]), "float33")
    with pytest.raises(TypeError, match="Cast"):
        eager.cast(T([1.0]), eager.resource)
    with pytest.raises((TypeError, ValueError)):
        eager.cast(object(), eager.float32)
    with pytest.raises(ValueError):
        eager.cast(None, eager.float32)


@st.composite
def clip_case(draw):
    dtype = draw(st.sampled_from(REAL_DTYPES))
    t = draw(arrays(dtype, shapes()))

    def bound_shape():
        tail = list(t.shape[len(t.shape) - draw(st.integers(0, t.ndim)):])
        return tuple(1 if draw(st.booleans()) else d for d in tail)

    lo = draw(arrays(dtype, bound_shape()))
    hi = draw(arrays(dtype, bound_shape()))
    return t, lo, hi


@given(case=clip_case())
def test_clip_by_value_matches_numpy(case):
    t, lo, hi = case
    expected = np.maximum(np.minimum(t, hi), lo)  # TensorFlow's order: lo wins if lo > hi
    check(eager.clip_by_value(T(t), T(lo), T(hi)), expected)


def test_clip_by_value_examples_and_errors():
    check(eager.clip_by_value(T([1.0, 5.0, 9.0]), 2.0, 6.0), np.array([2, 5, 6], np.float32))
    check(eager.clip_by_value(T([1, 5, 9]), 2, 6), np.array([2, 5, 6], np.int32))
    check(eager.clip_by_value(T([[1, 5], [9, 0]]), T([2, 0]), 6),
          np.array([[2, 5], [6, 0]], np.int32))
    # TensorFlow 2.21 (verified): bounds that would broadcast the result beyond t's shape are a
    # ValueError (its shape assertion); bounds that do not broadcast an InvalidArgumentError.
    with pytest.raises(ValueError, match="ClipByValue"):
        eager.clip_by_value(T([1.0, 5.0]), T([[0.0], [1.0]]), 3.0)
    with pytest.raises(ValueError, match="ClipByValue"):
        eager.clip_by_value(T(1.0), T([0.0, 1.0]), 3.0)
    with pytest.raises(errors.InvalidArgumentError, match="ClipByValue"):
        eager.clip_by_value(T([1.0, 5.0]), T([0.0, 1.0, 2.0]), 3.0)
    # TensorFlow 2.21 (verified): crossed bounds give the lower bound.
    check(eager.clip_by_value(T([0.0, 5.0]), 2.0, 1.0), np.array([2.0, 2.0], np.float32))
    check(eager.clip_by_value(T([0, 1, 2, 7], eager.uint8), 3, 2), np.full([4], 3, np.uint8))
    with pytest.raises(errors.InvalidArgumentError, match="ClipByValue"):
        eager.clip_by_value(T([1, 2]), T([1.0]), 3)
    with pytest.raises(TypeError):
        eager.clip_by_value(T([1, 2]), 0.5, 3)
    with pytest.raises(errors.InvalidArgumentError, match="ClipByValue"):  # TF 2.21 (verified)
        eager.clip_by_value(T([1j]), 0j, 1j)


# -----------------------------------------------------------------------------------------------
# TensorFlow's dtype rules and arithmetic semantics
# -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,result", [(np.int8, np.float32), (np.int16, np.float32),
                                          (np.uint8, np.float32), (np.int32, np.float64),
                                          (np.int64, np.float64), (np.float16, np.float16),
                                          (np.float32, np.float32),
                                          (np.complex64, np.complex64)])
def test_truediv_result_dtype(dtype, result):
    x, y = T(np.array([1, 7], dtype)), T(np.array([2, 2], dtype))
    check(eager.truediv(x, y), np.array([0.5, 3.5], result))
    check(x / y, np.array([0.5, 3.5], result))
    check(eager.divide(x, y), np.array([0.5, 3.5], result))


def test_truediv_of_ints_by_zero_is_inf_and_nan():
    check(eager.truediv(T([1, 0, -1]), T([0, 0, 0])), np.array([np.inf, np.nan, -np.inf]))


def test_truediv_mismatched_dtypes_is_typeerror_as_in_tf():
    with pytest.raises(TypeError, match="float32.*int32|int32.*float32"):
        eager.truediv(T([1.0]), T([1]))
    with pytest.raises(TypeError):
        T([1.0]) / T([1])
    with pytest.raises(TypeError, match="bool"):
        eager.truediv(T([True]), T([True]))


@given(a=st.integers(-1000, 1000), b=st.integers(-1000, 1000).filter(bool))
def test_integer_floordiv_floormod_follow_python(a, b):
    check(eager.math.floordiv(T(a), T(b)), np.int32(a // b))
    check(eager.math.floormod(T(a), T(b)), np.int32(a % b))
    check(eager.math.mod(T(a), T(b)), np.int32(a % b))
    check(T(a) // T(b), np.int32(a // b))
    check(T(a) % T(b), np.int32(a % b))
    assert a == int(eager.math.floordiv(T(a), T(b))) * b + int(eager.math.floormod(T(a), T(b)))


@given(a=st.floats(-1e6, 1e6), b=st.floats(-1e6, 1e6).filter(lambda v: abs(v) > 1e-3))
def test_float_floordiv_is_floor_of_quotient_and_floormod_has_sign_of_divisor(a, b):
    check(eager.math.floordiv(T(np.float64(a)), T(np.float64(b))), np.float64(math.floor(a / b)))
    mod = float(eager.math.floormod(T(np.float64(a)), T(np.float64(b))))
    assert mod == pytest.approx(a % b, abs=1e-9 * max(1.0, abs(a)))
    assert mod == 0 or (mod > 0) == (b > 0)


def test_floordiv_floormod_examples():
    check(eager.math.floordiv(T([-7, 7, -7, 7]), T([2, 2, -2, -2])),
          np.array([-4, 3, 3, -4], np.int32))
    check(eager.math.floormod(T([-7, 7, -7, 7]), T([2, 2, -2, -2])),
          np.array([1, 1, -1, -1], np.int32))
    check(eager.math.floormod(T([-7.5, 7.5]), T([2.0, -2.0])), np.array([0.5, -0.5], np.float32))
    check(eager.math.floordiv(T(np.float64(1.0)), T(np.float64(0.1))), np.float64(10.0))
    check(eager.math.floordiv(T([5.5, -5.5, 0.0]), T([0.0, 0.0, 0.0])),
          np.array([np.inf, -np.inf, np.nan], np.float32))
    check(eager.math.floormod(T([5.5]), T([0.0])), np.array([np.nan], np.float32))


@pytest.mark.parametrize("fn,name", [(eager.math.floordiv, "FloorDiv"),
                                     (eager.math.floormod, "FloorMod"),
                                     (eager.math.mod, "FloorMod"),
                                     (lambda x, y: x // y, "FloorDiv"),
                                     (lambda x, y: x % y, "FloorMod")])
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_division_by_zero_is_invalid_argument(fn, name, dtype):
    # (`.numpy()`: a device whose kernels run later reports the failure there)
    with pytest.raises(errors.InvalidArgumentError, match=name) as info:
        fn(T(np.array([7, 1], dtype)), T(np.array([1, 0], dtype))).numpy()
    assert "division by zero" in str(info.value)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_integer_pow_with_negative_exponent_is_invalid_argument(dtype):
    with pytest.raises(errors.InvalidArgumentError, match="Pow") as info:
        eager.pow(T(np.array([2, 2], dtype)), T(np.array([1, -1], dtype))).numpy()
    assert "negative" in str(info.value)
    with pytest.raises(errors.InvalidArgumentError, match="Pow"):
        (T(np.array([2], dtype)) ** -1).numpy()
    check(eager.pow(T(np.array([2.0], np.float32)), T(np.array([-1.0], np.float32))),
          np.array([0.5], np.float32))


def test_comparisons_and_logical_examples():
    check(eager.less(T([1, 5]), 3), np.array([True, False]))
    check(eager.greater_equal(3.0, T([1.0, 5.0])), np.array([True, False]))
    check(eager.equal(T([1 + 1j, 2j]), T(1 + 1j)), np.array([True, False]))
    check(eager.not_equal(T([True, False]), True), np.array([False, True]))
    check(eager.math.logical_xor(T([True, True, False]), T([True, False, False])),
          np.array([False, True, False]))
    check(eager.logical_not(T([True, False])), np.array([False, True]))
    check(eager.abs(T([3 + 4j], )), np.array([5.0]))
    check(eager.abs(T(np.array([-3, 4], np.int8))), np.array([3, 4], np.int8))
    check(eager.sign(T([-2.5, 0.0, 3.0])), np.array([-1, 0, 1], np.float32))


# -----------------------------------------------------------------------------------------------
# Bad inputs, per family
# -----------------------------------------------------------------------------------------------

def test_mismatched_dtypes_names_op_dtypes_and_shapes():
    with pytest.raises(errors.InvalidArgumentError) as info:
        eager.add(T([1.0, 2.0]), T([1, 2, 3]))
    message = str(info.value)
    assert "AddV2" in message and "float32[2]" in message and "int32[3]" in message
    assert info.value.op == "AddV2"


@pytest.mark.parametrize("name,op_name", [
    ("add", "AddV2"), ("subtract", "Sub"), ("multiply", "Mul"), ("pow", "Pow"),
    ("maximum", "Maximum"), ("minimum", "Minimum"), ("less", "Less"),
    ("less_equal", "LessEqual"), ("greater", "Greater"), ("greater_equal", "GreaterEqual"),
    ("equal", "Equal"), ("not_equal", "NotEqual"), ("floordiv", "FloorDiv"),
    ("floormod", "FloorMod"), ("bitwise_and", "BitwiseAnd"), ("logical_and", "LogicalAnd"),
    ("logical_or", "LogicalOr")])
def test_binary_mismatched_dtypes(name, op_name):
    pairs = {"bitwise_and": (T([1]), T(np.array([1], np.int64))),
             "logical_and": (T([True]), T([1])), "logical_or": (T([True]), T([1]))}
    x, y = pairs.get(name, (T([1.0]), T([1])))
    with pytest.raises(errors.InvalidArgumentError, match=op_name) as info:
        _public(name)(x, y)
    assert x.dtype.name in str(info.value) and y.dtype.name in str(info.value)


@pytest.mark.parametrize("name,op_name,value", [
    ("sqrt", "Sqrt", [4]), ("rsqrt", "Rsqrt", [4]), ("exp", "Exp", [1]), ("log", "Log", [1]),
    ("log1p", "Log1p", [1]), ("sin", "Sin", [1]), ("cos", "Cos", [1]), ("tanh", "Tanh", [1]),
    ("sigmoid", "Sigmoid", [1]), ("negative", "Neg", [True]), ("abs", "Abs", [True]),
    ("sign", "Sign", [True]), ("square", "Square", [True]),
    ("logical_not", "LogicalNot", [1.0]), ("invert", "Invert", [1.0]),
    ("reduce_sum", "Sum", [True]), ("reduce_prod", "Prod", [True]),
    ("reduce_mean", "Mean", [True]), ("reduce_max", "Max", [1j]), ("reduce_min", "Min", [True]),
    ("reduce_any", "Any", [1.0]), ("reduce_all", "All", [1]),
    ("reduce_logsumexp", "ReduceLogSumExp", [1]), ("argmax", "ArgMax", [1j])])
def test_dtype_outside_the_type_list_is_invalid_argument_naming_the_op(name, op_name, value):
    # TensorFlow 2.21 (verified): "Value for attr 'T' of int32 is not in the list of allowed
    # values" (the bool-only ops: "expected to be a bool tensor"), an InvalidArgumentError.
    with pytest.raises(errors.InvalidArgumentError, match=rf"\[Op:{op_name}\]") as info:
        _public(name)(T(value))
    assert T(value).dtype.name in str(info.value)


@pytest.mark.parametrize("name,op_name,x,y,cls", [
    ("logical_and", "LogicalAnd", [1.0], [2.0], errors.InvalidArgumentError),
    ("logical_or", "LogicalOr", [1.0], [2.0], errors.InvalidArgumentError),
    ("add", "AddV2", [True], [False], errors.InvalidArgumentError),
    ("maximum", "Maximum", [1j], [1j], errors.InvalidArgumentError),
    ("less", "Less", [True], [True], errors.InvalidArgumentError),
    ("floordiv", "FloorDiv", [1j], [1j], errors.NotFoundError),
    ("bitwise_or", "BitwiseOr", [1.0], [1.0], errors.InvalidArgumentError)])
def test_binary_rejected_dtype_error_class_matches_tensorflow(name, op_name, x, y, cls):
    # TensorFlow 2.21 (verified): FloorDiv lists complex types but has no CPU kernel for them
    # (NotFoundError, "Could not find device for node"); the others are not in the type list.
    with pytest.raises(errors.OpError, match=op_name) as info:
        _public(name)(T(x), T(y))
    assert type(info.value) is cls


JUNK = [object(), "abc", None, b"bytes", {"a": 1}]
FAMILIES = {
    "binary": lambda v: eager.add(v, T([1.0])),
    "binary_left": lambda v: eager.multiply(T([1.0]), v),
    "comparison": lambda v: eager.less(v, T([1.0])),
    "unary": lambda v: eager.sqrt(v),
    "reduction": lambda v: eager.reduce_sum(v),
    "argmax": lambda v: eager.argmax(v),
    "cumsum": lambda v: eager.cumsum(v),
    "cast": lambda v: eager.cast(v, eager.float32),
    "where": lambda v: eager.where(v),
    "select": lambda v: eager.where(T([True]), v, T([1.0])),
    "clip": lambda v: eager.clip_by_value(v, 0.0, 1.0),
    "truediv": lambda v: eager.truediv(v, T([1.0])),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("junk", JUNK, ids=["object", "str", "None", "bytes", "dict"])
def test_junk_inputs_raise_type_or_value_error(family, junk):
    # A str or bytes is a string tensor, whose dtype the op refuses (TF 2.21), or, beside a
    # numeric tensor, a value that cannot take its dtype (TypeError).
    expected = (TypeError, ValueError) + ((errors.OpError,) if isinstance(junk, (str, bytes))
                                          else ())
    with pytest.raises(expected):
        FAMILIES[family](junk)


@pytest.mark.parametrize("name,op_name", [
    ("add", "AddV2"), ("subtract", "Sub"), ("multiply", "Mul"), ("pow", "Pow"),
    ("maximum", "Maximum"), ("less", "Less"), ("equal", "Equal"), ("floordiv", "FloorDiv"),
    ("floormod", "FloorMod"), ("truediv", "RealDiv"), ("bitwise_xor", "BitwiseXor")])
def test_incompatible_shapes(name, op_name):
    with pytest.raises(errors.InvalidArgumentError, match=op_name) as info:
        _public(name)(T([1, 2, 3]), T([1, 2, 3, 4]))
    assert "Incompatible shapes: [3] vs. [4]" in str(info.value)


def test_logical_ops_on_bools_with_python_bools():
    check(eager.logical_and(T([True, False]), True), np.array([True, False]))
    with pytest.raises(TypeError):
        eager.logical_and(T([True]), 1)


# -----------------------------------------------------------------------------------------------
# Shape inference on partial shapes
# -----------------------------------------------------------------------------------------------

def spec(shape, dtype=eager.float32):
    return TensorSpec(shape, dtype)


def test_infer_broadcasting_partial_shapes():
    out = math_ops.ADD.infer(spec([None, 3]), spec([1, 3]))
    assert out.shape == (None, 3) and out.dtype is eager.float32
    assert math_ops.ADD.infer(spec([None]), spec([4])).shape == (4,)
    assert math_ops.ADD.infer(spec([None]), spec([1])).shape == (None,)
    assert math_ops.ADD.infer(spec([2, 1]), spec([None])).shape == (2, None)
    assert math_ops.MUL.infer(spec([5, 1, 3]), spec([None, 1])).shape == (5, None, 3)
    assert math_ops.ADD.infer(spec(None), spec([1, 3])).shape.rank is None
    assert math_ops.ADD.infer(spec([2]), spec(None)).shape.rank is None
    assert math_ops.LESS.infer(spec([None, 3]), spec([3])).dtype is eager.bool
    with pytest.raises(errors.InvalidArgumentError, match="AddV2"):
        math_ops.ADD.infer(spec([2, 3]), spec([4]))


def test_infer_reductions_and_others_on_partial_shapes():
    s = spec([None, 3, None])
    assert math_ops.SUM.infer(s, axes=(1,), keepdims=False).shape == (None, None)
    assert math_ops.SUM.infer(s, axes=(0, 2), keepdims=True).shape == (1, 3, 1)
    assert math_ops.MEAN.infer(s, axes=None, keepdims=False).shape == ()
    assert math_ops.MAX.infer(spec(None), axes=(0,), keepdims=False).shape.rank is None
    with pytest.raises(errors.InvalidArgumentError, match="Sum"):
        math_ops.SUM.infer(s, axes=(3,), keepdims=False)
    arg = math_ops.ARGMAX.infer(s, axis=1, output_type=eager.int32)
    assert arg.shape == (None, None) and arg.dtype is eager.int32
    cast = math_ops.CAST.infer(s, dtype=eager.int8)
    assert cast.shape == (None, 3, None) and cast.dtype is eager.int8
    sel = math_ops.SELECT.infer(spec([None, 1], eager.bool), spec([4]), spec([1]))
    assert sel.shape == (None, 4)
    idx = math_ops.WHERE_INDICES.infer(spec([None, 3], eager.bool))
    assert idx.shape == (None, 2) and idx.dtype is eager.int64
    eq = math_ops.EQUAL.infer(spec([2]), spec([3]), incompatible_shape_error=False)
    assert eq.shape == () and eq.dtype is eager.bool
    with pytest.raises(errors.InvalidArgumentError):
        math_ops.EQUAL.infer(spec([2]), spec([3]))
    assert math_ops.ABS.infer(spec([None], eager.complex64)).dtype is eager.float32
    assert math_ops.CLIP.infer(spec([None, 2]), spec([]), spec([2])).shape == (None, 2)
    assert isinstance(math_ops.SQRT.infer(spec([None])).shape, TensorShape)


_SPECIAL_REALS = np.array([-0.0, 0.0, 1e-30, 1.0, 4.0, np.inf, -1.0, -np.inf, np.nan])
_SPECIAL_COMPLEX = np.array([complex(a, b) for a in (-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, np.inf)
                             for b in (-0.0, 0.0, -1.5, 2.0)])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_the_gpu_rsqrt_formula_matches_numpy_on_signed_zeros_and_specials(dtype):
    """The GPU branch of Rsqrt (`rsqrt_of(..., fix_zero_sign=True)`), run here with numpy, must
    agree with numpy's 1/sqrt everywhere (it exists to restore rsqrt(-0.) = -inf on CUDA)."""
    x = _SPECIAL_REALS.astype(dtype)
    with np.errstate(all="ignore"):
        expected = 1 / np.sqrt(x)
        got = rsqrt_of(np, x, fix_zero_sign=True)
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]),
                                  np.signbit(expected[~np.isnan(expected)]))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("plus_one", [False, True])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_the_gpu_complex_log_formula_matches_numpy_on_branch_cuts(plus_one, dtype):
    """The GPU branch of Log/Log1p for complex inputs, run here with numpy: the imaginary part
    (atan2 with signed zeros) must match numpy's clog/clog1p, signs of zero included."""
    z = _SPECIAL_COMPLEX.astype(dtype)
    with np.errstate(all="ignore"):
        expected = np.log1p(z) if plus_one else np.log(z)
        got = complex_log_of(np, z.copy(), plus_one=plus_one)
    np.testing.assert_allclose(got.imag, expected.imag, rtol=1e-6)
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(expected.imag))
    np.testing.assert_allclose(got.real, expected.real, rtol=1e-6)


@given(rank=st.integers(0, 10), dtype=st.sampled_from([np.float32, np.float64, np.int32,
                                                        np.complex64, np.bool_]),
       name=st.sampled_from(["reduce_sum", "reduce_mean", "reduce_max", "reduce_prod"]),
       seed=st.integers(0, 100))
def test_full_reductions_of_eager_tensors_equal_the_explicit_axes_form(rank, dtype, name, seed):
    """`reduce_*(x)` of an eager tensor goes straight to dispatch with attributes made once per
    rank: the same value, dtype errors and recorded op as naming every axis."""
    shape = tuple(np.random.default_rng(seed).integers(1, 3, rank))
    x = eager.constant(np.random.default_rng(seed).integers(-3, 4, shape).astype(dtype))
    fn = getattr(eager, name)
    try:
        explicit = fn(x, axis=list(range(rank)))
    except (errors.InvalidArgumentError, TypeError) as exc:  # a dtype the op does not take
        with pytest.raises(type(exc)):
            fn(x)
        return
    np.testing.assert_array_equal(fn(x).numpy(), explicit.numpy())
    if not np.issubdtype(dtype, np.inexact):
        return
    with eager.GradientTape(persistent=True) as tape:
        tape.watch(x)
        full, named = fn(x), fn(x, axis=list(range(rank)))
    first, second = tape._tape.as_recorded_ops()
    assert first.op is second.op and first.attrs == second.attrs
    np.testing.assert_array_equal(tape.gradient(full, x).numpy(), tape.gradient(named, x).numpy())
