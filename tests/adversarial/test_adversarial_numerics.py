"""Adversarial numerics: TensorFlow's recorded answers for hostile calls (`tf_goldens`, from
TensorFlow 2.21), under the hostile warning settings a user may have, and differential checks
against numpy over random values at the edges of each dtype: integer arithmetic wraps,
integer division by zero is TensorFlow's error, reductions over empty axes give TensorFlow's
identities, float16 and complex values stay IEEE. (`tests/test_ieee.py` covers the float ops'
inf/nan in every execution path; here: other ops, integer and complex dtypes, empty axes.)"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import eager as tf
from eager.errors import InvalidArgumentError
from tests.adversarial.tf_goldens import CAST_VALUES, ERRORS, VALUES

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
#: Tolerances for floating results against TensorFlow's (its kernels round differently; a
#: denormal TensorFlow flushes to zero, like sigmoid(-100) in float32, is within `atol`).
RTOL = {"float16": 1e-3, "float32": 2e-6, "float64": 1e-12, "complex64": 2e-6,
        "complex128": 1e-12}


@pytest.fixture
def hostile():
    """Every numpy floating-point signal made an exception, both ways a user can: warnings as
    errors and numpy's error state set to raise."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old = np.seterr(all="raise")
        try:
            yield
        finally:
            np.seterr(**old)


def run_code(code):
    """The value of a golden's code with `tf` bound to eager."""
    return eval(code, {"tf": tf, "np": np})  # noqa: S307 - the goldens are ours


def expected_array(dtype, values):
    if dtype.startswith("complex"):
        real, imag = values
        return np.asarray(real, np.float64) + 1j * np.asarray(imag, np.float64)
    return np.asarray(values, dtype=np.dtype(dtype))


#: Absolute tolerances of goldens whose last bits depend on the BLAS the machine runs. A dot
#: product cancelling exactly (1e30 * 1e30 - 1e30 * 1e30) is 0 where each product rounds before
#: the sum, as on the machine TensorFlow's answer was recorded on, and the first product's
#: rounding error (8.8e43, under one ulp of 1e60) where OpenBLAS' kernel for the CPU fuses the
#: multiply and add (OpenBLAS 0.3.31 on an FMA-capable x86 CPU).
ATOL = {"tf.linalg.matmul(tf.constant([[1e30, 1e30]], tf.float64), "
        "tf.constant([[1e30], [-1e30]], tf.float64))": np.spacing(1e60)}


def assert_golden(got, dtype, shape, values, atol=1e-37):
    assert got.dtype.name == dtype, (got.dtype.name, dtype)
    assert tuple(got.shape) == shape, (tuple(got.shape), shape)
    array = got.numpy()
    expected = expected_array(dtype, values).reshape(shape)  # ([] for a (0, 2) result)
    if dtype in RTOL:
        np.testing.assert_allclose(array.astype(np.complex128), expected.astype(np.complex128),
                                   rtol=RTOL[dtype], atol=atol, equal_nan=True)
        infinite = np.isinf(expected)
        assert (np.isinf(array) == infinite).all()
        assert (np.signbit(array.real[infinite]) == np.signbit(expected.real[infinite])).all()
    else:
        np.testing.assert_array_equal(array, expected)


def assert_golden_error(exc, cls, words):
    assert type(exc) is cls, (type(exc), exc)
    text = str(exc)
    if words is not None:
        assert words in text, text
    assert "[Op:" in text, text  # names the op
    for foreign in ("RuntimeWarning", "FloatingPointError", "numpy", "Traceback"):
        assert foreign not in text, text


@pytest.mark.parametrize("golden", VALUES, ids=[g[0] for g in VALUES])
def test_hostile_calls_give_tensorflows_values(hostile, golden):
    code, dtype, shape, values = golden
    assert_golden(run_code(code), dtype, shape, values, ATOL.get(code, 1e-37))


@pytest.mark.parametrize("golden", ERRORS, ids=[g[0] for g in ERRORS])
def test_hostile_calls_give_tensorflows_errors(hostile, golden):
    code, cls, words = golden
    with pytest.raises(Exception) as caught:  # noqa: B017, PT011 - the class is checked below
        run_code(code).numpy()  # (a GPU's kernel fails at the next synchronization)
    assert_golden_error(caught.value, cls, words)


@pytest.mark.parametrize("golden", CAST_VALUES, ids=[g[0] for g in CAST_VALUES])
def test_float_to_int_casts_give_tensorflows_values_with_no_warning_whatever_the_filters(golden):
    """Out-of-range and NaN casts are TensorFlow's x86 values (see tf_goldens), and no numpy
    "invalid value encountered in cast" reaches the user, even with every warning shown."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = run_code(golden[0])
    assert_golden(got, *golden[1:])
    assert not caught, [str(w.message) for w in caught]


@settings(max_examples=40, deadline=None)
@given(value=st.sampled_from([np.nan, np.inf, -np.inf, 1e20, -3e9, 4.3e9, 1.8e19, 300.5, -1.5]),
       src=st.sampled_from([np.float16, np.float32, np.float64]),
       dst=st.sampled_from(INTS), n=st.integers(1, 70))
def test_a_float_to_int_cast_gives_each_element_the_same_value_wherever_it_is(value, src, dst,
                                                                               n):
    """eager's value for an element does not depend on the tensor's length or the element's
    place in it (TensorFlow's vectorised loop differs there for some narrow targets)."""
    with np.errstate(all="ignore"):
        x = np.full(n, value).astype(src)
    one = tf.cast(x[:1], dst).numpy()
    np.testing.assert_array_equal(tf.cast(x, dst).numpy(), np.full(n, one[0], dst))


# -- integers: wrap-around arithmetic, TensorFlow's division-by-zero error ----------------------

def _int_arrays(dtype, n):
    info = np.iinfo(dtype)
    edges = st.sampled_from([info.min, info.min + 1, -1 if info.min else 0, 0, 1, 2,
                             info.max - 1, info.max])
    values = st.one_of(edges, st.integers(info.min, info.max))
    return hnp.arrays(dtype, n, elements=values)


@st.composite
def int_pairs(draw):
    dtype = draw(st.sampled_from(INTS))
    n = draw(st.integers(0, 6))
    return dtype, draw(_int_arrays(dtype, n)), draw(_int_arrays(dtype, n))


def _wrapping(fn, *arrays):
    """numpy's result with integer overflow wrapping silently (as TensorFlow's kernels do)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*arrays)


@settings(max_examples=60, deadline=None)
@given(pair=int_pairs(), op=st.sampled_from(["add", "subtract", "multiply", "maximum",
                                             "squared_difference_i32"]))
def test_integer_arithmetic_wraps_like_twos_complement(pair, op):
    dtype, a, b = pair
    if op == "squared_difference_i32":
        if dtype not in (np.int32, np.int64):  # TensorFlow has no kernel for the others
            return
        got = tf.math.squared_difference(a, b)
        expected = _wrapping(lambda x, y: (x - y) * (x - y), a, b)
    else:
        got = getattr(tf.math, op)(a, b)
        expected = _wrapping(getattr(np, op), a, b)
    assert got.dtype == tf.as_dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), expected)


@settings(max_examples=60, deadline=None)
@given(pair=int_pairs(), op=st.sampled_from(["floordiv", "floormod"]))
def test_integer_division_by_zero_is_tensorflows_error_else_numpys_floor(pair, op):
    """TensorFlow's CPU kernels raise "Integer division by zero" when any divisor is 0 (a float
    division gives inf instead); otherwise floor division and modulo are numpy's, with
    `min // -1` wrapping to `min` (TensorFlow's answer, recorded in tf_goldens)."""
    dtype, a, b = pair
    call = lambda: getattr(tf.math, op)(a, b)  # noqa: E731
    if (b == 0).any():
        with pytest.raises(InvalidArgumentError, match="Integer division by zero"):
            call().numpy()
        return
    reference = {"floordiv": np.floor_divide, "floormod": np.mod}[op]
    np.testing.assert_array_equal(call().numpy(), _wrapping(reference, a, b))


@settings(max_examples=50, deadline=None)
@given(dtype=st.sampled_from(INTS), data=st.data(),
       op=st.sampled_from(["cumsum", "cumprod", "reduce_sum", "reduce_prod"]),
       exclusive=st.booleans(), reverse=st.booleans())
def test_integer_accumulations_wrap_like_numpy(dtype, data, op, exclusive, reverse):
    a = data.draw(_int_arrays(dtype, data.draw(st.integers(0, 6))))
    if op.startswith("reduce"):
        got = getattr(tf.math, op)(a)
        expected = _wrapping(lambda x: getattr(np, op[7:])(x, dtype=dtype), a)
    else:
        got = getattr(tf.math, op)(a, exclusive=exclusive, reverse=reverse)
        x = a[::-1] if reverse else a
        identity = 0 if op == "cumsum" else 1
        if exclusive:
            x = np.concatenate([np.array([identity], dtype), x])[:len(x)]
        expected = _wrapping(lambda v: getattr(np, op)(v, dtype=dtype), x)
        expected = expected[::-1] if reverse else expected
    assert got.dtype == tf.as_dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), expected)


# -- reductions over empty axes: TensorFlow's identities, every reduction and dtype ------------

REDUCTIONS = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_mean",
              "reduce_logsumexp", "reduce_std", "reduce_variance", "reduce_all", "reduce_any",
              "reduce_euclidean_norm"]


def _empty_identity(name, dtype):
    """What TensorFlow 2.21 gives for a reduction over nothing (see tf_goldens): the identity
    of the operation, the dtype's extremes for max/min, NaN for the mean of real floats and 0
    for the mean of integers and of complex values (its kernel divides 0 by a count of 0 and
    gets 0)."""
    d = np.dtype(dtype)
    floating = d.kind in "fc"
    extremes = (np.finfo(d).min, np.finfo(d).max) if floating else (
        (False, True) if d.kind == "b" else (np.iinfo(d).min, np.iinfo(d).max))
    return {"reduce_sum": 0, "reduce_prod": 1, "reduce_euclidean_norm": 0,
            "reduce_max": -np.inf if floating else extremes[0],
            "reduce_min": np.inf if floating else extremes[1],
            "reduce_mean": np.nan if d.kind == "f" else 0, "reduce_std": np.nan,
            "reduce_variance": np.nan, "reduce_logsumexp": -np.inf,
            "reduce_all": True, "reduce_any": False}[name]


def _accepts(name, dtype):
    kind = np.dtype(dtype).kind
    if name in ("reduce_all", "reduce_any"):
        return kind == "b"
    if name in ("reduce_logsumexp", "reduce_std", "reduce_variance", "reduce_euclidean_norm"):
        return kind == "f"
    if name in ("reduce_max", "reduce_min"):
        return kind in "fiu"
    return kind in "fiuc"


@settings(max_examples=80, deadline=None)
@given(name=st.sampled_from(REDUCTIONS),
       dtype=st.sampled_from([np.float16, np.float32, np.float64, np.int8, np.int32, np.uint8,
                               np.uint64, np.complex64, np.bool_]),
       shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), data=st.data(),
       keepdims=st.booleans())
def test_reductions_over_empty_axes_give_tensorflows_identities(name, dtype, shape, data,
                                                                 keepdims):
    if not _accepts(name, dtype):
        return
    empty = [i for i, n in enumerate(shape) if n == 0]
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape),
                              unique=True))
    x = np.ones(shape, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(tf.math, name)(x, axis=axes, keepdims=keepdims).numpy()
    expected_shape = tuple(1 if i in axes else n for i, n in enumerate(shape)) if keepdims \
        else tuple(n for i, n in enumerate(shape) if i not in axes)
    assert got.shape == expected_shape
    if not any(a in empty for a in axes) or got.size == 0:
        return  # (nothing reduced over nothing: the ordinary case, tested elsewhere)
    identity = _empty_identity(name, dtype)
    np.testing.assert_array_equal(got, np.full(got.shape, identity, got.dtype))


@settings(max_examples=40, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3), data=st.data(),
       op=st.sampled_from(["argmax", "argmin"]))
def test_argmax_over_an_empty_axis_is_tensorflows_error_in_its_words(shape, data, op):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.zeros(shape, np.float32)
    if shape[axis] == 0:
        dims = ",".join(map(str, shape))
        with pytest.raises(InvalidArgumentError,
                           match=rf"Reduction axis {axis} is empty in shape \[{dims}\]"):
            getattr(tf.math, op)(x, axis=axis)
        with pytest.raises(InvalidArgumentError, match=r"is empty in shape \["):
            tf.function(lambda: getattr(tf.math, op)(tf.constant(x), axis=axis))()
    else:
        np.testing.assert_array_equal(getattr(tf.math, op)(x, axis=axis).numpy(),
                                      getattr(np, op)(x, axis=axis))


# -- float16 and complex at their edges -------------------------------------------------------

_F16_EDGES = st.sampled_from([0.0, -0.0, 65504.0, -65504.0, 6.1e-5, 6e-8, 1e-8, np.inf,
                              -np.inf, np.nan, 1.0, -1.0, 255.9, 7e4])


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(xs=st.lists(_F16_EDGES, min_size=1, max_size=5), data=st.data(),
       op=st.sampled_from(["add", "multiply", "subtract", "divide", "maximum", "pow"]))
def test_float16_at_its_edges_matches_numpy_under_hostile_settings(hostile, xs, data, op):
    ys = data.draw(st.lists(_F16_EDGES, min_size=len(xs), max_size=len(xs)))
    with np.errstate(all="ignore"):
        a, b = np.array(xs, np.float16), np.array(ys, np.float16)
        expected = getattr(np, {"pow": "power", "divide": "true_divide"}.get(op, op))(a, b)
    got = getattr(tf.math, op)(a, b)
    assert got.dtype == tf.float16
    np.testing.assert_array_equal(got.numpy(), expected)


_COMPLEX_PARTS = st.sampled_from([0.0, -0.0, 1.0, -2.5, 1e30, -1e30, np.inf, -np.inf, np.nan])


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.tuples(_COMPLEX_PARTS, _COMPLEX_PARTS), min_size=1, max_size=4),
       dtype=st.sampled_from([np.complex64, np.complex128]),
       op=st.sampled_from(["abs", "square", "conj", "reduce_sum", "real", "imag", "exp"]))
def test_complex_at_its_edges_matches_numpy_under_hostile_settings(hostile, parts, dtype, op):
    with np.errstate(all="ignore"):
        z = np.array([complex(r, i) for r, i in parts], dtype)
        reference = {"abs": np.abs, "square": lambda v: v * v, "conj": np.conj,
                     "reduce_sum": lambda v: np.sum(v, dtype=dtype), "real": np.real,
                     "imag": np.imag, "exp": np.exp}[op]
        expected = np.asarray(reference(z))
    fn = getattr(tf.math, op)
    got = fn(z).numpy()
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got.astype(np.complex128), expected.astype(np.complex128),
                               rtol=2e-6, equal_nan=True)
