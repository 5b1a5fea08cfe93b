"""The same answer in every mode: TensorFlow's recorded answers for hostile calls (`tf_goldens`)
through the operators' fast path, `eager.function` (its first call op by op, the compiled second
and the array form after), `async_scope` and a simulated GPU (a sample of them, and every one
of the calls eager used to answer differently); and the seeded random streams, which advance
when kernels run, ordered with `set_seed` however late the kernels run."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eager as tf
from eager.core import dispatch
from eager.core.context import FAST_PATH
from tests.adversarial.test_adversarial_numerics import (assert_golden, assert_golden_error,
                                                         run_code)
from tests.adversarial.tf_goldens import (CONVERSION_ERRORS, DEVIATION_ERRORS, DEVIATION_VALUES,
                                          ERRORS, VALUES)

GOLDENS = [("value", g) for g in VALUES] + [("error", g) for g in ERRORS]
SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _check(kind, golden, run):
    """Runs `run(code)` (which returns a tensor or raises) and checks it against the golden,
    with numpy's floating-point signals made exceptions (as `hostile` in the numerics tests)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old = np.seterr(all="raise")
        try:
            _check_now(kind, golden, run)
        finally:
            np.seterr(**old)


def _check_now(kind, golden, run):
    if kind == "value":
        code, dtype, shape, values = golden
        assert_golden(run(code), dtype, shape, values)
        return
    code, cls, words = golden
    with pytest.raises(Exception) as caught:  # noqa: B017, PT011 - checked below
        run(code).numpy()
    assert_golden_error(caught.value, cls, words)


def _check_conversion_error(golden, run):
    """A golden of CONVERSION_ERRORS: raised before any op is made, with TensorFlow's words and
    the op's name, and no numpy or Python internals."""
    code, cls, words = golden
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(Exception) as caught:  # noqa: B017, PT011 - checked below
            run(code).numpy()
    assert type(caught.value) is cls, (type(caught.value), caught.value)
    text = str(caught.value)
    assert words in text and ":" in text.split(words)[0], text  # "Reshape: Can't convert ..."
    for foreign in ("RuntimeWarning", "ndarray", "Traceback"):
        assert foreign not in text, text


def _on_the_fast_path(kind, golden):
    assert FAST_PATH.kernel_only
    if kind == "conversion":
        _check_conversion_error(golden, run_code)
    else:
        _check(kind, golden, run_code)


def _in_a_traced_function(kind, golden):
    """Constants made inside the function are graph constants, so each call runs the ops: op by
    op, then the compiled program (tensor form, then array form, with the inference check off).
    A dtype the op refuses is a TypeError while tracing, as in TensorFlow's graphs."""
    traced = tf.function(lambda: run_code(golden[0]))
    if kind == "conversion":
        for _ in range(2):
            _check_conversion_error(golden, lambda code: traced())
        return
    if kind == "error" and golden[2] is None:
        for _ in range(3):
            with pytest.raises(TypeError, match="not in the list of allowed values"):
                traced()
        return
    # (the same settings for tracing as for the calls: the first call traces)
    for k in range(3):
        if k == 2:
            dispatch.check_inference(False)
        try:
            _check(kind, golden, lambda code: traced())
        finally:
            dispatch.check_inference(True)


def _under_async_dispatch(kind, golden):
    def run(code):
        try:
            with tf.experimental.async_scope():
                out = run_code(code)
                out.numpy()
            return out
        except Exception:
            tf.experimental.async_clear_error()
            raise

    if kind == "conversion":
        _check_conversion_error(golden, run)
    else:
        _check(kind, golden, run)


def _on_a_simulated_gpu(kind, golden):
    def run(code):
        out = run_code(code)
        assert out.device.endswith("GPU:0"), out.device
        return out

    if kind == "conversion":
        _check_conversion_error(golden, run)
    else:
        _check(kind, golden, run)


@SETTINGS
@given(case=st.sampled_from(GOLDENS))
def test_goldens_on_the_operators_fast_path(cpu_only, no_inference_check, case):
    _on_the_fast_path(*case)


@SETTINGS
@given(case=st.sampled_from(GOLDENS))
def test_goldens_in_traced_functions_on_every_call(case):
    _in_a_traced_function(*case)


@SETTINGS
@given(case=st.sampled_from(GOLDENS))
def test_goldens_under_async_dispatch(case):
    _under_async_dispatch(*case)


@SETTINGS
@given(case=st.sampled_from(GOLDENS))
def test_goldens_on_a_simulated_gpu(simulated_gpu, case):
    _on_a_simulated_gpu(*case)


REFUSED_DTYPES = [golden for golden in ERRORS if golden[2] is None]


@pytest.mark.parametrize("golden", REFUSED_DTYPES, ids=[g[0] for g in REFUSED_DTYPES])
def test_a_dtype_an_op_refuses_is_a_type_error_in_every_call_of_a_traced_function(golden):
    """Also when the refused tensor is a constant the traced code made (still an eager tensor
    in eager's trace, a graph constant in TensorFlow's)."""
    _in_a_traced_function("error", golden)


# -- every call eager used to answer differently, in every mode (not a sample) ----------------

DEVIATIONS = ([("value", g) for g in DEVIATION_VALUES] + [("error", g) for g in DEVIATION_ERRORS]
              + [("conversion", g) for g in CONVERSION_ERRORS])
MODES = {"fast path": (_on_the_fast_path, ("cpu_only", "no_inference_check")),
         "traced": (_in_a_traced_function, ()),
         "async": (_under_async_dispatch, ()),
         "simulated GPU": (_on_a_simulated_gpu, ("simulated_gpu",))}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("case", DEVIATIONS, ids=[golden[0] for _, golden in DEVIATIONS])
def test_each_deviation_golden_in_every_mode(request, mode, case):
    check, fixtures = MODES[mode]
    for name in fixtures:
        request.getfixturevalue(name)
    check(*case)


@pytest.mark.parametrize("golden", CONVERSION_ERRORS, ids=[g[0] for g in CONVERSION_ERRORS])
def test_conversion_errors_eagerly(golden):
    _check_conversion_error(golden, run_code)


# -- seeded streams and set_seed, however late the kernels run ---------------------------------

def _seeded_draws():
    tf.random.set_seed(3)
    first = [tf.random.normal([3], seed=5), tf.random.uniform([2]), tf.random.normal([3], seed=5)]
    tf.random.set_seed(3)
    again = [tf.random.normal([3], seed=5), tf.random.uniform([2]), tf.random.normal([3], seed=5)]
    return first, again


def _assert_repeated(first, again):
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # Calling a seeded op again continues its stream: not the same numbers.
    assert not np.array_equal(first[0].numpy(), first[2].numpy())


def test_set_seed_repeats_the_sequence_under_async_dispatch():
    """The draws before the second `set_seed` were still queued when it reset the streams, so
    they drew from the reset stream and the repeat came out different."""
    with tf.experimental.async_scope():
        first, again = _seeded_draws()
    _assert_repeated(first, again)


def test_set_seed_repeats_the_sequence_on_a_simulated_gpu(simulated_gpu):
    first, again = _seeded_draws()
    assert first[0].device.endswith("GPU:0")
    _assert_repeated(first, again)


def test_set_seed_repeats_the_sequence_when_another_thread_queued_the_draws():
    import threading  # noqa: PLC0415 - only this test

    box = {}
    issued, reset = threading.Event(), threading.Event()

    def draw():
        with tf.experimental.async_scope():
            tf.random.set_seed(11)
            box["first"] = tf.random.normal([4], seed=2)
            issued.set()
            assert reset.wait(60)
        box["after"] = tf.random.normal([4], seed=2)

    thread = threading.Thread(target=draw, daemon=True)
    thread.start()
    assert issued.wait(60)
    tf.random.set_seed(11)  # waits for the other thread's queued draw
    reset.set()
    thread.join(60)
    assert not thread.is_alive()
    np.testing.assert_array_equal(box["first"].numpy(), box["after"].numpy())
