"""`eager.custom_gradient` with variables, and inside traced functions.

Each custom gradient is checked in every place a gradient can be formed: eagerly, with the tape
inside a traced function (the trace's own `grad_fn`), with the tape outside it (the function's
derived gradient, which runs `f` again in the derivation graph), on the replay path (the
profiler forces it: `f` runs again eagerly), through a traced function calling another, and
under asynchronous dispatch. All must agree with each other, and with finite differences where
the hand-written gradient is the true one.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eager as tf
from eager import profiler
from eager.autodiff.tape_backward import NotRecomputableError
from eager.functions import function_gradient as derived
from gradcheck import numeric_gradients


def const(x, dtype=np.float64):
    return tf.constant(np.asarray(x, dtype=dtype))


@tf.custom_gradient
def log1pexp(x):
    """log(1 + e^x) with the stable gradient (TensorFlow's own example): its grad_fn closes
    over `e`, a forward value."""
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


@tf.custom_gradient
def clip_gradient(x):
    """The identity with its gradient clipped: a gradient that is *not* the true one."""
    def grad(dy):
        return tf.clip_by_value(dy, -0.1, 0.1)
    return tf.identity(x), grad


def _loss(fn):
    return lambda x: tf.reduce_sum(fn(x) * 5.0)


def _gradient_in(mode, loss, x, tmp_path=None):
    """d loss(x) / dx, with the tape and the traced function arranged as `mode` says."""
    if mode == "eager":
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = loss(x)
        return tape.gradient(y, x)
    if mode == "tape inside":
        @tf.function
        def inside(v):
            with tf.GradientTape() as tape:
                tape.watch(v)
                y = loss(v)
            return tape.gradient(y, v)
        return inside(x)
    traced = tf.function(loss)
    if mode == "nested functions":
        inner = traced
        traced = tf.function(lambda v: inner(v) * 1.0)
    if mode == "asynchronous":
        with tf.experimental.async_scope():
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = traced(x)
            return tf.identity(tape.gradient(y, x))
    if mode == "replayed":
        traced(x)  # traced before the profiler starts
        with profiler.trace(tmp_path / "trace.json"):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = traced(x)
            return tape.gradient(y, x)
    with tf.GradientTape() as tape:  # "tape outside": the derived gradient
        tape.watch(x)
        y = traced(x)
    return tape.gradient(y, x)


MODES = ["eager", "tape inside", "tape outside", "nested functions", "asynchronous", "replayed"]


@pytest.mark.parametrize("mode", MODES)
def test_a_custom_gradient_holds_wherever_the_gradient_is_formed(mode, tmp_path):
    x = const([-3.0, 0.02, 2.0])
    clipped = _gradient_in(mode, _loss(clip_gradient), x, tmp_path)
    np.testing.assert_allclose(clipped.numpy(), [0.1, 0.1, 0.1])
    big = const([1000.0, 1.0])  # e^1000 overflows: the plain gradient e / (1 + e) is nan there
    stable = _gradient_in(mode, _loss(log1pexp), big, tmp_path)
    np.testing.assert_allclose(stable.numpy(), [5.0, 5.0 / (1 + np.exp(-1.0))], rtol=1e-12)


def test_a_traced_custom_gradient_is_one_node_whose_inputs_are_results_then_arguments():
    traced = tf.function(_loss(log1pexp))
    graph = traced.get_concrete_function(const([1.0])).graph
    (node,) = [op for op in graph.get_operations() if op.type == "CustomGradient"]
    assert [t.op.type for t in node.inputs] == ["Log", "Placeholder"]
    assert len(node.outputs) == 1


@settings(max_examples=15, deadline=None)
@given(values=st.lists(st.floats(-4.0, 4.0), min_size=1, max_size=5))
def test_a_true_custom_gradient_matches_finite_differences_in_every_mode(values):
    x = np.asarray(values)
    loss = _loss(log1pexp)
    expected = numeric_gradients(loss, [x], [np.ones(())])[0]
    for mode in ("eager", "tape inside", "tape outside", "nested functions"):
        got = _gradient_in(mode, loss, const(x))
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-8, err_msg=mode)


def test_second_order_through_a_traced_custom_gradient():
    @tf.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3.0 * x * x
        return x * x * x, grad

    traced = tf.function(lambda v: cube(v))
    x = const(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = traced(x)
        dy = inner.gradient(y, x)
    assert float(dy) == pytest.approx(12.0)
    assert float(outer.gradient(dy, x)) == pytest.approx(12.0)


# -- variables ------------------------------------------------------------------------------------

def _scaled_by(v):
    @tf.custom_gradient
    def scaled(x):
        def grad(dy, variables):
            assert variables == [v]
            return dy * v * 10.0, [tf.reduce_sum(dy * x) * 100.0]
        return x * v, grad
    return scaled


@pytest.mark.parametrize("mode", ["eager", "tape outside", "tape inside"])
def test_variables_read_inside_get_the_gradients_grad_fn_gives_them(mode):
    v = tf.Variable(2.0, dtype=tf.float64)
    scaled = _scaled_by(v)
    x = const([3.0, 4.0])
    if mode == "tape inside":
        @tf.function
        def step(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.reduce_sum(scaled(x))
            return tape.gradient(y, [x, v])
        gx, gv = step(x)
    else:
        fn = (lambda x: tf.reduce_sum(scaled(x))) if mode == "eager" else tf.function(
            lambda x: tf.reduce_sum(scaled(x)))
        with tf.GradientTape() as tape:  # v is watched because f read it
            tape.watch(x)
            y = fn(x)
        gx, gv = tape.gradient(y, [x, v])
    np.testing.assert_allclose(gx.numpy(), [20.0, 20.0])
    assert float(gv) == pytest.approx(700.0)


def test_a_tape_that_does_not_watch_accessed_variables_gives_none_for_them():
    v = tf.Variable(2.0, dtype=tf.float64)
    x = const([3.0])
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = tf.reduce_sum(_scaled_by(v)(x))
    gx, gv = tape.gradient(y, [x, v])
    assert gv is None and float(gx[0]) == 20.0


def test_a_variable_argument_gets_its_arguments_gradient():
    w = tf.Variable([1.0, 2.0])

    @tf.custom_gradient
    def product(a, b):
        def grad(dy):
            return dy * 7.0, dy * 11.0
        return a * b, grad

    for fn in (product, tf.function(product)):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(fn(w, tf.constant([3.0, 4.0])))
        np.testing.assert_array_equal(tape.gradient(y, w).numpy(), [7.0, 7.0])


def test_a_grad_fn_without_variables_is_a_type_error_naming_them():
    v = tf.Variable(2.0, name="scale")

    @tf.custom_gradient
    def scaled(x):
        return x * v, lambda dy: dy

    with tf.GradientTape() as tape:
        x = tf.constant(1.0)
        tape.watch(x)
        with pytest.raises(TypeError, match=r"must accept keyword argument 'variables'.*scale"):
            scaled(x)
    with pytest.raises(TypeError, match="variables"):
        tf.function(scaled)(x)


def test_a_wrong_number_of_variable_gradients_is_a_value_error():
    v = tf.Variable(2.0, name="scale")

    @tf.custom_gradient
    def scaled(x):
        return x * v, lambda dy, variables: (dy, [])

    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x)
    with pytest.raises(ValueError, match=r"gradient for each variable \(1: \['scale:0'\]\)"):
        tape.gradient(y, x)


# -- what cannot run twice ------------------------------------------------------------------------

@tf.custom_gradient
def noisy(x):
    noise = tf.random.uniform([])

    def grad(dy):
        return dy * 5.0
    return x + noise, grad


@pytest.mark.parametrize("mode", ["tape inside", "tape outside"])
def test_a_stateful_custom_gradient_function_runs_once_with_its_own_grad_fn(mode):
    """In the graph f was traced in, and in the function's derivation graph (which stands its
    copies in for the values grad_fn closes over), the trace's grad_fn runs: f is not run
    again, so a random draw in it is fine, as in TensorFlow."""
    assert float(_gradient_in(mode, noisy, tf.constant(1.0))) == 5.0


def test_a_stateful_custom_gradient_function_is_not_run_again_on_a_replay(tmp_path):
    """The replay (under the profiler) runs the ops eagerly: grad_fn's closures are symbolic
    there, and f would have to run again."""
    with pytest.raises(NotRecomputableError, match="stateful RandomUniform op"):
        _gradient_in("replayed", noisy, tf.constant(1.0), tmp_path)


def test_the_derived_gradient_of_a_custom_gradient_is_a_traced_backward():
    traced = tf.function(_loss(log1pexp))
    x = const([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = traced(x)
    (entry,) = tape._tape.as_recorded_ops()
    assert isinstance(entry.backward, derived._CallBackward)
    # grad_fn read the forward's `e`: the call keeps it, and the backward never runs exp again
    backward_ops = [op.type for op in entry.backward.variant.backward.graph.get_operations()]
    assert "Exp" not in backward_ops and "Log" not in backward_ops
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 5.0 / (1 + np.exp(-x.numpy())))
