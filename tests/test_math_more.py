"""The math users reach for beyond arithmetic: rounding, special functions, segment
reductions, counting and scattering (`eager.math`, top-level names). Values are TensorFlow
2.21's, recorded here as goldens, or numpy's; gradients are checked against finite differences
by the registry scan (tests/grad_cases_special.py) and here where a rule is TF's convention."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from eager import errors
from eager.devices import registry
from eager.ops import special_math_ops
from gradcheck import check_gradient

NAN, INF = np.nan, np.inf


def _on_cpu(t) -> bool:
    return registry.lookup(t.device).device_type == "CPU"


def _close(got, expected, rtol=1e-12, atol=0.0):
    expected = np.asarray(expected)
    np.testing.assert_allclose(np.asarray(got), expected.astype(np.result_type(expected, 1.0)),
                               rtol=rtol, atol=atol, equal_nan=True)


# -- rounding ------------------------------------------------------------------------------------

def test_round_is_bankers_rounding_as_tensorflow():
    x = tf.constant([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, INF, NAN])
    got = tf.round(x).numpy()
    _close(got, [0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0, -3.0, INF, NAN])
    assert np.signbit(got[3])  # -0.5 rounds to -0.0, as in TF
    assert tf.math.round is tf.round
    assert tf.round(tf.constant([0.5], tf.float16)).dtype == tf.float16


def test_round_returns_integer_tensors_unchanged():
    x = tf.constant([1, 2], tf.int32)
    assert tf.round(x) is x


def test_round_of_bool_is_tensorflow_error():
    with pytest.raises(errors.InvalidArgumentError, match="Round"):
        tf.round(tf.constant([True]))


def test_floor_ceil_rint():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.7, 3.0], np.float32)
    assert tf.floor(x).numpy().tolist() == np.floor(x).tolist()
    assert tf.math.ceil(x).numpy().tolist() == np.ceil(x).tolist()
    assert tf.math.rint(x).numpy().tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 3.0]
    assert tf.math.floor is tf.floor


@pytest.mark.parametrize("fn", [tf.math.floor, tf.math.ceil, tf.math.erf, tf.math.lgamma,
                                tf.math.digamma, tf.math.rint])
def test_floating_only_ops_reject_integers_as_tensorflow(fn):
    with pytest.raises(errors.InvalidArgumentError, match="not in the list of allowed values"):
        fn(tf.constant([1, 2]))


def test_reciprocal_of_integers_is_not_found_as_tensorflow():
    with pytest.raises(errors.NotFoundError):
        tf.math.reciprocal(tf.constant([1, 2]))


def test_rounding_has_no_gradient_as_tensorflow():
    x = tf.constant([1.2, -0.7])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ys = [tf.floor(x), tf.math.ceil(x), tf.round(x), tf.math.rint(x)]
    assert [tape.gradient(y, x) for y in ys] == [None] * 4


# -- special functions: TensorFlow 2.21's values ---------------------------------------------

_X = [-2.5, -0.5, 0.3, 1.5, 3.5, 100.25, 1e-8, -1e-8, 20.0]
_DIGAMMA = [1.1031566406452433, 0.03648997397857645, -3.502524222200133, 0.03648997397857645,
            1.1031566406452433, 4.602671243274712, -100000000.57721566, 99999999.42278431,
            2.970523992242149]
_LGAMMA = [-0.05624371649767407, 1.2655121234846454, 1.0957979948180756, -0.12078223763524522,
           1.2009736023470743, 360.28455963776423, 18.42068073818021, 18.420680749724525,
           39.339884187199495]


def test_digamma_and_lgamma_match_tensorflow_float64():
    _close(tf.math.digamma(np.array(_X)), _DIGAMMA, rtol=1e-13)
    _close(tf.math.lgamma(np.array(_X)), _LGAMMA, rtol=1e-13)


def test_lgamma_and_digamma_poles_and_specials_as_tensorflow():
    x = tf.constant([0.0, -1.0, -2.5, 1e30, -INF, INF, NAN, 3.0])
    _close(tf.math.lgamma(x), [INF, INF, -0.056243713945150375, 6.807755301009307e+31, INF, INF,
                               NAN, 0.6931471824645996], rtol=1e-6)
    x = tf.constant([0.0, -1.0, -2.5, -INF, INF, NAN, 3.0])
    _close(tf.math.digamma(x), [NAN, NAN, 1.1031568050384521, NAN, INF, NAN,
                                0.9227842092514038], rtol=1e-6)


def test_lgamma_poles_are_tensorflows_whatever_the_backend_function_gives():
    # CuPy's gammaln (CUDA's lgamma, as SciPy's) is -inf at -inf, TensorFlow's lgamma +inf.
    x = np.array([0.0, -0.0, -1.0, -3.0, -INF, INF, NAN, 1.5, -2.5])
    scipy_like = np.array([INF, INF, INF, INF, -INF, INF, NAN, -0.12, -0.05])
    _close(special_math_ops.lgamma_poles(np, x, scipy_like),
           [INF, INF, INF, INF, INF, INF, NAN, -0.12, -0.05])


def test_polygamma_and_zeta_match_tensorflow():
    got = tf.math.polygamma(tf.constant([0.0, 1.0, 2.0, 3.0, 1.0, 1.5, -1.0]),
                            tf.constant([2.0, 0.5, 3.0, -0.5, -1.0, 2.0, 2.0]))
    _close(got, [0.4227842092514038, 4.934802055358887, -0.1541137993335724, 193.40908813476562,
                 INF, NAN, NAN], rtol=1e-6)
    got = tf.math.zeta(tf.constant([2.0, 3.0, 2.0, 0.5, 1.0, 4.0, 2.0], tf.float64),
                       tf.constant([1.0, 2.0, -0.5, 1.0, 1.0, -2.0, 0.0], tf.float64))
    _close(got, [1.6449340668482266, 0.2020569031595943, 8.934802200544679, NAN, INF, INF, INF],
           rtol=1e-13)


def test_zeta_needs_matching_float_dtypes():
    with pytest.raises(errors.InvalidArgumentError, match="Zeta"):
        tf.math.zeta(tf.constant([1.0]), tf.constant([1.0], tf.float64))
    with pytest.raises(errors.InvalidArgumentError, match="not in the list of allowed values"):
        tf.math.zeta(tf.constant([1]), tf.constant([1]))


def test_erf_erfc_match_tensorflow():
    x = np.array([-6.0, -2.0, -0.3, 0.0, 1e-5, 0.5, 1.0, 3.0, 10.0, 30.0, INF, -INF])
    erf = [-1.0, -0.9953222650189528, -0.3286267594591274, 0.0, 1.1283791670579e-05,
           0.5204998778130466, 0.8427007929497148, 0.9999779095030014, 1.0, 1.0]
    _close(tf.math.erf(x).numpy()[:10], erf, rtol=1e-15)
    # TF's float64 kernel gives NaN at +-inf (and past about 1e10); erf's limits are +-1.
    _close(tf.math.erf(x).numpy()[10:], [1.0, -1.0])
    _close(tf.math.erfc(x), [2.0, 1.9953222650189528, 1.3286267594591274, 1.0, 0.9999887162083294,
                             0.47950012218695337, 0.15729920705028522, 2.209049699858544e-05,
                             2.0884875837625443e-45, 0.0, 0.0, 2.0], rtol=1e-14)
    _close(tf.math.erf(tf.constant([0.1, 0.5, 2.0], tf.float16)),
           [0.1124267578125, 0.5205078125, 0.9951171875])
    _close(tf.math.erfc(tf.constant([-1.0, 0.5, 5.0, 9.0])),
           [1.842700719833374, 0.4795001149177551, 1.537460046427408e-12, 4.137031708073991e-37],
           rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-40, 40), min_size=1, max_size=20))
def test_erf_and_lgamma_against_the_c_library(values):
    x = np.array(values)
    _close(tf.math.erf(x), [math.erf(v) for v in values], rtol=1e-14, atol=1e-300)
    _close(tf.math.erfc(x), [math.erfc(v) for v in values], rtol=1e-13, atol=1e-300)
    ok = [v for v in values if not (v <= 0 and v == int(v))]
    got = tf.math.lgamma(np.array(ok))
    if _on_cpu(got):  # the CPU kernel calls the C library's lgamma: the same bits
        _close(got, [math.lgamma(v) for v in ok], rtol=1e-15)
        return
    # CUDA's lgamma is within 4 ulps outside (-23.0001, -2.2637) (CUDA Math API; larger inside)
    # and glibc's is not correctly rounded either (lgamma(1.5): glibc's is 15 ulps off, the
    # GPU's 1). Both keep their error to a few ulps of the terms they add, not of the
    # result, which vanishes at lgamma's zeros (1, 2, and between -2 and -4): so rtol 1e-14
    # (the ulps of both), and an atol of 8 ulps of 1 and of the reflection's lgamma(1 - x).
    for v, g in zip(ok, got.numpy()):
        atol = 8 * np.finfo(float).eps * (1 + (math.lgamma(1 - v) if v < 0 else 0))
        _close(g, math.lgamma(v), rtol=1e-14, atol=atol)


def test_tan_and_reciprocal_match_tensorflow():
    _close(tf.math.tan(tf.constant([0.5 + 0j, 1 + 2j], tf.complex64)),
           np.array([0.5463024973869324 + 0j, 0.03381282463669777 + 1.0147936344146729j]),
           rtol=1e-6)
    assert tf.math.reciprocal(tf.constant([0.0, -0.0, 2.0])).numpy().tolist() == [INF, -INF, 0.5]
    assert tf.tan is tf.math.tan


def test_special_functions_trace_as_eagerly():
    @tf.function
    def f(x):
        return [tf.math.erf(x), tf.math.lgamma(x), tf.math.digamma(x), tf.round(x), tf.floor(x)]

    x = tf.constant([0.3, 1.5, 2.5, -1.5])
    for got, want in zip(f(x), [tf.math.erf(x), tf.math.lgamma(x), tf.math.digamma(x),
                                tf.round(x), tf.floor(x)]):
        _close(got, want)


def test_second_derivative_of_lgamma_goes_through_polygamma():
    x = tf.constant(2.5, tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.math.lgamma(x)
        dy = inner.gradient(y, x)
    d2 = outer.gradient(dy, x)
    _close(dy, 0.7031566406452432, rtol=1e-13)  # digamma(2.5)
    _close(d2, 0.4903577561002349, rtol=1e-12)  # trigamma(2.5) = pi^2/2 - 4 - 4/9


# -- tensor_scatter_nd_add / sub -------------------------------------------------------------

def test_tensor_scatter_nd_add_and_sub_match_tensorflow():
    got = tf.tensor_scatter_nd_add(tf.zeros([4]), [[1], [1], [3]], [1.0, 2.0, 3.0])
    assert got.numpy().tolist() == [0.0, 3.0, 0.0, 3.0]  # duplicates accumulate, as in TF
    got = tf.tensor_scatter_nd_sub(tf.ones([2, 2]), [[0, 1]], [5.0])
    assert got.numpy().tolist() == [[1.0, -4.0], [1.0, 1.0]]
    with pytest.raises(errors.InvalidArgumentError, match="does not index into"):
        tf.tensor_scatter_nd_add(tf.zeros([4]), [[5]], [1.0]).numpy()  # (a GPU: at the sync)


def test_tensor_scatter_nd_add_gradients():
    check_gradient(lambda t, u: tf.tensor_scatter_nd_add(t, [[1], [1], [3]], u),
                   [np.arange(4.0), np.array([1.0, 2.0, 3.0])])
    check_gradient(lambda t, u: tf.tensor_scatter_nd_sub(t, [[0], [2]], u),
                   [np.ones((3, 2)), np.ones((2, 2))])
