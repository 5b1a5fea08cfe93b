"""Temporary elision: results may be written into unobserved temporaries, never into anything
someone can still see (named tensors, views of other tensors, tensors a tape keeps)."""

import operator
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import eager as tf
from eager.core import buffer_reuse as elision

N = elision.MIN_ELEMENTS * 4  # large enough to be considered


@pytest.fixture(autouse=True)
def _fast_path(cpu_only, no_inference_check):
    """Elision lives in the operators' fast path, which the suite's inference check disables
    and which exists only where the one device is the CPU (a GPU machine: `cpu_only`)."""
    tf.constant(0.0)
    assert tf.core.context.FAST_PATH.kernel_only
    yield


def test_calibration_finds_temporaries_on_this_interpreter():
    if sys.implementation.name == "cpython" and sys.version_info < (3, 14):
        assert elision.enabled()


@pytest.mark.parametrize("form", ["temporary - named", "named - temporary",
                                  "python scalar * temporary", "temporary * python scalar"])
def test_a_temporary_buffer_is_reused(form):
    """Each position a temporary can take (`p - lr * g` is the optimizer update written by
    hand): the result goes into the temporary's buffer, so one 8 MB buffer is allocated."""
    x = tf.constant(np.ones(1_000_000))
    y = tf.constant(np.full(1_000_000, 3.0))
    tracemalloc.start()
    if form == "temporary - named":
        result, expected = (x * 2.0) - y, -1.0
    elif form == "named - temporary":
        result, expected = y - (x * 2.0), 1.0
    elif form == "python scalar * temporary":
        result, expected = 3.0 * (x * 2.0), 6.0
    else:
        result, expected = (x * 2.0) * 3.0, 6.0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    np.testing.assert_array_equal(result.numpy()[:3], [expected] * 3)
    np.testing.assert_array_equal(x.numpy()[:3], [1.0] * 3)
    np.testing.assert_array_equal(y.numpy()[:3], [3.0] * 3)
    if elision.enabled():
        assert peak < 12e6, f"expected one 8 MB buffer, peak was {peak / 1e6:.1f} MB"


OPS = [operator.add, operator.sub, operator.mul, operator.truediv]


@pytest.mark.parametrize("op", OPS)
@given(data=st.data())
def test_results_are_right_and_named_operands_never_change(op, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    shape = data.draw(st.sampled_from([(N,), (4, N // 4), (N // 8, 8)]))
    a_np = rng.uniform(1, 2, shape)
    b_shape = data.draw(st.sampled_from([shape, shape[-1:], ()]))
    b_np = rng.uniform(1, 2, b_shape)
    a, b = tf.constant(a_np), tf.constant(b_np)
    form = data.draw(st.sampled_from(["temp_temp", "temp_named", "named_temp", "temp_scalar",
                                      "scalar_temp"]))
    if form == "temp_temp":
        result, expected = op(a * 1.0, b * 1.0), op(a_np, b_np)
    elif form == "temp_named":
        result, expected = op(a * 1.0, b), op(a_np, b_np)
    elif form == "named_temp":
        result, expected = op(a, b * 1.0), op(a_np, b_np)
    elif form == "temp_scalar":
        result, expected = op(a * 1.0, 1.5), op(a_np, 1.5)
    else:
        result, expected = op(1.5, a * 1.0), op(1.5, a_np)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-12)
    np.testing.assert_array_equal(a.numpy(), a_np)
    np.testing.assert_array_equal(b.numpy(), b_np)


def test_views_of_other_tensors_are_never_written():
    x_np = np.arange(N, dtype=np.float64)
    x = tf.constant(x_np)
    # reshape returns a view of x's buffer: a temporary tensor, but not an owner of its buffer.
    result = tf.reshape(x, [4, -1]) * 2.0 - 1.0
    np.testing.assert_array_equal(x.numpy(), x_np)
    np.testing.assert_array_equal(result.numpy().ravel(), x_np * 2 - 1)


def test_tensors_held_elsewhere_are_never_written():
    x = tf.constant(np.ones(N))
    kept = [x * 2.0]  # referenced by a list: observable
    result = kept[0] - 1.0
    np.testing.assert_array_equal(kept[0].numpy()[:2], [2.0, 2.0])
    np.testing.assert_array_equal(result.numpy()[:2], [1.0, 1.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.exp(x)  # exp's gradient keeps its output on the tape
    del y
    grad = tape.gradient(tf.exp(x), x)  # (not connected: a new op outside the tape)
    assert grad is None
    np.testing.assert_allclose(tape._tape.as_recorded_ops()[0].outputs[0].numpy()[:2], np.e)


def test_a_once_watched_tensor_still_reuses_temporaries_after_the_tape():
    """A training loop's update `p - lr * g` runs after the tape, on parameters the tape
    watched (they keep their tape ids): with no tape left anywhere, ids mean nothing, and the
    temporary's buffer is reused as usual."""
    p = tf.constant(np.ones(1_000_000))
    g = tf.constant(np.full(1_000_000, 2.0))
    with tf.GradientTape() as tape:
        tape.watch(p)
    assert p._tape_id
    tracemalloc.start()
    result = p - g * 0.5
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    np.testing.assert_array_equal(result.numpy()[:2], [0.0, 0.0])
    if elision.enabled():
        assert peak < 12e6, f"expected one 8 MB buffer, peak was {peak / 1e6:.1f} MB"


def test_numpy_views_handed_out_keep_their_values():
    x = tf.constant(np.ones(N))
    t = x * 3.0
    view = t.numpy()
    result = t - 1.0  # t is named here anyway; and its array is referenced by the view
    del t
    np.testing.assert_array_equal(view[:2], [3.0, 3.0])
    np.testing.assert_array_equal(result.numpy()[:2], [2.0, 2.0])
