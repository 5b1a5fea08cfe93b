"""GradientTape semantics (≈ tf.GradientTape), custom gradients, Jacobians, tape memory."""

import gc
import logging
import operator
import threading
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eager as tf
from eager.core import buffer_reuse as elision
from eager.core import dispatch
from eager.ops import math_ops
from gradcheck import check_second_order
from strategies import arrays, broadcastable_pair


def const(x, dtype=np.float64):
    return tf.constant(np.asarray(x, dtype=dtype))


# -- basics ----------------------------------------------------------------------------------------

def test_gradient_of_sum_of_squares():
    x = const([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, 4.0, 6.0])


def test_unwatched_tensors_are_not_differentiated():
    x, c = const([1.0, 2.0]), const([3.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * c)
    gx, gc_ = tape.gradient(y, [x, c])
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    assert gc_ is None


def test_non_persistent_tape_allows_one_gradient_call():
    x = const([1.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape can only be used"):
        tape.gradient(y, x)


def test_persistent_tape_allows_many_gradient_calls():
    x = const([2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [4.0])
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), [32.0])
    np.testing.assert_allclose(tape.gradient(z, y).numpy(), [8.0])  # an intermediate source


def test_nested_structures_of_sources_and_targets():
    a, b = const(2.0), const(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = a * b
        z = a + b
    grads = tape.gradient(y, {"first": a, "second": [b]})
    assert set(grads) == {"first", "second"}
    assert float(grads["first"]) == 3.0 and float(grads["second"][0]) == 2.0
    # A list of targets: the gradient of their sum.
    ga = tape.gradient([y, z], a)
    assert float(ga) == 4.0


def test_flat_and_nested_sequences_of_sources_keep_their_type_and_order():
    a, b = const(2.0), const(3.0)
    v = tf.Variable(5.0, dtype=a.dtype)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = a * b * v
    as_list = tape.gradient(y, [v, b, a])
    as_tuple = tape.gradient(y, (a, v))
    nested = tape.gradient(y, [a, (b, [v])])
    assert type(as_list) is list and [float(g) for g in as_list] == [6.0, 10.0, 15.0]
    assert type(as_tuple) is tuple and [float(g) for g in as_tuple] == [15.0, 6.0]
    assert type(nested) is list and type(nested[1]) is tuple and type(nested[1][1]) is list
    assert [float(nested[0]), float(nested[1][0]), float(nested[1][1][0])] == [15.0, 10.0, 6.0]


def test_output_gradients_weight_the_targets():
    x = const([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    g = tape.gradient(y, x, output_gradients=const([10.0, 100.0]))
    np.testing.assert_allclose(g.numpy(), [20.0, 400.0])


def test_unconnected_gradients_none_and_zero():
    x, y = const([1.0, 2.0]), const([5.0, 5.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = x * 2.0
    assert tape.gradient(z, y) is None
    zero = tape.gradient(z, y, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(zero.numpy(), [0.0, 0.0])
    zero = tape.gradient(z, y, unconnected_gradients="zero")
    np.testing.assert_array_equal(zero.numpy(), [0.0, 0.0])


def test_stop_gradient_blocks_the_path():
    x = const([3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * tf.stop_gradient(x * x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [9.0])  # not 27


def test_stop_recording_and_reset():
    x = const([3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            hidden = x * x
        y = x * hidden
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [9.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        tape.watch(x)
        x * 5.0  # recorded after the reset
    assert tape.gradient(y, x) is None
    with pytest.raises(ValueError, match="must be recording"):
        with tape.stop_recording():
            pass


def test_integer_targets_and_sources_warn_and_give_none(caplog):
    x = tf.constant([1, 2, 3])
    with caplog.at_level(logging.WARNING, logger="eager"):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        assert tape.gradient(y, x) is None
    assert "must be floating" in caplog.text


def test_integer_outputs_stop_gradients():
    x = const([1.5, 2.5])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.cast(tf.cast(x, tf.int32), tf.float64) * x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0, 2.0])


def test_watch_rejects_non_tensors():
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError, match="not a Tensor"):
            tape.watch("hello")


def test_reentering_an_active_tape_is_an_error():
    tape = tf.GradientTape()
    with tape:
        with pytest.raises(ValueError, match="already-active tape"):
            tape.__enter__()


def test_tapes_are_per_thread():
    x = const([2.0])
    result = {}
    with tf.GradientTape() as tape:
        tape.watch(x)

        def other_thread():
            result["y"] = x * x  # not recorded: the tape belongs to the main thread

        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        x * 3.0  # recorded: this thread's tape
    assert tape.gradient(result["y"], x) is None


def test_taped_dispatch_records_on_this_threads_tapes_only(cpu_only, no_inference_check):
    """With one device and nothing but tapes open, dispatch skips placement and tells only the
    calling thread's tapes (`FAST_PATH.kernel_and_tapes`): another thread's ops are computed, not
    recorded; a device scope inside the tape turns that path off (full placement) and back on;
    leaving the tape restores the operators' fast path."""
    fast = tf.core.context.FAST_PATH
    assert fast.kernel_only
    x = const([2.0, 3.0])
    result = {}
    with tf.GradientTape() as tape:
        assert fast.kernel_and_tapes and not fast.kernel_only
        tape.watch(x)

        def other_thread():
            result["y"] = tf.multiply(x, x)  # taped path, but this thread has no tape

        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        with tf.device("CPU:0"):
            assert not fast.kernel_and_tapes
            z = tf.multiply(x, 3.0)
        assert fast.kernel_and_tapes
        w = tf.reduce_sum(tf.multiply(x, x)) + tf.reduce_sum(z)
    assert fast.kernel_only and fast.kernel_and_tapes
    np.testing.assert_array_equal(result["y"].numpy(), [4.0, 9.0])
    assert tape.gradient(result["y"], x) is None
    with tf.GradientTape() as tape2:
        tape2.watch(x)
        w = tf.reduce_sum(tf.multiply(x, x)) + tf.reduce_sum(tf.multiply(x, 3.0))
    np.testing.assert_array_equal(tape2.gradient(w, x).numpy(), [7.0, 9.0])


# -- the operators' fast path under a tape (`FAST_PATH.kernel_and_tapes`) --------------------------

_FAST_OPERATORS = {"+": (operator.add, "AddV2"), "-": (operator.sub, "Sub"),
                   "*": (operator.mul, "Mul"), "/": (operator.truediv, "RealDiv")}


def _taped_program(x, y, ops):
    """A chain of operators on x and y (both watched) and a loss; the tape and the loss."""
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = x
        for symbol in ops:
            z = _FAST_OPERATORS[symbol][0](z, y)
            z = _FAST_OPERATORS[symbol][0](x, z)
        loss = tf.reduce_sum(z * z)
    return tape, loss


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64, np.complex128]),
       ops=st.lists(st.sampled_from(sorted(_FAST_OPERATORS)), min_size=1, max_size=4))
def test_operators_under_a_tape_record_what_dispatch_records(cpu_only, no_inference_check,
                                                              data, dtype, ops):
    """Under a tape the operators compute on the arrays and record the op dispatch would have
    run (`FAST_PATH.kernel_and_tapes`); the suite's inference check forces dispatch. Both record
    the same ops on the same shapes, with the same values kept, so the gradients are equal
    exactly."""
    x_np, y_np = data.draw(broadcastable_pair(dtype, max_dims=3, elements=st.floats(0.5, 2.0)))
    results = []
    for fast in (True, False):
        dispatch.check_inference(not fast)
        try:
            x, y = tf.constant(x_np), tf.constant(y_np)
            assert tf.core.context.FAST_PATH.kernel_and_tapes is fast
            tape, loss = _taped_program(x, y, ops)
            gx, gy = tape.gradient(loss, [x, y])
            results.append(([(e.op.name, e.input_shapes) for e in tape._tape.as_recorded_ops()],
                            loss.numpy(), gx.numpy(), gy.numpy()))
        finally:
            dispatch.check_inference(False)  # as `no_inference_check` left it
    (fast_ops, *fast_values), (slow_ops, *slow_values) = results
    assert fast_ops == slow_ops
    assert [name for name, _ in fast_ops[:2]] == [_FAST_OPERATORS[ops[0]][1]] * 2
    for a, b in zip(fast_values, slow_values):
        np.testing.assert_array_equal(a, b)


@pytest.fixture
def _taped_fast_path(cpu_only, no_inference_check):
    tf.constant(0.0)
    assert tf.core.context.FAST_PATH.kernel_only
    yield


def test_a_tape_leaves_the_operators_fast_path_open(_taped_fast_path):
    """Entering and leaving a tape neither closes the operators' fast path nor refreshes every
    TensorMeta; the tape is told of the ops on the tensors it follows, and only of those."""
    x, c = const([1.0, 2.0]), const([3.0, 4.0])
    meta = x._meta
    with tf.GradientTape() as tape:
        fast = tf.core.context.FAST_PATH
        assert meta.fast_arith and not fast.kernel_only and fast.kernel_and_tapes
        tape.watch(x)
        unfollowed = c * c
        y = tf.reduce_sum(x * c + unfollowed)
    assert [e.op.name for e in tape._tape.as_recorded_ops()] == ["Mul", "AddV2", "Sum"]
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 4.0])
    assert tf.core.context.FAST_PATH.kernel_only and meta.fast_arith


def test_a_followed_tensor_with_a_python_number_records_the_converted_constant(_taped_fast_path):
    x = const([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(3.0 * x - 1.0 + x / 2.0)
    assert ([e.op.name for e in tape._tape.as_recorded_ops()]
            == ["Mul", "Sub", "RealDiv", "AddV2", "Sum"])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.5, 3.5])


def test_a_kept_temporary_is_never_written_into_under_a_tape(_taped_fast_path):
    """Mul's gradient keeps both inputs: a temporary operand must keep its value even though
    nothing but the tape refers to it (no buffer reuse for followed operands or their ops)."""
    n = elision.MIN_ELEMENTS * 4
    x_np = np.linspace(0.5, 1.5, n)
    x, c = tf.constant(x_np), tf.constant(np.full(n, 2.0))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum((c + c) * x * (x + c))  # each product has a temporary operand
    expected = 4.0 * (2 * x_np + 2.0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-12)


def test_nested_tapes_on_the_fast_path_give_second_derivatives(_taped_fast_path):
    x = const([1.5, -2.0])
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x - x / 2.0
        dy = inner.gradient(y, x)
    np.testing.assert_allclose(dy.numpy(), 3 * x.numpy() ** 2 - 0.5)
    np.testing.assert_allclose(outer.gradient(dy, x).numpy(), 6 * x.numpy())


def test_a_followed_tensor_on_a_thread_without_a_tape_records_nothing(_taped_fast_path):
    x = const([2.0, 3.0])
    result = {}
    with tf.GradientTape() as tape:
        tape.watch(x)
        worker = threading.Thread(target=lambda: result.update(y=x * x))
        worker.start()
        worker.join()
    assert tape._tape.entries == []
    np.testing.assert_array_equal(result["y"].numpy(), [4.0, 9.0])


def test_operators_on_watched_tensors_are_recorded():
    x = const([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum((2.0 * x - 1.0) / 4.0 + x ** 2)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 0.5 + 2 * np.array([1.0, 2.0]))


# -- higher order ---------------------------------------------------------------------------------

def test_nested_tapes_give_second_derivatives():
    x = const(1.5)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    assert float(dy) == pytest.approx(3 * 1.5 ** 2)
    assert float(d2y) == pytest.approx(6 * 1.5)


def test_third_derivative_with_three_tapes():
    x = const(0.7)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.sin(x)
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert float(d3) == pytest.approx(-np.cos(0.7))


@pytest.mark.parametrize("fn, make", [
    (tf.tanh, lambda: [np.linspace(-1.5, 1.5, 5)]),
    (tf.exp, lambda: [np.linspace(-1, 1, 4)]),
    (tf.math.log, lambda: [np.linspace(0.5, 2, 4)]),
    (tf.sigmoid, lambda: [np.linspace(-2, 2, 5)]),
    (tf.multiply, lambda: [np.linspace(-1, 1, 3), np.linspace(2, 3, 3)]),
    (tf.matmul, lambda: [np.arange(6.0).reshape(2, 3) / 5, np.arange(12.0).reshape(3, 4) / 7]),
    (lambda x: tf.reduce_logsumexp(x, axis=1), lambda: [np.arange(6.0).reshape(2, 3) / 3]),
    (lambda x: tf.nn.softmax_cross_entropy_with_logits(
        labels=tf.constant([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], tf.float64), logits=x),
     lambda: [np.arange(6.0).reshape(2, 3) / 4]),
])
def test_second_derivatives_match_finite_differences(fn, make):
    check_second_order(fn, make())


def test_persistent_tape_records_its_own_gradient_inside_its_context():
    x = const(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
        dy = tape.gradient(y, x)
    assert float(tape.gradient(dy, x)) == pytest.approx(12.0)


# -- custom gradients -----------------------------------------------------------------------------

def test_custom_gradient_replaces_the_gradient():
    @tf.custom_gradient
    def clipped_identity(x):
        def grad(dy):
            return tf.clip_by_value(dy, -0.5, 0.5)
        return tf.identity(x), grad

    x = const([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(clipped_identity(x) * 3.0)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [0.5, 0.5])


def test_custom_gradient_of_several_inputs_and_a_stable_log1pexp():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad

    x = const(100.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert float(tape.gradient(y, x)) == pytest.approx(1.0)

    @tf.custom_gradient
    def weighted(a, b):
        def grad(dy):
            return dy * 10.0, dy * 100.0
        return a * b, grad

    a, b = const(2.0), const(3.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = weighted(a, b)
    ga, gb = tape.gradient(y, [a, b])
    assert (float(ga), float(gb)) == (10.0, 100.0)


def test_custom_gradient_with_nested_structures_and_returning_its_input():
    @tf.custom_gradient
    def split_pair(pair):
        x, y = pair

        def grad(dx, dy):
            return [dx * 2.0, dy * 3.0]
        return (x, y * 1.0), grad

    x, y = const(1.0), const(1.0)
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        a, b = split_pair([x, y])
        total = a + b
    gx, gy = tape.gradient(total, [x, y])
    assert (float(gx), float(gy)) == (2.0, 3.0)


def test_custom_gradient_is_differentiable_again():
    @tf.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3.0 * x * x
        return x * x * x, grad

    x = const(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        dy = inner.gradient(y, x)
    assert float(outer.gradient(dy, x)) == pytest.approx(12.0)


def test_custom_gradient_without_a_tape_just_runs():
    @tf.custom_gradient
    def double(x):
        return x * 2.0, lambda dy: dy * 2.0

    assert float(double(const(4.0))) == 8.0


def test_custom_gradient_returning_the_wrong_number_of_gradients_is_an_error():
    @tf.custom_gradient
    def bad(a, b):
        return a * b, lambda dy: dy

    a, b = const(1.0), const(2.0)
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        y = bad(a, b)
    with pytest.raises(ValueError, match="returned 1 gradients for 2 inputs"):
        tape.gradient(y, a)


# -- Jacobians ------------------------------------------------------------------------------------

def _loop_jacobian(fn, x):
    """Reference: one gradient per target element, each on a fresh tape."""
    y = fn(x)
    rows = []
    for i in range(int(np.prod(y.shape))):
        with tf.GradientTape() as tape:
            tape.watch(x)
            yi = tf.reshape(fn(x), [-1])[i]
        rows.append(tape.gradient(yi, x, unconnected_gradients="zero").numpy())
    return np.stack(rows).reshape(tuple(y.shape) + tuple(x.shape))


def test_jacobian_matches_the_per_element_loop():
    x = const(np.arange(6.0).reshape(2, 3) / 4)
    w = const(np.linspace(-1, 1, 12).reshape(3, 4))

    def fn(v):
        return tf.tanh(tf.matmul(v, w))

    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    jac = tape.jacobian(y, x)
    assert jac.shape == (2, 4, 2, 3)
    np.testing.assert_allclose(jac.numpy(), _loop_jacobian(fn, x), rtol=1e-12)


def test_jacobian_of_several_sources_and_unconnected():
    x, y = const([1.0, 2.0]), const([3.0])
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = x * x
    jx, jy = tape.jacobian(z, [x, y])
    np.testing.assert_allclose(jx.numpy(), np.diag([2.0, 4.0]))
    assert jy is None


def test_batch_jacobian_matches_per_example_jacobians():
    x = const(np.arange(12.0).reshape(4, 3) / 7)
    w = const(np.linspace(-1, 1, 6).reshape(3, 2))

    def fn(v):
        return tf.sigmoid(tf.matmul(v, w))

    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    bj = tape.batch_jacobian(y, x)
    assert bj.shape == (4, 2, 3)
    full = _loop_jacobian(fn, x)  # (4, 2, 4, 3)
    for b in range(4):
        np.testing.assert_allclose(bj.numpy()[b], full[b, :, b, :], rtol=1e-12)


def test_batch_jacobian_checks_the_batch_dimension():
    x = const(np.ones((3, 2)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x, axis=0)
    with pytest.raises(ValueError, match="batch"):
        tape.batch_jacobian(y, x)


def test_compute_gradient_matches_tensorflow_layout():
    theoretical, numerical = tf.test.compute_gradient(
        lambda x: tf.stack([x[0] * x[1], x[0]]), [tf.constant([1.0, 2.0], tf.float64)])
    expected = np.array([[2.0, 1.0], [1.0, 0.0]])  # rows: outputs, columns: inputs (TF)
    np.testing.assert_allclose(theoretical[0], expected)
    np.testing.assert_allclose(numerical[0], expected, atol=1e-6)
    with pytest.raises(ValueError, match="list or tuple"):
        tf.test.compute_gradient(tf.exp, tf.constant(1.0))
    # Complex arguments are refused, with what to do instead (no promise of a later version).
    with pytest.raises(NotImplementedError, match=r"complex arguments are not supported \(check "
                                                  r"the real and imaginary parts separately\)"):
        tf.test.compute_gradient(tf.exp, [tf.constant(1.0 + 1.0j)])


# -- memory ---------------------------------------------------------------------------------------

def test_tape_keeps_only_what_gradients_need():
    x = const(np.ones(1000))
    with tf.GradientTape() as tape:
        tape.watch(x)
        a = x + 1.0        # add keeps nothing
        b = tf.exp(a)      # exp keeps its output, not its input
        y = tf.reduce_sum(b)
    a_ref = weakref.ref(a)
    del a
    gc.collect()
    assert a_ref() is None, "the tape kept an input that add/exp's gradients never read"
    b_ref = weakref.ref(b)
    del b
    gc.collect()
    assert b_ref() is not None, "exp's output is needed by its gradient"
    tape.gradient(y, x)
    gc.collect()
    assert b_ref() is None, "a non-persistent tape releases everything after gradient()"


def test_dropping_the_tape_frees_intermediate_activations():
    x = const(np.ones(1000))
    refs = []
    tape = tf.GradientTape(persistent=True)
    with tape:
        tape.watch(x)
        h = x
        for _ in range(5):
            h = tf.tanh(h)  # tanh keeps its output
            refs.append(weakref.ref(h))
        y = tf.reduce_sum(h)
    del h
    gc.collect()
    assert all(r() is not None for r in refs[:-1])
    del tape
    gc.collect()
    assert all(r() is None for r in refs[:-1])
    del y


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), dtype=st.sampled_from([np.float16, np.float32, np.float64,
                                              np.complex64, np.complex128, np.int32]),
       rank=st.sampled_from([0, 1, 2, 3, 9]), watched=st.booleans())
def test_full_reduce_sum_fast_path_gives_and_records_what_dispatch_does(
        cpu_only, no_inference_check, monkeypatch, data, dtype, rank, watched):
    """`reduce_sum(t)` of a whole floating or complex tensor computes on its array when the
    tensor's TensorMeta says dispatch would only run the kernel (`FAST_PATH.kernel_and_tapes`),
    and tells the tapes of a followed tensor itself; the suite's inference check forces dispatch.
    Values, dtypes, what the tape records and the gradients are the same either way; integer
    tensors and ranks from 9 up take dispatch."""
    shape = tuple(data.draw(st.lists(st.integers(1, 2), min_size=rank, max_size=rank)))
    elements = st.integers(-50, 50) if dtype is np.int32 else None
    x_np = data.draw(arrays(dtype, shape, elements))
    differentiable = np.dtype(dtype).kind in "fc"
    sums = []  # the Sum ops that went through dispatch
    execute = math_ops.execute
    monkeypatch.setattr(math_ops, "execute", lambda op, *args: (
        sums.append(op) if op is math_ops.SUM else None, execute(op, *args))[1])
    results = []
    for fast in (True, False):
        dispatch.check_inference(not fast)
        try:
            x = tf.constant(x_np)
            assert x._meta.fast_inexact is (fast and differentiable)
            sums.clear()
            plain = tf.reduce_sum(x)
            assert len(sums) == (0 if fast and differentiable and rank < 9 else 1)
            with tf.GradientTape() as tape:
                if watched:
                    tape.watch(x)
                y = tf.reduce_sum(x * x) if differentiable else tf.reduce_sum(x)
            recorded = [(e.op.name, e.input_shapes, e.output_shapes, e.attrs)
                        for e in tape._tape.as_recorded_ops()]
            g = tape.gradient(y, x) if watched and differentiable else None
            results.append((plain, y, recorded, g))
        finally:
            dispatch.check_inference(False)  # as `no_inference_check` left it
    (plain, y, recorded, g), (slow_plain, slow_y, slow_recorded, slow_g) = results
    for fast_t, slow_t in ((plain, slow_plain), (y, slow_y), (g, slow_g)):
        if slow_t is None:
            assert fast_t is None
            continue
        assert fast_t.dtype is slow_t.dtype and fast_t.shape == slow_t.shape
        np.testing.assert_array_equal(fast_t.numpy(), slow_t.numpy())
    assert plain.shape == () and plain.dtype is tf.as_dtype(dtype)
    assert recorded == slow_recorded
    assert [name for name, *_ in recorded] == (
        ["Mul", "Sum"] if watched and differentiable else [])
